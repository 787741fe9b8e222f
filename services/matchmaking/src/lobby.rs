//! `GET /v1/lobby`: a player's lobby socket. The first message is `auth`;
//! then `queue_join` and `queue_leave`. The socket hears `matched` on the
//! player's Redis channel from whichever instance paired them, and gets
//! `queue_status` and `lobby_stats` every few seconds.

use actix_web::{HttpRequest, HttpResponse, web};
use mancala_platform::socket::{Inbound, Socket};
use mancala_platform::socket_slots::{self, SocketSlot};
use mancala_platform::{ApiError, Authenticator, Redis, SocketIdentity};
use mancala_proto::ErrorCode;
use mancala_proto::error::{CLOSE_POLICY, CLOSE_TOO_BIG};
use mancala_proto::lobby::{LobbyClientMessage, LobbyServerMessage, QueueStatus};
use redis::AsyncCommands;
use uuid::Uuid;

use crate::context::Context;
use crate::pairer::player_channel;
use crate::queue::pairing::{self, Ticket};
use crate::queue::{QueueSpec, store};
use crate::ratings;
use crate::stats::stats;

/// Largest lobby message.
const MAX_FRAME: usize = 2048;
/// Message credits: a burst, refilled per second.
const BURST: u32 = 20;
const PER_SECOND: u32 = 5;

use mancala_proto::bus::names::ONLINE;

/// Counts a player online until `until` (clock ms).
pub(crate) async fn mark_online(redis: &Redis, player: Uuid, until: u64) {
    let marked: Result<(), _> = redis
        .connection()
        .zadd(redis.key(ONLINE), player.to_string(), until)
        .await;
    if let Err(error) = marked {
        tracing::warn!(%error, "marking a player online");
    }
}

#[tracing::instrument(skip_all)]
pub(crate) async fn lobby(
    request: HttpRequest,
    body: web::Payload,
    deps: web::Data<Context>,
    authenticator: web::Data<Authenticator>,
    accounts: web::Data<crate::accounts::Accounts>,
) -> Result<HttpResponse, ApiError> {
    if !mancala_platform::http::origin_allowed(&request, &deps.settings.sockets.allowed_origins) {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "this page's origin may not open the lobby",
        ));
    }
    // Anonymous until its `auth`: it holds a place among the sockets
    // nobody signed in for.
    let address =
        mancala_platform::http::client_address(&request, accounts.settings().trust_forwarded_for);
    let place = deps.anonymous_sockets.enter(&address);
    let (response, session, stream) = actix_ws::handle(&request, body)
        .map_err(|_| ApiError::new(ErrorCode::InvalidInput, "expected a WebSocket upgrade"))?;
    let deps = deps.get_ref().clone();
    let limits = deps.settings.sockets.limits(MAX_FRAME, BURST, PER_SECOND);
    let mut socket = Socket::new(session, stream, limits, deps.clock.clone());
    let authenticator = authenticator.get_ref().clone();
    actix_web::rt::spawn(async move {
        let anonymous = match place {
            Ok(place) => place,
            Err(refused) => return socket.turn_away(refused).await,
        };
        let mut lobby = Lobby {
            socket,
            deps,
            player: None,
            identity: None,
            slot: None,
            anonymous: Some(anonymous),
        };
        lobby.run(authenticator).await;
        if let Some(slot) = lobby.slot.take() {
            slot.release().await;
        }
    });
    Ok(response)
}

struct Lobby {
    socket: Socket<LobbyClientMessage>,
    deps: Context,
    player: Option<Uuid>,
    /// The session its token belongs to: signing out closes the socket.
    identity: Option<SocketIdentity>,
    /// Its place among the sockets nobody signed in for, until `auth`.
    anonymous: Option<mancala_platform::open_sockets::AnonymousPass>,
    /// Its place among the player's open sockets.
    slot: Option<SocketSlot>,
}

impl Lobby {
    async fn send(&mut self, message: &LobbyServerMessage) -> bool {
        self.socket.send_json(message).await
    }

    async fn error(&mut self, code: ErrorCode, message: &str) -> bool {
        self.socket.send_error(code, message).await
    }

    async fn close(&mut self, code: u16, reason: &str) {
        self.socket.close(code, reason).await;
    }

    async fn keep_alive(&self, player: Uuid) {
        let now = self.deps.clock.now_millis();
        let grace = self.deps.settings.lobby_grace.as_millis() as u64;
        if let Err(error) = store::keep_alive(&self.deps.redis, player, now + grace).await {
            tracing::warn!(%error, "keeping tickets alive");
        }
        mark_online(&self.deps.redis, player, now + grace.max(30_000)).await;
    }

