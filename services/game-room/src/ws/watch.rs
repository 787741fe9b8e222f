//! `GET /v1/games/{id}/watch`: anyone, on any instance, no login. A
//! snapshot from Postgres first, then the game's events as its host
//! publishes them through Redis. A gap in the versions (a lost message, a
//! Redis restart) is mended with a fresh snapshot.

use actix_web::{HttpRequest, HttpResponse, web};
use bytestring::ByteString;
use mancala_platform::ApiError;
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG, CLOSE_TRY_AGAIN};
use mancala_proto::game::ServerMessage;
use mancala_proto::{ClientMessage, ErrorCode};
use tokio::sync::broadcast::error::RecvError;
use uuid::Uuid;

use super::socket::{Inbound, Socket, origin_allowed};
use crate::game::actor::{Deps, encode};
use crate::game::load::load;
use crate::game::{LiveGame, Rooms};

pub async fn watch(
    request: HttpRequest,
    body: web::Payload,
    game: web::Path<Uuid>,
    rooms: web::Data<Rooms>,
) -> Result<HttpResponse, ApiError> {
    let deps = rooms.deps().clone();
    if !origin_allowed(&request, &deps.settings) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this origin may not open game sockets",
        ));
    }
    let (response, session, stream) = actix_ws::handle(&request, body)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "expected a WebSocket upgrade"))?;
    let socket = Socket::new(session, stream, &deps.settings, deps.clock.clone());
    actix_web::rt::spawn(run(socket, game.into_inner(), deps, Watcher::Anyone));
    Ok(response)
}

/// Who watches: anyone, or a player whose seat an AI took over (on their
/// play socket). Only what they are told when they try to act differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watcher {
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
            Watcher::Replaced => (ErrorCode::NotAllowed, crate::game::actor::REPLACED),
        }
    }
}

/// The game now, as a watcher's snapshot, with its version.
async fn snapshot(deps: &Deps, game: Uuid) -> Result<Option<(LiveGame, ByteString)>, ()> {
    let live = match load(&deps.postgres, game).await {
        Ok(Some(live)) => live,
        Ok(None) => return Ok(None),
        Err(error) => {
            tracing::warn!(%error, %game, "loading a game to watch");
            return Err(());
        }
    };
    let connected = deps.hub.presence(game).await;
    let watchers = deps.hub.watchers(game).await;
    let state = live.state(
        None,
        connected,
        watchers,
        [None, None],
        deps.clock.now_millis(),
    );
    Ok(Some((live, encode(&ServerMessage::State(Box::new(state))))))
}

/// The version a published event carries, if it is a versioned one.
fn version_of(text: &str) -> Option<u64> {
    let versioned = [
        r#"{"t":"moved""#,
        r#"{"t":"over""#,
        r#"{"t":"undone""#,
        r#"{"t":"taken_over""#,
    ];
    if !versioned.iter().any(|tag| text.starts_with(tag)) {
        return None;
    }
    match serde_json::from_str(text).ok()? {
        ServerMessage::Moved(moved) => Some(moved.version),
        ServerMessage::Over(over) => Some(over.version),
        ServerMessage::Undone(undone) => Some(undone.version),
        ServerMessage::TakenOver { version, .. } => Some(version),
        _ => None,
    }
}

/// What a watcher behind `since` needs: nothing, or the game as it is
/// (the stored game keeps no event log to replay from).
fn events_since(live: &LiveGame, since: u64, state: ByteString) -> Vec<ByteString> {
    if since >= live.version() {
        Vec::new()
    } else {
        vec![state]
    }
}

/// Serves a watcher: never hosts the game, so watching wakes nothing.
pub async fn run(mut socket: Socket, game: Uuid, deps: Deps, watcher: Watcher) {
    // Subscribe before reading the snapshot, so nothing falls between.
    let mut subscription = deps.hub.subscribe(game).await;
    let mut version = match snapshot(&deps, game).await {
        Ok(Some((live, state))) => {
            if !socket.send(state).await {
                return;
            }
            live.version()
        }
        Ok(None) => {
            socket
                .close_with(ErrorCode::NotFound, "no such game", CLOSE_POLICY)
                .await;
            return;
        }
        Err(()) => {
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
    let mut tick = tokio::time::interval(deps.settings.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            inbound = socket.next() => match inbound {
                Inbound::Message(ClientMessage::Ping) => {
                    if !socket.send_message(&ServerMessage::Pong).await {
                        break;
                    }
                }
                Inbound::Message(ClientMessage::Sync { since }) => {
                    match snapshot(&deps, game).await {
                        Ok(Some((live, state))) => {
                            version = live.version();
                            for text in events_since(&live, since, state) {
                                if !socket.send(text).await {
                                    break;
                                }
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
                let resync = match event {
                    Ok(text) => match version_of(&text) {
                        Some(seen) if seen <= version => false,
                        Some(seen) if seen == version + 1 => {
                            version = seen;
                            if !socket.send(text).await {
                                break;
                            }
                            false
                        }
                        Some(_) => true,
                        None => {
                            if !socket.send(text).await {
                                break;
                            }
                            false
                        }
                    },
                    Err(RecvError::Lagged(_)) => true,
                    Err(RecvError::Closed) => {
                        subscription = deps.hub.subscribe(game).await;
                        true
                    }
                };
                if resync {
                    match snapshot(&deps, game).await {
                        Ok(Some((live, state))) => {
                            version = live.version();
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
