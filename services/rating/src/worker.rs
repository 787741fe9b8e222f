//! Applying rated games, exactly once. A worker claims the oldest pending
//! outbox rows (up to [`BATCH`]) with `FOR UPDATE SKIP LOCKED` (so workers
//! on any number of instances never take the same row), rates the games in
//! order, each from the ratings the one before left, writes the ratings,
//! the history rows and marks the rows done, all in one transaction: a
//! handful of statements per batch, not a dozen per game. A worker that
//! dies mid-way rolls back and releases the rows for the next. A Redis
//! notice wakes the workers; a poll is the safety net.

use std::collections::BTreeSet;

use crate::config::BoostingSettings;
use crate::context::Context;
use mancala_proto::VariantName;
use mancala_proto::bus::{GameBus, Route, names};
use mancala_proto::game::Side;
use mancala_proto::game::{GameResult, ServerMessage};
use mancala_proto::rating::RatingDelta;
use sqlx::PgConnection;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::glicko::{Rating, Score};
use crate::leaderboard;
use crate::ledger::{GameToRate, Ledger, Line, Standing};

/// A game whose ratings were applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub game: Uuid,
    pub variant: VariantName,
    pub changes: [SeatChange; 2],
}

/// One seat's rating change in an applied game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeatChange {
    pub seat: Side,
    pub player: Uuid,
    pub before: Rating,
    pub after: Rating,
}

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Nothing pending (or everything pending is being applied elsewhere).
    Idle,
    Applied(Applied),
    /// A row that rates nothing (not rated, aborted); marked done.
    Skipped(Uuid),
    /// A rated game a mark on one of its players voids: its history lines
    /// are written, marked void, and nobody's rating moves.
    Voided(Uuid),
}

/// The most pending games one transaction applies: enough that the
/// statements of a batch cost little per game when games end by the
/// hundred each second, few enough that a batch holds its rating rows
/// only briefly.
pub const BATCH: i64 = 64;

/// A pending game as claimed: who played what, and how it ended.
struct Claimed {
    game: Uuid,
    /// `None` for a variant this build does not know: such a game rates
    /// nobody.
    variant: Option<VariantName>,
    seats: (Option<Uuid>, Option<Uuid>),
    result: Option<GameResult>,
    rated: bool,
    /// Which seats are guests.
    guests: [bool; 2],
    /// Whether the two accounts are linked (see `boosting`).
    linked: bool,
    /// Which seats' players are thin opponents (see `boosting`).
    thin: [bool; 2],
    /// Whether a mark on one of the players voids it.
    voided: bool,
}

impl Claimed {
    /// The game as the ledger rates it, when it rates its players.
    fn to_rate(&self) -> Option<GameToRate> {
        if !mancala_proto::game::rates_its_players(self.rated, self.result) {
            return None;
        }
        let score = score_of(self.result?)?;
        let (first, second) = self.seats;
        // A registered player's rating never moves against a guest.
        let held = |seat: usize| self.guests[1 - seat] && !self.guests[seat];
        Some(GameToRate {
            game: self.game,
            variant: self.variant?,
            players: [first?, second?],
            score,
            held: [held(0), held(1)],
            linked: self.linked,
            thin: self.thin,
            voided: self.voided,
        })
    }
}

/// South's score in a game that ended with `result`; none for an abort.
pub(crate) fn score_of(result: GameResult) -> Option<Score> {
    match result {
        GameResult::P0 => Some(Score::Win),
        GameResult::P1 => Some(Score::Loss),
        GameResult::Draw => Some(Score::Draw),
        GameResult::Aborted => None,
    }
}

