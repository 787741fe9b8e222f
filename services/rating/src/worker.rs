//! Applying rated games, exactly once. A worker claims the oldest pending
//! outbox rows (up to [`BATCH`]) with `FOR UPDATE SKIP LOCKED` (so workers
//! on any number of instances never take the same row), rates the games in
//! order, each from the ratings the one before left, writes the ratings,
//! the history rows and marks the rows done, all in one transaction: a
//! handful of statements per batch, not a dozen per game. A worker that
//! dies mid-way rolls back and releases the rows for the next. A Redis
//! notice wakes the workers; a poll is the safety net.

use std::collections::{BTreeSet, HashMap};

use crate::context::Context;
use mancala_proto::VariantName;
use mancala_proto::bus::{GameBus, Route, names};
use mancala_proto::game::Side;
use mancala_proto::game::{GameResult, ServerMessage};
use mancala_proto::rating::RatingDelta;
use sqlx::PgConnection;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::boosting::{Counts, bounded};
use crate::glicko::{Rating, Score};
use crate::leaderboard;

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
}

/// A rating row as of its last game, and when that was.
#[derive(Clone, Copy)]
struct Stored {
    rating: Rating,
    games: i32,
    last_rated: Option<OffsetDateTime>,
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
}

impl Claimed {
    /// Both players, the score of the first and the variant, when the
    /// game rates them.
    fn rates(&self) -> Option<(Uuid, Uuid, Score, VariantName)> {
        if !mancala_proto::game::rates_its_players(self.rated, self.result) {
            return None;
        }
        let score = match self.result? {
            GameResult::P0 => Score::Win,
            GameResult::P1 => Score::Loss,
            GameResult::Draw => Score::Draw,
            GameResult::Aborted => return None,
        };
        let (first, second) = self.seats;
        Some((first?, second?, score, self.variant?))
    }
}

/// One player's change from one game, as the history keeps it.
struct HistoryRow {
    game: Uuid,
    player: Uuid,
    variant: String,
    result: &'static str,
    before: Rating,
    after: Rating,
    /// Against a linked opponent: counts toward the bound.
    linked: bool,
}

/// Claims up to `limit` pending games, oldest first, that no other worker
/// holds (`SKIP LOCKED`).
async fn claim(
    connection: &mut PgConnection,
    limit: i64,
    linked_days: i32,
) -> Result<Vec<Claimed>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT o.game_id, g.variant->>'variant' AS "variant!", g.seat0_player, g.seat1_player,
                  g.result AS "result: GameResult", g.rated,
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = g.seat0_player)
                      AS "guest0!",
                  NOT EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = g.seat1_player)
                      AS "guest1!",
                  COALESCE(accounts_linked(g.seat0_player, g.seat1_player, g.created_at,
                                           make_interval(days => $2)), false) AS "linked!"
           FROM rating_outbox o JOIN games g ON g.id = o.game_id
           WHERE o.processed_at IS NULL
           ORDER BY o.created_at, o.game_id LIMIT $1
           FOR UPDATE OF o SKIP LOCKED"#,
        limit,
        linked_days,
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
        })
        .collect())
}

/// Rating points each (player, variant) of `keys` gained from linked
/// opponents since `since`.
async fn linked_gains(
    connection: &mut PgConnection,
    keys: &BTreeSet<(Uuid, String)>,
    since: OffsetDateTime,
) -> Result<HashMap<(Uuid, String), f64>, sqlx::Error> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let (players, variants): (Vec<Uuid>, Vec<String>) = keys.iter().cloned().unzip();
    let rows = sqlx::query!(
        r#"SELECT h.player_id, h.variant,
                  sum(GREATEST(h.rating_after - h.rating_before, 0)) AS "gained!"
           FROM rating_history h
           JOIN unnest($1::uuid[], $2::text[]) AS k(player, variant)
             ON h.player_id = k.player AND h.variant = k.variant
           WHERE h.linked AND h.rated_at > $3
           GROUP BY h.player_id, h.variant"#,
        &players,
        &variants,
        since,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| ((row.player_id, row.variant), row.gained))
        .collect())
}

