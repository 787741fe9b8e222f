//! The host of one game: a task that owns the [`LiveGame`], takes commands
//! from the game's sockets through a cloneable [`GameHandle`], makes each
//! change durable before applying and broadcasting it, runs the clocks and
//! countdowns against the injected clock, asks the AI for its moves, and
//! keeps the host lease.
//!
//! Serial by construction: one command at a time, so two moves of one game
//! can never race, and events leave in version order. By concern:
//! `commands` (what seated players ask), `commit` (the one write path),
//! `presence` (who is here), `friend_room` (the room a game belongs to),
//! `timers` (what time alone does), `events` (what the game says) and
//! `thinking` (the AI's turn). This file holds the task, its handle and
//! the dispatch.

mod commands;
mod commit;
mod events;
mod friend_room;
mod presence;
mod thinking;
mod timers;

use mancala_rules::Side;
use std::collections::VecDeque;
use std::sync::Arc;

use bytestring::ByteString;
use mancala_platform::socket::error_text;
use mancala_platform::{Clock, Redis};
use mancala_proto::ErrorCode;
use mancala_proto::error::{CLOSE_RESTART, CLOSE_ROOM_CLOSED};
use mancala_proto::game::ServerMessage;
use sqlx::PgPool;
use tokio::sync::{broadcast, mpsc, oneshot};
use uuid::Uuid;

use self::commit::CommitError;
use super::hosted::{HostedGames, Lease};
use super::live::{LiveGame, Refusal};
use crate::ai::{self, AiPool, Cancel};
use crate::config::GameRoomSettings;
use crate::hub::Hub;
use crate::store::SeatCheck;

/// Versioned events kept for `sync`; an older gap gets a fresh state.
const RECENT_EVENTS: usize = 256;
/// Events buffered per local socket before a slow one lags (and resyncs).
const EVENT_CAPACITY: usize = 128;
/// Commands queued per game before senders wait.
const COMMAND_CAPACITY: usize = 64;
/// The answer to a player whose seat an AI took over.
pub(crate) const REPLACED: &str = "an AI plays your seat now; you can watch the game";

/// What every hosted game needs.
#[derive(Clone)]
pub struct Deps {
    pub postgres: PgPool,
    /// Reads that may lag the primary (records and lists): a replica's
    /// pool when one is configured, else `postgres`.
    pub reads: PgPool,
    pub redis: Redis,
    pub hub: Hub,
    pub clock: Clock,
    pub settings: Arc<GameRoomSettings>,
    /// The process's AI workers.
    pub ai: AiPool,
    /// Watchers' snapshots, shared by every watch socket of the process.
    pub snapshots: crate::ws::snapshots::Snapshots,
    /// The instance's group commit: every hosted game writes through it.
    pub(crate) writer: crate::store::GroupCommit,
    /// Whether the instance takes new work (watchers).
    pub admission: mancala_platform::Admission,
    /// Lease renewals' own Redis connection.
    pub leases: super::hosted::LeaseConnection,
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
    pub seats: Vec<Side>,
    /// A finished rated game's rating change, to follow the snapshot: a
    /// page opened (or reloaded) after the game shows the ratings it left.
    pub rating_change: Option<ByteString>,
}

/// The game task is gone (unloaded or lost its lease): ask the hosted games again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the game is no longer hosted here")]
pub struct Gone;

