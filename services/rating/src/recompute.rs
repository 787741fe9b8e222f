//! Changes of marks, followed by the ratings: a mark or its lifting writes
//! a `rating_recomputes` row in its own transaction (so none is lost); a
//! worker takes the oldest no other worker holds, replays the history of
//! each variant from the first line whose voiding changed, records what
//! it came to, and puts the players it moved back on (or off) the boards.

use std::time::Instant;

use mancala_proto::VariantName;
use uuid::Uuid;

use crate::context::Context;
use crate::leaderboard;
use crate::replay::{self, Check, From, Replayed};

/// One recompute done.
#[derive(Clone, Debug, PartialEq)]
pub struct Recomputed {
    pub id: i64,
    /// The player whose mark or account changed.
    pub player: Uuid,
    pub replayed: Replayed,
    pub millis: u64,
}

impl Context {
    /// Does the oldest pending recompute, if any is free.
    pub async fn recompute_next(&self) -> Result<Option<Recomputed>, sqlx::Error> {
        let mut tx = self.postgres.begin().await?;
        let Some(pending) = sqlx::query!(
            r#"SELECT r.id, r.player_id
               FROM rating_recomputes r
               WHERE r.done_at IS NULL
               ORDER BY r.id LIMIT 1
               FOR UPDATE OF r SKIP LOCKED"#
        )
        .fetch_optional(&mut *tx)
        .await?
        else {
            return Ok(None);
        };
        let started = Instant::now();
        replay::hold_ratings(&mut tx).await?;
        let mut replayed = Replayed::default();
        let from = From::FirstChange {
            player: Some(pending.player_id),
        };
        for variant in VariantName::ALL {
            let settings = &self.settings;
            let one = replay::replay(
                &mut tx,
                settings.rules,
                settings.boosting,
                variant,
                from,
                Check::Write,
            )
            .await?;
            replayed.add(one);
        }
        let millis = started.elapsed().as_millis() as u64;
        let players: Vec<Uuid> = replayed.players.iter().copied().collect();
        sqlx::query!(
            "UPDATE rating_recomputes
             SET done_at = $2, rows_changed = $3, ratings_changed = $4, players = $5, millis = $6
             WHERE id = $1",
            pending.id,
            self.clock.now_utc(),
            replayed.lines_changed as i32,
            replayed.ratings_changed as i32,
            serde_json::json!(players),
            millis as i32,
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let on_boards = players.iter().copied().chain([pending.player_id]);
        for player in on_boards {
            for variant in VariantName::ALL {
                if let Err(error) = leaderboard::refresh_player(self, player, variant).await {
                    tracing::warn!(%error, "updating a leaderboard after a recompute");
                }
            }
        }
        tracing::info!(
            id = pending.id,
            lines = replayed.lines,
            lines_changed = replayed.lines_changed,
            ratings_changed = replayed.ratings_changed,
            millis,
            "ratings recomputed"
        );
        Ok(Some(Recomputed {
            id: pending.id,
            player: pending.player_id,
            replayed,
            millis,
        }))
    }

    /// Does every pending recompute this worker can take.
    pub async fn recompute_pending(&self) -> usize {
        let mut done = 0;
        loop {
            match self.recompute_next().await {
                Ok(Some(_)) => done += 1,
                Ok(None) => return done,
                Err(error) => {
                    tracing::warn!(%error, "recomputing ratings");
                    return done;
                }
            }
        }
    }

    /// Replays every variant's whole history without writing: what would
    /// change. Nothing, when every rating was applied by the worker and
    /// the marks have been followed.
    pub async fn check_history(&self) -> Result<Replayed, sqlx::Error> {
        let mut tx = self.postgres.begin().await?;
        replay::hold_ratings(&mut tx).await?;
        let mut replayed = Replayed::default();
        for variant in VariantName::ALL {
            let settings = &self.settings;
            let one = replay::replay(
                &mut tx,
                settings.rules,
                settings.boosting,
                variant,
                From::Start,
                Check::DryRun,
            )
            .await?;
            replayed.add(one);
        }
        tx.rollback().await?;
        Ok(replayed)
    }
}
