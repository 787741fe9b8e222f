//! `GET /v1/tournaments/{id}/live`: the standings pushed as they change.
//!
//! Whoever changes an arena (the pairing wave when a game ends or starts,
//! a join, a pause, a withdrawal) publishes a small "changed" on the
//! arena's Redis channel. On each instance one task per followed arena
//! hears it, reads the board once from Postgres, and hands it to every
//! socket of the instance through a `watch` channel; each socket cuts its
//! own view (its page, its row) from the shared board. A thousand watchers
//! cost one read and a thousand small serialisations, not a thousand
//! reads. The task also reads again at the arena's start and end, and
//! every few seconds while anyone follows, so a lost message costs a few
//! seconds, never a stale table.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use mancala_platform::socket::{Inbound, Socket};
use mancala_platform::{ApiError, Authenticator};
use mancala_proto::ErrorCode;
use mancala_proto::bus::names::tournament_channel;
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG};
use mancala_proto::tournament::{LiveStandings, TournamentClientMessage, TournamentServerMessage};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use uuid::Uuid;

use super::board::Board;
use crate::context::Context;

/// Largest client message.
const MAX_FRAME: usize = 2048;
/// Message credits: a burst, refilled per second.
const BURST: u32 = 10;
const PER_SECOND: u32 = 2;
/// How often a followed arena is read again without being told.
const REREAD_EVERY: Duration = Duration::from_secs(5);
/// Pushes of one arena's standings are at least this far apart (the
/// latest board each time): what a burst of changes costs its followers.
const MIN_PUSH_GAP: Duration = Duration::from_secs(1);

/// What crosses the arena's channel.
#[derive(Debug, Serialize, Deserialize)]
struct Changed {
    /// When the change was made (clock ms).
    at_ms: u64,
}

/// Tells every instance's watchers that arena `id` changed.
pub(crate) async fn changed(deps: &Context, id: Uuid) {
    let message = Changed {
        at_ms: deps.clock.now_millis(),
    };
    if let Ok(text) = serde_json::to_string(&message) {
        deps.pubsub.publish(&tournament_channel(id), text).await;
    }
}

/// A board as pushed: which push it is, and when its change was made.
#[derive(Debug)]
pub(crate) struct Pushed {
    pub board: Board,
    pub version: u64,
    pub changed_at_ms: u64,
}

type Latest = watch::Sender<Option<Arc<Pushed>>>;

/// The arenas this instance's sockets follow, each read by one task.
#[derive(Clone)]
pub(crate) struct Hub {
    deps: Context,
    followed: Arc<Mutex<HashMap<Uuid, Arc<Latest>>>>,
}

impl Hub {
    pub(crate) fn new(deps: Context) -> Hub {
        Hub {
            deps,
            followed: Arc::default(),
        }
    }

