//! Post-game analysis as the service offers it: on threads of their own at
//! the AI's lowest priority (moves and the database come first), under a
//! deadline, and kept for the next viewer (in memory, bounded by count, and
//! in Postgres through the keeper, bounded by bytes). A finished game never
//! changes, so what was worked out stays true.
//!
//! A game is worked out once however many ask at the same moment (both
//! players at the end of a game, a crowd of watchers): whoever asks while
//! it runs waits for that one result. The instance has one shared place to
//! analyse in: the game's own players go first and wait for it as long as
//! it takes; then the analyses started at a game's end (which its watchers
//! join); strangers are told to come back when it stays taken. Players
//! also have a second place of their own, so they never wait behind a
//! stranger. Each analysis worked out here is handed to the keeper
//! ([`Analyses::keep_worked_in`]), which stores it for every instance.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mancala_ai::{AnalysisPlan, MoveReview, ProofTables, analyse};
use mancala_proto::game::{GameAnalysis, MoveAnalysis};
use mancala_rules::{AnyPosition, Game};
use tokio::sync::{oneshot, watch};
use uuid::Uuid;

/// The longest one analysis works unless told otherwise
/// (`APP_ANALYSIS_DEADLINE_MS`); the earliest positions (the hardest) are
/// left without values when it runs out.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);
/// How long a request of someone else than the game's players waits for
/// the place before it is told to come back.
const QUEUE_WAIT: Duration = Duration::from_secs(2);
/// Analyses kept.
const CACHED: usize = 256;

/// The analysis places stayed taken.
#[derive(Debug)]
pub(crate) struct Busy;

/// Who asks for an analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asker {
    /// A player of the game: waits for the place, ahead of others.
    Player,
    /// The game's host as it ends, for the players and watchers about to
    /// ask: waits for the place behind players, ahead of strangers.
    AtTheEnd,
    /// Anyone else: waits a moment, then is told to come back.
    Other,
}

/// Analyses started at games' ends may wait for the place at once; more
/// are not started (their games are worked out when someone asks).
const AT_THE_END_WAITING: usize = 8;

/// The instance's analyses: the running ones, those kept, and the place.
pub(crate) struct Analyses {
    /// Whether analyses run at `SCHED_IDLE` (`APP_AI_PRIORITY`).
    idle_priority: bool,
    place: Place,
    queue_wait: Duration,
    deadline: Duration,
    kept: Mutex<Kept>,
    /// Analyses under way, each with the channel its result comes on;
    /// everyone asking for the same game listens to the same one.
    running: Mutex<HashMap<Uuid, watch::Receiver<Option<Arc<GameAnalysis>>>>>,
    /// Analyses started at games' ends and not done yet.
    at_the_end: std::sync::atomic::AtomicUsize,
    /// Where analyses worked out here go to be stored.
    keeper: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Arc<GameAnalysis>>>>,
}

#[derive(Default)]
struct Kept {
    by_game: HashMap<Uuid, Arc<GameAnalysis>>,
    oldest_first: VecDeque<Uuid>,
}

impl Default for Analyses {
    fn default() -> Analyses {
        Analyses::with_deadline(DEADLINE)
    }
}

/// What a request does about a game's analysis.
enum Role {
    /// Works it out, telling the others on this channel.
    Work(watch::Sender<Option<Arc<GameAnalysis>>>),
    /// Waits for the one under way.
    Wait(watch::Receiver<Option<Arc<GameAnalysis>>>),
}

impl Analyses {
    /// Analyses that each work at most `deadline`.
    pub(crate) fn with_deadline(deadline: Duration) -> Analyses {
        Analyses {
            idle_priority: true,
            place: Place::default(),
            queue_wait: QUEUE_WAIT,
            deadline,
            kept: Mutex::default(),
            running: Mutex::default(),
            keeper: Mutex::default(),
            at_the_end: Default::default(),
        }
    }

    /// The same, its thread scheduled as `APP_AI_PRIORITY` says.
    pub(crate) fn with_priority(deadline: Duration, idle_priority: bool) -> Analyses {
        Analyses {
            idle_priority,
            ..Analyses::with_deadline(deadline)
        }
    }

