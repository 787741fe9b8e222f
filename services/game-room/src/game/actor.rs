//! One task per hosted game: it owns the [`LiveGame`], takes commands from
//! the game's sockets through a cloneable [`GameHandle`], makes each move
//! durable before applying and broadcasting it, and keeps the host lease.
//!
//! Serial by construction: one command at a time, so two moves of one game
//! can never race, and events leave in version order.

use std::collections::VecDeque;
use std::sync::Arc;

use bytestring::ByteString;
use mancala_platform::{Clock, Redis};
use mancala_proto::ErrorCode;
use mancala_proto::game::{Over, PlayedMove, ServerMessage};
use sqlx::PgPool;
use tokio::sync::{broadcast, mpsc, oneshot};
use uuid::Uuid;

use super::live::{LiveGame, MoveDecision, PlannedMove, Refusal};
use super::rooms::{Lease, Rooms};
use crate::config::RoomSettings;
use crate::hub::Hub;
use crate::store;

/// Versioned events kept for `sync`; an older gap gets a fresh state.
const RECENT_EVENTS: usize = 256;
/// Events buffered per local socket before a slow one lags (and resyncs).
const EVENT_CAPACITY: usize = 128;
/// Commands queued per game before senders wait.
const COMMAND_CAPACITY: usize = 64;

/// What every hosted game needs.
#[derive(Clone)]
pub struct Deps {
    pub postgres: PgPool,
    pub redis: Redis,
    pub hub: Hub,
    pub clock: Clock,
    pub settings: Arc<RoomSettings>,
}

/// A hosted game, as its sockets reach it.
#[derive(Clone, Debug)]
pub struct GameHandle {
    id: Uuid,
    commands: mpsc::Sender<Command>,
}

/// A socket's place in a game after joining.
pub struct Joined {
    /// Every event of the game, already serialised.
    pub events: broadcast::Receiver<ByteString>,
    /// The snapshot for this socket.
    pub state: ByteString,
    /// The seats the player holds (two in a hotseat game).
    pub seats: Vec<u8>,
}

/// The game task is gone (unloaded or lost its lease): ask the rooms again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the game is no longer hosted here")]
pub struct Gone;

enum Command {
    Join {
        player: Uuid,
        reply: oneshot::Sender<Result<Joined, Refusal>>,
    },
    Leave {
        seats: Vec<u8>,
    },
    Move {
        seats: Vec<u8>,
        pit: u8,
        ply: u32,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Resign {
        seats: Vec<u8>,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Sync {
        since: u64,
        you: Option<u8>,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
}

impl GameHandle {
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Whether two handles reach the same task.
    pub fn same(&self, other: &GameHandle) -> bool {
        self.commands.same_channel(&other.commands)
    }

    async fn ask<T>(&self, command: impl FnOnce(oneshot::Sender<T>) -> Command) -> Result<T, Gone> {
        let (reply, answer) = oneshot::channel();
        self.commands.send(command(reply)).await.map_err(|_| Gone)?;
        answer.await.map_err(|_| Gone)
    }

    /// Joins as `player`; refused unless they hold a seat.
    pub async fn join(&self, player: Uuid) -> Result<Result<Joined, Refusal>, Gone> {
        self.ask(|reply| Command::Join { player, reply }).await
    }

    /// A socket of these seats closed.
    pub async fn leave(&self, seats: Vec<u8>) {
        let _ = self.commands.send(Command::Leave { seats }).await;
    }

    /// A move; the answer holds only what goes to this socket alone
    /// (errors, repeats); the `moved` itself comes through the events.
    pub async fn play(&self, seats: Vec<u8>, pit: u8, ply: u32) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Move {
            seats,
            pit,
            ply,
            reply,
        })
        .await
    }

    pub async fn resign(&self, seats: Vec<u8>) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Resign { seats, reply }).await
    }

    pub async fn sync(&self, since: u64, you: Option<u8>) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Sync { since, you, reply }).await
    }
}

/// Serialises a message once for every receiver.
pub fn encode(message: &ServerMessage) -> ByteString {
    ByteString::from(serde_json::to_string(message).unwrap_or_default())
}

fn error_text(code: ErrorCode, message: &str) -> ByteString {
    encode(&ServerMessage::Error(mancala_proto::ErrorBody {
        code,
        message: message.to_owned(),
    }))
}

struct Actor {
    live: LiveGame,
    deps: Deps,
    events: broadcast::Sender<ByteString>,
    recent: VecDeque<(u64, ByteString)>,
    /// Sockets per seat.
    connections: [u32; 2],
    /// Watchers across instances, as last published.
    watchers: u32,
    /// When the last player socket closed (clock millis).
    idle_since: Option<u64>,
}