    fn followed(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Arc<Latest>>> {
        self.followed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest board of arena `id`, starting its reader when nobody
    /// on this instance followed it yet.
    pub(crate) fn follow(&self, id: Uuid) -> watch::Receiver<Option<Arc<Pushed>>> {
        let mut followed = self.followed();
        if let Some(latest) = followed.get(&id) {
            return latest.subscribe();
        }
        let (sender, receiver) = watch::channel(None);
        let latest = Arc::new(sender);
        followed.insert(id, latest.clone());
        let hub = self.clone();
        actix_web::rt::spawn(async move { hub.read(id, latest).await });
        receiver
    }

    /// Ends the reader when its last socket went: under the map's lock,
    /// so that a socket arriving meanwhile gets a reader.
    fn unfollowed(&self, id: Uuid, latest: &Latest) -> bool {
        let mut followed = self.followed();
        if latest.receiver_count() == 0 {
            followed.remove(&id);
            true
        } else {
            false
        }
    }

    async fn read(&self, id: Uuid, latest: Arc<Latest>) {
        let mut told = self.deps.pubsub.subscribe(&tournament_channel(id)).await;
        let mut version = 0u64;
        let mut pushed_at: Option<std::time::Instant> = None;
        let mut reread = tokio::time::interval(REREAD_EVERY);
        reread.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let boundary = self.next_boundary(&latest);
            let changed_at_ms = tokio::select! {
                message = told.receiver.recv() => {
                    // At most one push a second: the changes of a burst (a
                    // join/withdraw loop, a wave's games ending) wait for
                    // the second to pass and go out as one board.
                    if let Some(wait) = pushed_at
                        .map(|at| MIN_PUSH_GAP.saturating_sub(at.elapsed()))
                        .filter(|wait| !wait.is_zero())
                    {
                        tokio::time::sleep(wait).await;
                    }
                    // The earliest change still waiting: what the slowest
                    // of the coalesced changes waited is what is measured.
                    let mut earliest = at_of(message.ok().as_deref(), &self.deps);
                    while let Ok(more) = told.receiver.try_recv() {
                        earliest = earliest.min(at_of(Some(&more), &self.deps));
                    }
                    Some(earliest)
                }
                _ = reread.tick() => {
                    if self.unfollowed(id, &latest) {
                        return;
                    }
                    None
                }
                _ = tokio::time::sleep(boundary) => Some(self.deps.clock.now_millis()),
            };
            let board = match Board::load(&self.deps.postgres, id).await {
                Ok(Some(board)) => board,
                Ok(None) => {
                    // No such arena: its sockets are told so and close.
                    self.followed().remove(&id);
                    return;
                }
                Err(error) => {
                    tracing::warn!(%error, tournament = %id, "reading the standings");
                    continue;
                }
            };
            let unchanged = latest
                .borrow()
                .as_ref()
                .is_some_and(|pushed| pushed.board == board);
            // A reread pushes only what changed; a change or a boundary
            // pushes anyway (the arena's status moves with the clock).
            if unchanged && changed_at_ms.is_none() {
                continue;
            }
            version += 1;
            let pushed = Pushed {
                board,
                version,
                changed_at_ms: changed_at_ms.unwrap_or_else(|| self.deps.clock.now_millis()),
            };
            latest.send_replace(Some(Arc::new(pushed)));
            pushed_at = Some(std::time::Instant::now());
        }
    }

    /// How long until the followed arena starts or ends (a second after:
    /// its last games have been committed by then), or an hour.
    fn next_boundary(&self, latest: &Latest) -> Duration {
        let now = self.deps.clock.now_utc();
        let far = Duration::from_secs(3600);
        let Some(pushed) = latest.borrow().clone() else {
            return far;
        };
        let row = &pushed.board.row;
        [row.starts_at, row.ends_at + time::Duration::seconds(1)]
            .into_iter()
            .filter(|at| *at > now)
            .map(|at| Duration::from_millis((at - now).whole_milliseconds().max(0) as u64))
            .min()
            .unwrap_or(far)
    }
}

fn at_of(message: Option<&str>, deps: &Context) -> u64 {
    message
        .and_then(|text| serde_json::from_str::<Changed>(text).ok())
        .map_or_else(|| deps.clock.now_millis(), |changed| changed.at_ms)
}

/// Opens a standings socket: anyone, no login needed.
#[tracing::instrument(skip_all)]
pub(crate) async fn live(
    request: HttpRequest,
    body: web::Payload,
    id: web::Path<Uuid>,
    deps: web::Data<Context>,
    hub: web::Data<Hub>,
    authenticator: web::Data<Authenticator>,
    accounts: web::Data<crate::accounts::Accounts>,
) -> Result<HttpResponse, ApiError> {
    // Following is new work: a busy instance keeps its CPU for the games.
    deps.admission.admit("tournament_live")?;
    if !mancala_platform::http::origin_allowed(&request, &deps.settings.sockets.allowed_origins) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this page's origin may not open the standings",
        ));
    }
    let id = id.into_inner();
    if super::store::get(&deps.postgres, id).await?.is_none() {
        return Err(ApiError::new(ErrorCode::NotFound, "no such tournament"));
    }
    // Following needs no sign-in: every follower holds a place among the
    // sockets nobody signed in for (a follower who signs in on it too:
    // the standings are the same for everyone).
    let address =
        mancala_platform::http::client_address(&request, accounts.settings().trust_forwarded_for);
    let place = deps.anonymous_sockets.enter(&address);
    let (response, session, stream) = actix_ws::handle(&request, body)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "expected a WebSocket upgrade"))?;
    let limits = deps.settings.sockets.limits(MAX_FRAME, BURST, PER_SECOND);
    let mut socket = Socket::new(session, stream, limits, deps.clock.clone());
    let follower_deps = deps.get_ref().clone();
    let authenticator = authenticator.get_ref().clone();
    let hub = hub.get_ref().clone();
    actix_web::rt::spawn(async move {
        match place {
            Ok(_held_until_closed) => {
                let follower = Follower {
                    socket,
                    deps: follower_deps,
                    viewer: None,
                    page: 1,
                };
                follower.run(hub.follow(id), authenticator).await;
            }
            Err(refused) => socket.turn_away(refused).await,
        }
    });
    Ok(response)
}

