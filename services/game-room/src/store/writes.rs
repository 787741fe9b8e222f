//! What a game's creation and its host write: the game row, moves, the
//! end with its outbox row, undos, takeovers, rematch links. Every write
//! of a live game names the host's epoch and reports whether it held.

use std::collections::HashSet;

use super::*;

/// A seat as stored: a player or an AI level, and the rating snapshot.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NewSeat {
    pub player: Option<Uuid>,
    pub ai: Option<String>,
    pub rating: Option<f64>,
    pub rd: Option<f64>,
}

/// A game to create.
#[derive(Clone, Debug)]
pub(crate) struct NewGame {
    pub id: Uuid,
    pub variant: serde_json::Value,
    pub seats: [NewSeat; 2],
    pub rated: bool,
    pub time_control: Option<TimeControl>,
    pub room: Option<Uuid>,
    /// The arena tournament it is a game of.
    pub tournament: Option<Uuid>,
    /// Why a game asked for as rated is casual.
    pub casual_reason: Option<CasualReason>,
    /// 0 for a game nobody hosts yet; the creator's epoch for a game
    /// hosted from the moment it is made (a rematch, by the host of the
    /// game before).
    pub epoch: i64,
}

/// Creates a live game; false (nothing written) when it is a tournament
/// game whose two seats no longer name it.
pub(crate) async fn insert_game(
    connection: &mut PgConnection,
    game: &NewGame,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    if let Some(tournament) = game.tournament {
        let held = hold_tournament_seats(&mut *connection, &[(tournament, game.id)], now).await?;
        if !held.contains(&game.id) {
            return Ok(false);
        }
    }
    insert_games(connection, std::slice::from_ref(game), now).await?;
    Ok(true)
}

/// Of these tournament games, those whose two seats still name them, now
/// marked made (the rest are left as they were).
///
/// The seats are the arena's fence: matchmaking seats both players in the
/// game before asking for it, and another instance may seat them again
/// once the game is over or was never made. Locking both seats, and
/// marking them made, in the transaction that inserts the game holds
/// their rows until it commits: a second seating either came first (the
/// seats name another game, and this one is refused) or waits and then
/// finds them freshly seated.
pub(crate) async fn hold_tournament_seats(
    connection: &mut PgConnection,
    games: &[(Uuid, Uuid)],
    now: OffsetDateTime,
) -> Result<HashSet<Uuid>, sqlx::Error> {
    if games.is_empty() {
        return Ok(HashSet::new());
    }
    let ids: Vec<Uuid> = games.iter().map(|(_, game)| *game).collect();
    let seats = sqlx::query!(
        r#"SELECT tournament_id, current_game AS "game!" FROM tournament_players
           WHERE current_game = ANY($1)
           ORDER BY tournament_id, player_id
           FOR UPDATE"#,
        &ids,
    )
    .fetch_all(&mut *connection)
    .await?;
    let mut named: std::collections::HashMap<(Uuid, Uuid), usize> = Default::default();
    for seat in seats {
        *named.entry((seat.tournament_id, seat.game)).or_default() += 1;
    }
    let held: Vec<Uuid> = games
        .iter()
        .filter(|key| named.get(key) == Some(&2))
        .map(|(_, game)| *game)
        .collect();
    if !held.is_empty() {
        sqlx::query!(
            "UPDATE tournament_players SET seated_at = $2 WHERE current_game = ANY($1)",
            &held,
            now,
        )
        .execute(&mut *connection)
        .await?;
    }
    Ok(held.into_iter().collect())
}

