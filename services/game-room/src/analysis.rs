//! Post-game analysis as the service offers it: one at a time per
//! instance, on a thread of its own at the AI's lowest priority (moves and
//! the database come first), under a deadline, and kept for the next
//! viewer. A finished game never changes, so what was worked out stays
//! true; a cache bounded by count keeps memory bounded.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mancala_ai::{AnalysisPlan, MoveReview, ProofTables, analyse};
use mancala_proto::game::{GameAnalysis, MoveAnalysis};
use mancala_rules::{AnyPosition, Game};
use tokio::sync::{Semaphore, oneshot};
use uuid::Uuid;

/// The longest one analysis works unless told otherwise
/// (`APP_ANALYSIS_DEADLINE_MS`); the earliest positions (the hardest) are
/// left without values when it runs out.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);
/// How long a request waits for the analysis running before it is told
/// to come back.
const QUEUE_WAIT: Duration = Duration::from_secs(2);
/// Analyses kept.
const CACHED: usize = 256;

/// Another analysis holds the instance's one place.
#[derive(Debug)]
pub(crate) struct Busy;

/// The instance's analyses: the running one and those kept.
pub(crate) struct Analyses {
    place: Semaphore,
    queue_wait: Duration,
    deadline: Duration,
    kept: Mutex<Kept>,
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

impl Analyses {
    /// Analyses that each work at most `deadline`.
    pub(crate) fn with_deadline(deadline: Duration) -> Analyses {
        Analyses {
            place: Semaphore::new(1),
            queue_wait: QUEUE_WAIT,
            deadline,
            kept: Mutex::default(),
        }
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

    /// The analysis of finished game `id`, worked out now unless kept.
    pub(crate) async fn analyse(
        &self,
        id: Uuid,
        game: Game<AnyPosition>,
        tables: ProofTables,
    ) -> Result<Arc<GameAnalysis>, Busy> {
        if let Some(kept) = self.cached(id) {
            return Ok(kept);
        }
        let _place = match tokio::time::timeout(self.queue_wait, self.place.acquire()).await {
            Ok(Ok(permit)) => permit,
            _ => return Err(Busy),
        };
        // The one before may have been this game's.
        if let Some(kept) = self.cached(id) {
            return Ok(kept);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (reply, reviews) = oneshot::channel();
        let worker_stop = stop.clone();
        let started = std::thread::Builder::new()
            .name("ai-analysis".into())
            .spawn(move || {
                let _ = thread_priority::set_current_thread_priority(
                    thread_priority::ThreadPriority::Min,
                );
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
        self.keep(analysis.clone());
        Ok(analysis)
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
            .analyse(id, game.clone(), ProofTables::default())
            .await
            .unwrap();
        assert_eq!(first.moves.len(), game.moves().len());
        assert!(first.moves.iter().any(|m| m.exact));
        let again = analyses
            .analyse(id, game, ProofTables::default())
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
        let _taken = analyses.place.acquire().await.unwrap();
        let answer = analyses
            .analyse(Uuid::now_v7(), finished_game(), ProofTables::default())
            .await;
        assert!(matches!(answer, Err(Busy)));
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
