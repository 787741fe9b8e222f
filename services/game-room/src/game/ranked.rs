//! What counts for rating across games. Within one game the rule lives in
//! [`super::live`] (an end before each side has moved is an abort); here
//! are the rules between games: a player has one rated game at a time, and
//! two players have at most a few rated games together in a day, so a pair
//! cannot farm a rating from each other.

use std::time::Duration;

use mancala_proto::game::CasualReason;
use sqlx::PgConnection;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::store::{self, NewSeat};

/// The window the pair limit counts over.
pub(crate) const RATED_PAIR_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Whether a game asked for as `rated` between these seats is made rated,
/// and why not when it is not: when one of its players has a rated game
/// live, or beyond `limit` rated games between its two players in the
/// last 24 hours (aborted ones do not count), it is casual. `connection`
/// must be the transaction that then inserts the game.
pub(crate) async fn decide(
    connection: &mut PgConnection,
    rated: bool,
    seats: &[NewSeat; 2],
    limit: u32,
    now: OffsetDateTime,
) -> Result<(bool, Option<CasualReason>), sqlx::Error> {
    let decided = decide_many(connection, &[(rated, seats)], limit, now).await?;
    Ok(decided[0])
}

/// [`decide`] for many games made in one transaction. The checks and the
/// inserts that follow are one decision: every player is locked (at once,
/// in one order, so two batches cannot wait on each other) until the
/// caller's transaction commits, so a game made meanwhile by another
/// request is seen. Within the batch, a player's first rated game makes
/// their second casual, and a pair's first counts against its second.
pub(crate) async fn decide_many(
    connection: &mut PgConnection,
    asked: &[(bool, &[NewSeat; 2])],
    limit: u32,
    now: OffsetDateTime,
) -> Result<Vec<(bool, Option<CasualReason>)>, sqlx::Error> {
    let pairs: Vec<Option<(Uuid, Uuid)>> = asked
        .iter()
        .map(|(rated, seats)| match (seats[0].player, seats[1].player) {
            (Some(a), Some(b)) if *rated && a != b => Some(if a <= b { (a, b) } else { (b, a) }),
            _ => None,
        })
        .collect();
    let mut distinct: Vec<(Uuid, Uuid)> = pairs.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.is_empty() {
        return Ok(vec![(false, None); asked.len()]);
    }
    let mut players: Vec<Uuid> = distinct.iter().flat_map(|&(a, b)| [a, b]).collect();
    players.sort_unstable();
    players.dedup();
    store::lock_players(connection, &players).await?;
    let mut playing = store::in_live_rated_games(connection, &players).await?;
    let since = now - RATED_PAIR_WINDOW;
    let mut together = store::rated_games_between_pairs(connection, &distinct, since).await?;
    Ok(pairs
        .into_iter()
        .map(|pair| {
            let Some((a, b)) = pair else {
                return (false, None);
            };
            if playing.contains(&a) || playing.contains(&b) {
                return (false, Some(CasualReason::InRankedGame));
            }
            let count = together.entry((a, b)).or_default();
            if *count >= i64::from(limit) {
                return (false, Some(CasualReason::PairLimit));
            }
            *count += 1;
            playing.extend([a, b]);
            (true, None)
        })
        .collect())
}