/// Claims up to `limit` pending games, oldest first, that no other worker
/// holds (`SKIP LOCKED`).
async fn claim(
    connection: &mut PgConnection,
    limit: i64,
    boosting: BoostingSettings,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT o.game_id, g.variant->>'variant' AS "variant!", g.seat0_player, g.seat1_player,
                  g.result AS "result: GameResult", g.rated,
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = g.seat0_player)
                      AS "guest0!",
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = g.seat1_player)
                      AS "guest1!",
                  COALESCE(l.linked, false) AS "linked!",
                  COALESCE(t0.thin, false) AS "thin0!",
                  COALESCE(t1.thin, false) AS "thin1!",
                  COALESCE(v.voided, false) AS "voided!"
           FROM rating_outbox o JOIN games g ON g.id = o.game_id
           -- The row forms are planned with this statement, once; the
           -- boolean forms would plan their bodies again on every claim.
           CROSS JOIN LATERAL accounts_linked_row(g.seat0_player, g.seat1_player, g.created_at,
                                                  make_interval(days => $2)) l
           LEFT JOIN LATERAL opponent_thin_row(g.seat0_player, g.variant->>'variant', g.created_at,
                                               make_interval(days => $3), $4, $5, $6) t0 ON true
           LEFT JOIN LATERAL opponent_thin_row(g.seat1_player, g.variant->>'variant', g.created_at,
                                               make_interval(days => $3), $4, $5, $6) t1 ON true
           CROSS JOIN LATERAL game_voided_row(g.seat0_player, g.seat1_player, g.created_at) v
           WHERE o.processed_at IS NULL
           ORDER BY o.created_at, o.game_id LIMIT $1
           FOR UPDATE OF o SKIP LOCKED"#,
        limit,
        boosting.linked_days as i32,
        boosting.thin_account_days as i32,
        boosting.thin_games as i32,
        BoostingSettings::QUICK_LOSS_PLIES,
        BoostingSettings::QUICK_LOSSES_NEEDED,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Claimed {
            game: row.game_id,
            variant: VariantName::parse(&row.variant),
            seats: (row.seat0_player, row.seat1_player),
            result: row.result,
            rated: row.rated,
            guests: [row.guest0, row.guest1],
            linked: row.linked,
            thin: [row.thin0, row.thin1],
            voided: row.voided,
        })
        .collect())
}

/// The gains each (player, variant) of `keys` took from linked opponents
/// since `since`: when, and how many points.
async fn linked_gains(
    connection: &mut PgConnection,
    keys: &BTreeSet<(Uuid, VariantName)>,
    since: OffsetDateTime,
) -> Result<Vec<(Uuid, VariantName, OffsetDateTime, f64)>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (players, variants) = key_columns(keys);
    let rows = sqlx::query!(
        r#"SELECT h.player_id, h.variant, h.rated_at,
                  GREATEST(h.rating_after - h.rating_before, 0) AS "gained!"
           FROM rating_history h
           JOIN unnest($1::uuid[], $2::text[]) AS k(player, variant)
             ON h.player_id = k.player AND h.variant = k.variant
           WHERE h.linked AND NOT h.voided AND h.rated_at > $3
           ORDER BY h.seq"#,
        &players,
        &variants,
        since,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let variant = VariantName::parse(&row.variant)?;
            Some((row.player_id, variant, row.rated_at, row.gained))
        })
        .collect())
}

/// What games against thin opponents moved each (player, variant) of
/// `keys` since `since`: when, and how many points (negative for a loss).
async fn thin_moves(
    connection: &mut PgConnection,
    keys: &BTreeSet<(Uuid, VariantName)>,
    since: OffsetDateTime,
) -> Result<Vec<(Uuid, VariantName, OffsetDateTime, f64)>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let (players, variants) = key_columns(keys);
    let rows = sqlx::query!(
        r#"SELECT h.player_id, h.variant, h.rated_at,
                  h.rating_after - h.rating_before AS "moved!"
           FROM rating_history h
           JOIN unnest($1::uuid[], $2::text[]) AS k(player, variant)
             ON h.player_id = k.player AND h.variant = k.variant
           WHERE h.opponent_thin AND NOT h.voided AND h.rated_at > $3
           ORDER BY h.seq"#,
        &players,
        &variants,
        since,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let variant = VariantName::parse(&row.variant)?;
            Some((row.player_id, variant, row.rated_at, row.moved))
        })
        .collect())
}

