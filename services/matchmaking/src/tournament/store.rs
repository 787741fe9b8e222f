//! Tournaments in Postgres: the arenas, who joined them, and their games
//! (the standings are folded from those, never stored).

use std::collections::HashSet;

use mancala_proto::VariantName;
use mancala_proto::game::TimeControl;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

use super::schedule::{Planned, Shape};

/// A tournament as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: Uuid,
    pub name: String,
    pub code: Option<String>,
    pub created_by: Option<Uuid>,
    pub shape: Shape,
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
    pub players: i64,
}

/// One who joined.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    pub player: Uuid,
    pub name: String,
    /// When they joined (clock ms).
    pub joined_ms: u64,
    /// The rating now, in the arena's variant: what pairing and the
    /// standings go by and show.
    pub rating: f64,
    /// The rating they joined with: the band was checked against it, and
    /// it breaks the last ties (a tie-break that moved after the arena
    /// would reorder final standings).
    pub entry_rating: f64,
    pub paused: bool,
    pub withdrawn: bool,
    pub last_opponent: Option<Uuid>,
    pub first_balance: i32,
    pub current_game: Option<Uuid>,
    /// When they were seated in `current_game` (clock ms).
    pub seated_ms: Option<u64>,
}

/// A finished game of the tournament, as the standings fold it.
#[derive(Clone, Debug, PartialEq)]
pub struct FinishedGame {
    pub id: Uuid,
    pub seats: [Option<Uuid>; 2],
    pub ratings: [Option<f64>; 2],
    pub berserk: [bool; 2],
    pub result: String,
    pub reason: String,
    pub plies: i32,
    /// When it ended (clock ms).
    pub ended_ms: u64,
}

fn millis(at: OffsetDateTime) -> u64 {
    u64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
}

fn shape_of(
    variant: &str,
    initial_secs: i32,
    increment_secs: i32,
    minutes: i64,
    rated: bool,
    bands: [Option<i32>; 3],
) -> Shape {
    let positive = |n: Option<i32>| n.and_then(|n| u32::try_from(n).ok());
    Shape {
        variant: VariantName::parse(variant).unwrap_or(VariantName::Kalah),
        time_control: TimeControl {
            initial_secs: initial_secs.max(0) as u32,
            increment_secs: increment_secs.max(0) as u32,
        },
        minutes: minutes.clamp(0, i64::from(u32::MAX)) as u32,
        rated,
        min_rating: positive(bands[0]),
        max_rating: positive(bands[1]),
        max_players: positive(bands[2]),
    }
}

/// Makes a planned arena unless it exists: true when this call made it.
pub async fn insert_planned(
    pool: &PgPool,
    plan: &Planned,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let shape = &plan.shape;
    let ends_at = plan.starts_at + time::Duration::minutes(i64::from(shape.minutes));
    let made = sqlx::query!(
        "INSERT INTO tournaments (id, name, schedule_key, variant, initial_secs, increment_secs,
                                  starts_at, ends_at, rated, min_rating, max_rating, max_players,
                                  created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (schedule_key) DO NOTHING",
        Uuid::now_v7(),
        plan.name,
        plan.key,
        shape.variant.as_str(),
        shape.time_control.initial_secs as i32,
        shape.time_control.increment_secs as i32,
        plan.starts_at,
        ends_at,
        shape.rated,
        shape.min_rating.map(|n| n as i32),
        shape.max_rating.map(|n| n as i32),
        shape.max_players.map(|n| n as i32),
        now,
    )
    .execute(pool)
    .await?;
    Ok(made.rows_affected() == 1)
}

