//! Applying rated games, exactly once. A worker claims the oldest pending
//! outbox row with `FOR UPDATE SKIP LOCKED` (so workers on any number of
//! instances never take the same row), updates both players' ratings,
//! writes their history rows and marks the row done, all in one
//! transaction. A worker that dies mid-way rolls back and releases the row
//! for the next. A Redis notice wakes the workers; a poll is the safety
//! net.

use std::sync::Arc;

use mancala_platform::pubsub::PubSub;
use mancala_platform::{Clock, Redis};
use mancala_proto::bus::{GameBus, names};
use mancala_proto::game::{GameResult, ServerMessage};
use mancala_proto::rating::RatingDelta;
use sqlx::{PgConnection, PgPool};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::config::RatingSettings;
use crate::glicko::{Rating, Score};
use crate::leaderboard;

/// What the workers share.
#[derive(Clone)]
pub struct Rater {
    pub postgres: PgPool,
    pub redis: Redis,
    pub pubsub: PubSub,
    pub clock: Clock,
    pub settings: Arc<RatingSettings>,
}

/// A game whose ratings were applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub game: Uuid,
    pub variant: String,
    /// (seat, player, before, after).
    pub changes: Vec<(u8, Uuid, Rating, Rating)>,
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
struct Stored {
    rating: Rating,
    games: i32,
    last_rated: Option<OffsetDateTime>,
}

async fn load(
    connection: &mut PgConnection,
    rater: &Rater,
    player: Uuid,
    variant: &str,
) -> Result<Stored, sqlx::Error> {
    // A row must exist to be locked: two workers rating a newcomer's first
    // two games at once would otherwise both start from the defaults, and
    // one update would be lost. The insert of a new key waits for the other
    // transaction's, then the lock below reads its committed result.
    let initial = rater.settings.rules.initial();
    sqlx::query!(
        "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games)
         VALUES ($1, $2, $3, $4, $5, 0)
         ON CONFLICT (player_id, variant) DO NOTHING",
        player,
        variant,
        initial.rating,
        initial.rd,
        initial.volatility,
    )
    .execute(&mut *connection)
    .await?;
    let row = sqlx::query!(
        r#"SELECT rating, rd, volatility, games,
                  last_rated_at AS last_rated
           FROM ratings WHERE player_id = $1 AND variant = $2 FOR UPDATE"#,
        player,
        variant,
    )
    .fetch_optional(connection)
    .await?;
    Ok(match row {
        Some(row) => Stored {
            rating: Rating {
                rating: row.rating,
                rd: row.rd,
                volatility: row.volatility,
            },
            games: row.games,
            last_rated: row.last_rated,
        },
        None => Stored {
            rating: rater.settings.rules.initial(),
            games: 0,
            last_rated: None,
        },
    })
}

impl Rater {
    fn now(&self) -> OffsetDateTime {
        self.clock.now_utc()
    }