/// Why a socket could not join a hosted game.
#[derive(Debug)]
pub enum JoinError {
    /// The task is gone (unloading): ask the hosted games again.
    Gone,
    /// The game refused the player (no seat, or an AI took it).
    Refused(Refusal),
}

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
    SeatCheck {
        player: Uuid,
        reply: oneshot::Sender<SeatCheck>,
    },
    Leave {
        seats: Vec<Side>,
    },
    Seated {
        seats: Vec<Side>,
        request: Request,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Sync {
        since: u64,
        you: Option<Side>,
        reply: oneshot::Sender<Vec<ByteString>>,
    },
    Hint {
        seats: Vec<Side>,
        reply: oneshot::Sender<Result<(u32, ai::Request), ByteString>>,
    },
    Thought {
        version: u64,
        seat: Side,
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
    pub async fn join(&self, player: Uuid) -> Result<Joined, JoinError> {
        match self.ask(|reply| Command::Join { player, reply }).await {
            Ok(Ok(joined)) => Ok(joined),
            Ok(Err(refusal)) => Err(JoinError::Refused(refusal)),
            Err(Gone) => Err(JoinError::Gone),
        }
    }

    /// What the game says of `player`, as the stored row would: the seat
    /// check of a socket to a game hosted here costs no query.
    pub(crate) async fn seat_check(&self, player: Uuid) -> Result<SeatCheck, Gone> {
        self.ask(|reply| Command::SeatCheck { player, reply }).await
    }

    /// A socket of these seats closed.
    pub async fn leave(&self, seats: Vec<Side>) {
        let _ = self.commands.send(Command::Leave { seats }).await;
    }

    /// A seated request; the answer holds only what goes to this socket
    /// alone (errors, repeats). Events come through the broadcast.
    pub async fn request(
        &self,
        seats: Vec<Side>,
        request: Request,
    ) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Seated {
            seats,
            request,
            reply,
        })
        .await
    }

    pub async fn sync(&self, since: u64, you: Option<Side>) -> Result<Vec<ByteString>, Gone> {
        self.ask(|reply| Command::Sync { since, you, reply }).await
    }

    /// What to search for a hint: the ply it is for and the AI request,
    /// or the error to send.
    pub async fn hint(
        &self,
        seats: Vec<Side>,
    ) -> Result<Result<(u32, ai::Request), ByteString>, Gone> {
        self.ask(|reply| Command::Hint { seats, reply }).await
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
pub(crate) fn encode(message: &ServerMessage) -> ByteString {
    ByteString::from(serde_json::to_string(message).unwrap_or_default())
}

/// Whether the task goes on after a command.
enum Next {
    Continue,
    /// Stop, closing the sockets with this code.
    Stop(u16, &'static str),
}

/// The task's state.
struct Host {
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
    rematch_offer: Option<Side>,
    /// The AI search under way, if one is: at most one per game. Its
    /// reply names the version it answers, and is dropped for any other.
    thinking: Option<Cancel>,
    /// When the game's room closes at the latest (ms).
    room_closes: Option<u64>,
    /// This instance's games: a series' next game is hosted here.
    hosted: HostedGames,
    /// Counts the game against the instance's capacity while it is in
    /// progress (admission refuses new games past it), and for a moment
    /// after it ends while its players may still ask for a rematch.
    in_progress: Option<mancala_platform::GameInProgress>,
    /// Until when (clock ms) a finished game keeps its place for a rematch.
    held_until: Option<u64>,
    /// Whether the game was last marked occupied (listed as live): only
    /// then does leaving it cost a Redis write.
    listed: bool,
    /// The rating change of this finished rated game, once known (heard
    /// from the rating service, or read back for a late joiner).
    rating_change: Option<ByteString>,
    /// Who asked this host to drain, told once its lease is released.
    drained: Option<oneshot::Sender<()>>,
}

/// Starts the task for a loaded game under `lease` and `epoch`.
pub(crate) fn spawn(
    live: LiveGame,
    deps: Deps,
    lease: Lease,
    epoch: i64,
    room_closes: Option<u64>,
    hosted: HostedGames,
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
    let in_progress = (!live.is_over()).then(|| deps.admission.game_in_progress());
    let host = Host {
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
        hosted,
        in_progress,
        held_until: None,
        listed: false,
        rating_change: None,
        drained: None,
    };
    let own = handle.clone();
    tokio::spawn(async move {
        let hosted = host.hosted.clone();
        host.run(inbox, lease).await;
        hosted.forget(&own);
    });
    handle
}

impl Host {
    fn now(&self) -> u64 {
        self.deps.clock.now_millis()
    }

    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, lease: Lease) {
        let id = self.live.id();
        let mut subscription = self.deps.hub.subscribe_host(id).await;
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
                    self.mark_players(&[]).await;
                    if lease.renew(self.deps.leases.redis().await).await {
                        Next::Continue
                    } else {
                        metrics::counter!("game_leases_lost_total").increment(1);
                        tracing::warn!(game = %id, "host lease lost; unloading");
                        Next::moved_away()
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
            self.hold_or_free_place();
            if let Next::Stop(code, reason) = next {
                break (code, reason);
            }
        };
        let _ = self.events.send(Outbound::Close(stop.0, stop.1));
        self.stop_thinking();
        inbox.close();
        lease.release(&self.deps.redis).await;
        if let Some(done) = self.drained.take() {
            let _ = done.send(());
        }
    }

    async fn handle(&mut self, command: Command) -> Next {
        match command {
            Command::Join { player, reply } => {
                let _ = reply.send(self.join(player).await);
                // Told at once, not at the next tick, so a page never
                // offers a rematch in a room that has closed.
                if self.finished_room_closed(self.now()) {
                    return Next::Stop(CLOSE_ROOM_CLOSED, "the room closed");
                }
            }
            Command::SeatCheck { player, reply } => {
                let check = if !self.live.seats_of(player).is_empty() {
                    SeatCheck::Seated
                } else if self.live.replaced(player) {
                    SeatCheck::Replaced
                } else {
                    SeatCheck::Stranger
                };
                let _ = reply.send(check);
            }
            Command::Leave { seats } => self.leave(seats).await,
            Command::Hint { seats, reply } => {
                let answer = match self.hint_request(&seats) {
                    Ok(search) => match self.limited(commands::Counted::Hints, &seats).await {
                        Some(refused) => Err(refused),
                        None => Ok(search),
                    },
                    Err(refusal) => Err(error_text(refusal.code, &refusal.message)),
                };
                let _ = reply.send(answer);
            }
            Command::Seated {
                seats,
                request,
                reply,
            } => {
                // A seat an AI took over since the socket joined is not
                // the socket's any more.
                let seats: Vec<Side> = seats
                    .into_iter()
                    .filter(|&seat| !self.live.info().is_ai(seat))
                    .collect();
                let Some(seat) = self.acting_seat(&seats) else {
                    let _ = reply.send(vec![error_text(ErrorCode::NotAllowed, REPLACED)]);
                    return Next::Continue;
                };
                match self.request(seat, &seats, request).await {
                    Ok(answer) => {
                        let _ = reply.send(answer);
                        self.think();
                    }
                    Err(CommitError::Store(error)) => {
                        tracing::warn!(%error, game = %self.live.id(), ?request, "not saved");
                        let message = match request {
                            Request::Move { .. } => "the move was not saved; retry it",
                            _ => "not saved; retry",
                        };
                        let _ = reply.send(vec![error_text(ErrorCode::Unavailable, message)]);
                    }
                    Err(CommitError::Fenced) => {
                        let _ = reply.send(vec![error_text(
                            ErrorCode::Unavailable,
                            "the game moved to another instance; reconnect",
                        )]);
                        return Next::moved_away();
                    }
                }
            }
            Command::Sync { since, you, reply } => {
                let _ = reply.send(self.since(since, you));
            }
            Command::Thought { version, seat, pit } => {
                return self.thought(version, seat, pit).await;
            }
            Command::Drain { done } => {
                // Answered once the lease is released, so that a process
                // stopping after its drain leaves no lease to lapse.
                self.drained = Some(done);
                return Next::Stop(CLOSE_RESTART, "the server is restarting; reconnect");
            }
        }
        Next::Continue
    }
}
