//! The AI as a bounded, shared resource. One pool per process runs a fixed
//! number of searches at once (the rest wait their turn), each under a
//! deadline, on its own threads at the lowest priority: the async runtime
//! (everyone's moves) and the database come first, and the AI takes what
//! CPU is left. Engines (an AI with its tables) are
//! lent to a search and taken back, not made per game: the tables a
//! process holds are bounded by the idle budget plus one engine per
//! worker, whatever the number of games, and a game that unloads holds
//! none.
//!
//! A search that waited long for a worker plays on a smaller budget, so a
//! busy pool makes the AI weaker for a moment rather than the games slow.
//! Each search can be cancelled (an undo, the end, an unload): cancelled
//! while waiting it never runs; running, its budget's stop flag ends it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use mancala_ai::{AnyAi, Chooser, Endgame, Level, ProofTables, SolverTable};
use mancala_rules::{AnyPosition, Game, KalahOptions, Variant};
use tokio::sync::{Notify, oneshot};

use crate::fair_share::FairShare;

/// How the pool is sized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    /// Searches that run at once.
    pub workers: usize,
    /// The longest a move may take, waiting included.
    pub deadline: Duration,
    /// A search that waited longer than this for a worker runs on
    /// [`REDUCED_SHARE`] of its budget.
    pub queue_wait: Duration,
    /// Bytes of idle engines kept for the next search; past it the least
    /// recently used go.
    pub idle_bytes: usize,
    /// Stones up to which `Perfect` proves Kalah from the process's
    /// endgame table; 0: no table.
    pub endgame_stones: u8,
    /// A bigger endgame table to read instead of building one
    /// (`mancala endgame build`); the built one stands in when it cannot
    /// be read.
    pub endgame_file: Option<PathBuf>,
    /// Bytes of the solver's table that every `Perfect` engine and every
    /// analysis of the process shares.
    pub solver_table_bytes: usize,
    /// The longest one post-game analysis works.
    pub analysis_deadline: Duration,
    /// Whether the workers take only the CPU nothing else wants.
    pub idle_priority: bool,
    /// How long a search runs, at most, once another player waits for a
    /// worker ([`crate::fair_share`]): a crowd's long searches make
    /// nobody else wait longer than this.
    pub yield_slice: Duration,
}

/// A search asked to yield ends this long after it started, at the
/// latest: a reply for whoever waited within a few tenths of a second,
/// and still a search of a few million nodes.
pub(crate) const YIELD_SLICE: Duration = Duration::from_millis(200);

/// How far past its deadline a search may end before the log says so.
const OVERRUN_TOLD: Duration = Duration::from_millis(250);

/// The share of its node budget a search gets after waiting long.
pub(crate) const REDUCED_SHARE: u64 = 8;

/// How much of its budget a search gets, after waiting `waited` for a
/// place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Share {
    Full,
    /// Waited past `queue_wait`: [`REDUCED_SHARE`] of its nodes.
    Reduced,
    /// Waited past its deadline: a move now, from a token search.
    AtOnce,
}

fn budget_share(waited: Duration, settings: &PoolSettings) -> Share {
    if waited >= settings.deadline {
        Share::AtOnce
    } else if waited > settings.queue_wait {
        Share::Reduced
    } else {
        Share::Full
    }
}

/// Which engines can serve a search: the same rules and the same level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Kind {
    variant: Variant,
    level: Level,
}

/// One search to run.
#[derive(Clone, Debug)]
pub struct Request {
    pub game: Game<AnyPosition>,
    pub variant: Variant,
    pub level: Level,
    /// The search's randomness: the same seed and position choose alike.
    pub seed: u64,
    /// Whose share of the workers the search takes: the person the AI
    /// plays against, or who asked for the hint (`crate::fair_share`).
    pub owner: uuid::Uuid,
}

/// A search's stop. `halt` is its budget's stop flag, set by a
/// cancellation or by the deadline; `cancelled` only by a cancellation,
/// after which its move (for a position that is gone) is dropped.
#[derive(Debug, Default)]
struct Stop {
    halt: Arc<AtomicBool>,
    cancelled: AtomicBool,
    notify: Notify,
}

