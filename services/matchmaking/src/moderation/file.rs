//! An account's file: everything a moderator weighs before acting, read
//! in one place (the account, what stands on it, the reports about it,
//! its fair-play record, the accounts that share its networks and those it
//! plays most, its ratings with their history, its recent games), and the
//! same games and ratings a player downloads as their own data.

use mancala_proto::VariantName;
use mancala_proto::moderation::{
    AccountFile, AccountGame, AccountRating, DataGame, FrequentOpponent, LinkedAccount, PlayerRef,
    RecordedOffence, Role,
};
use mancala_proto::rating::{MarkKind, RatingPoint};
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

use super::store;

/// How many of the account's games the file shows.
const RECENT_GAMES: i64 = 30;

/// The account's file, or `None` when there is no such player.
pub(crate) async fn account_file(
    pool: &PgPool,
    player: Uuid,
    now: OffsetDateTime,
) -> Result<Option<AccountFile>, sqlx::Error> {
    let Some(account) = sqlx::query!(
        r#"SELECT p.id, p.display_name, c.username AS "username?", p.role,
                  rfc3339(p.created_at) AS "created_at!", rfc3339(p.last_seen_at) AS "last_seen_at!",
                  rfc3339(p.closed_at) AS closed_at, p.signup_network
           FROM players p LEFT JOIN credentials c ON c.player_id = p.id
           WHERE p.id = $1"#,
        player,
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(AccountFile {
        player: PlayerRef {
            id: account.id,
            name: account.display_name,
        },
        username: account.username,
        role: Role::parse(&account.role).unwrap_or_default(),
        created_at: account.created_at,
        last_seen_at: account.last_seen_at,
        closed_at: account.closed_at,
        signup_network: account.signup_network,
        sanctions: store::sanctions(pool, player, now).await?,
        notes: store::notes(pool, player).await?,
        reports: store::reports(pool, Some(player), false, 50, now)
            .await?
            .into_iter()
            .map(|filed| filed.report)
            .collect(),
        offences: offences(pool, player, 100).await?,
        linked: linked(pool, player).await?,
        opponents: opponents(pool, player).await?,
        ratings: ratings(pool, player).await?,
        games: games(pool, player, RECENT_GAMES).await?,
    }))
}

/// The player's recorded offences, newest first, at most `limit`.
pub(crate) async fn offences(
    pool: &PgPool,
    player: Uuid,
    limit: i64,
) -> Result<Vec<RecordedOffence>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT game_id, kind, rfc3339(at) AS "at!", forgiven_at IS NOT NULL AS "forgiven!"
           FROM fair_play_offences WHERE player_id = $1
           ORDER BY at DESC LIMIT $2"#,
        player,
        limit,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| RecordedOffence {
            game_id: row.game_id,
            kind: row.kind,
            at: row.at,
            forgiven: row.forgiven,
        })
        .collect())
}

/// Accounts seen on a network the player used, with how often the two
/// played each other.
async fn linked(pool: &PgPool, player: Uuid) -> Result<Vec<LinkedAccount>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT o.player_id, p.display_name, o.network, rfc3339(o.last_seen) AS "last_seen!",
                  (SELECT count(*) FROM games g
                   WHERE (g.seat0_player = $1 AND g.seat1_player = o.player_id)
                      OR (g.seat1_player = $1 AND g.seat0_player = o.player_id)) AS "together!"
           FROM player_networks mine
           JOIN player_networks o ON o.network = mine.network AND o.player_id <> mine.player_id
           JOIN players p ON p.id = o.player_id
           WHERE mine.player_id = $1
           ORDER BY o.last_seen DESC
           LIMIT 50"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| LinkedAccount {
            player: PlayerRef {
                id: row.player_id,
                name: row.display_name,
            },
            network: row.network,
            last_seen: row.last_seen,
            games_together: row.together as u32,
        })
        .collect())
}

/// The people the player played most, and how their rated games went.
async fn opponents(pool: &PgPool, player: Uuid) -> Result<Vec<FrequentOpponent>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT g.opponent AS "opponent!", p.display_name, count(*) AS "games!",
                  count(*) FILTER (WHERE g.rated AND g.status = 'over') AS "rated!",
                  count(*) FILTER (WHERE g.rated AND g.result = g.mine) AS "wins!",
                  count(*) FILTER (WHERE g.rated AND g.result = 'draw') AS "draws!",
                  count(*) FILTER (WHERE g.rated AND g.result = g.theirs) AS "losses!"
           FROM (SELECT CASE WHEN seat0_player = $1 THEN seat1_player ELSE seat0_player END
                            AS opponent,
                        rated, status, result,
                        CASE WHEN seat0_player = $1 THEN 'p0' ELSE 'p1' END AS mine,
                        CASE WHEN seat0_player = $1 THEN 'p1' ELSE 'p0' END AS theirs
                 FROM games
                 WHERE (seat0_player = $1 OR seat1_player = $1)
                   AND seat0_player <> seat1_player) g
           JOIN players p ON p.id = g.opponent
           GROUP BY g.opponent, p.display_name
           ORDER BY count(*) DESC, g.opponent
           LIMIT 10"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| FrequentOpponent {
            player: PlayerRef {
                id: row.opponent,
                name: row.display_name,
            },
            games: row.games as u32,
            rated: row.rated as u32,
            wins: row.wins as u32,
            draws: row.draws as u32,
            losses: row.losses as u32,
        })
        .collect())
}