    /// Hands every analysis worked out here from now on to `keeper`.
    pub(crate) fn keep_worked_in(
        &self,
        keeper: tokio::sync::mpsc::UnboundedSender<Arc<GameAnalysis>>,
    ) {
        *self.keeper.lock().unwrap_or_else(|e| e.into_inner()) = Some(keeper);
    }

    /// The analysis of `id` if this instance has it in memory.
    pub(crate) fn in_memory(&self, id: Uuid) -> Option<Arc<GameAnalysis>> {
        self.cached(id)
    }

    /// Remembers an analysis read from the store, for the next to ask.
    pub(crate) fn remember(&self, analysis: Arc<GameAnalysis>) {
        self.keep(analysis);
    }

    /// Leave to start one more analysis at a game's end, held until it is
    /// done; `None` when enough are under way or waiting.
    pub(crate) fn at_the_end(self: &Arc<Self>) -> Option<AtTheEnd> {
        let pending = self.at_the_end.fetch_add(1, Ordering::AcqRel);
        if pending >= AT_THE_END_WAITING {
            self.at_the_end.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(AtTheEnd(self.clone()))
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cached(&self, id: Uuid) -> Option<Arc<GameAnalysis>> {
        self.kept().by_game.get(&id).cloned()
    }

    fn keep(&self, analysis: Arc<GameAnalysis>) {
        let mut kept = self.kept();
        if kept.by_game.insert(analysis.id, analysis.clone()).is_none() {
            kept.oldest_first.push_back(analysis.id);
        }
        while kept.oldest_first.len() > CACHED {
            if let Some(old) = kept.oldest_first.pop_front() {
                kept.by_game.remove(&old);
            }
        }
    }

    /// Joins the analysis of `id` under way, or becomes the one that
    /// works it out.
    fn role(&self, id: Uuid) -> Role {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        // (One whose worker is gone without a word is taken over.)
        if let Some(result) = running
            .get(&id)
            .filter(|result| result.has_changed().is_ok())
        {
            return Role::Wait(result.clone());
        }
        let (tell, result) = watch::channel(None);
        running.insert(id, result);
        Role::Work(tell)
    }

    fn finished(&self, id: Uuid) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.remove(&id);
    }
}

/// An analysis started at a game's end, counted until dropped.
pub(crate) struct AtTheEnd(Arc<Analyses>);

impl Drop for AtTheEnd {
    fn drop(&mut self) {
        self.0.at_the_end.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Takes a game off the analyses under way however its worker ends
/// (done, refused, or its request dropped by a client that went away).
struct Working<'a> {
    analyses: &'a Analyses,
    id: Uuid,
}

impl Drop for Working<'_> {
    fn drop(&mut self) {
        self.analyses.finished(self.id);
    }
}

impl Analyses {
    /// The analysis of finished game `id`, worked out now unless kept or
    /// under way.
    pub(crate) async fn analyse(
        &self,
        id: Uuid,
        game: Game<AnyPosition>,
        tables: ProofTables,
        asker: Asker,
    ) -> Result<Arc<GameAnalysis>, Busy> {
        loop {
            if let Some(kept) = self.cached(id) {
                return Ok(kept);
            }
            match self.role(id) {
                Role::Wait(mut result) => {
                    if let Ok(done) = result.wait_for(Option::is_some).await
                        && let Some(analysis) = done.clone()
                    {
                        return Ok(analysis);
                    }
                    // The one working it out gave up (it was told to come
                    // back, or failed): ask again, as ourselves.
                }
                Role::Work(tell) => {
                    let _working = Working { analyses: self, id };
                    let worked = self.work(id, game, tables, asker).await;
                    if let Ok(analysis) = &worked {
                        self.keep(analysis.clone());
                        tell.send_replace(Some(analysis.clone()));
                        if let Some(keeper) =
                            &*self.keeper.lock().unwrap_or_else(|e| e.into_inner())
                        {
                            let _ = keeper.send(analysis.clone());
                        }
                    }
                    return worked;
                }
            }
        }
    }

