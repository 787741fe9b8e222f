//! The one way a hosted game's changes reach Postgres. Every write names
//! the epoch the host loaded the game under; a write the database refuses
//! on it (another host has the game, or it is no longer live) is
//! [`CommitError::Fenced`], and the host stops. A change is applied to the
//! game and sent to anyone only after its commit.

use mancala_platform::clock::timestamp;
use mancala_proto::game::Over;
use mancala_rules::Side;
use sqlx::PgPool;
use uuid::Uuid;

use crate::game::live::PlannedMove;
use crate::store;

/// A change to a hosted game.
pub(super) enum Write<'a> {
    /// A move; when it ends the game, with its result (one transaction).
    Move(&'a PlannedMove),
    /// The end from outside the moves (a resignation, a flag, a claim...)
    /// at `at_ms`.
    End { over: &'a Over, at_ms: u64 },
    /// Moves taken back to `ply`, the side to move starting at `at_ms`.
    Undo { ply: u32, version: u64, at_ms: u64 },
    /// An AI of `level` takes an absent player's seat.
    TakeOver {
        seat: Side,
        level: &'a str,
        version: u64,
    },
}

/// Why a write did not happen.
#[derive(Debug, thiserror::Error)]
pub(super) enum CommitError {
    /// Another host has the game: this one must stop.
    #[error("the game is hosted elsewhere now")]
    Fenced,
    /// Postgres failed; nothing was written, and the write may be retried.
    #[error(transparent)]
    Store(#[from] sqlx::Error),
}

impl Write<'_> {
    /// The write's name in metrics and logs.
    fn kind(&self) -> &'static str {
        match self {
            Write::Move(_) => "move",
            Write::End { .. } => "end",
            Write::Undo { .. } => "undo",
            Write::TakeOver { .. } => "take_over",
        }
    }
}

/// Writes `write` to game `game` under `epoch`, committed when this
/// returns `Ok`. Counted (`game_writes_total` by kind and outcome) and
/// timed (`game_write_seconds`).
#[tracing::instrument(level = "debug", skip_all, fields(%game, kind = write.kind()))]
pub(super) async fn commit(
    pool: &PgPool,
    game: Uuid,
    epoch: i64,
    write: Write<'_>,
) -> Result<(), CommitError> {
    let kind = write.kind();
    let started = std::time::Instant::now();
    let written = write_under_epoch(pool, game, epoch, write).await;
    let outcome = match &written {
        Ok(()) => "committed",
        Err(CommitError::Fenced) => "fenced",
        Err(CommitError::Store(_)) => "failed",
    };
    metrics::counter!("game_writes_total", "kind" => kind, "outcome" => outcome).increment(1);
    metrics::histogram!("game_write_seconds", "kind" => kind)
        .record(started.elapsed().as_secs_f64());
    written
}

async fn write_under_epoch(
    pool: &PgPool,
    game: Uuid,
    epoch: i64,
    write: Write<'_>,
) -> Result<(), CommitError> {
    // Most moves: one statement, committed on its own, one round trip.
    if let Write::Move(planned) = &write
        && planned.ends.is_none()
    {
        let mut connection = pool.acquire().await?;
        let held = store::append_move(
            &mut connection,
            game,
            epoch,
            planned.stored,
            planned.version,
        )
        .await?;
        return if held {
            Ok(())
        } else {
            Err(CommitError::Fenced)
        };
    }
    let mut tx = pool.begin().await?;
    let held = match write {
        Write::Move(planned) => {
            let at = timestamp(planned.stored.at_ms);
            store::append_move(&mut tx, game, epoch, planned.stored, planned.version).await?
                && match &planned.ends {
                    Some(over) => store::finish_game(&mut tx, game, epoch, over, at).await?,
                    None => true,
                }
        }
        Write::End { over, at_ms } => {
            store::finish_game(&mut tx, game, epoch, over, timestamp(at_ms)).await?
        }
        Write::Undo {
            ply,
            version,
            at_ms,
        } => store::undo(&mut tx, game, epoch, ply, version, timestamp(at_ms)).await?,
        Write::TakeOver {
            seat,
            level,
            version,
        } => store::take_over(&mut tx, game, epoch, seat, level, version).await?,
    };
    if !held {
        // Dropping the transaction rolls it back.
        return Err(CommitError::Fenced);
    }
    tx.commit().await?;
    Ok(())
}