/// Inserts live games: one statement however many.
pub(crate) async fn insert_games(
    connection: &mut PgConnection,
    games: &[NewGame],
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    fn column<T>(games: &[NewGame], f: impl Fn(&NewGame) -> T) -> Vec<T> {
        games.iter().map(f).collect()
    }
    let clock = |game: &NewGame, f: fn(&TimeControl) -> u32| {
        game.time_control.map(|tc| f(&tc) as i32 * 1000)
    };
    sqlx::query!(
        "INSERT INTO games (id, variant, seat0_player, seat0_ai, seat0_rating, seat0_rd,
                            seat1_player, seat1_ai, seat1_rating, seat1_rd, rated, created_at,
                            clock_initial_ms, clock_increment_ms, room_id, casual_reason, epoch,
                            tournament_id)
         SELECT g.id, g.variant, g.seat0_player, g.seat0_ai, g.seat0_rating, g.seat0_rd,
                g.seat1_player, g.seat1_ai, g.seat1_rating, g.seat1_rd, g.rated, $11,
                g.clock_initial_ms, g.clock_increment_ms, g.room_id, g.casual_reason, g.epoch,
                g.tournament_id
         FROM unnest($1::uuid[], $2::jsonb[], $3::uuid[], $4::text[], $5::float8[], $6::float8[],
                     $7::uuid[], $8::text[], $9::float8[], $10::float8[], $12::bool[],
                     $13::int4[], $14::int4[], $15::uuid[], $16::text[], $17::int8[],
                     $18::uuid[])
              AS g(id, variant, seat0_player, seat0_ai, seat0_rating, seat0_rd,
                   seat1_player, seat1_ai, seat1_rating, seat1_rd, rated,
                   clock_initial_ms, clock_increment_ms, room_id, casual_reason, epoch,
                   tournament_id)",
        &column(games, |g| g.id),
        &column(games, |g| g.variant.clone()),
        &column(games, |g| g.seats[0].player) as &[Option<Uuid>],
        &column(games, |g| g.seats[0].ai.clone()) as &[Option<String>],
        &column(games, |g| g.seats[0].rating) as &[Option<f64>],
        &column(games, |g| g.seats[0].rd) as &[Option<f64>],
        &column(games, |g| g.seats[1].player) as &[Option<Uuid>],
        &column(games, |g| g.seats[1].ai.clone()) as &[Option<String>],
        &column(games, |g| g.seats[1].rating) as &[Option<f64>],
        &column(games, |g| g.seats[1].rd) as &[Option<f64>],
        now,
        &column(games, |g| g.rated),
        &column(games, |g| clock(g, |tc| tc.initial_secs)) as &[Option<i32>],
        &column(games, |g| clock(g, |tc| tc.increment_secs)) as &[Option<i32>],
        &column(games, |g| g.room) as &[Option<Uuid>],
        &column(games, |g| g.casual_reason.map(casual_reason_text)) as &[Option<&str>],
        &column(games, |g| g.epoch),
        &column(games, |g| g.tournament) as &[Option<Uuid>],
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// As the `casual_reason` column spells it.
fn casual_reason_text(reason: CasualReason) -> &'static str {
    match reason {
        CasualReason::PairLimit => "pair_limit",
        CasualReason::InRankedGame => "in_ranked_game",
    }
}

/// Takes a game over as its new host: raises its epoch and, while the
/// game is live and had a host before, holds its log's next ply for it
/// (`fence_moves`, see `append_moves`), then returns it. Every later write names this epoch,
/// so the previous host's fail.
pub(crate) async fn claim_epoch(pool: &PgPool, id: Uuid) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let Some(claimed) = sqlx::query!(
        "UPDATE games SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch, status",
        id,
    )
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(None);
    };
    // From epoch 0 (a game nobody hosted) there is no earlier host to
    // fence off: only a host writes moves, and none holds epoch 0.
    if claimed.status == "live" && claimed.epoch > 1 {
        fence_moves(&mut tx, id, claimed.epoch).await?;
    }
    tx.commit().await?;
    Ok(Some(claimed.epoch))
}

/// Holds the next ply of `game`'s log for `epoch`: no host of an earlier
/// epoch can store a move after this commits.
pub(crate) async fn fence_moves(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query_scalar!("SELECT fence_moves($1, $2::bigint::int)", game, epoch,)
        .fetch_one(connection)
        .await?;
    Ok(())
}

/// A move to store: the next ply of `game`, held under `epoch`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MoveRow {
    pub(crate) game: Uuid,
    pub(crate) epoch: i64,
    pub(crate) stored: StoredMove,
    pub(crate) version: u64,
    /// Which seats had moved before this move.
    pub(crate) moved_before: [bool; 2],
}

impl MoveRow {
    /// Made while a seat had not moved yet: the games row keeps count
    /// until both have (see the migration `insert_only_moves`).
    fn opening(&self) -> bool {
        self.moved_before != [true, true]
    }
}