impl Stop {
    fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

/// Cancels one search (waiting or running). Dropping it does not.
#[derive(Clone, Debug)]
pub struct Cancel(Arc<Stop>);

impl Cancel {
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
        self.0.halt.store(true, Ordering::Relaxed);
        self.0.notify.notify_waiters();
    }
}

/// What a search came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The move, from a full or a reduced budget (it waited long, or
    /// yielded its worker to another player).
    Move { pit: u8, reduced: bool },
    /// No move: the game is over, or the search was cancelled.
    Nothing,
}

/// The process's AI; cheap to clone.
#[derive(Clone)]
pub struct AiPool {
    inner: Arc<Inner>,
}

struct Inner {
    settings: PoolSettings,
    /// A place on a worker: searches wait here, cancellable, served by
    /// owner in turn of the worker time each has used.
    places: Arc<FairShare>,
    /// The worker threads' queue; never longer than the free places.
    jobs: Mutex<mpsc::Sender<Job>>,
    idle: Arc<Mutex<Idle>>,
    /// The big tables every `Perfect` search and analysis shares.
    tables: Arc<Mutex<SharedTables>>,
    /// Post-game analyses: one at a time, beside the searches.
    analyses: Arc<crate::analysis::Analyses>,
}

/// A search, run on a worker thread.
type Job = Box<dyn FnOnce() + Send>;

/// Starts the worker threads at the least priority (`SCHED_IDLE` on Linux):
/// a crowd's searches fill every idle cycle, but a game's socket, commit
/// or publish that wakes takes its core at once. (At nice 19, 20 players'
/// Perfect games still made another player's hotseat move p99 2.4x.)
fn start_workers(count: usize, idle_priority: bool) -> mpsc::Sender<Job> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let receiver = Arc::new(Mutex::new(receiver));
    for index in 0..count {
        let receiver = receiver.clone();
        let started = std::thread::Builder::new()
            .name(format!("ai-worker-{index}"))
            .spawn(move || {
                if idle_priority {
                    mancala_platform::background::lower_priority();
                }
                loop {
                    let job = {
                        let queue = receiver.lock().unwrap_or_else(|e| e.into_inner());
                        queue.recv()
                    };
                    match job {
                        Ok(job) => job(),
                        // The pool is gone.
                        Err(_) => return,
                    }
                }
            });
        if let Err(error) = started {
            tracing::error!(%error, "starting an AI worker");
        }
    }
    sender
}

/// How long an idle engine, or the proof tables, must have gone unused
/// before the process lets go of them (a crowd that played Perfect games
/// left hundreds of megabytes behind otherwise), and how often it looks.
pub(crate) const LET_GO_AFTER: Duration = Duration::from_secs(60);
const LET_GO_CHECK: Duration = Duration::from_secs(10);

/// The process's Kalah proof tables, made on first use and let go after a
/// quiet spell: the solver table (its memory zeroed and handed out by the
/// system as it is touched) and the endgame table (read or built on a
/// thread of its own).
#[derive(Default)]
struct SharedTables {
    solver: Option<Arc<SolverTable>>,
    endgame: Option<Arc<Endgame>>,
    /// An endgame table is being read or built.
    building: bool,
    /// `Perfect` searches and analyses running now, which hold the tables.
    busy: usize,
    /// When the last of them ended.
    last_used: Option<Instant>,
}

/// What a sweep let go of, and its size: dropped where freeing hundreds of
/// megabytes costs no game a wait.
#[derive(Default)]
struct LetGo {
    bytes: usize,
    held: Vec<Box<dyn std::any::Any + Send>>,
}

impl LetGo {
    fn engines(&mut self, engines: Vec<IdleEngine>) {
        self.bytes += engines.iter().map(|idle| idle.bytes).sum::<usize>();
        self.held.extend(
            engines
                .into_iter()
                .map(|idle| Box::new(idle) as Box<dyn std::any::Any + Send>),
        );
    }
}

/// A proving search or an analysis under way: the tables stay while one is.
struct InUse(Arc<Mutex<SharedTables>>);

