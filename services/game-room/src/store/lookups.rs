//! Small questions of the game tables: who sits where, whether players
//! exist, a game's moves, a pair's rated games of the day.

use super::*;

/// Each seat's player's rating and deviation in `variant` now, if they
/// have one (one query for both).
pub(crate) async fn current_ratings(
    connection: &mut PgConnection,
    players: [Option<Uuid>; 2],
    variant: &str,
) -> Result<[Option<(f64, f64)>; 2], sqlx::Error> {
    let ids: Vec<Uuid> = players.iter().flatten().copied().collect();
    let rows = sqlx::query!(
        "SELECT player_id, rating, rd FROM ratings WHERE player_id = ANY($1) AND variant = $2",
        &ids,
        variant,
    )
    .fetch_all(connection)
    .await?;
    Ok(players.map(|player| {
        rows.iter()
            .find(|row| Some(row.player_id) == player)
            .map(|row| (row.rating, row.rd))
    }))
}

/// Holds the pair's lock until the transaction ends: two games asked for
/// the same two players at once (ten invites accepted together) are
/// counted and made one after the other, so the count each sees includes
/// the one made before it. The key is the pair in a fixed order, so A–B
/// and B–A are one lock.
pub(crate) async fn lock_pair(
    connection: &mut PgConnection,
    a: Uuid,
    b: Uuid,
) -> Result<(), sqlx::Error> {
    let (low, high) = if a <= b { (a, b) } else { (b, a) };
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(hashtextextended('rated-pair:' || $1::text || ':' || $2::text, 0))",
        low.to_string(),
        high.to_string(),
    )
    .fetch_one(connection)
    .await?;
    Ok(())
}

/// How many games between two players, made since `since`, may still count
/// for rating: rated ones that were not aborted (live ones included).
pub(crate) async fn rated_games_between(
    connection: &mut PgConnection,
    a: Uuid,
    b: Uuid,
    since: OffsetDateTime,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM games
           WHERE rated AND status <> 'aborted' AND created_at >= $3
             AND ((seat0_player = $1 AND seat1_player = $2)
                  OR (seat0_player = $2 AND seat1_player = $1))"#,
        a,
        b,
        since,
    )
    .fetch_one(connection)
    .await
}

/// What a player is to a stored game, before anything wakes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeatCheck {
    /// They hold a seat they still play.
    Seated,
    /// An AI took over their seat: they may watch.
    Replaced,
    /// Not theirs.
    Stranger,
}

/// Whether `player` holds a seat in `game` (`None`: no such game). Read
/// before a play socket hosts the game, so that a stranger's socket takes
/// no lease, bumps no epoch and starts no clock or AI.
pub(crate) async fn seat_check(
    pool: &PgPool,
    game: Uuid,
    player: Uuid,
) -> Result<Option<SeatCheck>, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT seat0_player, seat1_player, seat0_takeover, seat1_takeover
         FROM games WHERE id = $1",
        game,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| {
        let seats = [
            (row.seat0_player, row.seat0_takeover),
            (row.seat1_player, row.seat1_takeover),
        ];
        let mine = seats.iter().filter(|(held, _)| *held == Some(player));
        let mut check = SeatCheck::Stranger;
        for (_, takeover) in mine {
            if takeover.is_none() {
                return SeatCheck::Seated;
            }
            check = SeatCheck::Replaced;
        }
        check
    }))
}

/// Whether every id is a player.
pub(crate) async fn players_exist(pool: &PgPool, ids: &[Uuid]) -> Result<bool, sqlx::Error> {
    let found = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM players WHERE id = ANY($1)"#,
        ids,
    )
    .fetch_one(pool)
    .await?;
    let mut distinct = ids.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    Ok(found == distinct.len() as i64)
}

/// A game's moves in order, with their clocks and times.
pub(crate) async fn moves<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    id: Uuid,
) -> Result<Vec<StoredMove>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT ply, seat, pit, clock_ms, played_at
           FROM game_moves WHERE game_id = $1 ORDER BY ply"#,
        id,
    )
    .fetch_all(executor)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| StoredMove {
            played: PlayedMove {
                ply: row.ply as u32,
                // The table's CHECK keeps it 0 or 1.
                seat: if row.seat == 0 {
                    Side::South
                } else {
                    Side::North
                },
                pit: row.pit as u8,
            },
            clock_ms: row.clock_ms.map(|ms| ms.max(0) as u64),
            at_ms: millis_of(row.played_at),
        })
        .collect())
}

/// What a rated game did to each seat's rating, once the rating service
/// applied it (none before that): for a page opened on a finished game.
pub(crate) async fn rating_changes(
    pool: &PgPool,
    game: Uuid,
    players: [Option<Uuid>; 2],
) -> Result<Vec<mancala_proto::rating::RatingDelta>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT player_id, rating_before, rating_after FROM rating_history WHERE game_id = $1",
        game,
    )
    .fetch_all(pool)
    .await?;
    Ok(Side::BOTH
        .into_iter()
        .zip(players)
        .filter_map(|(seat, player)| {
            let row = rows.iter().find(|row| Some(row.player_id) == player)?;
            Some(mancala_proto::rating::RatingDelta {
                seat,
                before: row.rating_before,
                after: row.rating_after,
            })
        })
        .collect())
}
