//! The fair-play sentinel: it notices what nobody reported. Every few
//! seconds it looks at the players whose rated games were just rated,
//! weighs their recent rated games ([`signals`], pure) and puts what it
//! finds into the moderators' queue as an automatic report with its
//! evidence. It never sanctions: moderators decide.
//!
//! One instance scans at a time (a short Redis lock per scan; a scan done
//! twice files nothing twice, since an open automatic report is updated in
//! place). What the history says (a ring, sandbagging) is filed in the
//! scan itself. Engine accuracy needs each game's analysis, which may take
//! minutes: the scan hands the player to the instance's engine checker (a
//! task of its own, one player at a time, each player queued once), so no
//! analysis holds up the next scan. The checker asks the instance's
//! analyses for the games of players whose results or move times make it
//! worth the work, as a stranger would (it waits behind the players, and
//! skips a game whose place stays taken).

pub mod signals;
pub(crate) mod store;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use mancala_proto::game::GameAnalysis;
use mancala_proto::moderation::{Evidence, GameEvidence};
use uuid::Uuid;

use crate::analysis::Asker;
use crate::context::Context;
use signals::{Outcome, PlayedMoves, RatedGame, Signal};

/// How often the history is looked at.
const SCAN: Duration = Duration::from_secs(5);
/// The rated games weighed: this far back...
const WINDOW: time::Duration = time::Duration::days(30);
/// ...at most this many.
const GAMES: i64 = 200;
/// A player is weighed again at most this often (a player in a streak of
/// games is touched by each).
const AGAIN_AFTER: Duration = Duration::from_secs(10);
/// Players weighed in one scan; the rest wait for the next.
const PLAYERS_A_SCAN: i64 = 200;
/// Games whose analysis the engine check reads, newest first.
const ANALYSED_GAMES: usize = 10;
/// An engine check is worth its analyses when the player won this share
/// of their recent games (at least [`signals::ENGINE_GAMES`])...
const ENGINE_WIN_SHARE: f64 = 0.6;
/// ...or their moves were timed this regularly.
const ENGINE_TIME_CV: f64 = 0.3;
/// A reason a moderator closed is not reported again for this long.
const QUIET: time::Duration = time::Duration::days(7);

/// Starts the sentinel on this instance.
pub(crate) fn spawn(deps: Context) {
    let (engine_checks, queued) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(check_engines(deps.clone(), queued));
    tokio::spawn(async move {
        let mut sentinel = Sentinel {
            deps,
            weighed: HashMap::new(),
            due: HashSet::new(),
            engine_checks,
        };
        let mut every = tokio::time::interval(SCAN);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if let Err(error) = sentinel.scan().await {
                tracing::warn!(%error, "the fair-play sentinel's scan");
            }
        }
    });
}