/// Makes a private arena by `creator` unless its creator already has `live_cap` not
/// yet over: the count and the insert under the creator's lock, so a burst
/// of requests cannot all pass the count. The arenas not yet over (the
/// new one included) when made; `None` when at the cap.
#[allow(clippy::too_many_arguments)]
pub async fn insert_private(
    pool: &PgPool,
    id: Uuid,
    name: &str,
    code: &str,
    creator: Uuid,
    shape: &Shape,
    starts_at: OffsetDateTime,
    now: OffsetDateTime,
    live_cap: u32,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(hashtextextended('arenas-of:' || $1::uuid::text, 0))",
        creator,
    )
    .fetch_one(&mut *tx)
    .await?;
    let live = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM tournaments
           WHERE created_by = $1 AND code IS NOT NULL AND ends_at > $2"#,
        creator,
        now,
    )
    .fetch_one(&mut *tx)
    .await?;
    if live >= i64::from(live_cap) {
        return Ok(None);
    }
    sqlx::query!(
        "INSERT INTO tournaments (id, name, code, created_by, variant, initial_secs,
                                  increment_secs, starts_at, ends_at, rated, min_rating,
                                  max_rating, max_players, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        id,
        name,
        code,
        creator,
        shape.variant.as_str(),
        shape.time_control.initial_secs as i32,
        shape.time_control.increment_secs as i32,
        starts_at,
        starts_at + time::Duration::minutes(i64::from(shape.minutes)),
        shape.rated,
        shape.min_rating.map(|n| n as i32),
        shape.max_rating.map(|n| n as i32),
        shape.max_players.map(|n| n as i32),
        now,
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(live + 1))
}

macro_rules! rows {
    ($pool:expr, $filter:literal, $($arg:expr),*) => {{
        let rows = sqlx::query!(
            r#"SELECT t.id, t.name, t.code, t.created_by, t.variant, t.initial_secs,
                      t.increment_secs, t.starts_at, t.ends_at, t.rated, t.min_rating,
                      t.max_rating, t.max_players,
                      (EXTRACT(EPOCH FROM t.ends_at - t.starts_at) / 60)::bigint AS "minutes!",
                      (SELECT count(*) FROM tournament_players p
                       WHERE p.tournament_id = t.id) AS "players!"
               FROM tournaments t "# + $filter,
            $($arg),*
        )
        .fetch_all($pool)
        .await?;
        rows.into_iter()
            .map(|r| Row {
                id: r.id,
                name: r.name,
                code: r.code,
                created_by: r.created_by,
                shape: shape_of(
                    &r.variant,
                    r.initial_secs,
                    r.increment_secs,
                    r.minutes,
                    r.rated,
                    [r.min_rating, r.max_rating, r.max_players],
                ),
                starts_at: r.starts_at,
                ends_at: r.ends_at,
                players: r.players,
            })
            .collect::<Vec<Row>>()
    }};
}

/// One tournament.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<Row>, sqlx::Error> {
    Ok(rows!(pool, "WHERE t.id = $1", id).into_iter().next())
}

/// The listed (scheduled) arenas not over at `now`, soonest first.
pub async fn listed(pool: &PgPool, now: OffsetDateTime) -> Result<Vec<Row>, sqlx::Error> {
    Ok(rows!(
        pool,
        "WHERE t.schedule_key IS NOT NULL AND t.ends_at > $1 ORDER BY t.starts_at, t.id LIMIT 40",
        now
    ))
}

/// The finished arenas `player` joined, newest first (at most 20).
pub async fn finished_of(
    pool: &PgPool,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Vec<Row>, sqlx::Error> {
    Ok(rows!(
        pool,
        "WHERE t.ends_at <= $2 AND EXISTS (SELECT 1 FROM tournament_players e
                                          WHERE e.tournament_id = t.id AND e.player_id = $1)
         ORDER BY t.ends_at DESC, t.id LIMIT 20",
        player,
        now
    ))
}

/// The arenas running at `now` that a wave has work in: a player in it,
/// neither paused nor withdrawn, who is not in a live game (waiting to be
/// paired, or their game just ended and the standings moved). An arena
/// nobody plays in, or whose players are all in their games, costs a wave
/// nothing beyond this one statement: a flood of empty arenas does not
/// slow the real ones' pairing.
pub async fn running(pool: &PgPool, now: OffsetDateTime) -> Result<Vec<Row>, sqlx::Error> {
    Ok(rows!(
        pool,
        "WHERE t.starts_at <= $1 AND t.ends_at > $1
           AND EXISTS (
               SELECT 1 FROM tournament_players p
               LEFT JOIN games g ON g.id = p.current_game
               WHERE p.tournament_id = t.id AND NOT p.paused AND NOT p.withdrawn
                 AND (g.id IS NULL OR g.status <> 'live'))
         ORDER BY t.id",
        now
    ))
}

