//! What counts for rating across games. Within one game the rule lives in
//! [`super::live`] (an end before each side has moved is an abort); here
//! is the rule between games: two players have at most a few rated games
//! together in a day, so a pair cannot farm a rating from each other.

use std::time::Duration;

use mancala_proto::game::CasualReason;
use sqlx::PgConnection;
use time::OffsetDateTime;

use crate::store::{self, NewSeat};

/// The window the pair limit counts over.
pub(crate) const RATED_PAIR_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Whether a game asked for as `rated` between these seats is made rated,
/// and why not when it is not: beyond `limit` rated games between its two
/// players in the last 24 hours (aborted ones do not count), it is casual.
/// `connection` must be the transaction that then inserts the game.
pub(crate) async fn decide(
    connection: &mut PgConnection,
    rated: bool,
    seats: &[NewSeat; 2],
    limit: u32,
    now: OffsetDateTime,
) -> Result<(bool, Option<CasualReason>), sqlx::Error> {
    let (Some(a), Some(b)) = (seats[0].player, seats[1].player) else {
        return Ok((false, None));
    };
    if !rated || a == b {
        return Ok((false, None));
    }
    // The count and the insert that follows are one decision: the lock
    // lasts until the caller's transaction commits.
    store::lock_pair(connection, a, b).await?;
    let since = now - RATED_PAIR_WINDOW;
    let together = store::rated_games_between(connection, a, b, since).await?;
    if together >= i64::from(limit) {
        return Ok((false, Some(CasualReason::PairLimit)));
    }
    Ok((true, None))
}