    #[tracing::instrument(name = "lobby_socket", skip_all)]
    async fn run(&mut self, authenticator: Authenticator) {
        let mut tick = tokio::time::interval(self.deps.settings.lobby_tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut subscription = None;
        let mut last_stats = 0u64;
        loop {
            let channel = async {
                match subscription.as_mut() {
                    Some(sub) => {
                        let sub: &mut mancala_platform::pubsub::Subscription = sub;
                        sub.receiver.recv().await.ok()
                    }
                    None => std::future::pending().await,
                }
            };
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
                            self.error(error.code, &error.message).await;
                            if self.player.is_none() {
                                self.close(CLOSE_POLICY, "the first message must be auth").await;
                                break;
                            }
                            continue;
                        }
                    };
                    match (self.player, message) {
                        (None, LobbyClientMessage::Auth { token }) => match authenticator.identify(&token) {
                            Ok(identity) => {
                                let player = identity.player;
                                let limit = self.deps.settings.sockets.sockets_per_player;
                                let now = self.deps.clock.now_millis();
                                let Some(slot) = socket_slots::claim(&self.deps.redis, &player.to_string(), limit, now).await else {
                                    self.error(ErrorCode::RateLimited, "too many sockets open for this player").await;
                                    self.close(CLOSE_POLICY, "too many sockets").await;
                                    break;
                                };
                                self.slot = Some(slot);
                                self.anonymous = None;
                                self.player = Some(player);
                                self.identity = Some(identity);
                                subscription = Some(self.deps.pubsub.subscribe(&player_channel(player)).await);
                                self.resend_match(player).await;
                                self.keep_alive(player).await;
                                if let Ok(stats) = stats(&self.deps).await {
                                    self.send(&LobbyServerMessage::LobbyStats(stats)).await;
                                }
                                self.fair_play(player).await;
                            }
                            Err(error) => {
                                self.error(error.code, &error.message).await;
                                self.close(CLOSE_POLICY, "bad token").await;
                                break;
                            }
                        },
                        (None, _) => {
                            self.error(ErrorCode::Unauthenticated, "the first message must be auth").await;
                            self.close(CLOSE_POLICY, "the first message must be auth").await;
                            break;
                        }
                        (Some(_), LobbyClientMessage::Auth { .. }) => {
                            self.error(ErrorCode::InvalidInput, "already authenticated").await;
                        }
                        (Some(player), LobbyClientMessage::QueueJoin { variant, time_control }) => {
                            let queues = &self.deps.settings.queues;
                            match QueueSpec::find(queues, variant, time_control) {
                                Some(queue) => self.join(player, queue).await,
                                None => {
                                    let message = QueueSpec::not_offered(queues, variant, time_control);
                                    self.error(ErrorCode::InvalidInput, &message).await;
                                }
                            }
                        }
                        (Some(player), LobbyClientMessage::QueueLeave { variant, time_control }) => {
                            let queue = match variant.zip(time_control) {
                                // Leaving every queue.
                                None => None,
                                Some((variant, time_control)) => {
                                    let queues = &self.deps.settings.queues;
                                    let Some(queue) = QueueSpec::find(queues, variant, time_control) else {
                                        let message = QueueSpec::not_offered(queues, variant, time_control);
                                        self.error(ErrorCode::InvalidInput, &message).await;
                                        continue;
                                    };
                                    Some(queue.name)
                                }
                            };
                            if let Err(error) = store::leave(&self.deps.redis, player, queue.as_deref()).await {
                                tracing::warn!(%error, "leaving a queue");
                                self.error(ErrorCode::Unavailable, "retry shortly").await;
                            }
                        }
                        (Some(_), LobbyClientMessage::Ping) => {
                            self.send(&LobbyServerMessage::Pong).await;
                        }
                    }
                }
                Some(text) = channel => {
                    if !self.socket.send(text).await {
                        break;
                    }
                }
                _ = tick.tick() => {
                    let now = self.deps.clock.now_millis();
                    let Some(player) = self.player else {
                        if self.socket.auth_expired() {
                            self.error(ErrorCode::Unauthenticated, "no auth message in time").await;
                            self.close(CLOSE_POLICY, "no auth message in time").await;
                            break;
                        }
                        continue;
                    };
                    if self.identity.as_ref().is_some_and(|identity| authenticator.signed_out(identity)) {
                        self.error(ErrorCode::TokenInvalid, "this session has been signed out").await;
                        self.close(CLOSE_POLICY, "signed out").await;
                        break;
                    }
                    // A client that stopped answering (a half-open
                    // connection) must not keep its tickets or its
                    // "online" mark alive.
                    if !self.socket.keep_alive().await {
                        self.close(CLOSE_POLICY, "no sign of life").await;
                        break;
                    }
                    self.keep_alive(player).await;
                    if let Some(slot) = self.slot.as_mut() {
                        slot.renew(now).await;
                    }
                    self.statuses(player).await;
                    if now.saturating_sub(last_stats) >= self.deps.settings.stats_every.as_millis() as u64 {
                        last_stats = now;
                        if let Ok(stats) = stats(&self.deps).await
                            && !self.send(&LobbyServerMessage::LobbyStats(stats)).await
                        {
                            break;
                        }
                    }
                }
            }
        }
    }

    async fn join(&mut self, player: Uuid, spec: QueueSpec) {
        let deps = &self.deps;
        if let Err(refusal) = crate::fair_play::may_play_ranked(deps, player).await {
            if refusal.code == ErrorCode::RankedBanned {
                self.fair_play(player).await;
            }
            self.socket.send_refusal(&refusal).await;
            return;
        }
        if let Err(busy) = deps.admission.admit_queue(waiting(deps, player).await) {
            self.socket.send_refusal(&busy).await;
            return;
        }
        let queue = spec.name.as_str();
        let joined = async {
            let rating = ratings::rating(&deps.postgres, player, spec.variant.as_str())
                .await
                .map_err(|_| ())?;
            let now = deps.clock.now_millis();
            // A player whose last game the other side never started (or
            // aborted) waited for it already: they go in as if they had
            // waited to the AI fallback, paired with the first one near
            // or given the AI at the next wave.
            let owed = crate::fair_play::owed_a_place(deps, player)
                .await
                .map_err(|_| ())?;
            let waited = if owed {
                deps.settings.ai_fallback.as_millis() as u64
            } else {
                0
            };
            let ticket = Ticket {
                player,
                rating: rating.rating,
                rd: rating.rd,
                joined_ms: now.saturating_sub(waited),
                last_opponent: store::last_opponent(&deps.redis, queue, player)
                    .await
                    .map_err(|_| ())?,
                first_balance: crate::fair_play::first_balance(deps, player)
                    .await
                    .map_err(|_| ())?,
            };
            store::join(&deps.redis, queue, &ticket)
                .await
                .map_err(|_| ())
        }
        .await;
        if joined.is_err() {
            self.error(ErrorCode::Unavailable, "the queue is unavailable; retry")
                .await;
            return;
        }
        self.statuses(player).await;
    }

    /// The player's fair-play record, when it says something (a warning,
    /// a ban, a moderator's sanction): at sign-in, and with a refused
    /// queue entry.
    async fn fair_play(&mut self, player: Uuid) {
        let Ok(standing) = crate::fair_play::standing(&self.deps, player).await else {
            return;
        };
        if standing.warned || standing.banned_secs.is_some() || !standing.sanctions.is_empty() {
            self.send(&LobbyServerMessage::FairPlay(standing)).await;
        }
    }

    /// A `matched` this player may have missed (published while no lobby
    /// socket of theirs was open), again, while its game is still live.
    async fn resend_match(&mut self, player: Uuid) {
        let Some((game, message)) = store::remembered_match(&self.deps.redis, player).await else {
            return;
        };
        let live = crate::games::is_live(&self.deps.postgres, game)
            .await
            .unwrap_or(false);
        if live {
            self.socket.send(message.into()).await;
        }
    }

    /// `queue_status` for every queue the player waits in.
    async fn statuses(&mut self, player: Uuid) {
        let deps = self.deps.clone();
        let Ok(queues) = store::queues_of(&deps.redis, player).await else {
            return;
        };
        let now = deps.clock.now_millis();
        for queue in queues {
            let Ok(tickets) = store::tickets(&deps.redis, &queue).await else {
                continue;
            };
            let Some(mine) = tickets.iter().find(|ticket| ticket.player == player) else {
                continue;
            };
            let fallback_at = mine.joined_ms + deps.settings.ai_fallback.as_millis() as u64;
            let forecast = pairing::forecast(mine, &tickets, &deps.rules, now, fallback_at);
            let status = QueueStatus {
                queue,
                waiting: tickets.len() as u64,
                window: deps.rules.window(mine, now),
                estimated_wait_ms: forecast.wait_ms,
                by_ai_fallback: forecast.ai_fallback,
                last_opponents_waiting: forecast.held_apart,
                ai_fallback_in_ms: fallback_at.saturating_sub(now),
            };
            if !self.send(&LobbyServerMessage::QueueStatus(status)).await {
                return;
            }
        }
    }
}

/// Players waiting in every queue who will take a free place, when the
/// instance has a games limit: each counted once however many queues they
/// wait in, none with a live game (its place comes back when it ends, in
/// time for the next), and `joining` not at all when they wait already
/// (another queue adds nobody). Queues that cannot be read count none:
/// the games limit still stands behind them.
async fn waiting(deps: &Context, joining: Uuid) -> u64 {
    if deps.admission.free_places().is_none() {
        return 0;
    }
    let Ok(mut players) = store::waiting_players(&deps.redis, &deps.settings.queues).await else {
        return 0;
    };
    players.remove(&joining);
    let players: Vec<Uuid> = players.into_iter().collect();
    let playing = crate::games::playing(&deps.postgres, &players)
        .await
        .unwrap_or_default();
    players.iter().filter(|p| !playing.contains(p)).count() as u64
}