/// Stores moves, each only if it is the next ply of a game held under its
/// epoch, and returns the games whose move was stored; the rest fail for
/// their game alone. One statement, so outside a transaction it commits
/// (durably) by itself: one round trip for the whole batch.
///
/// A move is one INSERT into the log. The fence is the log's key: a host
/// that took the game over (or an end from outside) holds the next ply
/// with a placeholder row of its epoch (pit 0, `fence_moves`), and a move
/// may be written over a placeholder only by a host of the same epoch. So
/// a stale host's next move meets a row it may not replace, and a second
/// copy of a stored ply meets that ply's move. Only an opening move (a
/// seat had not moved yet) also updates the games row, fenced there on
/// its epoch and on the game being live: the sweeper of unstarted games
/// reads that row.
pub(crate) async fn append_moves<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    rows: &[MoveRow],
) -> Result<HashSet<Uuid>, sqlx::Error> {
    let column = |f: &dyn Fn(&MoveRow) -> i64| rows.iter().map(f).collect::<Vec<i64>>();
    let games: Vec<Uuid> = rows.iter().map(|row| row.game).collect();
    let epochs = column(&|row| row.epoch);
    let plies = column(&|row| i64::from(row.stored.played.ply));
    let versions = column(&|row| row.version as i64);
    let seats = column(&|row| row.stored.played.seat.index() as i64);
    let pits = column(&|row| i64::from(row.stored.played.pit));
    // -1: untimed (NULL in the table).
    let clocks = column(&|row| {
        row.stored
            .clock_ms
            .map_or(-1, |ms| ms.min(i32::MAX as u64) as i64)
    });
    // -1: the client did not say (NULL in the table).
    let hidden = column(&|row| row.stored.hidden_ms.map_or(-1, i64::from));
    let times: Vec<OffsetDateTime> = rows.iter().map(|row| timestamp(row.stored.at_ms)).collect();
    let opening: Vec<bool> = rows.iter().map(MoveRow::opening).collect();
    // An opening row finds its game by primary key (the writer's
    // connections rule out sequential scans: see `group_commit`). "Live"
    // is spelled as the table's check constraint defines it (no result, no
    // reason, no end) rather than `status = 'live'`, which matches the
    // partial index of live games: with it the planner scanned every live
    // game to find the batch's few.
    let written = sqlx::query_scalar!(
        r#"WITH input AS (
               SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::bigint[],
                                    $5::bigint[], $6::bigint[], $7::bigint[], $8::timestamptz[],
                                    $9::bool[], $10::bigint[])
                   AS i(game_id, epoch, ply, version, seat, pit, clock_ms, played_at, opening,
                        hidden_ms)
           ),
           opened AS (
               UPDATE games g SET plies = i.ply, version = i.version,
                                  moved = g.moved | (1 << i.seat::int)::smallint,
                                  turn_started_at = i.played_at
               FROM input i
               WHERE i.opening AND g.id = i.game_id AND g.epoch = i.epoch
                 AND g.result IS NULL AND g.reason IS NULL AND g.ended_at IS NULL
                 AND g.plies = i.ply - 1
               RETURNING g.id
           )
           INSERT INTO game_moves AS m (game_id, ply, seat, pit, clock_ms, played_at, epoch,
                                        version, hidden_ms)
           SELECT i.game_id, i.ply, i.seat, i.pit, NULLIF(i.clock_ms, -1), i.played_at, i.epoch,
                  i.version, NULLIF(i.hidden_ms, -1)
           FROM input i
           WHERE NOT i.opening OR i.game_id IN (SELECT id FROM opened)
           ON CONFLICT (game_id, ply) DO UPDATE
               SET seat = EXCLUDED.seat, pit = EXCLUDED.pit, clock_ms = EXCLUDED.clock_ms,
                   played_at = EXCLUDED.played_at, version = EXCLUDED.version,
                   hidden_ms = EXCLUDED.hidden_ms
               WHERE m.pit = 0 AND m.epoch = EXCLUDED.epoch
           RETURNING m.game_id"#,
        &games,
        &epochs,
        &plies,
        &versions,
        &seats,
        &pits,
        &clocks,
        &times,
        &opening,
        &hidden,
    )
    .fetch_all(executor)
    .await?;
    Ok(written.into_iter().collect())
}

/// Of these games, those live and held under the given epochs, their rows
/// locked until the caller's transaction ends: a move written beside its
/// game's end can then no longer be fenced between the two.
pub(crate) async fn lock_held_games(
    connection: &mut PgConnection,
    held: &[(Uuid, i64)],
) -> Result<HashSet<Uuid>, sqlx::Error> {
    let games: Vec<Uuid> = held.iter().map(|(game, _)| *game).collect();
    let epochs: Vec<i64> = held.iter().map(|(_, epoch)| *epoch).collect();
    let locked = sqlx::query_scalar!(
        r#"SELECT g.id FROM games g
           JOIN UNNEST($1::uuid[], $2::bigint[]) AS i(game_id, epoch)
             ON g.id = i.game_id AND g.epoch = i.epoch
           WHERE g.result IS NULL AND g.reason IS NULL AND g.ended_at IS NULL
           ORDER BY g.id
           FOR UPDATE OF g"#,
        &games,
        &epochs,
    )
    .fetch_all(connection)
    .await?;
    Ok(locked.into_iter().collect())
}

