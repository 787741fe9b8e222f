//! Small questions of the game tables: who sits where, whether players
//! exist, a game's moves, a pair's rated games of the day.

use std::collections::{HashMap, HashSet};

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

/// Holds each player's ranked lock until the transaction ends: two rated
/// games asked for one player at once (two invites accepted together, a
/// queue match racing an invite, an arena's wave racing either) are
/// decided one after the other, so each sees the one made before it (the
/// pair's count of the day, the player's live rated game). Taken in one
/// order, so two batches cannot wait on each other.
pub(crate) async fn lock_players(
    connection: &mut PgConnection,
    players: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(k) FROM (
             SELECT DISTINCT hashtextextended('ranked-player:' || p::text, 0) AS k
             FROM unnest($1::uuid[]) AS p
             ORDER BY k) AS keys",
        players,
    )
    .fetch_all(connection)
    .await?;
    Ok(())
}

/// Of these players, those with a rated game live.
pub(crate) async fn in_live_rated_games(
    connection: &mut PgConnection,
    players: &[Uuid],
) -> Result<HashSet<Uuid>, sqlx::Error> {
    let rows = sqlx::query_scalar!(
        r#"SELECT seat0_player AS "player!" FROM games
           WHERE status = 'live' AND rated AND seat0_player = ANY($1)
           UNION
           SELECT seat1_player FROM games
           WHERE status = 'live' AND rated AND seat1_player = ANY($1)"#,
        players,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows.into_iter().collect())
}

/// How many games between each pair of players, made since `since`, may
/// still count for rating: rated ones that were not aborted (live ones
/// included).
pub(crate) async fn rated_games_between_pairs(
    connection: &mut PgConnection,
    pairs: &[(Uuid, Uuid)],
    since: OffsetDateTime,
) -> Result<HashMap<(Uuid, Uuid), i64>, sqlx::Error> {
    let (low, high): (Vec<Uuid>, Vec<Uuid>) = pairs.iter().copied().unzip();
    let rows = sqlx::query!(
        r#"SELECT p.lo AS "lo!", p.hi AS "hi!",
                  (SELECT count(*) FROM games g
                   WHERE g.rated AND g.status <> 'aborted' AND g.created_at >= $3
                     AND ((g.seat0_player = p.lo AND g.seat1_player = p.hi)
                          OR (g.seat0_player = p.hi AND g.seat1_player = p.lo))) AS "count!"
           FROM unnest($1::uuid[], $2::uuid[]) AS p(lo, hi)"#,
        &low,
        &high,
        since,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| ((row.lo, row.hi), row.count))
        .collect())
}

/// Of these players, those who have an account.
pub(crate) async fn known_players(
    pool: &PgPool,
    ids: &[Uuid],
) -> Result<HashSet<Uuid>, sqlx::Error> {
    Ok(
        sqlx::query_scalar!("SELECT id FROM players WHERE id = ANY($1)", ids)
            .fetch_all(pool)
            .await?
            .into_iter()
            .collect(),
    )
}

/// Of these games, the ones that exist: their seats' players and whether
/// they were made rated (a batch retried after a lost answer).
pub(crate) async fn made_games(
    pool: &PgPool,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, MadeGame>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id, seat0_player, seat1_player, rated,
                  casual_reason AS "casual_reason: CasualReason"
           FROM games WHERE id = ANY($1)"#,
        ids,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let made = MadeGame {
                players: [row.seat0_player, row.seat1_player],
                rated: row.rated,
                casual_reason: row.casual_reason,
            };
            (row.id, made)
        })
        .collect())
}

/// A game that exists, as a retried creation compares it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MadeGame {
    pub(crate) players: [Option<Uuid>; 2],
    pub(crate) rated: bool,
    pub(crate) casual_reason: Option<CasualReason>,
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

/// A game's moves in order, with their clocks and times.
pub(crate) async fn moves<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    id: Uuid,
) -> Result<Vec<StoredMove>, sqlx::Error> {
    Ok(moves_and_version(executor, id).await?.0)
}

/// A game's moves in order, and the game's version after its last move
/// (0 without moves). The log's placeholders (pit 0, see
/// `writes::append_moves`) are not moves and are skipped.
pub(crate) async fn moves_and_version<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    id: Uuid,
) -> Result<(Vec<StoredMove>, u64), sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT ply, seat, pit, clock_ms, played_at, version
           FROM game_moves WHERE game_id = $1 AND pit > 0 ORDER BY ply"#,
        id,
    )
    .fetch_all(executor)
    .await?;
    let version = rows.last().map_or(0, |row| row.version.max(0) as u64);
    let moves = rows
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
            // Not needed to replay a game: the sentinel reads it itself.
            hidden_ms: None,
        })
        .collect();
    Ok((moves, version))
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

/// A rated game of `player` that is live, other than `except`, if any.
pub(crate) async fn live_rated_game(
    pool: &PgPool,
    player: Uuid,
    except: Uuid,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM games WHERE status = 'live' AND rated AND seat0_player = $1 AND id <> $2
         UNION ALL
         SELECT id FROM games WHERE status = 'live' AND rated AND seat1_player = $1 AND id <> $2
         LIMIT 1",
        player,
        except,
    )
    .fetch_optional(pool)
    .await
    .map(Option::flatten)
}