struct Follower {
    socket: Socket<TournamentClientMessage>,
    deps: Context,
    viewer: Option<Uuid>,
    page: u32,
}

impl Follower {
    #[tracing::instrument(name = "tournament_socket", skip_all)]
    async fn run(
        mut self,
        mut boards: watch::Receiver<Option<Arc<Pushed>>>,
        authenticator: Authenticator,
    ) {
        let mut tick = tokio::time::interval(self.deps.settings.lobby_tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Others follow the arena already: what they have, at once.
        let current = boards.borrow_and_update().clone();
        if let Some(pushed) = current
            && !self.push(&pushed).await
        {
            return;
        }
        loop {
            tokio::select! {
                inbound = self.socket.next() => {
                    let message = match inbound {
                        Inbound::Message(message) => message,
                        Inbound::Nothing => continue,
                        Inbound::Closed => break,
                        Inbound::TooBig => {
                            self.socket.close_with(ErrorCode::PayloadTooLarge, "frame too large", CLOSE_TOO_BIG).await;
                            break;
                        }
                        Inbound::Flood => {
                            self.socket.close_with(ErrorCode::RateLimited, "too many messages", CLOSE_POLICY).await;
                            break;
                        }
                        Inbound::Invalid(error) => {
                            self.socket.send_error(error.code, &error.message).await;
                            continue;
                        }
                    };
                    match message {
                        TournamentClientMessage::Auth { token } => match authenticator.identify(&token) {
                            Ok(identity) => self.viewer = Some(identity.player),
                            Err(error) => {
                                self.socket.send_error(error.code, &error.message).await;
                                continue;
                            }
                        },
                        TournamentClientMessage::Page { page } => self.page = page.max(1),
                        TournamentClientMessage::Ping => {
                            self.socket.send_json(&TournamentServerMessage::Pong).await;
                            continue;
                        }
                    }
                    let latest = boards.borrow().clone();
                    if let Some(pushed) = latest && !self.push(&pushed).await {
                        break;
                    }
                }
                changed = boards.changed() => {
                    if changed.is_err() {
                        self.socket.close_with(ErrorCode::NotFound, "no such tournament", CLOSE_POLICY).await;
                        break;
                    }
                    let latest = boards.borrow_and_update().clone();
                    if let Some(pushed) = latest && !self.push(&pushed).await {
                        break;
                    }
                }
                _ = tick.tick() => {
                    if !self.socket.keep_alive().await {
                        self.socket.close(CLOSE_POLICY, "no sign of life").await;
                        break;
                    }
                }
            }
        }
    }

    async fn push(&mut self, pushed: &Pushed) -> bool {
        let view = pushed
            .board
            .view(self.deps.clock.now_utc(), self.viewer, self.page);
        let message = TournamentServerMessage::Standings(Box::new(LiveStandings {
            version: pushed.version,
            changed_at_ms: pushed.changed_at_ms,
            view,
        }));
        self.socket.send_json(&message).await
    }
}