    async fn work(
        &self,
        id: Uuid,
        game: Game<AnyPosition>,
        tables: ProofTables,
        asker: Asker,
    ) -> Result<Arc<GameAnalysis>, Busy> {
        let wait = match asker {
            Asker::Player | Asker::AtTheEnd => None,
            Asker::Other => Some(self.queue_wait),
        };
        let Some(_place) = self.place.take(asker, wait).await else {
            return Err(Busy);
        };
        // The one before may have been this game's.
        if let Some(kept) = self.cached(id) {
            return Ok(kept);
        }
        metrics::counter!("game_analyses_started_total", "asker" => asker.name()).increment(1);
        let stop = Arc::new(AtomicBool::new(false));
        let (reply, reviews) = oneshot::channel();
        let worker_stop = stop.clone();
        let idle_priority = self.idle_priority;
        let started = std::thread::Builder::new()
            .name("ai-analysis".into())
            .spawn(move || {
                if idle_priority {
                    mancala_platform::background::lower_priority();
                }
                let reviews = analyse(&game, &AnalysisPlan::default(), &tables, worker_stop);
                let _ = reply.send(reviews);
            });
        if let Err(error) = started {
            tracing::error!(%error, "starting an analysis");
            return Err(Busy);
        }
        let deadline = self.deadline;
        let deadline = tokio::spawn(async move {
            tokio::time::sleep(deadline).await;
            stop.store(true, Ordering::Relaxed);
        });
        let reviews = reviews.await;
        deadline.abort();
        let Ok(reviews) = reviews else {
            return Err(Busy);
        };
        let analysis = Arc::new(wire(id, &reviews));
        metrics::counter!("game_analyses_total", "complete" => analysis.complete.to_string())
            .increment(1);
        Ok(analysis)
    }
}

impl Asker {
    fn name(self) -> &'static str {
        match self {
            Asker::Player => "player",
            Asker::AtTheEnd => "at_the_end",
            Asker::Other => "other",
        }
    }
}

/// The instance's place to analyse in, handed on as it frees: to the
/// players who wait for it first, in the order they came, then to the
/// analyses started at games' ends, then to others. A game's players also
/// have a second place of their own: a player never waits behind a
/// stranger's analysis (up to its deadline), only behind another player's.
const PLAYERS_PLACES: usize = 2;
#[derive(Default)]
struct Place {
    state: Mutex<PlaceState>,
}

#[derive(Default)]
struct PlaceState {
    /// Analyses running.
    running: usize,
    players: VecDeque<oneshot::Sender<()>>,
    at_the_end: VecDeque<oneshot::Sender<()>>,
    others: VecDeque<oneshot::Sender<()>>,
}

/// The place, while held; handed on when dropped.
struct Held<'a>(&'a Place);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.hand_on();
    }
}

impl Place {
    fn state(&self) -> std::sync::MutexGuard<'_, PlaceState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The place, waiting at most `wait` for it (`None`: as long as it
    /// takes).
    async fn take(&self, asker: Asker, wait: Option<Duration>) -> Option<Held<'_>> {
        let mut handed = {
            let mut state = self.state();
            let places = match asker {
                Asker::Player => PLAYERS_PLACES,
                Asker::AtTheEnd | Asker::Other => 1,
            };
            if state.running < places {
                state.running += 1;
                return Some(Held(self));
            }
            let (hand, handed) = oneshot::channel();
            match asker {
                Asker::Player => state.players.push_back(hand),
                Asker::AtTheEnd => state.at_the_end.push_back(hand),
                Asker::Other => state.others.push_back(hand),
            }
            handed
        };
        let got = match wait {
            None => (&mut handed).await.is_ok(),
            Some(wait) => matches!(tokio::time::timeout(wait, &mut handed).await, Ok(Ok(()))),
        };
        if got {
            return Some(Held(self));
        }
        // Given up: refuse the place from now on, but keep it if it was
        // handed over in the meantime (else nobody would ever free it).
        handed.close();
        // (`then`, not `then_some`: a `Held` made and dropped here would
        // hand on a place this request never had.)
        handed.try_recv().is_ok().then(|| Held(self))
    }

    fn hand_on(&self) {
        let mut state = self.state();
        state.running -= 1;
        while let Some(next) = state.players.pop_front() {
            if next.send(()).is_ok() {
                state.running += 1;
                return;
            }
        }
        // The shared place, if it is the one that freed.
        if state.running > 0 {
            return;
        }
        while let Some(next) = state
            .at_the_end
            .pop_front()
            .or_else(|| state.others.pop_front())
        {
            if next.send(()).is_ok() {
                state.running += 1;
                return;
            }
        }
    }
}