/// The two columns of a set of (player, variant) keys, for `unnest`.
pub(crate) fn key_columns(keys: &BTreeSet<(Uuid, VariantName)>) -> (Vec<Uuid>, Vec<String>) {
    keys.iter()
        .map(|(player, variant)| (*player, variant.as_str().to_owned()))
        .unzip()
}

/// Locks the rating rows of `keys` (player, variant), made with the
/// defaults where missing, and reads them.
async fn lock_ratings(
    connection: &mut PgConnection,
    rater: &Context,
    keys: &BTreeSet<(Uuid, VariantName)>,
) -> Result<Vec<(Uuid, VariantName, Standing)>, sqlx::Error> {
    // A row must exist to be locked: two workers rating a newcomer's first
    // games at once would otherwise both start from the defaults, and one
    // update would be lost. Rows are made and locked in key order, so two
    // workers with overlapping players wait for each other, never
    // deadlock; an insert of a new key waits for the other transaction's,
    // then the lock reads its committed result.
    let (players, variants) = key_columns(keys);
    let initial = rater.settings.rules.initial();
    sqlx::query!(
        "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games)
         SELECT player, variant, $3, $4, $5, 0
         FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(player, variant, n)
         ORDER BY n
         ON CONFLICT (player_id, variant) DO NOTHING",
        &players,
        &variants,
        initial.rating,
        initial.rd,
        initial.volatility,
    )
    .execute(&mut *connection)
    .await?;
    read_ratings(connection, keys).await
}

/// The rating rows of `keys` as stored, locked for the transaction.
pub(crate) async fn read_ratings(
    connection: &mut PgConnection,
    keys: &BTreeSet<(Uuid, VariantName)>,
) -> Result<Vec<(Uuid, VariantName, Standing)>, sqlx::Error> {
    let (players, variants) = key_columns(keys);
    let rows = sqlx::query!(
        r#"SELECT r.player_id, r.variant, r.rating, r.rd, r.volatility, r.games,
                  r.last_rated_at AS last_rated
           FROM ratings r
           JOIN unnest($1::uuid[], $2::text[]) AS k(player, variant)
             ON r.player_id = k.player AND r.variant = k.variant
           ORDER BY r.player_id, r.variant
           FOR UPDATE OF r"#,
        &players,
        &variants,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let standing = Standing {
                rating: Rating {
                    rating: row.rating,
                    rd: row.rd,
                    volatility: row.volatility,
                },
                games: row.games,
                last_rated: row.last_rated,
            };
            Some((row.player_id, VariantName::parse(&row.variant)?, standing))
        })
        .collect())
}

/// Writes the standings of `keys` as the ledger leaves them.
pub(crate) async fn store_standings(
    connection: &mut PgConnection,
    ledger: &Ledger,
    keys: &BTreeSet<(Uuid, VariantName)>,
) -> Result<(), sqlx::Error> {
    let (players, variants) = key_columns(keys);
    let standings: Vec<Standing> = keys
        .iter()
        .map(|(player, variant)| ledger.standing(*player, *variant))
        .collect();
    sqlx::query!(
        "UPDATE ratings r
         SET rating = k.rating, rd = k.rd, volatility = k.volatility, games = k.games,
             last_rated_at = k.last_rated
         FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[],
                     $7::timestamptz[])
              AS k(player, variant, rating, rd, volatility, games, last_rated)
         WHERE r.player_id = k.player AND r.variant = k.variant",
        &players,
        &variants,
        &standings
            .iter()
            .map(|s| s.rating.rating)
            .collect::<Vec<_>>(),
        &standings.iter().map(|s| s.rating.rd).collect::<Vec<_>>(),
        &standings
            .iter()
            .map(|s| s.rating.volatility)
            .collect::<Vec<_>>(),
        &standings.iter().map(|s| s.games).collect::<Vec<_>>(),
        &standings.iter().map(|s| s.last_rated).collect::<Vec<_>>() as &[Option<OffsetDateTime>],
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Appends each line to the history, in the order they were rated (the
/// order `seq` keeps for a replay).
pub(crate) async fn append_lines(
    connection: &mut PgConnection,
    lines: &[Line],
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO rating_history (game_id, player_id, variant, result, rating_before,
                                     rating_after, rd_after, volatility_after, rated_at, linked,
                                     voided, opponent_thin)
         SELECT game, player, variant, result, before, after, rd, volatility, $9, linked, voided,
                opponent_thin
         FROM (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[],
                                    $5::float8[], $6::float8[], $7::float8[], $8::float8[],
                                    $10::bool[], $11::bool[], $12::bool[])
                   WITH ORDINALITY
                   AS k(game, player, variant, result, before, after, rd, volatility, linked,
                        voided, opponent_thin, n)
               ORDER BY n) AS ordered",
        &lines.iter().map(|l| l.game).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.player).collect::<Vec<_>>(),
        &lines
            .iter()
            .map(|l| l.variant.as_str().to_owned())
            .collect::<Vec<_>>(),
        &lines
            .iter()
            .map(|l| l.result.to_owned())
            .collect::<Vec<_>>(),
        &lines.iter().map(|l| l.before.rating).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.rating).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.rd).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.volatility).collect::<Vec<_>>(),
        now,
        &lines.iter().map(|l| l.linked).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.voided).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.opponent_thin).collect::<Vec<_>>(),
    )
    .execute(connection)
    .await?;
    Ok(())
}

