//! Work that must never take the cores the games run on: a few threads at
//! the lowest scheduling priority, fed by a queue. On Linux they are
//! `SCHED_IDLE`: any ordinary thread that wakes preempts them at once
//! (nice 19 alone still let a woken game thread wait for the tick: the
//! probe's p99 rose 1.3-1.7x under a sign-in burst). A
//! password hash (argon2id, tens of milliseconds of a core) is the first
//! such work: a burst of sign-ins, each within its limits, otherwise
//! doubled the other players' move p99 on a 2-core machine. The kernel
//! still gives these threads every idle cycle, so alone they run at full
//! speed; under load the event path goes first.

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// A pool of low-priority threads; cheap to clone.
#[derive(Clone, Debug)]
pub struct Background {
    jobs: Sender<Job>,
}

/// The pool's threads have stopped (the process is going down).
#[derive(Debug, thiserror::Error)]
#[error("the background threads have stopped")]
pub struct Stopped;

impl Background {
    /// `threads` threads named `name`, lowered to the least priority.
    pub fn start(name: &str, threads: usize) -> Background {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads.max(1) {
            let queue = queue.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{n}"))
                .spawn(move || {
                    lower_priority();
                    loop {
                        // The lock is held only while waiting for a job.
                        let job = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                });
            if let Err(error) = spawned {
                tracing::error!(%error, "starting a background thread");
            }
        }
        Background { jobs }
    }

    /// Half the cores, at least one: the other half stays the games'.
    pub fn half_the_cores() -> usize {
        std::thread::available_parallelism().map_or(1, |cores| (cores.get() / 2).max(1))
    }

    /// Runs `work` on one of the pool's threads; its result.
    pub async fn run<T, F>(&self, work: F) -> Result<T, Stopped>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (done, result) = oneshot::channel();
        self.jobs
            .send(Box::new(move || {
                let _ = done.send(work());
            }))
            .map_err(|_| Stopped)?;
        result.await.map_err(|_| Stopped)
    }
}

/// Lowers the calling thread to the least priority: `SCHED_IDLE` on Linux
/// (nice 19 elsewhere, or where that is refused). Any thread's work that
/// must yield to the games: password hashes, the AI's searches.
pub fn lower_priority() {
    // Lowering one's own priority needs no privilege; where it fails the
    // work still runs, at normal priority.
    #[cfg(target_os = "linux")]
    {
        use thread_priority::unix::{
            NormalThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
            thread_native_id,
        };
        let idle = set_thread_priority_and_policy(
            thread_native_id(),
            thread_priority::ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        );
        if idle.is_ok() {
            return;
        }
    }
    if let Err(error) =
        thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min)
    {
        tracing::warn!(?error, "could not lower a background thread's priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_on_a_pool_thread_and_returns_its_result() {
        let pool = Background::start("test-background", 2);
        let name = pool
            .run(|| std::thread::current().name().map(str::to_owned))
            .await
            .unwrap_or_default();
        assert!(name.is_some_and(|name| name.starts_with("test-background-")));
        let sums =
            futures_util::future::join_all((0..10u64).map(|n| pool.run(move || n * 2))).await;
        let sums: Vec<u64> = sums
            .into_iter()
            .map(|sum| sum.unwrap_or_default())
            .collect();
        assert_eq!(sums, (0..10).map(|n| n * 2).collect::<Vec<_>>());
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn its_threads_run_at_the_least_priority() {
        let pool = Background::start("test-nice", 1);
        // The thread's policy, from /proc: field 41 of its stat line.
        let policy = pool
            .run(|| {
                let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
                let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                after_name
                    .split_whitespace()
                    .nth(38)
                    .and_then(|n| n.parse::<i32>().ok())
            })
            .await
            .unwrap_or_default();
        const SCHED_IDLE: i32 = 5;
        assert_eq!(policy, Some(SCHED_IDLE));
    }
}
