//! One task per hosted game: it owns the [`LiveGame`], takes commands from
//! the game's sockets through a cloneable [`GameHandle`], makes each change
//! durable before applying and broadcasting it, runs the clocks and
//! countdowns against the injected clock, asks the AI for its moves, and
//! keeps the host lease.
//!
//! Serial by construction: one command at a time, so two moves of one game
//! can never race, and events leave in version order.

use std::collections::VecDeque;
use std::sync::Arc;

use bytestring::ByteString;
use mancala_ai::{AnyAi, Level};
use mancala_platform::socket::error_text;
use mancala_platform::{Clock, Redis, ratelimit};
use mancala_proto::ErrorCode;
use mancala_proto::bus::{GameBus, Route, names};
use mancala_proto::error::{CLOSE_ELSEWHERE, CLOSE_RESTART, CLOSE_ROOM_CLOSED};
use mancala_proto::game::{EndReason, GameResult, Over, ServerMessage};
use sqlx::PgPool;
use tokio::sync::{broadcast, mpsc, oneshot};
use uuid::Uuid;

use super::live::{LiveGame, MoveDecision, PlannedMove, Refusal};
use super::rematch;
use super::rooms::{Lease, Rooms};
use crate::ai::{self, AiPool, Cancel};
use crate::config::RoomSettings;
use crate::hub::Hub;
use crate::store;

/// Versioned events kept for `sync`; an older gap gets a fresh state.
const RECENT_EVENTS: usize = 256;
/// Events buffered per local socket before a slow one lags (and resyncs).
const EVENT_CAPACITY: usize = 128;
/// Commands queued per game before senders wait.
const COMMAND_CAPACITY: usize = 64;
/// The answer to a player whose seat an AI took over.
pub const REPLACED: &str = "an AI plays your seat now; you can watch the game";

/// What every hosted game needs.
#[derive(Clone)]
pub struct Deps {
    pub postgres: PgPool,
    pub redis: Redis,
    pub hub: Hub,
    pub clock: Clock,
    pub settings: Arc<RoomSettings>,
    /// The process's AI workers.
    pub ai: AiPool,
    /// Watchers' snapshots, shared by every watch socket of the process.
    pub snapshots: crate::ws::snapshots::Snapshots,
}

/// What a game's sockets receive from its task.
#[derive(Clone, Debug)]
pub enum Outbound {
    /// A message, already serialised.
    Text(ByteString),
    /// Close with this code: the room closed, the game moved, the server
    /// is draining.
    Close(u16, &'static str),
}

/// A hosted game, as its sockets reach it.
#[derive(Clone, Debug)]
pub struct GameHandle {
    id: Uuid,
    commands: mpsc::Sender<Command>,
}

/// A socket's place in a game after joining.
pub struct Joined {
    pub events: broadcast::Receiver<Outbound>,
    /// The snapshot for this socket.
    pub state: ByteString,
    /// The seats the player holds (two in a hotseat game).
    pub seats: Vec<u8>,
}

/// The game task is gone (unloaded or lost its lease): ask the rooms again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the game is no longer hosted here")]
pub struct Gone;

/// A request from a seated socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Move { pit: u8, ply: u32 },
    Resign,
    Undo,
    Rematch,
    ContinueVsAi,
    ClaimVictory,
    LeaveRoom,
}

enum Command {
    Join {
        player: Uuid,
        reply: oneshot::Sender<Result<Joined, Refusal>>,
    },
    Leave {
        seats: Vec<u8>,
    },
    Seated {
        seats: Vec<u8>,
        request: Request,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Sync {
        since: u64,
        you: Option<u8>,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Thought {
        version: u64,
        seat: u8,
        pit: Option<u8>,
    },
    Drain {
        done: oneshot::Sender<()>,
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

    /// A seated request; the answer holds only what goes to this socket
    /// alone (errors, repeats). Events come through the broadcast.
    pub async fn request(&self, seats: Vec<u8>, request: Request) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Seated {
            seats,
            request,
            reply,
        })
        .await
    }

    pub async fn sync(&self, since: u64, you: Option<u8>) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Sync { since, you, reply }).await
    }

    /// Releases the game and closes its sockets (they reconnect at once).
    pub async fn drain(&self) {
        let (done, finished) = oneshot::channel();
        if self.commands.send(Command::Drain { done }).await.is_ok() {
            let _ = finished.await;
        }
    }
}