/// A game's end to store: `game`, held under `epoch`, ended at `at`,
/// with the offence of the player who caused it, if any.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EndRow<'a> {
    pub(crate) game: Uuid,
    pub(crate) epoch: i64,
    pub(crate) over: &'a Over,
    pub(crate) at: OffsetDateTime,
    pub(crate) offence: Option<OffenceRow>,
    /// Whether the end moves the players' ratings, as the host decided it
    /// (`mancala_proto::game::rates_its_players`).
    pub(crate) rates: bool,
    /// The moves played, and which seats ever moved: the row's final
    /// count (the log's placeholders are not moves).
    pub(crate) plies: u32,
    pub(crate) moved: [bool; 2],
}

/// The `games.moved` bits.
fn moved_bits(moved: [bool; 2]) -> i16 {
    i16::from(moved[0]) | (i16::from(moved[1]) << 1)
}

/// What a player did to a game by not playing it (see `game::fair_play`),
/// written with the change that shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OffenceRow {
    pub(crate) player: Uuid,
    pub(crate) kind: OffenceKind,
    pub(crate) at_ms: u64,
}

/// Ends live games, each only if it is held under its epoch, with their
/// results and, for an end that rates its players (`EndRow::rates`), its
/// outbox row for the rating service: one statement for them all, in the caller's
/// transaction. Returns the games that ended (a game not live or not held
/// is left as it was, and only it fails).
pub(crate) async fn finish_games(
    connection: &mut PgConnection,
    ends: &[EndRow<'_>],
) -> Result<HashSet<Uuid>, sqlx::Error> {
    let games: Vec<Uuid> = ends.iter().map(|end| end.game).collect();
    let epochs: Vec<i64> = ends.iter().map(|end| end.epoch).collect();
    let status = |end: &EndRow| {
        if end.over.result == GameResult::Aborted {
            GameStatus::Aborted
        } else {
            GameStatus::Over
        }
    };
    let statuses: Vec<String> = ends
        .iter()
        .map(|end| status(end).as_str().to_owned())
        .collect();
    let results: Vec<String> = ends
        .iter()
        .map(|end| end.over.result.as_str().to_owned())
        .collect();
    let reasons: Vec<String> = ends
        .iter()
        .map(|end| end.over.reason.as_str().to_owned())
        .collect();
    let score = |seat: usize| -> Vec<i16> {
        ends.iter()
            .map(|end| i16::from(end.over.score[seat]))
            .collect()
    };
    let times: Vec<OffsetDateTime> = ends.iter().map(|end| end.at).collect();
    let versions: Vec<i64> = ends.iter().map(|end| end.over.version as i64).collect();
    let offenders: Vec<Option<Uuid>> = ends
        .iter()
        .map(|end| end.offence.map(|o| o.player))
        .collect();
    let offences: Vec<Option<String>> = ends
        .iter()
        .map(|end| end.offence.map(|o| o.kind.as_str().to_owned()))
        .collect();
    let rates: Vec<bool> = ends.iter().map(|end| end.rates).collect();
    let plies: Vec<i32> = ends.iter().map(|end| end.plies as i32).collect();
    let moved: Vec<i16> = ends.iter().map(|end| moved_bits(end.moved)).collect();
    let ended = sqlx::query_scalar!(
        r#"WITH input AS (
               SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[],
                                    $6::smallint[], $7::smallint[], $8::timestamptz[], $9::bigint[],
                                    $10::uuid[], $11::text[], $12::bool[], $13::int4[],
                                    $14::int2[])
                   AS i(game_id, epoch, status, result, reason, score0, score1, ended_at, version,
                        offender, offence, rates, plies, moved)
           ),
           ended AS (
               UPDATE games g SET status = i.status, result = i.result, reason = i.reason,
                                  score0 = i.score0, score1 = i.score1,
                                  ended_at = i.ended_at, version = i.version,
                                  plies = i.plies, moved = g.moved | i.moved
               FROM input i
               WHERE g.id = i.game_id AND g.epoch = i.epoch
                 -- Live, in the words that keep the planner on the primary
                 -- key (see `append_moves`).
                 AND g.result IS NULL AND g.reason IS NULL AND g.ended_at IS NULL
               RETURNING g.id, g.ended_at
           ),
           outbox AS (
               INSERT INTO rating_outbox (game_id, created_at)
               SELECT e.id, e.ended_at FROM ended e JOIN input i ON i.game_id = e.id
               WHERE i.rates
           ),
           charged AS (
               INSERT INTO fair_play_offences (game_id, player_id, kind, guest_network, at)
               SELECT e.id, i.offender, i.offence, guest_network(i.offender), e.ended_at
               FROM ended e JOIN input i ON i.game_id = e.id
               WHERE i.offender IS NOT NULL
               ON CONFLICT DO NOTHING
           )
           SELECT id AS "id!" FROM ended"#,
        &games,
        &epochs,
        &statuses,
        &results,
        &reasons,
        &score(0),
        &score(1),
        &times,
        &versions,
        &offenders as &[Option<Uuid>],
        &offences as &[Option<String>],
        &rates,
        &plies,
        &moved,
    )
    .fetch_all(connection)
    .await?;
    Ok(ended.into_iter().collect())
}

