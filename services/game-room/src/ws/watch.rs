//! `GET /v1/games/{id}/watch`: anyone, on any instance, no login. A
//! snapshot from Postgres first, then the game's events as its host
//! publishes them through Redis. A gap in the versions (a lost message, a
//! Redis restart) is mended with a fresh snapshot.

use actix_web::{HttpRequest, HttpResponse, web};
use bytestring::ByteString;
use mancala_platform::ApiError;
use mancala_proto::bus::{GameBus, Route};
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG, CLOSE_TRY_AGAIN};
use mancala_proto::game::ServerMessage;
use mancala_proto::{ClientMessage, ErrorCode};
use tokio::sync::broadcast::error::RecvError;
use uuid::Uuid;

use super::snapshots::{Snapshots, Unavailable};
use super::socket::{Inbound, Socket, origin_allowed};
use crate::context::Context;
use crate::game::HostedGames;

#[tracing::instrument(skip_all)]
pub(crate) async fn watch(
    request: HttpRequest,
    body: web::Payload,
    game: web::Path<Uuid>,
    hosted: web::Data<HostedGames>,
    snapshots: web::Data<Snapshots>,
) -> Result<HttpResponse, ApiError> {
    let deps = hosted.deps().clone();
    // Watching is new work: a busy instance keeps its CPU for the games.
    deps.admission.admit("watch")?;
    if !origin_allowed(&request, &deps.settings) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this origin may not open game sockets",
        ));
    }
    let address =
        mancala_platform::http::client_address(&request, deps.settings.trust_forwarded_for);
    let place = deps.anonymous_sockets.enter(&address);
    let (response, session, stream) = actix_ws::handle(&request, body)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "expected a WebSocket upgrade"))?;
    let mut socket = super::socket::open(session, stream, &deps.settings, deps.clock.clone());
    let snapshots = snapshots.get_ref().clone();
    let game = game.into_inner();
    actix_web::rt::spawn(async move {
        match place {
            Ok(_held_until_closed) => run(socket, game, deps, snapshots, Watcher::Anyone).await,
            Err(refused) => socket.turn_away(refused).await,
        }
    });
    Ok(response)
}

/// Who watches: anyone, or a player whose seat an AI took over (on their
/// play socket). Only what they are told when they try to act differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Watcher {
    Anyone,
    Replaced,
}

impl Watcher {
    fn refusal(self) -> (ErrorCode, &'static str) {
        match self {
            Watcher::Anyone => (
                ErrorCode::Forbidden,
                "watchers cannot play; open /play to play",
            ),
            Watcher::Replaced => (ErrorCode::NotAllowed, crate::game::host::REPLACED),
        }
    }
}

/// The game at `at_least` or newer, from the process's shared snapshots.
///
/// Boxed, like the subscription below: a task's future is as large as the
/// largest thing it ever awaits, and loading a game (a database query) is
/// kilobytes an idle watcher would otherwise carry for its whole life.
async fn snapshot(
    deps: &Context,
    snapshots: &Snapshots,
    game: Uuid,
    at_least: u64,
) -> Result<Option<(u64, ByteString)>, Unavailable> {
    Box::pin(snapshots.state(deps, game, at_least)).await
}

/// A message from the game's channel: its version when it is an event,
/// and what to pass to the watcher (`None`: a message that is not ours).
fn routed(text: &ByteString) -> Option<(Route, Option<u64>, ByteString)> {
    let (route, start) = GameBus::route(text).ok()?;
    let version = match route {
        Route::Event { version } => Some(version),
        Route::Notice | Route::Watchers { .. } | Route::RatingChange => None,
    };
    Some((route, version, text.slice_ref(&text[start..])))
}