/// Each variant's rating and its history, voided games saying why.
pub(crate) async fn ratings(
    pool: &PgPool,
    player: Uuid,
) -> Result<Vec<AccountRating>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT variant, rating, rd, games FROM ratings WHERE player_id = $1 ORDER BY variant",
        player,
    )
    .fetch_all(pool)
    .await?;
    let points = sqlx::query!(
        r#"SELECT h.variant, h.game_id, h.rating_after, rfc3339(h.rated_at) AS "at!",
                  CASE WHEN h.voided THEN
                      (SELECT s.kind FROM games g
                       JOIN sanctions s ON s.player_id IN (g.seat0_player, g.seat1_player)
                        AND s.kind IN ('booster', 'engine') AND s.lifted_at IS NULL
                        AND s.covers_from <= g.created_at
                       WHERE g.id = h.game_id
                       ORDER BY s.id LIMIT 1)
                  END AS voided_by
           FROM rating_history h WHERE h.player_id = $1
           ORDER BY h.seq"#,
        player,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let variant = VariantName::parse(&row.variant)?;
            let history = points
                .iter()
                .filter(|point| point.variant == row.variant)
                .map(|point| RatingPoint {
                    game_id: point.game_id,
                    at: point.at.clone(),
                    rating: point.rating_after,
                    voided_by: point.voided_by.as_deref().and_then(MarkKind::parse),
                })
                .collect();
            Some(AccountRating {
                variant,
                rating: row.rating,
                rd: row.rd,
                games: row.games.max(0) as u32,
                history,
            })
        })
        .collect())
}

/// The player's games, newest first (`limit` of them).
pub(crate) async fn games(
    pool: &PgPool,
    player: Uuid,
    limit: i64,
) -> Result<Vec<AccountGame>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT g.id, g.variant->>'variant' AS "variant!", g.seat0_player, g.seat1_player,
                  g.seat0_ai, g.seat1_ai, a.display_name AS "a_name?", b.display_name AS "b_name?",
                  g.rated, g.status, g.result, g.reason,
                  game_plies(g.id, g.status, g.plies) AS "plies!", rfc3339(g.created_at) AS "at!",
                  EXISTS (SELECT 1 FROM game_analyses x WHERE x.game_id = g.id) AS "analysed!"
           FROM games g
           LEFT JOIN players a ON a.id = g.seat0_player
           LEFT JOIN players b ON b.id = g.seat1_player
           WHERE g.seat0_player = $1 OR g.seat1_player = $1
           ORDER BY g.id DESC
           LIMIT $2"#,
        player,
        limit,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let south = row.seat0_player == Some(player);
            let (opponent, name, ai) = if south {
                (row.seat1_player, row.b_name, row.seat1_ai)
            } else {
                (row.seat0_player, row.a_name, row.seat0_ai)
            };
            let outcome = row.result.as_deref().map(|result| {
                match (result, south) {
                    ("draw", _) => "draw",
                    ("aborted", _) => "aborted",
                    ("p0", true) | ("p1", false) => "win",
                    _ => "loss",
                }
                .to_owned()
            });
            Some(AccountGame {
                id: row.id,
                variant: VariantName::parse(&row.variant)?,
                // A game on one device has the player in both seats.
                opponent: store::player_ref(opponent.filter(|id| *id != player), name),
                ai,
                rated: row.rated,
                status: row.status,
                outcome,
                reason: row.reason,
                plies: row.plies.max(0) as u32,
                at: row.at,
                analysed: row.analysed,
            })
        })
        .collect())
}

/// Every game of the player, oldest first, with its moves.
pub(crate) async fn all_games(pool: &PgPool, player: Uuid) -> Result<Vec<DataGame>, sqlx::Error> {
    let mut games = games(pool, player, i64::MAX).await?;
    games.reverse();
    let ids: Vec<Uuid> = games.iter().map(|game| game.id).collect();
    let moves = sqlx::query!(
        "SELECT game_id, pit FROM game_moves WHERE game_id = ANY($1) AND pit > 0 ORDER BY game_id, ply",
        &ids,
    )
    .fetch_all(pool)
    .await?;
    let mut by_game: std::collections::HashMap<Uuid, Vec<u8>> = std::collections::HashMap::new();
    for row in moves {
        by_game.entry(row.game_id).or_default().push(row.pit as u8);
    }
    Ok(games
        .into_iter()
        .map(|game| {
            let moves = by_game.remove(&game.id).unwrap_or_default();
            DataGame { game, moves }
        })
        .collect())
}