impl InUse {
    fn new(tables: &Arc<Mutex<SharedTables>>) -> InUse {
        tables.lock().unwrap_or_else(|e| e.into_inner()).busy += 1;
        InUse(tables.clone())
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut tables = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tables.busy -= 1;
        tables.last_used = Some(Instant::now());
    }
}

/// Engines waiting for their next search, oldest first.
#[derive(Default)]
struct Idle {
    engines: Vec<IdleEngine>,
    bytes: usize,
}

struct IdleEngine {
    kind: Kind,
    engine: Box<AnyAi>,
    bytes: usize,
    since: Instant,
}

impl Idle {
    fn take(&mut self, kind: Kind) -> Option<Box<AnyAi>> {
        let index = self.engines.iter().rposition(|idle| idle.kind == kind)?;
        let taken = self.engines.remove(index);
        self.bytes -= taken.bytes;
        Some(taken.engine)
    }

    /// Keeps `engine` for the next search; the oldest past `limit` bytes
    /// are handed back, for the caller to drop where freeing costs nobody.
    #[must_use]
    fn keep(&mut self, kind: Kind, engine: Box<AnyAi>, limit: usize) -> Vec<IdleEngine> {
        let bytes = engine.bytes();
        self.engines.push(IdleEngine {
            kind,
            engine,
            bytes,
            since: Instant::now(),
        });
        self.bytes += bytes;
        let mut let_go = Vec::new();
        while self.bytes > limit && !self.engines.is_empty() {
            let freed = self.engines.remove(0);
            self.bytes -= freed.bytes;
            let_go.push(freed);
        }
        let_go
    }

    /// Drops the engines `drop` picks: the bytes freed.
    /// Takes out the engines `pick` picks, for the caller to drop.
    fn let_go(&mut self, pick: impl Fn(&IdleEngine) -> bool) -> Vec<IdleEngine> {
        let (picked, kept) = std::mem::take(&mut self.engines)
            .into_iter()
            .partition(|idle| pick(idle));
        self.engines = kept;
        self.bytes = self.engines.iter().map(|idle| idle.bytes).sum();
        picked
    }
}

impl AiPool {
    pub fn new(settings: PoolSettings) -> AiPool {
        let workers = settings.workers.max(1);
        let analysis_deadline = settings.analysis_deadline;
        let idle_priority = settings.idle_priority;
        let pool = AiPool {
            inner: Arc::new(Inner {
                places: FairShare::new(workers),
                jobs: Mutex::new(start_workers(workers, settings.idle_priority)),
                settings,
                idle: Arc::default(),
                tables: Arc::default(),
                analyses: Arc::new(crate::analysis::Analyses::with_priority(
                    analysis_deadline,
                    idle_priority,
                )),
            }),
        };
        pool.let_go_when_quiet();
        pool
    }

    /// Lets go of what has gone unused for [`LET_GO_AFTER`], for as long as
    /// the pool lives (when made inside a runtime).
    fn let_go_when_quiet(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let pool = Arc::downgrade(&self.inner);
        runtime.spawn(async move {
            let mut every = tokio::time::interval(LET_GO_CHECK);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(inner) = pool.upgrade() else {
                    return;
                };
                let let_go = inner.let_go_unused(Instant::now(), LET_GO_AFTER);
                drop(inner);
                if let_go.bytes > 0 {
                    tracing::info!(
                        bytes = let_go.bytes,
                        "AI tables and engines unused for a while: let go"
                    );
                    // Freed on a blocking thread, not on the runtime's.
                    let _ = tokio::task::spawn_blocking(move || drop(let_go)).await;
                }
            }
        });
    }

    /// Starts a search; `done` gets its outcome, even when cancelled.
    /// Returns the handle that cancels it.
    pub fn think<F, Fut>(&self, request: Request, done: F) -> Cancel
    where
        F: FnOnce(Outcome) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let stop = Arc::new(Stop::default());
        let cancel = Cancel(stop.clone());
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let outcome = inner.run(request, &stop).await;
            done(outcome).await;
        });
        cancel
    }

    /// The analysis of finished game `id`, kept or worked out now (with
    /// the endgame table when the `Perfect` AI has had it built).
    pub(crate) async fn analyse(
        &self,
        id: uuid::Uuid,
        game: Game<AnyPosition>,
        asker: crate::analysis::Asker,
    ) -> Result<Arc<mancala_proto::game::GameAnalysis>, crate::analysis::Busy> {
        let _in_use = InUse::new(&self.inner.tables);
        let tables = self.inner.proof_tables();
        self.inner.analyses.analyse(id, game, tables, asker).await
    }

    /// The process's post-game analyses: kept ones, and their keeper.
    pub(crate) fn analyses(&self) -> &Arc<crate::analysis::Analyses> {
        &self.inner.analyses
    }

    /// Bytes held by idle engines now.
    pub fn idle_bytes(&self) -> usize {
        self.inner.idle().bytes
    }
}

