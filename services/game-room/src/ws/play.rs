//! `GET /v1/games/{id}/play`: a seated player's socket. The first message
//! is `auth`; then moves, resignations and syncs go to the game's task, and
//! its events come back.

use actix_web::{HttpRequest, HttpResponse, web};
use mancala_platform::{ApiError, Authenticator, SocketIdentity};
use mancala_proto::error::{
    CLOSE_ELSEWHERE, CLOSE_POLICY, CLOSE_RESTART, CLOSE_TOO_BIG, CLOSE_TRY_AGAIN,
};
use mancala_proto::game::ServerMessage;
use mancala_proto::{ClientMessage, ErrorBody, ErrorCode};
use mancala_rules::Side;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::oneshot;
use uuid::Uuid;

use super::snapshots::Snapshots;
use super::socket::{Inbound, Socket, origin_allowed};
use super::watch::{self, Watcher};
use crate::ai;
use crate::game::host::{HintAnswer, JoinError};
use crate::game::host::{Outbound, Request};
use crate::game::{GameHandle, HostError, HostedGames, Joined};
use crate::store::{self, SeatCheck};
use mancala_platform::socket_slots::{self, SocketSlot};

#[tracing::instrument(skip_all)]
pub(crate) async fn play(
    request: HttpRequest,
    body: web::Payload,
    game: web::Path<Uuid>,
    hosted: web::Data<HostedGames>,
    authenticator: web::Data<Authenticator>,
    snapshots: web::Data<Snapshots>,
) -> Result<HttpResponse, ApiError> {
    let settings = hosted.deps().settings.clone();
    if !origin_allowed(&request, &settings) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this origin may not open game sockets",
        ));
    }
    let (response, session, stream) = actix_ws::handle(&request, body)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "expected a WebSocket upgrade"))?;
    let socket = super::socket::open(session, stream, &settings, hosted.deps().clock.clone());
    let hosted = hosted.get_ref().clone();
    let authenticator = authenticator.get_ref().clone();
    let snapshots = snapshots.get_ref().clone();
    let game = game.into_inner();
    actix_web::rt::spawn(run(socket, game, hosted, authenticator, snapshots));
    Ok(response)
}

/// Waits for `auth` (until the deadline); the player, or `None` after
/// closing the socket.
async fn authenticate(
    socket: &mut Socket,
    authenticator: &Authenticator,
    tick: &mut tokio::time::Interval,
) -> Option<Result<SocketIdentity, ErrorBody>> {
    loop {
        tokio::select! {
            inbound = socket.next() => match inbound {
                Inbound::Message(ClientMessage::Auth { token }) => {
                    return Some(authenticator.identify(&token).map_err(|error| error.body()));
                }
                Inbound::Message(_) => {
                    return Some(Err(ErrorBody::new(ErrorCode::Unauthenticated, "the first message must be auth")));
                }
                Inbound::Invalid(error) => return Some(Err(error)),
                Inbound::Flood => return Some(Err(ErrorBody::new(ErrorCode::RateLimited, "too many messages"))),
                Inbound::TooBig => return Some(Err(ErrorBody::new(ErrorCode::PayloadTooLarge, "frame too large"))),
                Inbound::Closed => return None,
                Inbound::Nothing => {}
            },
            _ = tick.tick() => {
                if socket.auth_expired() {
                    return Some(Err(ErrorBody::new(ErrorCode::Unauthenticated, "no auth message in time")));
                }
            }
        }
    }
}

/// Why a socket could not join: sent to it before closing.
struct Refused {
    body: ErrorBody,
    close: u16,
    /// How the socket is told before it closes.
    tell: Tell,
}

/// What a refused socket hears before the close.
enum Tell {
    /// An `error` with the code and message.
    Error,
    /// `elsewhere`: another instance hosts the game, at this address if it
    /// advertised one.
    Elsewhere(Option<String>),
}

fn refused(code: ErrorCode, message: impl Into<String>, close: u16) -> Refused {
    Refused {
        body: ErrorBody::new(code, message),
        close,
        tell: Tell::Error,
    }
}