    /// Applies the oldest pending rated game, if any.
    pub async fn apply_next(&self) -> Result<Outcome, sqlx::Error> {
        let mut tx = self.postgres.begin().await?;
        let Some(game) = sqlx::query_scalar!(
            "SELECT game_id FROM rating_outbox WHERE processed_at IS NULL
             ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(Outcome::Idle);
        };
        let now = self.now();
        let row = sqlx::query!(
            r#"SELECT variant->>'variant' AS "variant!", seat0_player, seat1_player,
                      result AS "result: GameResult", rated
               FROM games WHERE id = $1"#,
            game,
        )
        .fetch_one(&mut *tx)
        .await?;
        let score = match row.result {
            Some(GameResult::P0) => Some(Score::Win),
            Some(GameResult::P1) => Some(Score::Loss),
            Some(GameResult::Draw) => Some(Score::Draw),
            Some(GameResult::Aborted) | None => None,
        };
        let (Some(first), Some(second), Some(score), true) =
            (row.seat0_player, row.seat1_player, score, row.rated)
        else {
            mark_done(&mut tx, game, now).await?;
            tx.commit().await?;
            return Ok(Outcome::Skipped(game));
        };
        let variant = row.variant;
        // Locked in id order, so two games of the same players never
        // deadlock.
        let (a, b) = if first < second {
            let a = load(&mut tx, self, first, &variant).await?;
            (a, load(&mut tx, self, second, &variant).await?)
        } else {
            let b = load(&mut tx, self, second, &variant).await?;
            (load(&mut tx, self, first, &variant).await?, b)
        };
        let rules = &self.settings.rules;
        let as_of_now = |stored: &Stored| Rating {
            rd: stored.last_rated.map_or(stored.rating.rd, |last| {
                rules.rd_after(stored.rating, crate::glicko::days_between(last, now))
            }),
            ..stored.rating
        };
        let (before_a, before_b) = (as_of_now(&a), as_of_now(&b));
        let (after_a, after_b) = rules.update(before_a, before_b, score);
        let results = match score {
            Score::Win => ["win", "loss"],
            Score::Draw => ["draw", "draw"],
            Score::Loss => ["loss", "win"],
        };
        for (player, stored, after, result, before) in [
            (first, &a, after_a, results[0], before_a),
            (second, &b, after_b, results[1], before_b),
        ] {
            sqlx::query!(
                "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games, last_rated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (player_id, variant) DO UPDATE
                 SET rating = $3, rd = $4, volatility = $5, games = $6, last_rated_at = $7",
                player,
                variant,
                after.rating,
                after.rd,
                after.volatility,
                stored.games + 1,
                now,
            )
            .execute(&mut *tx)
            .await?;
            sqlx::query!(
                "INSERT INTO rating_history (game_id, player_id, variant, result, rating_before,
                                             rating_after, rd_after, volatility_after, rated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                game,
                player,
                variant,
                result,
                before.rating,
                after.rating,
                after.rd,
                after.volatility,
                now,
            )
            .execute(&mut *tx)
            .await?;
        }
        mark_done(&mut tx, game, now).await?;
        tx.commit().await?;
        metrics::counter!("ratings_applied_total", "variant" => variant.clone()).increment(1);
        Ok(Outcome::Applied(Applied {
            game,
            variant,
            changes: vec![
                (0, first, before_a, after_a),
                (1, second, before_b, after_b),
            ],
        }))
    }

    /// After a commit: the leaderboard and the players hear of it.
    pub async fn announce(&self, applied: &Applied) {
        for (_, player, _, _) in &applied.changes {
            if let Err(error) = leaderboard::refresh_player(self, *player, &applied.variant).await {
                tracing::warn!(%error, "updating a leaderboard");
            }
        }
        let changes = applied
            .changes
            .iter()
            .map(|(seat, _, before, after)| RatingDelta {
                seat: *seat,
                before: before.rating,
                after: after.rating,
            })
            .collect();
        let message =
            serde_json::to_string(&ServerMessage::RatingChange { changes }).unwrap_or_default();
        let bus = GameBus::RatingChange { message };
        self.pubsub
            .publish(&names::game_channel(applied.game), bus.encode())
            .await;
    }

    /// Applies everything pending; how many games were rated.
    pub async fn drain(&self) -> usize {
        let mut applied = 0;
        loop {
            match self.apply_next().await {
                Ok(Outcome::Idle) => return applied,
                Ok(Outcome::Applied(done)) => {
                    applied += 1;
                    self.announce(&done).await;
                }
                Ok(Outcome::Skipped(_)) => {}
                Err(error) => {
                    tracing::warn!(%error, "applying a rating");
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
    game: Uuid,
    now: OffsetDateTime,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE rating_outbox SET processed_at = $2 WHERE game_id = $1",
        game,
        now,
    )
    .execute(connection)
    .await?;
    Ok(())
}