impl Context {
    fn now(&self) -> OffsetDateTime {
        self.clock.now_utc()
    }

    /// Applies the oldest pending game, if any.
    pub async fn apply_next(&self) -> Result<Outcome, sqlx::Error> {
        Ok(self.apply_pending(1).await?.pop().unwrap_or(Outcome::Idle))
    }

    /// Applies up to `limit` pending games in one transaction, oldest
    /// first, each from the ratings the one before it left: what each came
    /// to, in that order (empty when nothing is pending here).
    pub async fn apply_pending(&self, limit: i64) -> Result<Vec<Outcome>, sqlx::Error> {
        let mut tx = self.postgres.begin().await?;
        let boosting = self.settings.boosting;
        let claimed = claim(&mut tx, limit, boosting).await?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.now();
        let games: Vec<(Uuid, Option<GameToRate>)> = claimed
            .iter()
            .map(|game| (game.game, game.to_rate()))
            .collect();
        let keys: BTreeSet<(Uuid, VariantName)> = games
            .iter()
            .filter_map(|(_, game)| game.as_ref())
            .flat_map(|game| game.players.map(|player| (player, game.variant)))
            .collect();
        let mut ledger = Ledger::new(self.settings.rules, boosting);
        if !keys.is_empty() {
            for (player, variant, standing) in lock_ratings(&mut tx, self, &keys).await? {
                ledger.start_from(player, variant, standing);
            }
        }
        // Read after the rating rows are locked: a worker rating the same
        // player's other linked game waits, then sees its gain.
        let linked_keys: BTreeSet<(Uuid, VariantName)> = games
            .iter()
            .filter_map(|(_, game)| game.as_ref())
            .filter(|game| game.linked)
            .flat_map(|game| game.players.map(|player| (player, game.variant)))
            .collect();
        let since = now - time::Duration::days(i64::from(boosting.linked_days));
        for (player, variant, at, points) in linked_gains(&mut tx, &linked_keys, since).await? {
            ledger.gained_before(player, variant, at, points);
        }
        // Likewise what games against thin opponents moved, for the
        // players who meet one now.
        let thin_keys: BTreeSet<(Uuid, VariantName)> = games
            .iter()
            .filter_map(|(_, game)| game.as_ref())
            .flat_map(|game| {
                (0..2)
                    .filter(|&seat| game.thin[1 - seat])
                    .map(|seat| (game.players[seat], game.variant))
            })
            .collect();
        let since = now - time::Duration::days(i64::from(boosting.thin_days));
        for (player, variant, at, points) in thin_moves(&mut tx, &thin_keys, since).await? {
            ledger.moved_by_thin_before(player, variant, at, points);
        }
        let mut outcomes = Vec::with_capacity(claimed.len());
        let mut lines = Vec::new();
        let mut moved = BTreeSet::new();
        for (id, game) in &games {
            let Some(game) = game else {
                outcomes.push(Outcome::Skipped(*id));
                continue;
            };
            let rated = ledger.rate(game, now);
            moved.extend(
                rated
                    .lines
                    .iter()
                    .filter(|line| !line.voided)
                    .map(|line| (line.player, game.variant)),
            );
            lines.extend(rated.lines);
            if game.voided {
                outcomes.push(Outcome::Voided(game.game));
                continue;
            }
            let [(before_a, after_a), (before_b, after_b)] = rated.seats;
            outcomes.push(Outcome::Applied(Applied {
                game: game.game,
                variant: game.variant,
                changes: [
                    SeatChange {
                        seat: Side::South,
                        player: game.players[0],
                        before: before_a,
                        after: after_a,
                    },
                    SeatChange {
                        seat: Side::North,
                        player: game.players[1],
                        before: before_b,
                        after: after_b,
                    },
                ],
            }));
        }
        if !moved.is_empty() {
            store_standings(&mut tx, &ledger, &moved).await?;
        }
        if !lines.is_empty() {
            append_lines(&mut tx, &lines, now).await?;
        }
        let games: Vec<Uuid> = claimed.iter().map(|game| game.game).collect();
        mark_done(&mut tx, &games, now).await?;
        tx.commit().await?;
        for outcome in &outcomes {
            if let Outcome::Applied(done) = outcome {
                metrics::counter!("ratings_applied_total", "variant" => done.variant.as_str())
                    .increment(1);
            }
        }
        Ok(outcomes)
    }

