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
use std::sync::{Arc, Mutex, OnceLock, mpsc};
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
}

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
    /// The move, from a full or a reduced budget.
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
    idle: Mutex<Idle>,
    /// The Kalah endgame table every `Perfect` engine shares, once built.
    endgame: Arc<OnceLock<Arc<Endgame>>>,
    endgame_started: AtomicBool,
    /// The Kalah solver table every proof shares, made on first use (its
    /// memory is zeroed and handed out by the system as it is touched).
    solver_table: OnceLock<Arc<SolverTable>>,
    /// Post-game analyses: one at a time, beside the searches.
    analyses: crate::analysis::Analyses,
}

/// A search, run on a worker thread.
type Job = Box<dyn FnOnce() + Send>;

/// Starts the worker threads, at the lowest priority the system gives a
/// process without privileges (nice 19 on Linux).
fn start_workers(count: usize) -> mpsc::Sender<Job> {
    let (sender, receiver) = mpsc::channel::<Job>();
    let receiver = Arc::new(Mutex::new(receiver));
    for index in 0..count {
        let receiver = receiver.clone();
        let started = std::thread::Builder::new()
            .name(format!("ai-worker-{index}"))
            .spawn(move || {
                if let Err(error) = thread_priority::set_current_thread_priority(
                    thread_priority::ThreadPriority::Min,
                ) {
                    tracing::warn!(?error, "an AI worker keeps the normal priority");
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

/// Engines waiting for their next search, oldest first.
#[derive(Default)]
struct Idle {
    engines: Vec<(Kind, Box<AnyAi>, usize)>,
    bytes: usize,
}

impl Idle {
    fn take(&mut self, kind: Kind) -> Option<Box<AnyAi>> {
        let index = self.engines.iter().rposition(|(k, _, _)| *k == kind)?;
        let (_, engine, bytes) = self.engines.remove(index);
        self.bytes -= bytes;
        Some(engine)
    }

    fn keep(&mut self, kind: Kind, engine: Box<AnyAi>, limit: usize) {
        let bytes = engine.bytes();
        self.engines.push((kind, engine, bytes));
        self.bytes += bytes;
        while self.bytes > limit && !self.engines.is_empty() {
            let (_, _, freed) = self.engines.remove(0);
            self.bytes -= freed;
        }
    }
}

impl AiPool {
    pub fn new(settings: PoolSettings) -> AiPool {
        let workers = settings.workers.max(1);
        let analysis_deadline = settings.analysis_deadline;
        AiPool {
            inner: Arc::new(Inner {
                places: FairShare::new(workers),
                jobs: Mutex::new(start_workers(workers)),
                settings,
                idle: Mutex::new(Idle::default()),
                endgame: Arc::default(),
                endgame_started: AtomicBool::new(false),
                solver_table: OnceLock::new(),
                analyses: crate::analysis::Analyses::with_deadline(analysis_deadline),
            }),
        }
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
        let tables = self.inner.proof_tables();
        self.inner.analyses.analyse(id, game, tables, asker).await
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
        let table = self.solver_table.get_or_init(|| {
            Arc::new(SolverTable::new(
                KalahOptions::default(),
                self.settings.solver_table_bytes,
            ))
        });
        self.start_endgame();
        ProofTables {
            table: Some(table.clone()),
            endgame: self.endgame.get().cloned(),
        }
    }

    /// Gives a `Perfect` Kalah engine the process's proof tables.
    fn lend_tables(&self, engine: &mut AnyAi) {
        if engine.proves() {
            engine.share(&self.proof_tables());
        }
    }

    fn start_endgame(&self) {
        if (self.settings.endgame_stones == 0 && self.settings.endgame_file.is_none())
            || self.endgame.get().is_some()
            || self.endgame_started.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let (cell, stones) = (self.endgame.clone(), self.settings.endgame_stones);
        let file = self.settings.endgame_file.clone();
        let started = std::thread::Builder::new()
            .name("ai-endgame".into())
            .spawn(move || {
                let _ = thread_priority::set_current_thread_priority(
                    thread_priority::ThreadPriority::Min,
                );
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
                let _ = cell.set(Arc::new(table));
            });
        if let Err(error) = started {
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
        let mut engine = match self.idle().take(kind) {
            Some(engine) => engine,
            None => match AnyAi::new(kind.variant, kind.level, request.seed) {
                Ok(engine) => Box::new(engine),
                Err(error) => {
                    tracing::error!(%error, "no AI for this game");
                    return Outcome::Nothing;
                }
            },
        };
        self.lend_tables(&mut engine);
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
        let timer = tokio::spawn({
            let flag = flag.clone();
            async move {
                tokio::time::sleep(left.max(least)).await;
                flag.store(true, Ordering::Relaxed);
            }
        });
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            let mut engine = engine;
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
            let _ = reply.send((engine, pit));
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
        place.release(started.elapsed());
        let Ok((engine, pit)) = searched else {
            return Outcome::Nothing;
        };
        self.idle().keep(kind, engine, self.settings.idle_bytes);
        match pit {
            // A cancelled search's move is for a position that is gone.
            Some(pit) if !stop.cancelled() => Outcome::Move { pit, reduced },
            _ => Outcome::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use mancala_rules::KalahOptions;

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
        assert!(!pool.inner.endgame_started.load(Ordering::Acquire));
        assert!(pool.inner.solver_table.get().is_none());
        // The first Perfect search starts the build and does not wait for it.
        let (_, done) = outcome(&pool, kalah(Level::Perfect, 1)).await;
        done.await.unwrap();
        assert!(pool.inner.endgame_started.load(Ordering::Acquire));
        for _ in 0..1000 {
            if pool.inner.endgame.get().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let table = pool.inner.endgame.get().expect("built within 10 s").clone();
        assert_eq!(table.max_stones(), 8);
        // The next Perfect search proves with it; the engine goes back to
        // the idle ones holding the shared table, not a copy.
        let (_, done) = outcome(&pool, kalah(Level::Perfect, 2)).await;
        done.await.unwrap();
        let idle = pool.inner.idle();
        let perfect: Vec<_> = idle
            .engines
            .iter()
            .filter(|(kind, _, _)| kind.level == Level::Perfect)
            .collect();
        assert_eq!(perfect.len(), 1);
        let tables = perfect[0].1.proof_tables().expect("a Kalah engine").clone();
        assert!(Arc::ptr_eq(tables.endgame.as_ref().unwrap(), &table));
        let solver_table = pool.inner.solver_table.get().unwrap();
        assert!(Arc::ptr_eq(tables.table.as_ref().unwrap(), solver_table));
        assert_eq!(
            Arc::strong_count(&table),
            4,
            "the pool's, this test's two, and the engine's solver cache (the start is in the \
             opening book, so no proof has made a solver yet)"
        );
    }

    /// The endgame table the pool has once a Perfect search asked for it.
    async fn endgame_of(pool: &AiPool) -> Arc<Endgame> {
        let (_, done) = outcome(pool, kalah(Level::Perfect, 1)).await;
        done.await.unwrap();
        for _ in 0..1000 {
            if let Some(table) = pool.inner.endgame.get() {
                return table.clone();
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