/// Serves a watcher: never hosts the game, so watching wakes nothing.
#[tracing::instrument(name = "watch_socket", skip_all, fields(%game))]
pub(crate) async fn run(
    mut socket: Socket,
    game: Uuid,
    deps: Context,
    snapshots: Snapshots,
    watcher: Watcher,
) {
    // Subscribe before reading the snapshot, so nothing falls between.
    let mut subscription = Box::pin(deps.hub.subscribe(game)).await;
    let mut version = match snapshot(&deps, &snapshots, game, 0).await {
        Ok(Some((version, state))) => {
            if !socket.send(state).await {
                return;
            }
            version
        }
        Ok(None) => {
            socket
                .close_with(ErrorCode::NotFound, "no such game", CLOSE_POLICY)
                .await;
            return;
        }
        Err(Unavailable) => {
            socket
                .close_with(
                    ErrorCode::Unavailable,
                    "the game cannot be loaded now",
                    CLOSE_TRY_AGAIN,
                )
                .await;
            return;
        }
    };
    deps.hub.watcher_changed(game, 1);
    let mut gaps = deps.hub.gaps();
    gaps.mark_unchanged();
    let mut tick = tokio::time::interval(deps.settings.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            inbound = socket.next() => match inbound {
                Inbound::Message(ClientMessage::Ping) => {
                    if !socket.send_json(&ServerMessage::Pong).await {
                        break;
                    }
                }
                // Up to date as far as this socket knows: nothing to load.
                Inbound::Message(ClientMessage::Sync { since }) if since >= version => {}
                Inbound::Message(ClientMessage::Sync { .. }) => {
                    match snapshot(&deps, &snapshots, game, version).await {
                        Ok(Some((now, state))) => {
                            version = now;
                            if !socket.send(state).await {
                                break;
                            }
                        }
                        _ => {
                            socket.send_error(ErrorCode::Unavailable, "retry the sync shortly").await;
                        }
                    }
                }
                Inbound::Message(_) => {
                    let (code, message) = watcher.refusal();
                    socket.send_error(code, message).await;
                }
                Inbound::Invalid(error) => {
                    socket.send_error(error.code, &error.message).await;
                }
                Inbound::Flood => {
                    socket.close_with(ErrorCode::RateLimited, "too many messages", CLOSE_POLICY).await;
                    break;
                }
                Inbound::TooBig => {
                    socket.close_with(ErrorCode::PayloadTooLarge, "frame too large", CLOSE_TOO_BIG).await;
                    break;
                }
                Inbound::Closed => break,
                Inbound::Nothing => {}
            },
            event = subscription.receiver.recv() => {
                let event = event.map(|text| {
                    let routed = routed(&text)?;
                    if matches!(routed.0, Route::Notice) {
                        snapshots.noticed(game);
                    }
                    Some((routed.1, routed.2))
                });
                let seen = event.as_ref().ok().and_then(|routed| routed.as_ref()?.0);
                if let Some(seen) = seen {
                    snapshots.saw(game, seen);
                }
                let resync = match event {
                    Ok(None) => None,
                    Ok(Some((_, text))) => match seen {
                        Some(seen) if seen <= version => None,
                        Some(seen) if seen == version + 1 => {
                            version = seen;
                            if !socket.send(text).await {
                                break;
                            }
                            None
                        }
                        // A gap: a snapshot at least as new as this event.
                        Some(seen) => Some(seen),
                        None => {
                            if !socket.send(text).await {
                                break;
                            }
                            None
                        }
                    },
                    Err(RecvError::Lagged(_)) => Some(version + 1),
                    Err(RecvError::Closed) => {
                        subscription = Box::pin(deps.hub.subscribe(game)).await;
                        Some(version)
                    }
                };
                if let Some(at_least) = resync {
                    match snapshot(&deps, &snapshots, game, at_least).await {
                        Ok(Some((now, state))) => {
                            version = now;
                            if !socket.send(state).await {
                                break;
                            }
                        }
                        _ => {
                            socket.close_with(ErrorCode::Unavailable, "lost the game; reconnect", CLOSE_TRY_AGAIN).await;
                            break;
                        }
                    }
                }
            }
            // Redis may have lost this game's events (its shard failed
            // over): catch up from Postgres, since a game that went quiet
            // (or ended) meanwhile sends nothing that would show the gap.
            Ok(()) = gaps.changed() => {
                match snapshot(&deps, &snapshots, game, version + 1).await {
                    Ok(Some((now, state))) if now > version => {
                        version = now;
                        if !socket.send(state).await {
                            break;
                        }
                    }
                    // Up to date, or Postgres away too: the next nudge or
                    // event tells.
                    _ => {}
                }
            }
            _ = tick.tick() => {
                if !socket.keep_alive().await {
                    socket.close(CLOSE_POLICY, "no sign of life").await;
                    break;
                }
            }
        }
    }
    deps.hub.watcher_changed(game, -1);
}