    /// After a commit: the leaderboard and the players hear of it.
    pub async fn announce(&self, applied: &Applied) {
        for change in &applied.changes {
            let (player, variant) = (change.player, applied.variant);
            if let Err(error) = leaderboard::refresh_player(self, player, variant).await {
                tracing::warn!(%error, "updating a leaderboard");
            }
        }
        let changes = applied
            .changes
            .iter()
            .map(|change| RatingDelta {
                seat: change.seat,
                before: change.before.rating,
                after: change.after.rating,
            })
            .collect();
        let message =
            serde_json::to_string(&ServerMessage::RatingChange { changes }).unwrap_or_default();
        // To the players through the game's host, and to its watchers.
        let route = Route::RatingChange;
        let text = GameBus::encode_parts(route, &message);
        for channel in route.channels(applied.game) {
            self.pubsub.publish(&channel, text.clone()).await;
        }
    }

    /// Applies everything pending; how many games were rated.
    pub async fn drain(&self) -> usize {
        // Marks first: a game rated from a rating a pending recompute is
        // about to change would be rated again by it anyway.
        self.recompute_pending().await;
        let mut applied = 0;
        loop {
            match self.apply_pending(BATCH).await {
                Ok(outcomes) if outcomes.is_empty() => return applied,
                Ok(outcomes) => {
                    // A batch that was not full left nothing pending this
                    // worker could take: no empty claim to learn it.
                    let more = outcomes.len() as i64 >= BATCH;
                    for outcome in outcomes {
                        if let Outcome::Applied(done) = outcome {
                            applied += 1;
                            self.announce(&done).await;
                        }
                    }
                    if !more {
                        return applied;
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "applying ratings");
                    return applied;
                }
            }
        }
    }

    /// Runs `workers` loops for as long as the process runs.
    pub fn spawn_workers(&self, workers: usize) {
        for _ in 0..workers {
            let rater = self.clone();
            tokio::spawn(async move {
                let mut wake = rater.pubsub.subscribe(names::RATINGS_CHANNEL).await;
                loop {
                    rater.drain().await;
                    let _ = tokio::time::timeout(rater.settings.poll, wake.receiver.recv()).await;
                }
            });
        }
    }
}

async fn mark_done(
    connection: &mut PgConnection,
    games: &[Uuid],
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE rating_outbox SET processed_at = $2 WHERE game_id = ANY($1)",
        games,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}
