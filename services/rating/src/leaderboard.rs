//! Leaderboards: a Redis sorted set per variant of the eligible players,
//! scored by rating; rebuilt from Postgres at start-up (and hourly, as
//! eligibility lapses with time) and kept in step as games are rated.

use mancala_proto::VariantName;
use mancala_proto::rating::{LeaderboardEntry, MyRank};
use redis::AsyncCommands;
use uuid::Uuid;

use crate::config::Eligibility;
use crate::context::Context;
use crate::glicko::{Rating, RatingRules};

/// Why a board could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("postgres: {0}")]
    Postgres(#[from] sqlx::Error),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
}

/// What decides a player's place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    pub registered: bool,
    /// Closed by a moderator or by the player.
    pub closed: bool,
    /// Marked as a booster or an engine: their games count for nobody.
    pub marked: bool,
    pub rating: Rating,
    pub games: u32,
    /// Days since the last rated game.
    pub idle_days: f64,
}

/// Why a player is not on the board, or `None` when they are.
pub fn unranked_reason(
    standing: &Standing,
    rules: &RatingRules,
    eligibility: &Eligibility,
) -> Option<&'static str> {
    if standing.closed {
        Some("closed")
    } else if standing.marked {
        Some("marked")
    } else if !standing.registered {
        Some("guest")
    } else if standing.games < eligibility.min_games {
        Some("few_games")
    } else if standing.idle_days > eligibility.active_days {
        Some("inactive")
    } else if rules.rd_after(standing.rating, standing.idle_days) > eligibility.max_rd {
        Some("provisional")
    } else {
        None
    }
}

fn key(rater: &Context, variant: VariantName) -> String {
    // Tagged by the variant: a board is built aside and renamed into place,
    // which on a Redis Cluster needs both names on one slot.
    rater
        .redis
        .key(&format!("leaderboard:{{{}}}", variant.as_str()))
}

/// Every rating row of a variant (or one player's), with what decides
/// eligibility.
async fn standings(
    rater: &Context,
    variant: VariantName,
    player: Option<Uuid>,
) -> Result<Vec<(Uuid, Standing)>, sqlx::Error> {
    let now = rater.clock.now_utc();
    let rows = sqlx::query!(
        r#"SELECT r.player_id, r.rating, r.rd, r.volatility, r.games,
                  r.last_rated_at AS last_rated,
                  EXISTS (SELECT 1 FROM credentials c WHERE c.player_id = r.player_id) AS "registered!",
                  p.closed_at IS NOT NULL AS "closed!",
                  EXISTS (SELECT 1 FROM sanctions s
                          WHERE s.player_id = r.player_id AND s.kind IN ('booster', 'engine')
                            AND s.lifted_at IS NULL) AS "marked!"
           FROM ratings r JOIN players p ON p.id = r.player_id
           WHERE r.variant = $1 AND ($2::uuid IS NULL OR r.player_id = $2)"#,
        variant.as_str(),
        player,
    )
    .fetch_all(&rater.postgres)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let standing = Standing {
                registered: row.registered,
                closed: row.closed,
                marked: row.marked,
                rating: Rating {
                    rating: row.rating,
                    rd: row.rd,
                    volatility: row.volatility,
                },
                games: row.games.max(0) as u32,
                idle_days: row
                    .last_rated
                    .map_or(f64::INFINITY, |last| crate::glicko::days_between(last, now)),
            };
            (row.player_id, standing)
        })
        .collect())
}

/// Puts a player on the board or takes them off, by their standing now.
pub async fn refresh_player(
    rater: &Context,
    player: Uuid,
    variant: VariantName,
) -> Result<(), BoardError> {
    let settings = &rater.settings;
    let mut connection = rater.redis.connection();
    for (id, standing) in standings(rater, variant, Some(player)).await? {
        if unranked_reason(&standing, &settings.rules, &settings.eligibility).is_none() {
            let _: () = connection
                .zadd(key(rater, variant), id.to_string(), standing.rating.rating)
                .await?;
        } else {
            let _: () = connection.zrem(key(rater, variant), id.to_string()).await?;
        }
    }
    Ok(())
}