#[derive(Debug, thiserror::Error)]
enum ScanError {
    #[error("postgres: {0}")]
    Postgres(#[from] sqlx::Error),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
}

struct Sentinel {
    deps: Context,
    /// When each player was last weighed here (for [`AGAIN_AFTER`]).
    weighed: HashMap<Uuid, Instant>,
    /// Players with rated games not weighed yet.
    due: HashSet<Uuid>,
    /// The engine checker's queue.
    engine_checks: tokio::sync::mpsc::UnboundedSender<Uuid>,
}

/// The engine checker: one player at a time, in the order handed over,
/// each player queued once however often the scan hands them over.
async fn check_engines(deps: Context, mut handed: tokio::sync::mpsc::UnboundedReceiver<Uuid>) {
    let mut queue: VecDeque<Uuid> = VecDeque::new();
    let mut queued: HashSet<Uuid> = HashSet::new();
    loop {
        while let Ok(player) = handed.try_recv() {
            if queued.insert(player) {
                queue.push_back(player);
            }
        }
        let player = match queue.pop_front() {
            Some(player) => player,
            None => match handed.recv().await {
                Some(player) => player,
                None => return,
            },
        };
        queued.remove(&player);
        if let Err(error) = check_engine(&deps, player).await {
            tracing::warn!(%error, %player, "the engine check of a player's rated games");
        }
    }
}

/// Weighs the accuracy and times of one player's recent rated games;
/// files what it finds.
async fn check_engine(deps: &Context, player: Uuid) -> Result<(), ScanError> {
    let since = deps.clock.now_utc() - WINDOW;
    let games = store::rated_games(&deps.postgres, player, since, GAMES).await?;
    let found: Vec<Signal> = engine(deps, &games).await?.into_iter().collect();
    file(deps, player, found).await
}

impl Sentinel {
    async fn scan(&mut self) -> Result<(), ScanError> {
        let redis = &self.deps.redis;
        let lock = redis.key("sentinel:scan");
        let mut connection = redis.connection();
        let took: Option<String> = redis::cmd("SET")
            .arg(&lock)
            .arg(self.deps.settings.instance.id())
            .arg("NX")
            .arg("PX")
            .arg(SCAN.as_millis() as u64 * 4)
            .query_async(&mut connection)
            .await?;
        if took.is_none() {
            return Ok(());
        }
        let cursor_key = redis.key("sentinel:cursor");
        let cursor: Option<i64> = redis::cmd("GET")
            .arg(&cursor_key)
            .query_async(&mut connection)
            .await?;
        let now = self.deps.clock.now_utc();
        let cursor = match cursor {
            Some(cursor) => cursor,
            None => {
                store::recent_start(&self.deps.postgres, now - time::Duration::minutes(10)).await?
            }
        };
        let (touched, last) =
            store::touched_since(&self.deps.postgres, cursor, PLAYERS_A_SCAN).await?;
        // A player weighed a moment ago waits: the games of a streak are
        // weighed together once the wait is over, even if none follows.
        self.due.extend(touched);
        let ready: Vec<Uuid> = self
            .due
            .iter()
            .filter(|player| {
                self.weighed
                    .get(player)
                    .is_none_or(|at| at.elapsed() >= AGAIN_AFTER)
            })
            .copied()
            .collect();
        for player in ready {
            self.due.remove(&player);
            self.weighed.insert(player, Instant::now());
            if let Err(error) = self.weigh(player).await {
                tracing::warn!(%error, %player, "weighing a player's rated games");
            }
        }
        self.weighed.retain(|_, at| at.elapsed() < AGAIN_AFTER);
        let _: () = redis::cmd("SET")
            .arg(&cursor_key)
            .arg(last)
            .query_async(&mut connection)
            .await?;
        let _: () = redis::cmd("DEL")
            .arg(&lock)
            .query_async(&mut connection)
            .await?;
        Ok(())
    }