/// Serialises a message once for every receiver.
pub fn encode(message: &ServerMessage) -> ByteString {
    ByteString::from(serde_json::to_string(message).unwrap_or_default())
}

/// Whether the task goes on after a command.
enum Next {
    Continue,
    /// Stop, closing the sockets with this code.
    Stop(u16, &'static str),
}

/// A write that must not happen: another host has the game.
struct Fenced;

struct Actor {
    live: LiveGame,
    deps: Deps,
    /// The fencing token this task writes under.
    epoch: i64,
    own: mpsc::Sender<Command>,
    events: broadcast::Sender<Outbound>,
    /// Versioned events: (version, the ply of a `moved`, text).
    recent: VecDeque<(u64, Option<u32>, ByteString)>,
    /// Sockets per seat.
    connections: [u32; 2],
    watchers: u32,
    /// When the last player socket closed (clock ms).
    idle_since: Option<u64>,
    /// Since when each seat's player has had no socket here, in games
    /// between two people: from the moment this host took the game for a
    /// player who never came. During play it drives the reconnect
    /// countdown; after a game in a friend's room, a player away this long
    /// has left the room.
    absent_since: [Option<u64>; 2],
    /// A player left the friend room for good: no further game starts.
    room_left: bool,
    /// A standing rematch offer, by seat.
    rematch_offer: Option<u8>,
    /// The AI search under way, if one is: at most one per game. Its
    /// reply names the version it answers, and is dropped for any other.
    thinking: Option<Cancel>,
    /// When the game's room closes at the latest (ms).
    room_closes: Option<u64>,
}

/// Starts the task for a loaded game under `lease` and `epoch`.
pub fn spawn(
    live: LiveGame,
    deps: Deps,
    lease: Lease,
    epoch: i64,
    room_closes: Option<u64>,
    rooms: Rooms,
) -> GameHandle {
    let (commands, inbox) = mpsc::channel(COMMAND_CAPACITY);
    let handle = GameHandle {
        id: live.id(),
        commands: commands.clone(),
    };
    let (events, _) = broadcast::channel(EVENT_CAPACITY);
    let now = deps.clock.now_millis();
    // Nobody is connected yet: a player who never comes is absent from now.
    let absent = live.info().between_people().then_some(now);
    let actor = Actor {
        idle_since: Some(now),
        live,
        deps,
        epoch,
        own: commands,
        events,
        recent: VecDeque::new(),
        connections: [0, 0],
        watchers: 0,
        absent_since: [absent, absent],
        room_left: false,
        rematch_offer: None,
        thinking: None,
        room_closes,
    };
    let own = handle.clone();
    tokio::spawn(async move {
        actor.run(inbox, lease).await;
        rooms.forget(&own);
    });
    handle
}

impl Actor {
    fn now(&self) -> u64 {
        self.deps.clock.now_millis()
    }

    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, lease: Lease) {
        let id = self.live.id();
        let mut subscription = self.deps.hub.subscribe(id).await;
        self.watchers = self.deps.hub.watchers(id).await;
        let mut renew = tokio::time::interval(self.deps.settings.lease / 3);
        renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut tick = tokio::time::interval(self.deps.settings.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.think();
        let stop = loop {
            let next = tokio::select! {
                command = inbox.recv() => match command {
                    Some(command) => self.handle(command).await,
                    None => Next::Stop(CLOSE_RESTART, "the game is moving"),
                },
                _ = renew.tick() => {
                    self.mark_players().await;
                    if lease.renew(&self.deps.redis).await {
                        Next::Continue
                    } else {
                        tracing::warn!(game = %id, "host lease lost; unloading");
                        Next::Stop(CLOSE_ELSEWHERE, "the game moved to another instance")
                    }
                }
                _ = tick.tick() => self.on_tick().await,
                message = subscription.receiver.recv() => {
                    if let Ok(text) = message {
                        self.relay(text);
                    }
                    Next::Continue
                }
            };
            if let Next::Stop(code, reason) = next {
                break (code, reason);
            }
        };
        let _ = self.events.send(Outbound::Close(stop.0, stop.1));
        self.stop_thinking();
        inbox.close();
        lease.release(&self.deps.redis).await;
    }

    /// Timers, read against the injected clock.
    async fn on_tick(&mut self) -> Next {
        let now = self.now();
        if self.live.is_over() {
            if let Some(seat) = self.walked_out(now) {
                let _ = self.leave_room(seat).await;
            }
            return self.idle_check();
        }
        if let Some(closes) = self.room_closes
            && now >= closes
        {
            return self.close_room().await;
        }
        let settings = &self.deps.settings;
        let end = self.live.flag_fall(now).or_else(|| {
            self.live
                .first_move_missed(now, settings.first_move.as_millis() as u64)
        });
        if let Some(over) = end {
            return match self.end(over).await {
                Ok(()) => Next::Continue,
                Err(Fenced) => Next::Stop(CLOSE_ELSEWHERE, "the game moved to another instance"),
            };
        }
        self.idle_check()
    }

    fn idle_check(&self) -> Next {
        let idle = self.idle_since.is_some_and(|since| {
            self.now().saturating_sub(since) >= self.deps.settings.idle_unload.as_millis() as u64
        });
        // An AI still thinking keeps the game loaded: its move is coming.
        if idle && self.thinking.is_none() {
            Next::Stop(CLOSE_RESTART, "the game was unloaded")
        } else {
            Next::Continue
        }
    }

    async fn close_room(&mut self) -> Next {
        let over = self.live.aborted(EndReason::RoomClosed);
        if self.end(over).await.is_err() {
            // The room sweeper may have closed the room (and aborted this
            // game) a moment before this task's timer did: the same end.
            let closed = match self.live.info().room {
                Some(room) => store::room_deadline(&self.deps.postgres, room)
                    .await
                    .ok()
                    .flatten()
                    .is_some_and(|(_, closed)| closed),
                None => false,
            };
            if !closed {
                return Next::Stop(CLOSE_ELSEWHERE, "the game moved to another instance");
            }
            self.live.finish(over);
            self.emit(&ServerMessage::Over(over), Some((over.version, None)))
                .await;
            return Next::Stop(CLOSE_ROOM_CLOSED, "the room closed");
        }
        let now = self.now() as f64 / 1000.0;
        if let Err(error) = store::close_expired_rooms(&self.deps.postgres, now, 0.0).await {
            tracing::warn!(%error, "closing a room");
        }
        Next::Stop(CLOSE_ROOM_CLOSED, "the room closed")
    }

    /// Watcher counts come from every instance through the hub; the other
    /// events on the channel are this task's own.
    fn relay(&mut self, text: ByteString) {
        let Ok((route, start)) = GameBus::route(&text) else {
            return;
        };
        let payload = text.slice_ref(&text[start..]);
        match route {
            // This task's own events and notices, come back.
            Route::Event { .. } | Route::Notice => {}
            Route::Watchers { count } => {
                self.watchers = count;
                let _ = self.events.send(Outbound::Text(payload));
            }
            // From the rating service, for the players.
            Route::RatingChange => {
                let _ = self.events.send(Outbound::Text(payload));
            }
        }
    }

    fn connected(&self) -> [bool; 2] {
        [self.connections[0] > 0, self.connections[1] > 0]
    }

    /// Each absent player's reconnect countdown (ms left), while the game
    /// is on.
    fn countdowns(&self) -> [Option<u64>; 2] {
        if self.live.is_over() {
            return [None, None];
        }
        let limit = self.deps.settings.reconnect.as_millis() as u64;
        let now = self.now();
        self.absent_since
            .map(|since| since.map(|since| limit.saturating_sub(now.saturating_sub(since))))
    }

    /// After a game in a friend's room, the seat whose player has been
    /// away for the reconnect window: they closed the page and left.
    fn walked_out(&self, now: u64) -> Option<u8> {
        let info = self.live.info();
        if info.room.is_none()
            || self.room_left
            || self.live.rematch().is_some()
            || !info.between_people()
        {
            return None;
        }
        let limit = self.deps.settings.reconnect.as_millis() as u64;
        (0..2u8).find(|&seat| {
            self.connections[seat as usize] == 0
                && self.absent_since[seat as usize]
                    .is_some_and(|since| now.saturating_sub(since) >= limit)
        })
    }

    fn state(&self, you: Option<u8>) -> ByteString {
        let state = self.live.state(
            you,
            self.connected(),
            self.watchers,
            self.countdowns(),
            self.now(),
        );
        encode(&ServerMessage::State(Box::new(state)))
    }

    /// The seat a socket acts for: the one to move, if it holds it.
    fn acting_seat(&self, seats: &[u8]) -> Option<u8> {
        match self.live.turn() {
            Some(turn) if seats.contains(&turn) => Some(turn),
            _ => seats.first().copied(),
        }
    }

    async fn handle(&mut self, command: Command) -> Next {
        match command {
            Command::Join { player, reply } => {
                let seats = self.live.seats_of(player);
                if seats.is_empty() {
                    let refusal = if self.live.replaced(player) {
                        Refusal::new(ErrorCode::NotAllowed, REPLACED)
                    } else {
                        Refusal::new(
                            ErrorCode::Forbidden,
                            "you hold no seat in this game; watch it instead",
                        )
                    };
                    let _ = reply.send(Err(refusal));
                    return Next::Continue;
                }
                let before = self.connected();
                for &seat in &seats {
                    self.connections[seat as usize] += 1;
                    self.absent_since[seat as usize] = None;
                }
                if self.idle_since.take().is_some() {
                    self.room_occupied(true).await;
                }
                let joined = Joined {
                    events: self.events.subscribe(),
                    state: self.state(seats.first().copied()),
                    seats,
                };
                let _ = reply.send(Ok(joined));
                self.mark_players().await;
                self.announce_presence(before).await;
            }
            Command::Leave { seats } => {
                let before = self.connected();
                for seat in seats {
                    let count = &mut self.connections[seat as usize % 2];
                    *count = count.saturating_sub(1);
                }
                let now = self.now();
                let counts = self.live.info().between_people();
                for (seat, was_here) in before.into_iter().enumerate() {
                    if counts && was_here && self.connections[seat] == 0 {
                        self.absent_since[seat] = Some(now);
                        self.withdraw_offer(seat as u8).await;
                    }
                }
                // A room whose series moved on to its next game is not left
                // empty by the old game's sockets closing.
                if self.connections == [0, 0] {
                    self.idle_since = Some(now);
                    if self.live.rematch().is_none() {
                        self.room_occupied(false).await;
                    }
                }
                self.announce_presence(before).await;
            }
            Command::Seated {
                seats,
                request,
                reply,
            } => {
                // A seat an AI took over since the socket joined is not
                // the socket's any more.
                let seats: Vec<u8> = seats
                    .into_iter()
                    .filter(|&seat| !self.live.info().is_ai(seat))
                    .collect();
                let Some(seat) = self.acting_seat(&seats) else {
                    let _ = reply.send(vec![error_text(ErrorCode::NotAllowed, REPLACED)]);
                    return Next::Continue;
                };
                let outcome = match request {
                    Request::Move { pit, ply } => self.play(seat, pit, ply, false).await,
                    Request::Resign => self.resign(seat).await,
                    Request::Undo => self.undo(&seats).await,
                    Request::Rematch => self.rematch(seat).await,
                    Request::ContinueVsAi => self.after_countdown(seat, false).await,
                    Request::ClaimVictory => self.after_countdown(seat, true).await,
                    Request::LeaveRoom => self.leave_room_request(seat).await,
                };
                return match outcome {
                    Ok(answer) => {
                        let _ = reply.send(answer);
                        self.think();
                        Next::Continue
                    }
                    Err(Fenced) => {
                        let _ = reply.send(vec![error_text(
                            ErrorCode::Unavailable,
                            "the game moved to another instance; reconnect",
                        )]);
                        Next::Stop(CLOSE_ELSEWHERE, "the game moved to another instance")
                    }
                };
            }
            Command::Sync { since, you, reply } => {
                let _ = reply.send(self.since(since, you));
            }
            Command::Thought { version, seat, pit } => {
                self.thinking = None;
                if let Some(pit) = pit
                    && version == self.live.version()
                    && self.live.turn() == Some(seat)
                    && self.live.info().is_ai(seat)
                {
                    let ply = self.live.ply() + 1;
                    match self.play(seat, pit, ply, true).await {
                        Ok(_) => {}
                        Err(Fenced) => {
                            return Next::Stop(
                                CLOSE_ELSEWHERE,
                                "the game moved to another instance",
                            );
                        }
                    }
                }
                self.think();
            }
            Command::Drain { done } => {
                let _ = done.send(());
                return Next::Stop(CLOSE_RESTART, "the server is restarting; reconnect");
            }
        }
        Next::Continue
    }

    /// Tells the rating service a rated game ended with a result (its
    /// outbox row is committed); polling covers a lost notice.
    async fn wake_ratings(&self) {
        let result = self.live.over().map(|over| over.result);
        if self.live.info().rated && result.is_some_and(|result| result != GameResult::Aborted) {
            self.deps.hub.wake_ratings(self.live.id()).await;
        }
    }

    /// A rematch offer is off once the player who made it is gone: nobody
    /// is put into a rated game after leaving.
    async fn withdraw_offer(&mut self, seat: u8) {
        if self.rematch_offer == Some(seat) {
            self.rematch_offer = None;
            self.emit(&ServerMessage::RematchCancelled { by: seat }, None)
                .await;
        }
    }

    async fn leave_room_request(&mut self, seat: u8) -> Result<Vec<ByteString>, Fenced> {
        let refuse = |message: &str| Ok(vec![error_text(ErrorCode::NotAllowed, message)]);
        if self.live.info().room.is_none() {
            return refuse("this game is not in a friend's room");
        }
        if !self.live.is_over() {
            return refuse("finish or resign the game first");
        }
        if self.live.rematch().is_some() {
            return refuse("the room has moved on to its next game; leave from there");
        }
        if self.room_left {
            return Ok(Vec::new());
        }
        if !self.leave_room(seat).await {
            return Ok(vec![error_text(
                ErrorCode::Unavailable,
                "leaving was not saved; retry",
            )]);
        }
        Ok(Vec::new())
    }

    /// Closes the friend room on behalf of the player of `seat`, who left
    /// it for good; false when that could not be stored.
    async fn leave_room(&mut self, seat: u8) -> bool {
        let (Some(room), Some(player)) = (
            self.live.info().room,
            self.live.info().seats[seat as usize % 2].player,
        ) else {
            return false;
        };
        let now = self.now() as f64 / 1000.0;
        if let Err(error) = store::leave_room(&self.deps.postgres, room, player, now).await {
            tracing::warn!(%error, %room, "leaving a room");
            return false;
        }
        self.room_left = true;
        self.rematch_offer = None;
        self.emit(&ServerMessage::RoomLeft { seat }, None).await;
        true
    }

    /// Counts this game's connected players as online and playing in the
    /// lobby's figures (entries expire unless refreshed, so a dead instance
    /// leaves no drift).
    async fn mark_players(&self) {
        let until = self.now() + 30_000;
        let redis = &self.deps.redis;
        let mut pipe = redis::pipe();
        let mut marks = 0;
        for (seat, info) in self.live.info().seats.iter().enumerate() {
            let Some(player) = info.player.filter(|_| self.connections[seat] > 0) else {
                continue;
            };
            let player = player.to_string();
            marks += 1;
            pipe.zadd(redis.key(names::ONLINE), &player, until).ignore();
            if self.live.is_over() || info.ai.is_some() {
                pipe.zrem(redis.key(names::PLAYING), &player).ignore();
            } else {
                pipe.zadd(redis.key(names::PLAYING), &player, until)
                    .ignore();
            }
        }
        if marks == 0 {
            // Nobody here (Redis refuses an empty pipeline).
            return;
        }
        let marked: Result<(), _> = pipe.query_async(&mut redis.connection()).await;
        if let Err(error) = marked {
            tracing::warn!(%error, "counting players online");
        }
    }

    /// Records in the room whether anyone is connected (for its idle rule).
    async fn room_occupied(&self, occupied: bool) {
        let Some(room) = self.live.info().room else {
            return;
        };
        let since = (!occupied).then(|| self.now() as f64 / 1000.0);
        if let Err(error) = store::set_room_idle(&self.deps.postgres, room, since).await {
            tracing::warn!(%error, "recording a room's idleness");
        }
    }

    fn since(&self, since: u64, you: Option<u8>) -> Vec<ByteString> {
        if since >= self.live.version() {
            return Vec::new();
        }
        match self.recent.front() {
            Some((oldest, _, _)) if *oldest <= since + 1 => self
                .recent
                .iter()
                .filter(|(version, _, _)| *version > since)
                .map(|(_, _, text)| text.clone())
                .collect(),
            _ => vec![self.state(you)],
        }
    }

    async fn play(
        &mut self,
        seat: u8,
        pit: u8,
        ply: u32,
        by_ai: bool,
    ) -> Result<Vec<ByteString>, Fenced> {
        if self.live.info().is_ai(seat) != by_ai {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "an AI plays this seat now",
            )]);
        }
        let now = self.now();
        if let Some(over) = self.live.flag_fall(now) {
            self.end(over).await?;
            return Ok(vec![error_text(ErrorCode::GameOver, "your flag fell")]);
        }
        let planned = match self.live.decide_move(seat, pit, ply, now) {
            Err(refusal) => {
                let mut answer = vec![error_text(refusal.code, &refusal.message)];
                if refusal.resync {
                    answer.push(self.state(Some(seat)));
                }
                return Ok(answer);
            }
            Ok(MoveDecision::Duplicate { ply }) => {
                let text = self
                    .recent
                    .iter()
                    .find(|(_, moved, _)| *moved == Some(ply))
                    .map(|(_, _, text)| text.clone())
                    .unwrap_or_else(|| self.state(Some(seat)));
                return Ok(vec![text]);
            }
            Ok(MoveDecision::Play(planned)) => *planned,
        };
        match self.store_move(&planned).await {
            Ok(true) => {}
            Ok(false) => return Err(Fenced),
            Err(error) => {
                tracing::warn!(%error, game = %self.live.id(), "storing a move failed");
                return Ok(vec![error_text(
                    ErrorCode::Unavailable,
                    "the move was not saved; retry it",
                )]);
            }
        }
        let ply = planned.stored.played.ply;
        let (moved, over) = self.live.apply(planned);
        let version = moved.version;
        self.emit(&ServerMessage::Moved(moved), Some((version, Some(ply))))
            .await;
        if let Some(over) = over {
            self.emit(&ServerMessage::Over(over), Some((over.version, None)))
                .await;
            self.wake_ratings().await;
        }
        Ok(Vec::new())
    }

    async fn store_move(&self, planned: &PlannedMove) -> Result<bool, sqlx::Error> {
        let id = self.live.id();
        let Some(over) = planned.ends else {
            // Most moves: one statement, committed on its own.
            let mut connection = self.deps.postgres.acquire().await?;
            return store::append_move(
                &mut connection,
                id,
                self.epoch,
                planned.stored,
                planned.version,
            )
            .await;
        };
        // The last move and the result (and the outbox row) commit together.
        let now = planned.stored.at_ms as f64 / 1000.0;
        let mut tx = self.deps.postgres.begin().await?;
        if !store::append_move(&mut tx, id, self.epoch, planned.stored, planned.version).await?
            || !store::finish_game(&mut tx, id, self.epoch, &over, now).await?
        {
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Ends the game (resignation, flag, no start, claim, closed room).
    async fn end(&mut self, over: Over) -> Result<(), Fenced> {
        let now = self.now() as f64 / 1000.0;
        let stored = async {
            let mut tx = self.deps.postgres.begin().await?;
            if !store::finish_game(&mut tx, self.live.id(), self.epoch, &over, now).await? {
                return Ok(false);
            }
            tx.commit().await?;
            Ok::<bool, sqlx::Error>(true)
        }
        .await;
        match stored {
            Ok(true) => {}
            Ok(false) => return Err(Fenced),
            Err(error) => {
                // Retried at the next tick (timers) or by the client.
                tracing::warn!(%error, game = %self.live.id(), "storing the end failed");
                return Ok(());
            }
        }
        self.live.finish(over);
        self.stop_thinking();
        self.emit(&ServerMessage::Over(over), Some((over.version, None)))
            .await;
        self.wake_ratings().await;
        Ok(())
    }

    async fn resign(&mut self, seat: u8) -> Result<Vec<ByteString>, Fenced> {
        match self.live.decide_resign(seat) {
            Ok(over) => {
                self.end(over).await?;
                Ok(Vec::new())
            }
            Err(refusal) => Ok(vec![error_text(refusal.code, &refusal.message)]),
        }
    }

    async fn undo(&mut self, seats: &[u8]) -> Result<Vec<ByteString>, Fenced> {
        let ply = match self.live.decide_undo(seats) {
            Ok(ply) => ply,
            Err(refusal) => return Ok(vec![error_text(refusal.code, &refusal.message)]),
        };
        if let Some(refused) = self.undo_limited(seats).await {
            return Ok(vec![refused]);
        }
        let version = self.live.version() + 1;
        let now = self.now();
        let stored = async {
            let mut tx = self.deps.postgres.begin().await?;
            if !store::undo(&mut tx, self.live.id(), self.epoch, ply, version, now).await? {
                return Ok(false);
            }
            tx.commit().await?;
            Ok::<bool, sqlx::Error>(true)
        }
        .await;
        match stored {
            Ok(true) => {}
            Ok(false) => return Err(Fenced),
            Err(error) => {
                tracing::warn!(%error, "storing an undo failed");
                return Ok(vec![error_text(
                    ErrorCode::Unavailable,
                    "the undo was not saved; retry",
                )]);
            }
        }
        // An AI reply being computed is for a position that is gone: stop
        // it. The next search starts once it has returned (one per game).
        self.stop_thinking();
        let undone = self.live.apply_undo(ply, now);
        let version = undone.version;
        self.emit(&ServerMessage::Undone(undone), Some((version, None)))
            .await;
        Ok(Vec::new())
    }

    async fn after_countdown(&mut self, seat: u8, claim: bool) -> Result<Vec<ByteString>, Fenced> {
        if self.live.is_over() {
            return Ok(vec![error_text(ErrorCode::GameOver, "the game is over")]);
        }
        let absent = 1 - seat;
        if !self.live.info().between_people() {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "only against an absent person",
            )]);
        }
        let Some(countdown) = self.countdowns()[absent as usize] else {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "your opponent is here",
            )]);
        };
        if countdown > 0 {
            return Ok(vec![error_text(
                ErrorCode::CountdownRunning,
                &format!("your opponent has {} s to return", countdown.div_ceil(1000)),
            )]);
        }
        if claim {
            // An abort if the absent side never moved (see `live::settle`).
            let over = self.live.claim(seat);
            self.end(over).await?;
            return Ok(Vec::new());
        }
        let info = self.live.info();
        let rating = info.seats[absent as usize].rating.unwrap_or(1500.0);
        let level = mancala_ai::level_near(info.variant, rating);
        let version = self.live.version() + 1;
        match store::take_over(
            &self.deps.postgres,
            self.live.id(),
            self.epoch,
            absent,
            level.name(),
            version,
        )
        .await
        {
            Ok(true) => {}
            Ok(false) => return Err(Fenced),
            Err(error) => {
                tracing::warn!(%error, "storing a takeover failed");
                return Ok(vec![error_text(ErrorCode::Unavailable, "not saved; retry")]);
            }
        }
        let version = self.live.take_over(absent, level.name());
        self.absent_since[absent as usize] = None;
        let message = ServerMessage::TakenOver {
            version,
            seat: absent,
            level: level.name().to_owned(),
        };
        self.emit(&message, Some((version, None))).await;
        Ok(Vec::new())
    }

    async fn rematch(&mut self, seat: u8) -> Result<Vec<ByteString>, Fenced> {
        if !self.live.is_over() {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "finish this game first",
            )]);
        }
        if let Some(next) = self.live.rematch() {
            return Ok(vec![encode(&rematch::started(next))]);
        }
        if self.room_left {
            return Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "a player left the room; it is closed",
            )]);
        }
        if rematch::needs_agreement(self.live.info()) {
            match self.rematch_offer {
                Some(by) if by != seat => {}
                Some(_) => return Ok(Vec::new()),
                None => {
                    self.rematch_offer = Some(seat);
                    self.emit(&ServerMessage::RematchOffer { by: seat }, None)
                        .await;
                    return Ok(Vec::new());
                }
            }
        }
        let now = self.now() as f64 / 1000.0;
        let limit = self.deps.settings.rated_pair_limit;
        match rematch::create(&self.deps.postgres, self.live.info(), now, limit).await {
            Ok(Some(next)) => {
                self.live.set_rematch(next);
                self.rematch_offer = None;
                self.emit(&rematch::started(next), None).await;
                Ok(Vec::new())
            }
            Ok(None) => Ok(vec![error_text(
                ErrorCode::NotAllowed,
                "the room has closed",
            )]),
            Err(error) => {
                tracing::warn!(%error, "creating a rematch failed");
                Ok(vec![error_text(
                    ErrorCode::Unavailable,
                    "no rematch now; retry",
                )])
            }
        }
    }

    /// Asks the AI for a move when an AI seat is to move: from the
    /// process's pool, which runs it off the runtime, under its deadline.
    fn think(&mut self) {
        let Some(seat) = self.live.turn() else {
            return;
        };
        let info = self.live.info();
        if !info.is_ai(seat) || self.thinking.is_some() {
            return;
        }
        let level = info.seats[seat as usize]
            .ai
            .as_deref()
            .and_then(|name| name.parse::<Level>().ok())
            .filter(|level| AnyAi::offers(info.variant, *level))
            .unwrap_or(Level::Advanced);
        let version = self.live.version();
        // The same game, seat and ply choose alike, on any host.
        let seed =
            self.live.id().as_u64_pair().0 ^ u64::from(seat) ^ u64::from(self.live.ply()) << 8;
        let request = ai::Request {
            game: self.live.rules_game().clone(),
            variant: info.variant,
            level,
            seed,
        };
        let own = self.own.clone();
        let cancel = self.deps.ai.think(request, move |outcome| async move {
            let pit = match outcome {
                ai::Outcome::Move { pit, .. } => Some(pit),
                ai::Outcome::Nothing => None,
            };
            // The game may have unloaded meanwhile: nobody to tell.
            let _ = own.send(Command::Thought { version, seat, pit }).await;
        });
        self.thinking = Some(cancel);
    }

    /// The refusal when the player has undone too much lately: each undo
    /// restarts the AI's search, so undos are counted per player, across
    /// instances. A Redis outage lets them through.
    async fn undo_limited(&self, seats: &[u8]) -> Option<ByteString> {
        let seat = *seats.first()?;
        let player = self.live.info().seats[seat as usize % 2].player?;
        let limit = self.deps.settings.undos;
        let now = self.deps.clock.now_secs();
        let redis = &self.deps.redis;
        match ratelimit::hit(redis, "undos", &player.to_string(), limit, now).await {
            Ok(ratelimit::Decision::Limited { retry_after }) => Some(error_text(
                ErrorCode::RateLimited,
                &format!("too many undos; retry in {retry_after} s"),
            )),
            Ok(ratelimit::Decision::Allowed { .. }) => None,
            Err(error) => {
                tracing::warn!(%error, "counting undos");
                None
            }
        }
    }

    /// Cancels the search under way; it still reports (with nothing).
    fn stop_thinking(&mut self) {
        if let Some(thinking) = &self.thinking {
            thinking.cancel();
        }
    }

    async fn announce_presence(&mut self, before: [bool; 2]) {
        let now = self.connected();
        if now == before {
            return;
        }
        self.deps.hub.set_presence(self.live.id(), now).await;
        let countdowns = self.countdowns();
        for seat in 0..2u8 {
            if now[seat as usize] != before[seat as usize] {
                let message = ServerMessage::Presence {
                    seat,
                    connected: now[seat as usize],
                    countdown_ms: countdowns[seat as usize],
                };
                self.emit(&message, None).await;
            }
        }
    }

    /// Sends an event to this instance's sockets, then to the other
    /// instances through Redis. `versioned` is (version, the ply of a
    /// `moved`) for events a `sync` replays.
    async fn emit(&mut self, message: &ServerMessage, versioned: Option<(u64, Option<u32>)>) {
        let text = encode(message);
        if let Some((version, ply)) = versioned {
            self.recent.push_back((version, ply, text.clone()));
            if self.recent.len() > RECENT_EVENTS {
                self.recent.pop_front();
            }
        }
        let _ = self.events.send(Outbound::Text(text.clone()));
        let message = text.to_string();
        let bus = match versioned {
            Some((version, _)) => GameBus::Event { version, message },
            None => GameBus::Notice { message },
        };
        self.deps.hub.publish(self.live.id(), &bus).await;
    }
}