/// What the stored game says of a player, before anything wakes it: a
/// stranger (even one holding a game id from the live list) takes no
/// lease, bumps no epoch, and starts no clock or AI.
async fn check_seat(hosted: &HostedGames, game: Uuid, player: Uuid) -> Result<SeatCheck, Refused> {
    // Hosted here: the game in memory says the same, without a query.
    if let Some(handle) = hosted.local(game)
        && let Ok(check) = handle.seat_check(player).await
    {
        return Ok(check);
    }
    match store::seat_check(&hosted.deps().postgres, game, player).await {
        Ok(Some(check)) => Ok(check),
        Ok(None) => Err(refused(ErrorCode::NotFound, "no such game", CLOSE_POLICY)),
        Err(error) => {
            tracing::warn!(%error, %game, "checking a seat");
            Err(refused(
                ErrorCode::Unavailable,
                "the game cannot be loaded now; retry",
                CLOSE_TRY_AGAIN,
            ))
        }
    }
}

async fn join(
    hosted: &HostedGames,
    game: Uuid,
    player: Uuid,
) -> Result<(GameHandle, Joined), Refused> {
    // A task that is just unloading answers `Gone`: ask again, once.
    for _ in 0..2 {
        let handle = match hosted.host(game).await {
            Ok(handle) => handle,
            Err(HostError::NotFound) => {
                return Err(refused(ErrorCode::NotFound, "no such game", CLOSE_POLICY));
            }
            Err(HostError::Elsewhere(url)) => {
                return Err(Refused {
                    tell: Tell::Elsewhere(url),
                    ..refused(
                        ErrorCode::Unavailable,
                        "another instance hosts this game",
                        CLOSE_ELSEWHERE,
                    )
                });
            }
            Err(HostError::Stopping) => {
                return Err(refused(
                    ErrorCode::Unavailable,
                    "the server is restarting; reconnect",
                    CLOSE_RESTART,
                ));
            }
            Err(error) => {
                tracing::warn!(%error, %game, "hosting a game");
                return Err(refused(
                    ErrorCode::Unavailable,
                    "the game cannot be loaded now; retry",
                    CLOSE_TRY_AGAIN,
                ));
            }
        };
        match handle.join(player).await {
            Ok(joined) => return Ok((handle, joined)),
            Err(JoinError::Refused(refusal)) => {
                return Err(refused(refusal.code, refusal.message, CLOSE_POLICY));
            }
            Err(JoinError::Gone) => continue,
        }
    }
    Err(refused(
        ErrorCode::Unavailable,
        "the game is moving; retry",
        CLOSE_TRY_AGAIN,
    ))
}