/// Starts the task for a loaded game under `lease`.
pub fn spawn(live: LiveGame, deps: Deps, lease: Lease, rooms: Rooms) -> GameHandle {
    let (commands, inbox) = mpsc::channel(COMMAND_CAPACITY);
    let handle = GameHandle {
        id: live.id(),
        commands,
    };
    let (events, _) = broadcast::channel(EVENT_CAPACITY);
    let actor = Actor {
        idle_since: Some(deps.clock.now_millis()),
        live,
        deps,
        events,
        recent: VecDeque::new(),
        connections: [0, 0],
        watchers: 0,
    };
    let own = handle.clone();
    tokio::spawn(async move {
        actor.run(inbox, lease).await;
        rooms.forget(&own);
    });
    handle
}

impl Actor {
    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, lease: Lease) {
        let id = self.live.id();
        let mut subscription = self.deps.hub.subscribe(id).await;
        self.watchers = self.deps.hub.watchers(id).await;
        let mut tick = tokio::time::interval(self.deps.settings.lease / 3);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                command = inbox.recv() => {
                    let Some(command) = command else { break };
                    if !self.handle(command).await {
                        break;
                    }
                }
                _ = tick.tick() => {
                    if !lease.renew(&self.deps.redis).await {
                        tracing::warn!(game = %id, "host lease lost; unloading");
                        break;
                    }
                    if self.idle_for_too_long() {
                        break;
                    }
                }
                message = subscription.receiver.recv() => {
                    if let Ok(text) = message {
                        self.relay_watchers(text);
                    }
                }
            }
        }
        inbox.close();
        lease.release(&self.deps.redis).await;
    }

    fn idle_for_too_long(&self) -> bool {
        self.idle_since.is_some_and(|since| {
            self.deps.clock.now_millis().saturating_sub(since)
                >= self.deps.settings.idle_unload.as_millis() as u64
        })
    }

    /// Watcher counts come from every instance through the hub; the other
    /// events on the channel are this task's own.
    fn relay_watchers(&mut self, text: ByteString) {
        if !text.starts_with(r#"{"t":"watchers""#) {
            return;
        }
        if let Ok(ServerMessage::Watchers { count }) = serde_json::from_str(&text) {
            self.watchers = count;
            let _ = self.events.send(text);
        }
    }

    fn connected(&self) -> [bool; 2] {
        [self.connections[0] > 0, self.connections[1] > 0]
    }

    fn state(&self, you: Option<u8>) -> ByteString {
        let state = self.live.state(you, self.connected(), self.watchers);
        encode(&ServerMessage::State(Box::new(state)))
    }

    /// The seat a socket acts for: the one to move, if it holds it.
    fn acting_seat(&self, seats: &[u8]) -> Option<u8> {
        match self.live.turn() {
            Some(turn) if seats.contains(&turn) => Some(turn),
            _ => seats.first().copied(),
        }
    }

    /// Handles one command; false when the task must stop.
    async fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Join { player, reply } => {
                let seats = self.live.seats_of(player);
                if seats.is_empty() {
                    let _ = reply.send(Err(Refusal {
                        code: ErrorCode::Forbidden,
                        message: "you hold no seat in this game; watch it instead".into(),
                        resync: false,
                    }));
                    return true;
                }
                let before = self.connected();
                for &seat in &seats {
                    self.connections[seat as usize] += 1;
                }
                self.idle_since = None;
                let joined = Joined {
                    events: self.events.subscribe(),
                    state: self.state(seats.first().copied()),
                    seats,
                };
                let _ = reply.send(Ok(joined));
                self.announce_presence(before).await;
            }
            Command::Leave { seats } => {
                let before = self.connected();
                for seat in seats {
                    let count = &mut self.connections[seat as usize % 2];
                    *count = count.saturating_sub(1);
                }
                if self.connections == [0, 0] {
                    self.idle_since = Some(self.deps.clock.now_millis());
                }
                self.announce_presence(before).await;
            }
            Command::Move {
                seats,
                pit,
                ply,
                reply,
            } => {
                let Some(seat) = self.acting_seat(&seats) else {
                    let _ = reply.send(vec![]);
                    return true;
                };
                return self.play(seat, pit, ply, reply).await;
            }
            Command::Resign { seats, reply } => {
                let Some(seat) = self.acting_seat(&seats) else {
                    let _ = reply.send(vec![]);
                    return true;
                };
                return self.resign(seat, reply).await;
            }
            Command::Sync { since, you, reply } => {
                let _ = reply.send(self.since(since, you));
            }
        }
        true
    }

    fn since(&self, since: u64, you: Option<u8>) -> Vec<ByteString> {
        let version = self.live.version();
        if since >= version {
            return Vec::new();
        }
        match self.recent.front() {
            Some((oldest, _)) if *oldest <= since + 1 => self
                .recent
                .iter()
                .filter(|(v, _)| *v > since)
                .map(|(_, text)| text.clone())
                .collect(),
            _ => vec![self.state(you)],
        }
    }

    async fn play(
        &mut self,
        seat: u8,
        pit: u8,
        ply: u32,
        reply: oneshot::Sender<Vec<ByteString>>,
    ) -> bool {
        let planned = match self.live.decide_move(seat, pit, ply) {
            Err(refusal) => {
                let mut answer = vec![error_text(refusal.code, &refusal.message)];
                if refusal.resync {
                    answer.push(self.state(Some(seat)));
                }
                let _ = reply.send(answer);
                return true;
            }
            Ok(MoveDecision::Duplicate { ply }) => {
                let text = self
                    .recent
                    .iter()
                    .find(|(version, _)| *version == u64::from(ply))
                    .map(|(_, text)| text.clone())
                    .or_else(|| {
                        self.live
                            .moved_at(ply)
                            .map(|m| encode(&ServerMessage::Moved(m)))
                    });
                let _ = reply.send(text.into_iter().collect());
                return true;
            }
            Ok(MoveDecision::Play(planned)) => *planned,
        };
        match self.store_move(&planned).await {
            Ok(true) => {}
            Ok(false) => {
                // Another writer stored this ply: this host is stale.
                tracing::warn!(game = %self.live.id(), ply, "ply already stored elsewhere");
                let _ = reply.send(vec![error_text(
                    ErrorCode::Unavailable,
                    "the game moved on elsewhere; reconnect",
                )]);
                return false;
            }
            Err(error) => {
                tracing::warn!(%error, game = %self.live.id(), "storing a move failed");
                let _ = reply.send(vec![error_text(
                    ErrorCode::Unavailable,
                    "the move was not saved; retry it",
                )]);
                return true;
            }
        }
        let _ = reply.send(Vec::new());
        let (moved, over) = self.live.apply(planned);
        let version = moved.version;
        self.emit(&ServerMessage::Moved(moved), Some(version)).await;
        if let Some(over) = over {
            self.emit(&ServerMessage::Over(over), Some(over.version))
                .await;
        }
        true
    }

    async fn store_move(&self, planned: &PlannedMove) -> Result<bool, sqlx::Error> {
        let now = self.deps.clock.now_millis() as f64 / 1000.0;
        let id = self.live.id();
        let played = PlayedMove {
            ply: planned.ply,
            seat: planned.seat,
            pit: planned.pit,
        };
        let Some(over) = planned.ends else {
            // Most moves: one statement, committed on its own.
            let mut connection = self.deps.postgres.acquire().await?;
            return store::append_move(&mut connection, id, played, now).await;
        };
        // The last move and the result (and the outbox row) commit together.
        let mut tx = self.deps.postgres.begin().await?;
        if !store::append_move(&mut tx, id, played, now).await?
            || !store::finish_game(&mut tx, id, over.result, over.reason, over.score, now).await?
        {
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn resign(&mut self, seat: u8, reply: oneshot::Sender<Vec<ByteString>>) -> bool {
        let over = match self.live.decide_resign(seat) {
            Ok(over) => over,
            Err(refusal) => {
                let _ = reply.send(vec![error_text(refusal.code, &refusal.message)]);
                return true;
            }
        };
        match self.store_end(over).await {
            Ok(true) => {}
            Ok(false) => {
                let _ = reply.send(vec![error_text(
                    ErrorCode::Unavailable,
                    "the game moved on elsewhere; reconnect",
                )]);
                return false;
            }
            Err(error) => {
                tracing::warn!(%error, game = %self.live.id(), "storing a resignation failed");
                let _ = reply.send(vec![error_text(
                    ErrorCode::Unavailable,
                    "the resignation was not saved; retry it",
                )]);
                return true;
            }
        }
        let _ = reply.send(Vec::new());
        self.live.finish(over);
        self.emit(&ServerMessage::Over(over), Some(over.version))
            .await;
        true
    }

    async fn store_end(&self, over: Over) -> Result<bool, sqlx::Error> {
        let now = self.deps.clock.now_millis() as f64 / 1000.0;
        let mut tx = self.deps.postgres.begin().await?;
        let id = self.live.id();
        if !store::finish_game(&mut tx, id, over.result, over.reason, over.score, now).await? {
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    async fn announce_presence(&mut self, before: [bool; 2]) {
        let now = self.connected();
        if now == before {
            return;
        }
        self.deps.hub.set_presence(self.live.id(), now).await;
        for seat in 0..2u8 {
            if now[seat as usize] != before[seat as usize] {
                let message = ServerMessage::Presence {
                    seat,
                    connected: now[seat as usize],
                };
                self.emit(&message, None).await;
            }
        }
    }

    /// Sends an event to this instance's sockets, then to the other
    /// instances through Redis.
    async fn emit(&mut self, message: &ServerMessage, version: Option<u64>) {
        let text = encode(message);
        if let Some(version) = version {
            self.recent.push_back((version, text.clone()));
            if self.recent.len() > RECENT_EVENTS {
                self.recent.pop_front();
            }
        }
        let _ = self.events.send(text.clone());
        self.deps.hub.publish(self.live.id(), &text).await;
    }
}
