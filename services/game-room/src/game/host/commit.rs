//! The one way a hosted game's changes reach Postgres: through the
//! instance's group commit (`store::GroupCommit`). Every write names the
//! epoch the host loaded the game under; a write the database refuses on
//! it (another host has the game, or it is no longer live) is
//! [`CommitError::Fenced`], and the host stops. A change is applied to the
//! game and sent to anyone only after its commit.

use uuid::Uuid;

use crate::store::GroupCommit;
pub(crate) use crate::store::{Change, CommitError};

/// Writes `change` to game `game` under `epoch`, committed when this
/// returns `Ok`. Counted (`game_writes_total` by kind and outcome) and
/// timed (`game_write_seconds`, the wait for the batch included); the
/// wait is what admission control (`mancala_platform::admission`) watches.
#[tracing::instrument(level = "debug", skip_all, fields(%game, kind = change.kind()))]
pub(super) async fn commit(
    writer: &GroupCommit,
    admission: &mancala_platform::Admission,
    game: Uuid,
    epoch: i64,
    change: Change,
) -> Result<(), CommitError> {
    let kind = change.kind();
    let started = std::time::Instant::now();
    let written = writer.write(game, epoch, change).await;
    let outcome = match &written {
        Ok(()) => "committed",
        Err(CommitError::Fenced) => "fenced",
        Err(CommitError::Store(_)) => "failed",
    };
    metrics::counter!("game_writes_total", "kind" => kind, "outcome" => outcome).increment(1);
    let waited = started.elapsed();
    metrics::histogram!("game_write_seconds", "kind" => kind).record(waited.as_secs_f64());
    admission.note_write(waited);
    written
}