/// Locks the rating rows of `keys` (player, variant), made with the
/// defaults where missing, and reads them.
async fn lock_ratings(
    connection: &mut PgConnection,
    rater: &Context,
    keys: &BTreeSet<(Uuid, String)>,
) -> Result<HashMap<(Uuid, String), Stored>, sqlx::Error> {
    // A row must exist to be locked: two workers rating a newcomer's first
    // games at once would otherwise both start from the defaults, and one
    // update would be lost. Rows are made and locked in key order, so two
    // workers with overlapping players wait for each other, never
    // deadlock; an insert of a new key waits for the other transaction's,
    // then the lock reads its committed result.
    let (players, variants): (Vec<Uuid>, Vec<String>) = keys.iter().cloned().unzip();
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
        .map(|row| {
            let stored = Stored {
                rating: Rating {
                    rating: row.rating,
                    rd: row.rd,
                    volatility: row.volatility,
                },
                games: row.games,
                last_rated: row.last_rated,
            };
            ((row.player_id, row.variant), stored)
        })
        .collect())
}

/// Writes the ratings as they stand after the batch, and each change's
/// history row.
async fn store_changes(
    connection: &mut PgConnection,
    ratings: &HashMap<(Uuid, String), Stored>,
    changes: &[HistoryRow],
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    let changed: BTreeSet<(Uuid, &str)> = changes
        .iter()
        .map(|change| (change.player, change.variant.as_str()))
        .collect();
    let (mut players, mut variants) = (vec![], vec![]);
    let (mut rating, mut rd, mut volatility, mut games) = (vec![], vec![], vec![], vec![]);
    for (player, variant) in changed {
        let Some(stored) = ratings.get(&(player, variant.to_owned())) else {
            continue;
        };
        players.push(player);
        variants.push(variant.to_owned());
        rating.push(stored.rating.rating);
        rd.push(stored.rating.rd);
        volatility.push(stored.rating.volatility);
        games.push(stored.games);
    }
    sqlx::query!(
        "UPDATE ratings r
         SET rating = k.rating, rd = k.rd, volatility = k.volatility, games = k.games,
             last_rated_at = $7
         FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::float8[], $5::float8[], $6::int4[])
              AS k(player, variant, rating, rd, volatility, games)
         WHERE r.player_id = k.player AND r.variant = k.variant",
        &players,
        &variants,
        &rating,
        &rd,
        &volatility,
        &games,
        now,
    )
    .execute(&mut *connection)
    .await?;
    sqlx::query!(
        "INSERT INTO rating_history (game_id, player_id, variant, result, rating_before,
                                     rating_after, rd_after, volatility_after, rated_at, linked)
         SELECT game, player, variant, result, before, after, rd, volatility, $9, linked
         FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::float8[], $6::float8[],
                     $7::float8[], $8::float8[], $10::bool[])
              AS k(game, player, variant, result, before, after, rd, volatility, linked)",
        &changes.iter().map(|c| c.game).collect::<Vec<_>>(),
        &changes.iter().map(|c| c.player).collect::<Vec<_>>(),
        &changes
            .iter()
            .map(|c| c.variant.clone())
            .collect::<Vec<_>>(),
        &changes
            .iter()
            .map(|c| c.result.to_owned())
            .collect::<Vec<_>>(),
        &changes.iter().map(|c| c.before.rating).collect::<Vec<_>>(),
        &changes.iter().map(|c| c.after.rating).collect::<Vec<_>>(),
        &changes.iter().map(|c| c.after.rd).collect::<Vec<_>>(),
        &changes
            .iter()
            .map(|c| c.after.volatility)
            .collect::<Vec<_>>(),
        now,
        &changes.iter().map(|c| c.linked).collect::<Vec<_>>(),
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
        let claimed = claim(&mut tx, limit, boosting.linked_days as i32).await?;
        if claimed.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.now();
        let keys: BTreeSet<(Uuid, String)> = claimed
            .iter()
            .filter_map(|game| game.rates().map(|rated| (game, rated)))
            .flat_map(|(_, (first, second, _, variant))| {
                [first, second].map(|player| (player, variant.as_str().to_owned()))
            })
            .collect();
        let mut ratings = if keys.is_empty() {
            HashMap::new()
        } else {
            lock_ratings(&mut tx, self, &keys).await?
        };
        // Read after the rating rows are locked: a worker rating the same
        // player's other linked game waits, then sees its gain.
        let linked_keys: BTreeSet<(Uuid, String)> = claimed
            .iter()
            .filter(|game| game.linked)
            .filter_map(|game| game.rates().map(|rated| (game, rated)))
            .flat_map(|(_, (first, second, _, variant))| {
                [first, second].map(|player| (player, variant.as_str().to_owned()))
            })
            .collect();
        let since = now - time::Duration::days(i64::from(boosting.linked_days));
        let mut gained = linked_gains(&mut tx, &linked_keys, since).await?;
        let rules = &self.settings.rules;
        let mut outcomes = Vec::with_capacity(claimed.len());
        let mut changes = Vec::new();
        for game in &claimed {
            let Some((first, second, score, variant)) = game.rates() else {
                outcomes.push(Outcome::Skipped(game.game));
                continue;
            };
            let key = |player: Uuid| (player, variant.as_str().to_owned());
            let stored = |player: Uuid| {
                ratings.get(&key(player)).copied().unwrap_or(Stored {
                    rating: rules.initial(),
                    games: 0,
                    last_rated: None,
                })
            };
            let (a, b) = (stored(first), stored(second));
            let as_of_now = |stored: &Stored| Rating {
                rd: stored.last_rated.map_or(stored.rating.rd, |last| {
                    rules.rd_after(stored.rating, crate::glicko::days_between(last, now))
                }),
                ..stored.rating
            };
            let (before_a, before_b) = (as_of_now(&a), as_of_now(&b));
            let (glicko_a, glicko_b) = rules.update(before_a, before_b, score);
            let results = match score {
                Score::Win => ["win", "loss"],
                Score::Draw => ["draw", "draw"],
                Score::Loss => ["loss", "win"],
            };
            let mut after = [glicko_a, glicko_b];
            for (seat, player, was, glicko, result, before) in [
                (0, first, a, glicko_a, results[0], before_a),
                (1, second, b, glicko_b, results[1], before_b),
            ] {
                let opponent_guest = game.guests[1 - seat];
                let counts = if opponent_guest && !game.guests[seat] {
                    Counts::Held
                } else if game.linked {
                    let taken = gained.get(&key(player)).copied().unwrap_or(0.0);
                    Counts::Linked {
                        left: boosting.linked_budget - taken,
                    }
                } else {
                    Counts::Full
                };
                let rating = bounded(was.rating, before, glicko, counts);
                after[seat] = rating;
                if counts == Counts::Held {
                    // Nothing moves: no history row, no game counted.
                    continue;
                }
                if game.linked {
                    *gained.entry(key(player)).or_default() +=
                        (rating.rating - before.rating).max(0.0);
                }
                let now_stored = Stored {
                    rating,
                    games: was.games + 1,
                    last_rated: Some(now),
                };
                ratings.insert(key(player), now_stored);
                changes.push(HistoryRow {
                    game: game.game,
                    player,
                    variant: variant.as_str().to_owned(),
                    result,
                    before,
                    after: rating,
                    linked: game.linked,
                });
            }
            let [after_a, after_b] = after;
            outcomes.push(Outcome::Applied(Applied {
                game: game.game,
                variant,
                changes: [
                    SeatChange {
                        seat: Side::South,
                        player: first,
                        before: before_a,
                        after: after_a,
                    },
                    SeatChange {
                        seat: Side::North,
                        player: second,
                        before: before_b,
                        after: after_b,
                    },
                ],
            }));
        }
        if !changes.is_empty() {
            store_changes(&mut tx, &ratings, &changes, now).await?;
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