/// Locks the tournament's row for a join (the cap is counted under it).
pub async fn lock(connection: &mut PgConnection, id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT id FROM tournaments WHERE id = $1 FOR UPDATE", id)
        .fetch_optional(connection)
        .await?;
    Ok(())
}

/// Joins (or rejoins, unpausing) `player` with `rating`.
pub async fn join(
    connection: &mut PgConnection,
    id: Uuid,
    player: Uuid,
    rating: f64,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO tournament_players (tournament_id, player_id, joined_at, rating)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (tournament_id, player_id)
         DO UPDATE SET paused = false, withdrawn = false",
        id,
        player,
        now,
        rating,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Whether `player` joined `id`.
pub async fn joined(
    connection: &mut PgConnection,
    id: Uuid,
    player: Uuid,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM tournament_players
                          WHERE tournament_id = $1 AND player_id = $2) AS "joined!""#,
        id,
        player
    )
    .fetch_one(connection)
    .await
}

/// Pauses (or, `withdraw`, withdraws) `player`: true when they had joined.
pub async fn step_out(
    pool: &PgPool,
    id: Uuid,
    player: Uuid,
    withdraw: bool,
) -> Result<bool, sqlx::Error> {
    let changed = sqlx::query!(
        "UPDATE tournament_players SET paused = true, withdrawn = withdrawn OR $3
         WHERE tournament_id = $1 AND player_id = $2",
        id,
        player,
        withdraw,
    )
    .execute(pool)
    .await?;
    Ok(changed.rows_affected() == 1)
}

/// Everyone who joined, with their display names and ratings.
pub async fn entrants(pool: &PgPool, id: Uuid) -> Result<Vec<Entrant>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT e.player_id, p.display_name, e.rating AS entry_rating,
                  COALESCE(r.rating, e.rating) AS "rating!", e.paused, e.withdrawn,
                  e.last_opponent, e.first_balance, e.current_game, e.joined_at, e.seated_at
           FROM tournament_players e
           JOIN tournaments t ON t.id = e.tournament_id
           JOIN players p ON p.id = e.player_id
           LEFT JOIN ratings r ON r.player_id = e.player_id AND r.variant = t.variant
           WHERE e.tournament_id = $1"#,
        id
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Entrant {
            player: r.player_id,
            name: r.display_name,
            joined_ms: millis(r.joined_at),
            rating: r.rating,
            entry_rating: r.entry_rating,
            paused: r.paused,
            withdrawn: r.withdrawn,
            last_opponent: r.last_opponent,
            first_balance: r.first_balance,
            current_game: r.current_game,
            seated_ms: r.seated_at.map(millis),
        })
        .collect())
}

/// The tournament's finished games that count (those over by its end, as
/// lichess counts them), in the order they ended.
pub async fn finished_games(
    pool: &PgPool,
    id: Uuid,
    ends_at: OffsetDateTime,
) -> Result<Vec<FinishedGame>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id, seat0_player, seat1_player, seat0_rating, seat1_rating, berserk0, berserk1,
                  result AS "result!", reason AS "reason!", plies, ended_at AS "ended_at!"
           FROM games
           WHERE tournament_id = $1 AND status <> 'live' AND ended_at <= $2
           ORDER BY ended_at, id"#,
        id,
        ends_at,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| FinishedGame {
            id: r.id,
            seats: [r.seat0_player, r.seat1_player],
            ratings: [r.seat0_rating, r.seat1_rating],
            berserk: [r.berserk0, r.berserk1],
            result: r.result,
            reason: r.reason,
            plies: r.plies,
            ended_ms: millis(r.ended_at),
        })
        .collect())
}

/// The tournament's live games: id and seats.
pub async fn live_games(
    pool: &PgPool,
    id: Uuid,
) -> Result<Vec<(Uuid, [Option<Uuid>; 2])>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT id, seat0_player, seat1_player FROM games
         WHERE tournament_id = $1 AND status = 'live'",
        id
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.id, [r.seat0_player, r.seat1_player]))
        .collect())
}

/// How long a seat whose game was never made holds its player.
pub const UNMADE_SEAT_SECS: i64 = 30;

/// Seats `first` and `second` in game `game` (made next, under this id),
/// when both are free; [`seat_wave`] for one pair.
pub async fn seat_pair(
    pool: &PgPool,
    id: Uuid,
    players: [Uuid; 2],
    game: Uuid,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    Ok(seat_wave(pool, id, &[(players, game)], now)
        .await?
        .contains(&game))
}