/// Takes moves back to `ply` at `now` (the side to move starts its
/// turn then), in the caller's transaction.
pub(crate) async fn undo(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    ply: u32,
    version: u64,
    now: OffsetDateTime,
) -> Result<bool, sqlx::Error> {
    let held = sqlx::query!(
        "UPDATE games SET plies = $3, version = $4, turn_started_at = $5
         WHERE id = $1 AND epoch = $2 AND status = 'live'",
        game,
        epoch,
        ply as i32,
        version as i64,
        now,
    )
    .execute(&mut *connection)
    .await?;
    if held.rows_affected() != 1 {
        return Ok(false);
    }
    // The taken-back plies stay in the log as this host's placeholders:
    // a row is never deleted, so the ply a stale host would write next is
    // always held (see `append_moves`).
    sqlx::query!(
        "UPDATE game_moves SET pit = 0, clock_ms = NULL, hidden_ms = NULL, epoch = $3::bigint::int
         WHERE game_id = $1 AND ply > $2",
        game,
        ply as i32,
        epoch,
    )
    .execute(connection)
    .await?;
    Ok(true)
}

/// An AI takes an absent player's seat; the game becomes casual.
pub(crate) async fn take_over(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    seat: Side,
    level: &str,
    version: u64,
    offence: Option<OffenceRow>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE games SET rated = false, version = $5,
                          seat0_takeover = CASE WHEN $3 = 0 THEN $4 ELSE seat0_takeover END,
                          seat1_takeover = CASE WHEN $3 = 1 THEN $4 ELSE seat1_takeover END
         WHERE id = $1 AND epoch = $2 AND status = 'live'",
        game,
        epoch,
        seat.index() as i32,
        level,
        version as i64,
    )
    .execute(&mut *connection)
    .await?;
    let held = done.rows_affected() == 1;
    if let (true, Some(offence)) = (held, offence) {
        insert_offence(connection, game, offence).await?;
    }
    Ok(held)
}

/// `seat` of `game` goes berserk, under the host's epoch.
pub(crate) async fn berserk(
    connection: &mut PgConnection,
    game: Uuid,
    epoch: i64,
    seat: Side,
    version: u64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE games SET version = $4,
                          berserk0 = berserk0 OR $3 = 0,
                          berserk1 = berserk1 OR $3 = 1
         WHERE id = $1 AND epoch = $2 AND status = 'live'",
        game,
        epoch,
        seat.index() as i32,
        version as i64,
    )
    .execute(connection)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Records an offence in `game`, in the caller's transaction (once: a
/// game charges a player once).
pub(crate) async fn insert_offence(
    connection: &mut PgConnection,
    game: Uuid,
    offence: OffenceRow,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO fair_play_offences (game_id, player_id, kind, guest_network, at)
         VALUES ($1, $2, $3, guest_network($2), $4)
         ON CONFLICT DO NOTHING",
        game,
        offence.player,
        offence.kind.as_str(),
        timestamp(offence.at_ms),
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Links a finished game to its rematch, once: the id already linked if
/// another request won.
pub(crate) async fn link_rematch(
    connection: &mut PgConnection,
    game: Uuid,
    next: Uuid,
) -> Result<Option<Uuid>, sqlx::Error> {
    let linked = sqlx::query_scalar!(
        "UPDATE games SET rematch_id = $2 WHERE id = $1 AND rematch_id IS NULL RETURNING rematch_id",
        game,
        next,
    )
    .fetch_optional(&mut *connection)
    .await?;
    if linked.is_some() {
        return Ok(Some(next));
    }
    sqlx::query_scalar!("SELECT rematch_id FROM games WHERE id = $1", game)
        .fetch_one(connection)
        .await
}
