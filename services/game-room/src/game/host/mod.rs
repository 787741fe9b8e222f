//! The host of one game: a pure [`HostState`] (`state.rs`) that decides
//! everything, and the task here that owns it, takes commands from the
//! game's sockets through a cloneable [`GameHandle`], feeds them to the
//! state with the injected clock's time, and carries out the effects it
//! returns (`effects.rs`): commits, events, the AI, the lease.
//!
//! Serial by construction: one command at a time, carried through to its
//! last answer, so two moves of one game can never race, and events leave
//! in version order. The state's concerns: `commands` (what seated players
//! ask), `presence` (who is here), `friend_room` (the room a game belongs
//! to), `timers` (what time alone does), `events` (what the game says) and
//! `thinking` (the AI's turn); `commit` is the one write path.

mod commands;
mod commit;
mod effects;
mod events;
mod friend_room;
mod presence;
mod state;
#[cfg(test)]
mod tests;
mod thinking;
mod timers;

use mancala_rules::Side;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytestring::ByteString;
use mancala_proto::bus::{GameBus, Route};
use mancala_proto::error::{CLOSE_ELSEWHERE, CLOSE_RESTART};
use mancala_proto::game::ServerMessage;
use tokio::sync::{broadcast, mpsc, oneshot};
use uuid::Uuid;

use self::state::{HostRules, HostState, Input};
use super::live::{GameInfo, LiveGame, Refusal};
use crate::ai::{self, Cancel};
use crate::context::Context;
use crate::lease::Lease;
use crate::store::SeatCheck;

/// Versioned events kept for `sync`; an older gap gets a fresh state.
const RECENT_EVENTS: usize = 256;
/// Events buffered per local socket before a slow one lags (and resyncs).
const EVENT_CAPACITY: usize = 128;
/// Commands queued per game before senders wait.
const COMMAND_CAPACITY: usize = 64;
/// The answer to a player whose seat an AI took over.
pub(crate) const REPLACED: &str = "an AI plays your seat now; you can watch the game";

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