/// Reads an endgame table file of standard Kalah's rules.
fn read_endgame(path: &Path) -> Result<Endgame, String> {
    let fail = |error: &dyn std::fmt::Display| format!("{}: {error}", path.display());
    let file = std::fs::File::open(path).map_err(|error| fail(&error))?;
    let table = Endgame::read_from(&mut std::io::BufReader::with_capacity(1 << 20, file))
        .map_err(|error| fail(&error))?;
    if !table.covers(KalahOptions::default()) {
        return Err(fail(&"the table is for other Kalah rules"));
    }
    Ok(table)
}

impl Inner {
    fn idle(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The process's Kalah proof tables: the solver table (made now if it
    /// is the first ask) and the endgame table once built. The first ask
    /// starts building the endgame table on a thread of its own, at the
    /// AI's low priority; until it is there, proofs search to the end.
    fn proof_tables(&self) -> ProofTables {
        let mut tables = self.tables();
        let solver = tables
            .solver
            .get_or_insert_with(|| {
                Arc::new(SolverTable::new(
                    KalahOptions::default(),
                    self.settings.solver_table_bytes,
                ))
            })
            .clone();
        self.start_endgame(&mut tables);
        ProofTables {
            table: Some(solver),
            endgame: tables.endgame.clone(),
        }
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, SharedTables> {
        self.tables.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes out the idle engines kept since `quiet` before `now`, and the
    /// proof tables (with the idle engines that hold them) when no proving
    /// search or analysis has used them since, for the caller to drop off
    /// the runtime thread. The next `Perfect` search makes the solver table
    /// again and starts a new endgame table.
    fn let_go_unused(&self, now: Instant, quiet: Duration) -> LetGo {
        let unused = |since: Instant| now.saturating_duration_since(since) >= quiet;
        let mut let_go = LetGo::default();
        let_go.engines(self.idle().let_go(|idle| unused(idle.since)));
        let mut tables = self.tables();
        let Some(last_used) = tables.last_used else {
            return let_go;
        };
        if tables.busy > 0 || !unused(last_used) {
            return let_go;
        }
        let_go.engines(self.idle().let_go(|idle| idle.engine.proves()));
        if let Some(solver) = tables.solver.take() {
            let_go.bytes += self.settings.solver_table_bytes;
            let_go.held.push(Box::new(solver));
        }
        if !tables.building
            && let Some(endgame) = tables.endgame.take()
        {
            let_go.bytes += endgame.bytes();
            let_go.held.push(Box::new(endgame));
        }
        tables.last_used = None;
        let_go
    }

    /// The proof tables a `Perfect` Kalah engine of `kind` is lent, in use
    /// while the returned guard lives; `None` for every other engine.
    fn tables_for(&self, kind: Kind) -> Option<(InUse, ProofTables)> {
        let proves = kind.level == Level::Perfect && matches!(kind.variant, Variant::Kalah(_));
        proves.then(|| (InUse::new(&self.tables), self.proof_tables()))
    }

    fn start_endgame(&self, tables: &mut SharedTables) {
        if (self.settings.endgame_stones == 0 && self.settings.endgame_file.is_none())
            || tables.endgame.is_some()
            || tables.building
        {
            return;
        }
        tables.building = true;
        let (cell, stones) = (self.tables.clone(), self.settings.endgame_stones);
        let file = self.settings.endgame_file.clone();
        let idle_priority = self.settings.idle_priority;
        let started = std::thread::Builder::new()
            .name("ai-endgame".into())
            .spawn(move || {
                if idle_priority {
                    mancala_platform::background::lower_priority();
                }
                let began = Instant::now();
                let table = match file.as_deref().map(read_endgame) {
                    Some(Ok(table)) => table,
                    Some(Err(error)) => {
                        tracing::warn!(%error, "reading the endgame table: building one instead");
                        Endgame::build(KalahOptions::default(), stones)
                    }
                    None => Endgame::build(KalahOptions::default(), stones),
                };
                tracing::info!(
                    stones = table.max_stones(),
                    bytes = table.bytes(),
                    seconds = began.elapsed().as_secs_f64(),
                    "the Perfect AI's endgame table is ready"
                );
                let mut tables = cell.lock().unwrap_or_else(|e| e.into_inner());
                tables.endgame = Some(Arc::new(table));
                tables.building = false;
            });
        if let Err(error) = started {
            tables.building = false;
            tracing::warn!(%error, "building the endgame table");
        }
    }

    async fn run(&self, request: Request, stop: &Stop) -> Outcome {
        let asked = Instant::now();
        let cancelled = stop.notify.notified();
        tokio::pin!(cancelled);
        cancelled.as_mut().enable();
        if stop.cancelled() {
            return Outcome::Nothing;
        }
        let place = tokio::select! {
            place = self.places.acquire(request.owner) => place,
            () = &mut cancelled => return Outcome::Nothing,
        };
        let waited = asked.elapsed();
        metrics::histogram!("ai_queue_wait_seconds").record(waited.as_secs_f64());
        if stop.cancelled() {
            return Outcome::Nothing;
        }
        let kind = Kind {
            variant: request.variant,
            level: request.level,
        };
        let taken = self.idle().take(kind);
        let tables = self.tables_for(kind);
        let share = budget_share(waited, &self.settings);
        let reduced = share != Share::Full;
        let flag = stop.halt.clone();
        let left = self.settings.deadline.saturating_sub(waited);
        // A search whose deadline has passed plays at once with what it has
        // (the book, the endgame table, the first iterations).
        let least = if share == Share::AtOnce {
            Duration::from_millis(5)
        } else {
            Duration::from_millis(50)
        };
        let began = tokio::time::Instant::now();
        let yielded = Arc::new(AtomicBool::new(false));
        let timer = tokio::spawn({
            let (flag, yielded) = (flag.clone(), yielded.clone());
            let (asked, slice) = (place.yield_asked(), self.settings.yield_slice);
            async move {
                let deadline = tokio::time::sleep(left.max(least));
                tokio::pin!(deadline);
                tokio::select! {
                    () = &mut deadline => {}
                    () = asked.notified() => {
                        tokio::select! {
                            () = &mut deadline => {}
                            () = tokio::time::sleep_until(began + slice) => {
                                yielded.store(true, Ordering::Relaxed);
                                metrics::counter!("ai_searches_yielded_total").increment(1);
                            }
                        }
                    }
                }
                flag.store(true, Ordering::Relaxed);
            }
        });
        let (reply, answer) = oneshot::channel();
        let (idle, idle_bytes) = (self.idle.clone(), self.settings.idle_bytes);
        // An engine is made, and the ones past the idle budget let go, here
        // on the worker: its tables are megabytes that the runtime thread
        // (everyone's moves) must not spend its time zeroing or freeing.
        let job: Job = Box::new(move || {
            let mut engine = match taken {
                Some(engine) => engine,
                None => match AnyAi::new(kind.variant, kind.level, request.seed) {
                    Ok(engine) => Box::new(engine),
                    Err(error) => {
                        tracing::error!(%error, "no AI for this game");
                        let _ = reply.send(None);
                        return;
                    }
                },
            };
            if let Some((_, tables)) = &tables {
                engine.share(tables);
            }
            engine.reseed(request.seed);
            let mut budget = request.level.default_budget();
            if let Some(nodes) = budget.node_limit() {
                let divisor = match share {
                    Share::Full => 1,
                    Share::Reduced => REDUCED_SHARE,
                    Share::AtOnce => REDUCED_SHARE * REDUCED_SHARE,
                };
                budget = budget.with_nodes((nodes / divisor).max(1));
            }
            let budget = budget.with_stop(flag);
            let pit = engine
                .choose(&request.game, &budget)
                .map(|decision| decision.pit.get());
            let let_go = idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .keep(kind, engine, idle_bytes);
            drop(let_go);
            // The tables stay in use until the engine is back.
            drop(tables);
            let _ = reply.send(pit);
        });
        let started = Instant::now();
        let queued = self
            .jobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(job);
        let searched = match queued {
            Ok(()) => answer.await,
            Err(_) => {
                tracing::error!("the AI workers are gone");
                timer.abort();
                return Outcome::Nothing;
            }
        };
        timer.abort();
        let searching = started.elapsed();
        place.release(searching);
        let level = request.level.name();
        metrics::histogram!("ai_search_seconds", "level" => level).record(searching.as_secs_f64());
        let thought = asked.elapsed();
        metrics::histogram!("ai_think_seconds", "level" => level).record(thought.as_secs_f64());
        if thought > self.settings.deadline + OVERRUN_TOLD {
            tracing::warn!(
                level,
                waited_ms = waited.as_millis(),
                searched_ms = searching.as_millis(),
                "an AI move took past its deadline"
            );
        }
        let Ok(pit) = searched else {
            return Outcome::Nothing;
        };
        let reduced = reduced || yielded.load(Ordering::Relaxed);
        match pit {
            // A cancelled search's move is for a position that is gone.
            Some(pit) if !stop.cancelled() => Outcome::Move { pit, reduced },
            _ => Outcome::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::{KalahOptions, Position};

    use super::*;

    #[test]
    fn the_levels_a_request_may_name_are_the_engines() {
        let names: Vec<&str> = Level::ALL.iter().map(|level| level.name()).collect();
        assert_eq!(names, mancala_proto::game::AI_LEVELS);
    }

    fn settings(workers: usize, queue_wait: Duration, idle_bytes: usize) -> PoolSettings {
        PoolSettings {
            workers,
            deadline: Duration::from_secs(5),
            queue_wait,
            idle_bytes,
            endgame_stones: 0,
            endgame_file: None,
            solver_table_bytes: 1 << 20,
            analysis_deadline: crate::analysis::DEADLINE,
            // Normal priority: at SCHED_IDLE a machine busy with the other
            // tests (or coverage's slower code) starves the table builds
            // these tests wait for.
            idle_priority: false,
            yield_slice: YIELD_SLICE,
        }
    }

    fn kalah(level: Level, seed: u64) -> Request {
        let variant = Variant::Kalah(KalahOptions::default());
        Request {
            game: Game::from_variant(variant),
            variant,
            level,
            seed,
            owner: uuid::Uuid::from_u128(u128::from(seed)),
        }
    }

    async fn outcome(pool: &AiPool, request: Request) -> (Cancel, oneshot::Receiver<Outcome>) {
        let (sender, receiver) = oneshot::channel();
        let cancel = pool.think(request, move |outcome| async move {
            let _ = sender.send(outcome);
        });
        (cancel, receiver)
    }

    #[tokio::test]
    async fn engines_are_lent_and_taken_back_within_the_idle_bound() {
        let pool = AiPool::new(settings(2, Duration::from_secs(10), 64 << 20));
        for seed in 0..3 {
            let (_, done) = outcome(&pool, kalah(Level::Advanced, seed)).await;
            assert!(matches!(
                done.await.unwrap(),
                Outcome::Move { reduced: false, .. }
            ));
        }
        // One engine served the three searches in turn.
        assert_eq!(pool.idle_bytes(), 4 << 20);
        // With no idle budget nothing is kept.
        let pool = AiPool::new(settings(2, Duration::from_secs(10), 0));
        let (_, done) = outcome(&pool, kalah(Level::Advanced, 1)).await;
        done.await.unwrap();
        assert_eq!(pool.idle_bytes(), 0);
    }

    #[tokio::test]
    async fn perfect_engines_share_one_solver_table_and_one_endgame_table_built_in_the_background()
    {
        let pool = AiPool::new(PoolSettings {
            endgame_stones: 8,
            ..settings(1, Duration::from_secs(10), 64 << 20)
        });
        // An Advanced search never asks for them.
        let (_, done) = outcome(&pool, kalah(Level::Advanced, 1)).await;
        done.await.unwrap();
        assert!(!pool.inner.tables().building);
        assert!(pool.inner.tables().solver.is_none());
        // The first Perfect search starts the build and does not wait for it.
        let (_, done) = outcome(&pool, kalah(Level::Perfect, 1)).await;
        done.await.unwrap();
        assert!(pool.inner.tables().building || pool.inner.tables().endgame.is_some());
        for _ in 0..1000 {
            if pool.inner.tables().endgame.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let table = pool
            .inner
            .tables()
            .endgame
            .clone()
            .expect("built within 10 s");
        assert_eq!(table.max_stones(), 8);
        // The next Perfect search proves with it; the engine goes back to
        // the idle ones holding the shared table, not a copy.
        let (_, done) = outcome(&pool, kalah(Level::Perfect, 2)).await;
        done.await.unwrap();
        let idle = pool.inner.idle();
        let perfect: Vec<_> = idle
            .engines
            .iter()
            .filter(|idle| idle.kind.level == Level::Perfect)
            .collect();
        assert_eq!(perfect.len(), 1);
        let tables = perfect[0]
            .engine
            .proof_tables()
            .expect("a Kalah engine")
            .clone();
        assert!(Arc::ptr_eq(tables.endgame.as_ref().unwrap(), &table));
        let solver_table = pool.inner.tables().solver.clone().unwrap();
        assert!(Arc::ptr_eq(tables.table.as_ref().unwrap(), &solver_table));
        drop(solver_table);
        assert_eq!(
            Arc::strong_count(&table),
            4,
            "the pool's, this test's two, and the engine's solver cache (the start is in the \
             opening book, so no proof has made a solver yet)"
        );
    }

    #[tokio::test]
    async fn a_quiet_ai_lets_go_of_its_tables_and_engines_and_makes_them_again_when_asked() {
        let pool = AiPool::new(PoolSettings {
            endgame_stones: 8,
            ..settings(1, Duration::from_secs(10), 64 << 20)
        });
        let table = endgame_of(&pool).await;
        let (_, done) = outcome(&pool, kalah(Level::Advanced, 3)).await;
        done.await.unwrap();
        assert!(pool.idle_bytes() > 0);
        let quiet_since = pool.inner.tables().last_used.unwrap();
        // Nothing has gone unused long enough: nothing goes.
        let early = quiet_since + LET_GO_AFTER - Duration::from_secs(1);
        assert_eq!(pool.inner.let_go_unused(early, LET_GO_AFTER).bytes, 0);
        // The Perfect engine, idle since its search, goes; the Advanced one
        // kept after it stays, and so do the tables while one uses them.
        let in_use = InUse::new(&pool.inner.tables);
        let late = quiet_since + LET_GO_AFTER;
        assert!(pool.inner.let_go_unused(late, LET_GO_AFTER).bytes > 0);
        assert!(pool.idle_bytes() > 0, "the Advanced engine stays");
        assert!(pool.inner.tables().solver.is_some());
        drop(in_use);
        let late = pool.inner.tables().last_used.unwrap() + LET_GO_AFTER;
        let let_go = pool.inner.let_go_unused(late, LET_GO_AFTER).bytes;
        assert!(let_go >= (1 << 20) + table.bytes(), "{let_go}");
        assert_eq!(pool.idle_bytes(), 0);
        assert!(pool.inner.tables().solver.is_none());
        assert!(pool.inner.tables().endgame.is_none());
        assert_eq!(
            Arc::strong_count(&table),
            1,
            "nothing but this test holds the old endgame table"
        );
        // Let go once: a second look finds nothing more.
        assert_eq!(pool.inner.let_go_unused(late, LET_GO_AFTER).bytes, 0);
        // The next Perfect search makes them again.
        let again = endgame_of(&pool).await;
        assert!(!Arc::ptr_eq(&again, &table));
        assert!(pool.inner.tables().solver.is_some());
    }

    /// The endgame table the pool has once a Perfect search asked for it.
    async fn endgame_of(pool: &AiPool) -> Arc<Endgame> {
        let (_, done) = outcome(pool, kalah(Level::Perfect, 1)).await;
        done.await.unwrap();
        for _ in 0..1000 {
            if let Some(table) = pool.inner.tables().endgame.clone() {
                return table;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no endgame table within 10 s");
    }

    #[tokio::test]
    async fn an_endgame_table_file_is_read_and_a_damaged_one_gives_way_to_a_build() {
        let dir = std::env::temp_dir().join(format!("ai-endgame-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let written = Endgame::build(KalahOptions::default(), 9);
        let mut bytes = written.header().to_vec();
        bytes.extend_from_slice(written.as_bytes());
        let good = dir.join("good.egtb");
        std::fs::write(&good, &bytes).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        let damaged = dir.join("damaged.egtb");
        std::fs::write(&damaged, &bytes).unwrap();
        let pool_reading = |file: &std::path::Path| {
            AiPool::new(PoolSettings {
                endgame_stones: 7,
                endgame_file: Some(file.to_owned()),
                ..settings(1, Duration::from_secs(10), 64 << 20)
            })
        };

        let read = endgame_of(&pool_reading(&good)).await;
        assert_eq!(read.max_stones(), 9, "the file's table, not a build of 7");
        assert_eq!(read.as_bytes(), written.as_bytes());
        for file in [damaged.as_path(), &dir.join("missing.egtb")] {
            let built = endgame_of(&pool_reading(file)).await;
            assert_eq!(built.max_stones(), 7, "{}", file.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_long_search_yields_its_worker_to_another_player_who_waits() {
        let pool = AiPool::new(PoolSettings {
            // No slice: the asked search stops at once, so the test waits
            // on no clock.
            yield_slice: Duration::ZERO,
            deadline: Duration::from_secs(3600),
            ..settings(1, Duration::from_secs(3600), 64 << 20)
        });
        // Out of the opening book, with most stones still to play: a
        // Perfect search here runs far longer than this test lasts.
        let mut long = kalah(Level::Perfect, 1);
        for _ in 0..8 {
            let pit = long.game.position().legal_moves().last().unwrap();
            long.game.play(pit).unwrap();
        }
        let (_, crowd) = outcome(&pool, long).await;
        let (_, honest) = outcome(&pool, kalah(Level::Beginner, 2)).await;
        let both = async { (crowd.await.unwrap(), honest.await.unwrap()) };
        let (crowd, honest) = tokio::time::timeout(Duration::from_secs(120), both)
            .await
            .expect("the long search yielded");
        assert!(
            matches!(crowd, Outcome::Move { reduced: true, .. }),
            "{crowd:?}"
        );
        assert!(
            matches!(honest, Outcome::Move { reduced: false, .. }),
            "{honest:?}"
        );
    }

    #[tokio::test]
    async fn a_search_that_waited_long_plays_on_a_reduced_budget() {
        let pool = AiPool::new(settings(1, Duration::ZERO, 64 << 20));
        let (_, done) = outcome(&pool, kalah(Level::Beginner, 1)).await;
        assert!(matches!(
            done.await.unwrap(),
            Outcome::Move { reduced: true, .. }
        ));
    }

    #[tokio::test]
    async fn a_cancelled_search_plays_nothing_and_frees_its_worker() {
        let pool = AiPool::new(settings(1, Duration::from_secs(10), 64 << 20));
        // Perfect from the start would think for its whole budget.
        let (running, first) = outcome(&pool, kalah(Level::Perfect, 1)).await;
        let (waiting, second) = outcome(&pool, kalah(Level::Perfect, 2)).await;
        waiting.cancel();
        assert_eq!(second.await.unwrap(), Outcome::Nothing);
        running.cancel();
        assert_eq!(first.await.unwrap(), Outcome::Nothing);
        // The worker is free again: the next search runs and moves.
        let (_, third) = outcome(&pool, kalah(Level::Beginner, 3)).await;
        assert!(matches!(third.await.unwrap(), Outcome::Move { .. }));
    }
}
