//! Replaying a stored game: its row and moves, read from one snapshot and
//! played again through the rules into a [`LiveGame`].

use mancala_platform::clock::millis_of;
use mancala_proto::game::GameStatus;
use mancala_rules::Variant;
use sqlx::PgPool;
use uuid::Uuid;

use super::live::{GameInfo, LiveGame, StoredEnd};
use crate::store;

/// Why a stored game could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Postgres(#[from] sqlx::Error),
    #[error("{0}")]
    Corrupt(String),
}

/// The game as stored, or `None` when there is no such game.
pub(crate) async fn replay(postgres: &PgPool, id: Uuid) -> Result<Option<LiveGame>, ReplayError> {
    // The row and the moves from one snapshot: read apart, moves committed
    // in between would sit beside an older version, and a watcher given
    // that state would take the next events for new ones and show those
    // moves twice.
    let mut snapshot = postgres.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *snapshot)
        .await?;
    let Some(row) = store::game(&mut *snapshot, id).await? else {
        return Ok(None);
    };
    let (moves, moved_version) = store::moves_and_version(&mut *snapshot, id).await?;
    snapshot.commit().await?;
    let corrupt = |error: &dyn std::fmt::Display| ReplayError::Corrupt(error.to_string());
    let variant = Variant::try_from(row.variant()).map_err(|e| corrupt(&e))?;
    let info = GameInfo {
        id,
        variant,
        rated: row.rated,
        seats: row.seats(),
        time_control: row.time_control(),
        room: row.room_id,
        created_ms: millis_of(row.created),
        against_ai: row.against_ai(),
        casual_reason: row.casual_reason,
        tournament: row.tournament_id,
        berserk: [row.berserk0, row.berserk1],
    };
    let ending = match (row.status, row.result, row.reason) {
        (GameStatus::Over | GameStatus::Aborted, Some(result), Some(reason)) => {
            Some((result, reason))
        }
        _ => None,
    };
    let stored = StoredEnd {
        ending,
        // The row's version moves with the changes it holds (an undo, a
        // takeover, the end); the log's, with each move.
        version: (row.version.max(0) as u64).max(moved_version),
        rematch: row.rematch_id,
        moved: row.moved(),
        turn_started: row.turn_started_at.map(millis_of),
    };
    LiveGame::replay(info, &moves, stored)
        .map(Some)
        .map_err(|e| corrupt(&e))
}