/// What the host answers a hint request.
#[derive(Debug)]
pub enum HintAnswer {
    /// The search started on the AI workers: the ply the hint is for (so
    /// a client can drop one that arrives late) and its outcome to come.
    Searching {
        ply: u32,
        outcome: oneshot::Receiver<ai::Outcome>,
    },
    /// The error to send: not the player's turn, over the limit...
    Refused(ByteString),
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
    Move {
        pit: u8,
        ply: u32,
        /// How long the page was hidden during the turn (the client's
        /// word), kept with the move.
        hidden_ms: Option<u32>,
    },
    Resign,
    Undo,
    Rematch,
    ContinueVsAi,
    ClaimVictory,
    LeaveRoom,
    Berserk,
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
        reply: oneshot::Sender<HintAnswer>,
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
    pub async fn hint(&self, seats: Vec<Side>) -> Result<HintAnswer, Gone> {
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

/// What a host asks of the instance's hosted games, which start it: to
/// make (and host here) its series' next game, and to forget it once it
/// has stopped. A trait, so that the host does not reach back into the
/// module that spawns it.
pub(crate) trait Series: Send + Sync + 'static {
    /// The rematch of the finished game `info` (see `rematch::create`):
    /// the next game, or `None` when its room has closed.
    fn rematch<'a>(
        &'a self,
        info: &'a GameInfo,
        now: time::OffsetDateTime,
        pair_limit: u32,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Uuid>, sqlx::Error>> + Send + 'a>>;

    /// The task of `game` has stopped.
    fn forget(&self, game: &GameHandle);
}

/// Why the task stops: the close code and reason for its sockets.
type Stop = (u16, &'static str);

/// The task: it owns the [`HostState`] and carries its effects out.
struct Host {
    state: HostState,
    deps: Context,
    /// The fencing token this task writes under.
    epoch: i64,
    own: mpsc::Sender<Command>,
    events: broadcast::Sender<Outbound>,
    /// This instance's games: a series' next game is hosted here.
    series: Arc<dyn Series>,
    /// Counts the game against the instance's capacity while the state
    /// says it holds its place (admission refuses new games past it).
    in_progress: Option<mancala_platform::GameInProgress>,
    /// Whether the game was last marked occupied (listed as live): only
    /// then does leaving it cost a Redis write.
    listed: bool,
    /// The AI search under way, if one is.
    thinking: Option<Cancel>,
    /// Who asked this host to drain, told once its lease is released.
    drained: Option<oneshot::Sender<()>>,
    /// Whether another instance has a watcher of the game: only then do
    /// its events go through Redis (`Hub::publish_event`).
    followed_elsewhere: bool,
}

/// Where the answer to the input being carried out goes.
enum Replier {
    Nobody,
    Texts(oneshot::Sender<Vec<ByteString>>),
    Join(oneshot::Sender<Result<Joined, Refusal>>),
    SeatCheck(oneshot::Sender<SeatCheck>),
    Hint(oneshot::Sender<HintAnswer>),
}

/// Starts the task for a loaded game under `lease` and `epoch`.
pub(crate) fn spawn(
    live: LiveGame,
    deps: Context,
    lease: Lease,
    epoch: i64,
    room_closes: Option<u64>,
    series: Arc<dyn Series>,
) -> GameHandle {
    let (commands, inbox) = mpsc::channel(COMMAND_CAPACITY);
    let handle = GameHandle {
        id: live.id(),
        commands: commands.clone(),
    };
    let (events, _) = broadcast::channel(EVENT_CAPACITY);
    let now = deps.clock.now_millis();
    let rules = HostRules::of(&deps.settings);
    let state = HostState::new(live, rules, now, room_closes);
    let in_progress = state
        .holds_place()
        .then(|| deps.admission.game_in_progress());
    let host = Host {
        state,
        deps,
        epoch,
        own: commands,
        events,
        series,
        in_progress,
        listed: false,
        thinking: None,
        drained: None,
        // Set by the first read of the game's watchers, in `run`.
        followed_elsewhere: false,
    };
    let own = handle.clone();
    tokio::spawn(async move {
        let series = host.series.clone();
        host.run(inbox, lease).await;
        series.forget(&own);
    });
    handle
}

impl Host {
    fn now(&self) -> u64 {
        self.deps.clock.now_millis()
    }

    fn id(&self) -> Uuid {
        self.state.live().id()
    }

    #[tracing::instrument(name = "host", skip_all, fields(game = %self.id(), epoch = self.epoch))]
    async fn run(mut self, mut inbox: mpsc::Receiver<Command>, lease: Lease) {
        let id = self.id();
        let mut subscription = self.deps.hub.subscribe_host(id).await;
        let audience = self.deps.hub.audience(id).await;
        self.followed_elsewhere = audience.is_some_and(|audience| audience.elsewhere);
        let watchers = audience.map_or(0, |audience| audience.watchers);
        // The first renewal a third of the lease after it was taken: not
        // at once (the watchers were just read too), nor late when loading
        // the game took long.
        let every = self.deps.settings.lease / 3;
        let mut renew = tokio::time::interval_at(lease.taken() + every, every);
        renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut tick = tokio::time::interval(self.deps.settings.tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut stop = self
            .carry(Input::Started { watchers }, Replier::Nobody)
            .await;
        let (code, reason) = loop {
            if let Some(stop) = stop {
                break stop;
            }
            stop = tokio::select! {
                command = inbox.recv() => match command {
                    Some(command) => {
                        let (input, replier) = self.accept(command);
                        self.carry(input, replier).await
                    }
                    None => Some((CLOSE_RESTART, "the game is moving")),
                },
                _ = renew.tick() => match self.carry(Input::Renewing, Replier::Nobody).await {
                    Some(stop) => Some(stop),
                    None if lease.renew(self.deps.leases.redis().await).await => {
                        // Counts are told once, and a message can be lost:
                        // who follows is read again now and then too.
                        self.follow_audience().await;
                        None
                    }
                    None => {
                        metrics::counter!("game_leases_lost_total").increment(1);
                        tracing::warn!(game = %id, "host lease lost; unloading");
                        Some((CLOSE_ELSEWHERE, "the game moved to another instance"))
                    }
                },
                _ = tick.tick() => self.carry(Input::Tick, Replier::Nobody).await,
                message = subscription.receiver.recv() => match message {
                    Ok(text) => {
                        let counted = matches!(GameBus::route(&text), Ok((Route::Watchers { .. }, _)));
                        let stop = self.carry(Input::Heard(text), Replier::Nobody).await;
                        if counted {
                            self.follow_audience().await;
                        }
                        stop
                    }
                    // Lagged behind (counts lost): someone may follow now.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        self.follow_audience().await;
                        None
                    }
                    Err(broadcast::error::RecvError::Closed) => None,
                },
            };
        };
        let _ = self.events.send(Outbound::Close(code, reason));
        if let Some(thinking) = &self.thinking {
            thinking.cancel();
        }
        inbox.close();
        lease.release(&self.deps.redis).await;
        if let Some(done) = self.drained.take() {
            let _ = done.send(());
        }
    }

    /// The game's watchers changed somewhere: whether its events must go
    /// through Redis now. A watcher elsewhere that just arrived may have
    /// missed what happened since its snapshot, so the latest event goes
    /// out again at once (see `crate::hub`).
    async fn follow_audience(&mut self) {
        let Some(audience) = self.deps.hub.audience(self.id()).await else {
            return;
        };
        let followed = audience.elsewhere;
        let newly = followed && !self.followed_elsewhere;
        self.followed_elsewhere = followed;
        if newly && let Some((version, text)) = self.state.latest_event() {
            self.deps
                .hub
                .publish_event(self.id(), Route::Event { version }, &text, true)
                .await;
        }
    }

    /// A command as the state's input, and where its answer goes.
    fn accept(&mut self, command: Command) -> (Input, Replier) {
        match command {
            Command::Join { player, reply } => (Input::Join { player }, Replier::Join(reply)),
            Command::SeatCheck { player, reply } => {
                (Input::SeatCheck { player }, Replier::SeatCheck(reply))
            }
            Command::Leave { seats } => (Input::Leave { seats }, Replier::Nobody),
            Command::Seated {
                seats,
                request,
                reply,
            } => (Input::Seated { seats, request }, Replier::Texts(reply)),
            Command::Sync { since, you, reply } => {
                (Input::Sync { since, you }, Replier::Texts(reply))
            }
            Command::Hint { seats, reply } => (Input::Hint { seats }, Replier::Hint(reply)),
            Command::Thought { version, seat, pit } => {
                self.thinking = None;
                (Input::Thought { version, seat, pit }, Replier::Nobody)
            }
            Command::Drain { done } => {
                // Answered once the lease is released, so that a process
                // stopping after its drain leaves no lease to lapse.
                self.drained = Some(done);
                (Input::Drain, Replier::Nobody)
            }
        }
    }

    /// Hands `input` to the state and carries out what it says, answering
    /// each of its asks, until the input is done; then whether to stop.
    async fn carry(&mut self, input: Input, mut replier: Replier) -> Option<Stop> {
        let mut step = self.state.step(input, self.now());
        let mut stop = None;
        loop {
            for effect in std::mem::take(&mut step.effects) {
                if let Some(stopping) = self.carry_out(effect, &mut replier).await {
                    stop = Some(stopping);
                }
            }
            let Some(ask) = step.ask.take() else {
                return stop;
            };
            let answer = self.answer(ask).await;
            step = self.state.answer(answer, self.now());
        }
    }
}