#[tracing::instrument(name = "play_socket", skip_all, fields(%game))]
async fn run(
    mut socket: Socket,
    game: Uuid,
    hosted: HostedGames,
    authenticator: Authenticator,
    snapshots: Snapshots,
) {
    let mut tick = tokio::time::interval(hosted.deps().settings.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let identity = match Box::pin(authenticate(&mut socket, &authenticator, &mut tick)).await {
        None => return,
        Some(Ok(identity)) => identity,
        Some(Err(refused)) => {
            let close = refused.code.ws_close().unwrap_or(CLOSE_POLICY);
            socket
                .close_with(refused.code, &refused.message, close)
                .await;
            return;
        }
    };
    let player = identity.player;
    let deps = hosted.deps();
    let limit = deps.settings.sockets.sockets_per_player;
    let Some(mut slot) = Box::pin(socket_slots::claim(
        &deps.redis,
        &player.to_string(),
        limit,
        deps.clock.now_millis(),
    ))
    .await
    else {
        let message = "too many sockets open for this player";
        socket
            .close_with(ErrorCode::RateLimited, message, CLOSE_POLICY)
            .await;
        return;
    };
    // The seat check and the join load from the database: boxed, so the
    // socket's task does not carry their futures for the game's length.
    let checked = match Box::pin(check_seat(&hosted, game, player)).await {
        Ok(SeatCheck::Seated) => Ok(()),
        Ok(SeatCheck::Replaced) => {
            // Their seat is the AI's now: they watch, and wake nothing.
            let deps = hosted.deps().clone();
            Box::pin(watch::run(socket, game, deps, snapshots, Watcher::Replaced)).await;
            slot.release().await;
            return;
        }
        Ok(SeatCheck::Stranger) => Err(refused(
            ErrorCode::Forbidden,
            "you hold no seat in this game; watch it instead",
            CLOSE_POLICY,
        )),
        Err(refusal) => Err(refusal),
    };
    let joined = match checked {
        Ok(()) => Box::pin(join(&hosted, game, player)).await,
        Err(refusal) => Err(refusal),
    };
    let (handle, mut joined) = match joined {
        Ok(joined) => joined,
        Err(refusal) => {
            match refusal.tell {
                Tell::Elsewhere(url) => {
                    socket.send_json(&ServerMessage::Elsewhere { url }).await;
                    socket.close(refusal.close, &refusal.body.message).await;
                }
                Tell::Error => {
                    socket
                        .close_with(refusal.body.code, &refusal.body.message, refusal.close)
                        .await;
                }
            }
            slot.release().await;
            return;
        }
    };
    let seats = joined.seats.clone();
    let you = seats.first().copied();
    let told = socket.send(joined.state.clone()).await
        && match joined.rating_change.clone() {
            Some(change) => socket.send(change).await,
            None => true,
        };
    if told {
        let mut seated = Seated {
            handle: &handle,
            joined: &mut joined,
            seats: &seats,
            you,
            slot: &mut slot,
            identity: &identity,
            authenticator: &authenticator,
        };
        serve(&mut socket, &mut seated, &mut tick, hosted.deps()).await;
    }
    handle.leave(seats).await;
    slot.release().await;
}

/// Why a player gets no engine output (a hint, an analysis, an AI game)
/// now.
pub(crate) const ENGINE_BARRED: &str =
    "your rated game is on: no engine help until it ends (hints, analyses and AI games wait)";

/// The rated game `player` has on other than `game`, if any: while it is,
/// the site gives them no engine output anywhere (a hint in a hotseat game
/// set up in the same position is an engine's move all the same). A
/// database that cannot say lets the hint through: the rule guards a
/// rated game, and that game's own checks do not depend on it.
pub(crate) async fn engine_barred(
    deps: &crate::context::Context,
    player: uuid::Uuid,
    game: uuid::Uuid,
) -> Option<uuid::Uuid> {
    crate::store::live_rated_game(&deps.postgres, player, game)
        .await
        .ok()
        .flatten()
}

/// A socket that joined its game as a player.
struct Seated<'a> {
    handle: &'a GameHandle,
    joined: &'a mut Joined,
    seats: &'a [Side],
    you: Option<Side>,
    /// Its place among the player's open sockets, renewed while it lives.
    slot: &'a mut SocketSlot,
    /// Who opened it, in which session: signing out closes it.
    identity: &'a SocketIdentity,
    authenticator: &'a Authenticator,
}