    /// Weighs one player's recent rated games; files what it finds.
    async fn weigh(&self, player: Uuid) -> Result<(), ScanError> {
        let postgres = &self.deps.postgres;
        let now = self.deps.clock.now_utc();
        let since = now - WINDOW;
        let games = store::rated_games(postgres, player, since, GAMES).await?;
        if games.is_empty() {
            return Ok(());
        }
        let mut opponents: Vec<Uuid> = games.iter().map(|g| g.opponent).collect();
        opponents.sort_unstable();
        opponents.dedup();
        let records = store::opponent_records(postgres, player, &opponents, since).await?;
        let found: Vec<Signal> = signals::ring(&games, &records)
            .into_iter()
            .chain(signals::sandbagging(&games))
            .collect();
        file(&self.deps, player, found).await?;
        if games.len() >= signals::ENGINE_GAMES {
            // The checker outlives the scan; a send fails only when it
            // stopped, and then the next start checks the player again.
            let _ = self.engine_checks.send(player);
        }
        Ok(())
    }
}

/// Files each signal as an automatic report about `player`.
async fn file(deps: &Context, player: Uuid, found: Vec<Signal>) -> Result<(), ScanError> {
    let now = deps.clock.now_utc();
    for signal in found {
        let evidence = evidence(&signal);
        let text = format!(
            "Automatic: {} ({})",
            signal.kind,
            signal
                .figures
                .iter()
                .map(|(name, value)| format!("{name} {}", round(*value)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let text: String = text.chars().take(1000).collect();
        if store::file_signal(
            &deps.postgres,
            player,
            signal.reason,
            &text,
            &evidence,
            now,
            QUIET,
        )
        .await?
        {
            metrics::counter!("fair_play_signals_total", "kind" => signal.kind).increment(1);
        }
    }
    Ok(())
}

/// The engine check, when the player's results or times make it worth
/// the analyses.
async fn engine(deps: &Context, games: &[RatedGame]) -> Result<Option<Signal>, ScanError> {
    if games.len() < signals::ENGINE_GAMES {
        return Ok(None);
    }
    let recent = &games[..games.len().min(ANALYSED_GAMES)];
    let mut played = Vec::with_capacity(recent.len());
    let mut times = Vec::new();
    for game in recent {
        let moves = store::timed_moves(&deps.postgres, game.game).await?;
        let own = own_times(&moves, game.south);
        times.extend(own.think_secs.iter().copied());
        played.push((game, own));
    }
    let wins = recent.iter().filter(|g| g.outcome == Outcome::Win).count();
    let winning = wins as f64 >= ENGINE_WIN_SHARE * recent.len() as f64;
    let regular = signals::variation(&times).is_some_and(|cv| cv <= ENGINE_TIME_CV);
    if !(winning || regular) {
        return Ok(None);
    }
    let mut weighed = Vec::with_capacity(played.len());
    for (game, own) in played {
        let Some(analysis) = analysis(deps, game.game).await? else {
            continue;
        };
        weighed.push(judged(&analysis, game.south, own));
    }
    Ok(signals::engine(&weighed))
}

/// A finished game's analysis: kept, or worked out now as a stranger
/// would have it; `None` when the place stayed taken.
async fn analysis(
    deps: &Context,
    game: Uuid,
) -> Result<Option<std::sync::Arc<GameAnalysis>>, ScanError> {
    let analyses = deps.ai.analyses();
    if let Some(kept) = analyses.in_memory(game) {
        return Ok(Some(kept));
    }
    if let Some(kept) = crate::store::analysis(&deps.reads, game).await? {
        let kept = std::sync::Arc::new(kept);
        analyses.remember(kept.clone());
        return Ok(Some(kept));
    }
    let live = match crate::game::replay::replay(&deps.postgres, game).await {
        Ok(Some(live)) if live.is_over() => live,
        Ok(_) => return Ok(None),
        Err(crate::game::replay::ReplayError::Postgres(error)) => return Err(error.into()),
        Err(crate::game::replay::ReplayError::Corrupt(error)) => {
            tracing::error!(%error, %game, "a stored game does not replay");
            return Ok(None);
        }
    };
    let rules_game = live.rules_game().clone();
    Ok(deps.ai.analyse(game, rules_game, Asker::Other).await.ok())
}

/// The player's think times in a game (each of their moves from the move
/// before it) and the page's hidden time, without the analysis yet.
fn own_times(moves: &[store::TimedMove], south: bool) -> PlayedMoves {
    let seat = if south { 0 } else { 1 };
    let mut think_secs = Vec::new();
    let mut hidden_ms: Option<i64> = None;
    for (index, played) in moves.iter().enumerate() {
        if played.seat != seat {
            continue;
        }
        if let Some(hidden) = played.hidden_ms {
            *hidden_ms.get_or_insert(0) += i64::from(hidden);
        }
        if index > 0 {
            let took = (played.at_ms - moves[index - 1].at_ms).max(0);
            think_secs.push(took as f64 / 1000.0);
        }
    }
    PlayedMoves {
        game: Uuid::nil(),
        losses: Vec::new(),
        think_secs,
        hidden_secs: hidden_ms.map(|ms| ms as f64 / 1000.0),
        exact_moves: 0,
    }
}

/// The player's moves of `analysis` with their losses, with the times.
fn judged(analysis: &GameAnalysis, south: bool, times: PlayedMoves) -> PlayedMoves {
    let seat = if south { 0 } else { 1 };
    let own: Vec<&mancala_proto::game::MoveAnalysis> = analysis
        .moves
        .iter()
        .filter(|m| m.seat.index() == seat)
        .filter(|m| m.loss.is_some())
        .collect();
    PlayedMoves {
        game: analysis.id,
        losses: own.iter().filter_map(|m| m.loss).collect(),
        exact_moves: own.iter().filter(|m| m.exact).count(),
        ..times
    }
}

fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// A signal as the report keeps it.
fn evidence(signal: &Signal) -> Evidence {
    let figures = |pairs: &[(&'static str, f64)]| -> BTreeMap<String, f64> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), round(*value)))
            .collect()
    };
    Evidence {
        signal: signal.kind.to_owned(),
        figures: figures(&signal.figures),
        games: signal
            .games
            .iter()
            .map(|game| GameEvidence {
                game: game.game,
                figures: figures(&game.figures),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(seat: i16, at_ms: i64) -> store::TimedMove {
        store::TimedMove {
            seat,
            at_ms,
            hidden_ms: None,
        }
    }

    #[test]
    fn think_times_run_from_the_move_before() {
        // South 0, North at 1 s, South at 3 s (2 s), South again at 3.5 s
        // (an extra turn: 0.5 s), North at 7 s.
        let moves = [
            timed(0, 0),
            timed(1, 1000),
            timed(0, 3000),
            timed(0, 3500),
            timed(1, 7000),
        ];
        assert_eq!(own_times(&moves, true).think_secs, vec![2.0, 0.5]);
        assert_eq!(own_times(&moves, false).think_secs, vec![1.0, 3.5]);
        assert_eq!(own_times(&moves, true).hidden_secs, None);
        let hidden = [
            store::TimedMove {
                hidden_ms: Some(1500),
                ..timed(0, 0)
            },
            timed(1, 100),
        ];
        assert_eq!(own_times(&hidden, true).hidden_secs, Some(1.5));
    }
}
