//! Ratings as matchmaking reads them: the rating service's rows, or the
//! defaults for a player who has none yet.

use sqlx::PgPool;
use uuid::Uuid;

/// A rating and its deviation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Rating {
    pub rating: f64,
    pub rd: f64,
}

/// A new player's rating (Glicko-2 defaults, as the rating service uses).
pub(crate) const DEFAULT: Rating = Rating {
    rating: 1500.0,
    rd: 500.0,
};

/// `player`'s rating in `variant`.
pub(crate) async fn rating(
    pool: &PgPool,
    player: Uuid,
    variant: &str,
) -> Result<Rating, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT rating, rd FROM ratings WHERE player_id = $1 AND variant = $2",
        player,
        variant,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map_or(DEFAULT, |row| Rating {
        rating: row.rating,
        rd: row.rd,
    }))
}

/// A player's display name.
pub(crate) async fn name(pool: &PgPool, player: Uuid) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT display_name FROM players WHERE id = $1", player)
        .fetch_optional(pool)
        .await
}