/// Rebuilds every board from Postgres (built aside, then swapped in).
pub async fn rebuild(rater: &Context) -> Result<usize, BoardError> {
    let settings = &rater.settings;
    let mut connection = rater.redis.connection();
    let mut ranked = 0;
    for variant in VariantName::ALL {
        let fresh = format!("{}:rebuild", key(rater, variant));
        let _: () = connection.del(&fresh).await?;
        let mut pipe = redis::pipe();
        let mut any = false;
        for (id, standing) in standings(rater, variant, None).await? {
            if unranked_reason(&standing, &settings.rules, &settings.eligibility).is_none() {
                pipe.zadd(&fresh, id.to_string(), standing.rating.rating)
                    .ignore();
                any = true;
                ranked += 1;
            }
        }
        if any {
            pipe.rename(&fresh, key(rater, variant)).ignore();
        } else {
            pipe.del(key(rater, variant)).ignore();
        }
        let _: () = pipe.query_async(&mut connection).await?;
    }
    Ok(ranked)
}

/// A page of a board.
pub async fn page(
    rater: &Context,
    variant: VariantName,
    offset: u64,
    limit: u64,
) -> Result<Vec<LeaderboardEntry>, BoardError> {
    let ranked: Vec<(String, f64)> = rater
        .redis
        .connection()
        .zrevrange_withscores(
            key(rater, variant),
            isize::try_from(offset).unwrap_or(isize::MAX),
            isize::try_from(offset.saturating_add(limit)).unwrap_or(isize::MAX) - 1,
        )
        .await?;
    let ids: Vec<Uuid> = ranked
        .iter()
        .filter_map(|(id, _)| Uuid::parse_str(id).ok())
        .collect();
    let rows = sqlx::query!(
        "SELECT p.id, p.display_name, r.rd, r.games FROM players p
         JOIN ratings r ON r.player_id = p.id AND r.variant = $2
         WHERE p.id = ANY($1)",
        &ids,
        variant.as_str(),
    )
    .fetch_all(&rater.reads)
    .await?;
    Ok(ranked
        .iter()
        .enumerate()
        .filter_map(|(index, (id, rating))| {
            let id = Uuid::parse_str(id).ok()?;
            let row = rows.iter().find(|row| row.id == id)?;
            Some(LeaderboardEntry {
                rank: offset + index as u64 + 1,
                player: id,
                name: row.display_name.clone(),
                rating: *rating,
                rd: row.rd,
                games: row.games.max(0) as u32,
            })
        })
        .collect())
}

/// A player's rank, or why they have none.
pub async fn my_rank(
    rater: &Context,
    player: Uuid,
    variant: VariantName,
) -> Result<MyRank, BoardError> {
    let rank: Option<u64> = rater
        .redis
        .connection()
        .zrevrank(key(rater, variant), player.to_string())
        .await?;
    if let Some(rank) = rank {
        return Ok(MyRank {
            rank: Some(rank + 1),
            reason: None,
        });
    }
    let settings = &rater.settings;
    let standing = standings(rater, variant, Some(player))
        .await?
        .into_iter()
        .next();
    let reason = match standing {
        None => "no_rating",
        Some((_, standing)) => {
            unranked_reason(&standing, &settings.rules, &settings.eligibility).unwrap_or("inactive")
        }
    };
    Ok(MyRank {
        rank: None,
        reason: Some(reason.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eligibility_rules() {
        let rules = RatingRules::default();
        let eligibility = Eligibility {
            max_rd: 80.0,
            min_games: 10,
            active_days: 30.0,
        };
        let good = Standing {
            registered: true,
            closed: false,
            marked: false,
            rating: Rating {
                rating: 1700.0,
                rd: 60.0,
                volatility: 0.06,
            },
            games: 12,
            idle_days: 1.0,
        };
        assert_eq!(unranked_reason(&good, &rules, &eligibility), None);
        let check = |standing: Standing| unranked_reason(&standing, &rules, &eligibility);
        assert_eq!(
            check(Standing {
                registered: false,
                ..good
            }),
            Some("guest")
        );
        assert_eq!(check(Standing { games: 9, ..good }), Some("few_games"));
        assert_eq!(
            check(Standing {
                closed: true,
                ..good
            }),
            Some("closed")
        );
        assert_eq!(
            check(Standing {
                marked: true,
                ..good
            }),
            Some("marked")
        );
        assert_eq!(
            check(Standing {
                idle_days: 31.0,
                ..good
            }),
            Some("inactive")
        );
        let shaky = Standing {
            rating: Rating {
                rd: 79.0,
                ..good.rating
            },
            ..good
        };
        assert_eq!(check(shaky), None);
        // The same RD, grown over three weeks away, is too uncertain.
        assert_eq!(
            check(Standing {
                idle_days: 21.0,
                ..shaky
            }),
            Some("provisional")
        );
    }
}