/// Seats each pair in its game (made next, under that id) when both its
/// players are free: no game yet, or their game is over, or its maker
/// died before making it (seated over [`UNMADE_SEAT_SECS`] ago and no such
/// game). Returns the games whose two seats were taken; a pair with a
/// player not free is left as it was. One transaction for the wave: the
/// free seats are locked, then the pairs whose two seats are both locked
/// are seated. A game seated but not made yet holds its players: a second
/// instance that paired them in the same moment finds them taken.
pub async fn seat_wave(
    pool: &PgPool,
    id: Uuid,
    pairs: &[([Uuid; 2], Uuid)],
    now: OffsetDateTime,
) -> Result<HashSet<Uuid>, sqlx::Error> {
    if pairs.is_empty() {
        return Ok(HashSet::new());
    }
    let players: Vec<Uuid> = pairs.iter().flat_map(|(pair, _)| *pair).collect();
    let mut tx = pool.begin().await?;
    let free: HashSet<Uuid> = sqlx::query_scalar!(
        "SELECT e.player_id FROM tournament_players e
         WHERE e.tournament_id = $1 AND e.player_id = ANY($2)
           AND NOT e.paused AND NOT e.withdrawn
           AND (e.current_game IS NULL
                OR EXISTS (SELECT 1 FROM games g
                           WHERE g.id = e.current_game AND g.status <> 'live')
                OR (e.seated_at < $3
                    AND NOT EXISTS (SELECT 1 FROM games g WHERE g.id = e.current_game)))
         ORDER BY e.player_id
         FOR UPDATE OF e",
        id,
        &players,
        now - time::Duration::seconds(UNMADE_SEAT_SECS),
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .collect();
    // A player is seated once, in the first pair naming them.
    let mut taken = HashSet::new();
    let mut seated: Vec<&([Uuid; 2], Uuid)> = Vec::with_capacity(pairs.len());
    for pair in pairs {
        let [first, second] = pair.0;
        if first != second
            && free.contains(&first)
            && free.contains(&second)
            && !taken.contains(&first)
            && !taken.contains(&second)
        {
            taken.extend([first, second]);
            seated.push(pair);
        }
    }
    // Each seat: its player, game, opponent and first-move balance change
    // (the first named moves first).
    let mut columns: (Vec<Uuid>, Vec<Uuid>, Vec<Uuid>, Vec<i32>) = Default::default();
    for ([first, second], game) in &seated {
        for (player, opponent, balance) in [(first, second, 1), (second, first, -1)] {
            columns.0.push(*player);
            columns.1.push(*game);
            columns.2.push(*opponent);
            columns.3.push(balance);
        }
    }
    sqlx::query!(
        "UPDATE tournament_players e
         SET current_game = s.game, seated_at = $6, last_opponent = s.opponent,
             first_balance = e.first_balance + s.balance
         FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::int4[])
              AS s(player, game, opponent, balance)
         WHERE e.tournament_id = $1 AND e.player_id = s.player",
        id,
        &columns.0,
        &columns.1,
        &columns.2,
        &columns.3,
        now,
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(seated.into_iter().map(|(_, game)| *game).collect())
}

/// Pauses the players who never started their last game (a no-start
/// costs a point and the seat until they come back).
pub async fn pause(pool: &PgPool, id: Uuid, players: &[Uuid]) -> Result<(), sqlx::Error> {
    if players.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "UPDATE tournament_players SET paused = true, current_game = NULL
         WHERE tournament_id = $1 AND player_id = ANY($2)",
        id,
        players,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Gives back the seats of the games that could not be made.
pub async fn unseat(pool: &PgPool, id: Uuid, games: &[Uuid]) -> Result<(), sqlx::Error> {
    if games.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "UPDATE tournament_players SET current_game = NULL
         WHERE tournament_id = $1 AND current_game = ANY($2)",
        id,
        games,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether `player` registered (a guest cannot make an arena).
pub async fn registered(pool: &PgPool, player: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM credentials WHERE player_id = $1) AS "registered!""#,
        player
    )
    .fetch_one(pool)
    .await
}