/// The socket's life after joining; returns when it should close (having
/// closed it, or found it closed).
async fn serve(
    socket: &mut Socket,
    seated: &mut Seated<'_>,
    tick: &mut tokio::time::Interval,
    deps: &crate::context::Context,
) {
    let (handle, seats, you) = (seated.handle, seated.seats, seated.you);
    // The hint being searched for this socket, if any: one at a time.
    let mut hint: Option<PendingHint> = None;
    loop {
        tokio::select! {
            (ply, pit) = hint_answer(&mut hint) => {
                hint = None;
                if let Some(pit) = pit
                    && !socket.send(crate::game::host::encode(&ServerMessage::Hint { ply, pit })).await
                {
                    return;
                }
            }
            inbound = socket.next() => {
                let request = |request| handle.request(seats.to_vec(), request);
                let answer = match inbound {
                    Inbound::Message(ClientMessage::Move { pit, ply, hidden_ms }) => {
                        request(Request::Move { pit, ply, hidden_ms }).await
                    }
                    Inbound::Message(ClientMessage::Resign) => request(Request::Resign).await,
                    Inbound::Message(ClientMessage::Undo) => request(Request::Undo).await,
                    Inbound::Message(ClientMessage::Rematch) => request(Request::Rematch).await,
                    Inbound::Message(ClientMessage::ContinueVsAi) => request(Request::ContinueVsAi).await,
                    Inbound::Message(ClientMessage::ClaimVictory) => request(Request::ClaimVictory).await,
                    Inbound::Message(ClientMessage::LeaveRoom) => request(Request::LeaveRoom).await,
                    Inbound::Message(ClientMessage::Berserk) => request(Request::Berserk).await,
                    Inbound::Message(ClientMessage::Sync { since }) => handle.sync(since, you).await,
                    // One at a time: asked again while it is searched, the
                    // hint on its way is the answer.
                    Inbound::Message(ClientMessage::Hint) if hint.is_some() => Ok(Vec::new()),
                    Inbound::Message(ClientMessage::Hint) => match engine_barred(deps, seated.identity.player, handle.id()).await {
                        Some(rated) => {
                            let refused = ErrorBody {
                                game_id: Some(rated),
                                ..ErrorBody::new(ErrorCode::NotAllowed, ENGINE_BARRED)
                            };
                            socket.send_json(&ServerMessage::Error(refused)).await;
                            continue;
                        }
                        None => match handle.hint(seats.to_vec()).await {
                        Ok(HintAnswer::Searching { ply, outcome }) => {
                            hint = Some((ply, outcome));
                            Ok(Vec::new())
                        }
                        Ok(HintAnswer::Refused(refused)) => Ok(vec![refused]),
                        Err(gone) => Err(gone),
                    },
                    },
                    Inbound::Message(ClientMessage::Ping) => Ok(vec![crate::game::host::encode(&ServerMessage::Pong)]),
                    Inbound::Message(ClientMessage::Auth { .. }) => {
                        socket.send_error(ErrorCode::InvalidInput, "already authenticated").await;
                        continue;
                    }
                    Inbound::Invalid(error) => {
                        socket.send_error(error.code, &error.message).await;
                        continue;
                    }
                    Inbound::Flood => {
                        finish(socket, ErrorCode::RateLimited, "too many messages", CLOSE_POLICY).await;
                        return;
                    }
                    Inbound::TooBig => {
                        finish(socket, ErrorCode::PayloadTooLarge, "frame too large", CLOSE_TOO_BIG).await;
                        return;
                    }
                    Inbound::Closed => return,
                    Inbound::Nothing => continue,
                };
                match answer {
                    Ok(texts) => {
                        for text in texts {
                            if !socket.send(text).await {
                                return;
                            }
                        }
                    }
                    Err(_gone) => {
                        finish(socket, ErrorCode::Unavailable, "the game is moving; reconnect", CLOSE_TRY_AGAIN).await;
                        return;
                    }
                }
            }
            event = seated.joined.events.recv() => match event {
                Ok(Outbound::Text(text)) => {
                    if !socket.send(text).await {
                        return;
                    }
                }
                Ok(Outbound::Close(code, reason)) => {
                    socket.close(code, reason).await;
                    return;
                }
                // Too slow to keep up: a fresh snapshot replaces what was missed.
                Err(RecvError::Lagged(_)) => match handle.sync(0, you).await {
                    Ok(texts) => {
                        for text in texts {
                            if !socket.send(text).await {
                                return;
                            }
                        }
                    }
                    Err(_gone) => return,
                },
                Err(RecvError::Closed) => {
                    finish(socket, ErrorCode::Unavailable, "the game is moving; reconnect", CLOSE_TRY_AGAIN).await;
                    return;
                }
            },
            _ = tick.tick() => {
                if seated.authenticator.signed_out(seated.identity) {
                    finish(socket, ErrorCode::TokenInvalid, "this session has been signed out", CLOSE_POLICY).await;
                    return;
                }
                Box::pin(seated.slot.renew(deps.clock.now_millis())).await;
                if !socket.keep_alive().await {
                    socket.close(CLOSE_POLICY, "no sign of life").await;
                    return;
                }
            }
        }
    }
}

/// A hint on its way: the ply it is for, and the AI's answer to come.
type PendingHint = (u32, oneshot::Receiver<ai::Outcome>);

/// The hint's ply and move once the search answers (no move when it found
/// none, or was cancelled); never, while no hint is pending.
async fn hint_answer(hint: &mut Option<PendingHint>) -> (u32, Option<u8>) {
    let Some((ply, answer)) = hint else {
        return std::future::pending().await;
    };
    match answer.await {
        Ok(ai::Outcome::Move { pit, .. }) => (*ply, Some(pit)),
        _ => (*ply, None),
    }
}

async fn finish(socket: &mut Socket, code: ErrorCode, message: &str, close: u16) {
    socket.close_with(code, message, close).await;
}