fn wire(id: Uuid, reviews: &[MoveReview]) -> GameAnalysis {
    let moves: Vec<MoveAnalysis> = reviews
        .iter()
        .map(|review| MoveAnalysis {
            ply: review.ply,
            seat: review.mover,
            pit: review.pit.get(),
            before: review.before.as_ref().map(|v| v.value),
            after: review.after.as_ref().map(|v| v.value),
            loss: review.loss(),
            best: review
                .before
                .as_ref()
                .map(|v| v.best.iter().map(|pit| pit.get()).collect())
                .unwrap_or_default(),
            exact: review.exact(),
        })
        .collect();
    GameAnalysis {
        id,
        complete: moves.iter().all(|m| m.loss.is_some()),
        moves,
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::{KalahOptions, Pit, Position, Variant};

    use super::*;

    /// A short Kalah game: South plays its leftmost pit with stones until
    /// the end, North likewise.
    fn finished_game() -> Game<AnyPosition> {
        let mut game = Game::from_variant(Variant::Kalah(KalahOptions::default()));
        while !game.position().is_over() {
            let pit: Pit = game.position().legal_moves().into_iter().next().unwrap();
            game.play(pit).unwrap();
        }
        game
    }

    #[tokio::test]
    async fn an_analysis_is_worked_out_once_and_kept() {
        let analyses = Analyses::default();
        let id = Uuid::now_v7();
        let game = finished_game();
        let first = analyses
            .analyse(id, game.clone(), ProofTables::default(), Asker::Other)
            .await
            .unwrap();
        assert_eq!(first.moves.len(), game.moves().len());
        assert!(first.moves.iter().any(|m| m.exact));
        let again = analyses
            .analyse(id, game, ProofTables::default(), Asker::Other)
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again));
    }

    #[tokio::test]
    async fn a_request_finding_the_place_taken_is_told_to_come_back() {
        // No waiting: the place is tried once.
        let analyses = Analyses {
            queue_wait: Duration::ZERO,
            ..Analyses::default()
        };
        let _taken = analyses.place.take(Asker::Other, None).await.unwrap();
        let answer = analyses
            .analyse(
                Uuid::now_v7(),
                finished_game(),
                ProofTables::default(),
                Asker::Other,
            )
            .await;
        assert!(matches!(answer, Err(Busy)));
    }

    #[tokio::test]
    async fn a_player_never_waits_behind_a_stranger_only_behind_players() {
        let analyses = Arc::new(Analyses {
            queue_wait: Duration::ZERO,
            ..Analyses::default()
        });
        // A stranger's analysis runs: a player has a place of their own.
        let stranger = analyses.place.take(Asker::Other, None).await.unwrap();
        let at_once = analyses
            .analyse(
                Uuid::now_v7(),
                finished_game(),
                ProofTables::default(),
                Asker::Player,
            )
            .await;
        assert!(at_once.is_ok());
        // Both places taken (a stranger's and a player's): a player waits
        // for one however long it takes.
        let taken = analyses.place.take(Asker::Player, None).await.unwrap();
        drop(stranger);
        let stranger = analyses
            .place
            .take(Asker::Other, Some(Duration::ZERO))
            .await;
        assert!(
            stranger.is_none(),
            "a player's analysis runs: strangers wait"
        );
        let other_player = analyses.place.take(Asker::Player, None).await.unwrap();
        let id = Uuid::now_v7();
        let asking = {
            let analyses = analyses.clone();
            tokio::spawn(async move {
                analyses
                    .analyse(id, finished_game(), ProofTables::default(), Asker::Player)
                    .await
                    .map(|analysis| analysis.id)
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!asking.is_finished(), "waiting, not refused");
        drop(taken);
        assert_eq!(asking.await.unwrap().unwrap(), id);
        drop(other_player);
        assert_eq!(analyses.place.state().running, 0);
    }

    #[tokio::test]
    async fn players_then_games_ends_then_strangers_are_handed_the_place() {
        let place = Arc::new(Place::default());
        let held = place.take(Asker::Player, None).await.unwrap();
        let also_held = place.take(Asker::Player, None).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut waiting = Vec::new();
        for (name, asker) in [
            ("other", Asker::Other),
            ("end", Asker::AtTheEnd),
            ("player", Asker::Player),
        ] {
            let (place, order) = (place.clone(), order.clone());
            waiting.push(tokio::spawn(async move {
                let _held = place.take(asker, None).await.unwrap();
                order.lock().unwrap().push(name);
            }));
            // In this order into the queues.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(held);
        // The player took the freed place; the others wait for none to run.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(*order.lock().unwrap(), ["player"]);
        drop(also_held);
        for task in waiting {
            task.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["player", "end", "other"]);
        assert_eq!(place.state().running, 0, "free again once the last let go");
    }

    #[tokio::test]
    async fn each_analysis_worked_out_is_handed_to_the_keeper_once() {
        let analyses = Arc::new(Analyses::default());
        let (keeper, mut kept) = tokio::sync::mpsc::unbounded_channel();
        analyses.keep_worked_in(keeper);
        let id = Uuid::now_v7();
        let asking: Vec<_> = (0..3)
            .map(|_| {
                let analyses = analyses.clone();
                tokio::spawn(async move {
                    analyses
                        .analyse(id, finished_game(), ProofTables::default(), Asker::Player)
                        .await
                        .is_ok()
                })
            })
            .collect();
        for answer in asking {
            assert!(answer.await.unwrap());
        }
        assert_eq!(kept.recv().await.unwrap().id, id);
        assert!(kept.try_recv().is_err(), "worked out once, handed on once");
        // Read back from the store, it is served from memory.
        let other = Arc::new(GameAnalysis {
            id: Uuid::now_v7(),
            complete: true,
            moves: Vec::new(),
        });
        analyses.remember(other.clone());
        assert!(Arc::ptr_eq(&analyses.in_memory(other.id).unwrap(), &other));
    }

    #[tokio::test]
    async fn a_place_handed_to_one_who_gave_up_is_handed_on() {
        let place = Place::default();
        let held = place.take(Asker::Other, None).await.unwrap();
        assert!(
            place
                .take(Asker::Other, Some(Duration::from_millis(20)))
                .await
                .is_none()
        );
        drop(held);
        // The one who gave up is skipped, not handed the place for ever.
        assert!(
            place
                .take(Asker::Other, Some(Duration::ZERO))
                .await
                .is_some()
        );
    }

    #[tokio::test]
    async fn everyone_asking_at_once_shares_one_analysis() {
        let analyses = Arc::new(Analyses::default());
        // Busy with another game while they all ask: they gather.
        let busy = analyses.place.take(Asker::Other, None).await.unwrap();
        let id = Uuid::now_v7();
        let asking: Vec<_> = [Asker::Player, Asker::Player, Asker::Other, Asker::Other]
            .into_iter()
            .map(|asker| {
                let analyses = analyses.clone();
                tokio::spawn(async move {
                    analyses
                        .analyse(id, finished_game(), ProofTables::default(), asker)
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(analyses.running.lock().unwrap().len(), 1, "one worker");
        drop(busy);
        let mut answers = Vec::new();
        for task in asking {
            answers.push(task.await.unwrap().expect("no one is told to come back"));
        }
        assert!(answers.iter().all(|a| Arc::ptr_eq(a, &answers[0])));
        assert!(analyses.running.lock().unwrap().is_empty());
    }

    #[test]
    fn the_cache_keeps_the_newest() {
        let analyses = Analyses::default();
        let ids: Vec<Uuid> = (0..=CACHED).map(|_| Uuid::now_v7()).collect();
        for id in &ids {
            analyses.keep(Arc::new(GameAnalysis {
                id: *id,
                complete: true,
                moves: Vec::new(),
            }));
        }
        assert!(analyses.cached(ids[0]).is_none());
        assert!(analyses.cached(ids[CACHED]).is_some());
        assert_eq!(analyses.kept().by_game.len(), CACHED);
    }
}
