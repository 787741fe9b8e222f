//! Ratings recomputed from the history when marks change. A mark (booster,
//! engine) voids the rated games it covers; lifting it restores them. The
//! history holds every rated game's lines in the order ratings moved
//! (`seq`), with what the worker rated them from (the time, the seats
//! held, the linked flag); replaying a variant's history from the first
//! line whose voiding changed, through the same [`Ledger`] the worker
//! uses, gives every rating that game touched, and every rating those
//! touched after, as if the voided games had never counted. Replaying a
//! history nothing changed comes back to the stored numbers to the bit
//! ([`Check`]), which the tests hold the worker to.
//!
//! A replay runs in one transaction that holds `ratings` exclusively:
//! workers wait for it (their first write to `ratings` conflicts), so the
//! history it reads is the whole of it, and no game is rated from a
//! rating it is about to change.

use std::collections::{BTreeSet, HashMap};

use mancala_proto::VariantName;
use mancala_proto::game::GameResult;
use sqlx::PgConnection;
use time::OffsetDateTime;
use uuid::Uuid;

use crate::config::BoostingSettings;
use crate::glicko::{Rating, RatingRules};
use crate::ledger::{GameToRate, Ledger, Line, Standing};
use crate::worker::{read_ratings, score_of, store_standings};

/// Where a replay starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From {
    /// At the first line whose voiding no longer matches the marks (among
    /// the lines of one player's games, when given, theirs or not: a seat
    /// held against a guest has no line of its own): what a change of
    /// marks needs.
    FirstChange { player: Option<Uuid> },
    /// At the first line of the variant: a check of the whole history.
    Start,
}

/// Whether a replay writes what it finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Rewrite the lines and ratings that differ.
    Write,
    /// Only count them.
    DryRun,
}

/// What a replay of one variant found (and, unless a dry run, wrote).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Replayed {
    /// History lines replayed.
    pub lines: u32,
    /// Lines whose numbers or voiding differ from what was stored.
    pub lines_changed: u32,
    /// Rating rows whose values differ.
    pub ratings_changed: u32,
    /// The players of those rating rows.
    pub players: BTreeSet<Uuid>,
}

impl Replayed {
    pub fn add(&mut self, other: Replayed) {
        self.lines += other.lines;
        self.lines_changed += other.lines_changed;
        self.ratings_changed += other.ratings_changed;
        self.players.extend(other.players);
    }
}

/// One stored history line and the game it belongs to.
struct StoredLine {
    line: Line,
    rated_at: OffsetDateTime,
    seats: [Option<Uuid>; 2],
    result: Option<GameResult>,
    voided_now: bool,
}

/// Locks the ratings against every worker until the transaction ends.
pub async fn hold_ratings(connection: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query!("LOCK TABLE ratings IN EXCLUSIVE MODE")
        .execute(connection)
        .await?;
    Ok(())
}

/// Replays `variant` from `from`, within the caller's transaction, which
/// must [`hold_ratings`] first.
pub async fn replay(
    connection: &mut PgConnection,
    rules: RatingRules,
    boosting: BoostingSettings,
    variant: VariantName,
    from: From,
    check: Check,
) -> Result<Replayed, sqlx::Error> {
    let Some(start) = first_line(connection, variant, from).await? else {
        return Ok(Replayed::default());
    };
    let stored = lines_from(connection, variant, start).await?;
    let Some(first_time) = stored.first().map(|line| line.rated_at) else {
        return Ok(Replayed::default());
    };
    let players: BTreeSet<Uuid> = stored
        .iter()
        .flat_map(|line| line.seats.into_iter().flatten())
        .collect();
    let mut ledger = Ledger::new(rules, boosting);
    let since = Since {
        linked: first_time - time::Duration::days(i64::from(boosting.linked_days)),
        thin: first_time - time::Duration::days(i64::from(boosting.thin_days)),
    };
    start_ledger(connection, &mut ledger, variant, &players, start, since).await?;

    let mut replayed = Replayed {
        lines: stored.len() as u32,
        ..Replayed::default()
    };
    let mut changed_lines = Vec::new();
    for game in stored.chunk_by(|a, b| a.line.game == b.line.game) {
        let Some(to_rate) = game_of(game, variant) else {
            continue;
        };
        let rated = ledger.rate(&to_rate, game[0].rated_at);
        for old in game {
            let new = rated
                .lines
                .iter()
                .find(|line| line.player == old.line.player)
                .copied()
                .unwrap_or(old.line);
            if differs(&old.line, &new) {
                changed_lines.push(new);
            }
        }
    }
    replayed.lines_changed = changed_lines.len() as u32;

    let keys: BTreeSet<(Uuid, VariantName)> =
        players.iter().map(|player| (*player, variant)).collect();
    let now_stored: HashMap<Uuid, Standing> = read_ratings(connection, &keys)
        .await?
        .into_iter()
        .map(|(player, _, standing)| (player, standing))
        .collect();
    let changed: BTreeSet<(Uuid, VariantName)> = keys
        .iter()
        .filter(|(player, _)| {
            let replayed = ledger.standing(*player, variant);
            now_stored
                .get(player)
                .is_some_and(|stored| *stored != replayed)
        })
        .copied()
        .collect();
    replayed.ratings_changed = changed.len() as u32;
    replayed.players = changed.iter().map(|(player, _)| *player).collect();
    if check == Check::Write {
        if !changed_lines.is_empty() {
            rewrite_lines(connection, &changed_lines).await?;
        }
        if !changed.is_empty() {
            store_standings(connection, &ledger, &changed).await?;
        }
    }
    Ok(replayed)
}

fn differs(old: &Line, new: &Line) -> bool {
    let bits = |rating: &Rating| {
        (
            rating.rating.to_bits(),
            rating.rd.to_bits(),
            rating.volatility.to_bits(),
        )
    };
    // Only the rating is stored of `before`.
    old.before.rating.to_bits() != new.before.rating.to_bits()
        || bits(&old.after) != bits(&new.after)
        || old.voided != new.voided
}

/// The game a run of stored lines belongs to, as the ledger rates it now.
fn game_of(lines: &[StoredLine], variant: VariantName) -> Option<GameToRate> {
    let first = lines.first()?;
    let players = [first.seats[0]?, first.seats[1]?];
    let score = score_of(first.result?)?;
    // A seat with no line was held when the game was rated.
    let held = players.map(|player| !lines.iter().any(|line| line.line.player == player));
    // Each line says whether its player's opponent was thin.
    let mut thin = [false, false];
    for line in lines {
        thin[1 - line.line.seat.index()] = line.line.opponent_thin;
    }
    Some(GameToRate {
        game: first.line.game,
        variant,
        players,
        score,
        held,
        linked: first.line.linked,
        thin,
        voided: first.voided_now,
    })
}

/// The `seq` a replay starts at, or none when nothing needs replaying.
async fn first_line(
    connection: &mut PgConnection,
    variant: VariantName,
    from: From,
) -> Result<Option<i64>, sqlx::Error> {
    match from {
        From::Start => {
            sqlx::query_scalar!(
                "SELECT min(seq) FROM rating_history WHERE variant = $1",
                variant.as_str()
            )
            .fetch_one(connection)
            .await
        }
        From::FirstChange { player } => {
            sqlx::query_scalar!(
                "SELECT min(h.seq)
                 FROM rating_history h JOIN games g ON g.id = h.game_id
                 WHERE h.variant = $1
                   AND ($2::uuid IS NULL OR $2 IN (g.seat0_player, g.seat1_player))
                   AND h.voided <> game_voided(g.seat0_player, g.seat1_player, g.created_at)",
                variant.as_str(),
                player,
            )
            .fetch_one(connection)
            .await
        }
    }
}

/// Every line of `variant` from `start` on, in order, with its game.
async fn lines_from(
    connection: &mut PgConnection,
    variant: VariantName,
    start: i64,
) -> Result<Vec<StoredLine>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT h.game_id, h.player_id, h.result, h.rating_before, h.rating_after,
                  h.rd_after, h.volatility_after, h.rated_at, h.linked, h.voided,
                  h.opponent_thin,
                  g.seat0_player, g.seat1_player, g.result AS "game_result: GameResult",
                  game_voided(g.seat0_player, g.seat1_player, g.created_at) AS "voided_now!"
           FROM rating_history h JOIN games g ON g.id = h.game_id
           WHERE h.variant = $1 AND h.seq >= $2
           ORDER BY h.seq"#,
        variant.as_str(),
        start,
    )
    .fetch_all(connection)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let seats = [row.seat0_player, row.seat1_player];
            let seat = if seats[1] == Some(row.player_id) {
                mancala_proto::game::Side::North
            } else {
                mancala_proto::game::Side::South
            };
            StoredLine {
                line: Line {
                    game: row.game_id,
                    variant,
                    player: row.player_id,
                    seat,
                    result: result_word(&row.result),
                    // Only the rating of `before` is stored; the rest is
                    // not compared.
                    before: Rating {
                        rating: row.rating_before,
                        rd: row.rd_after,
                        volatility: row.volatility_after,
                    },
                    after: Rating {
                        rating: row.rating_after,
                        rd: row.rd_after,
                        volatility: row.volatility_after,
                    },
                    linked: row.linked,
                    opponent_thin: row.opponent_thin,
                    voided: row.voided,
                },
                rated_at: row.rated_at,
                seats,
                result: row.game_result,
                voided_now: row.voided_now,
            }
        })
        .collect())
}

/// Writes replayed lines over the stored ones.
async fn rewrite_lines(connection: &mut PgConnection, lines: &[Line]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE rating_history h
         SET rating_before = k.before, rating_after = k.after, rd_after = k.rd,
             volatility_after = k.volatility, voided = k.voided
         FROM unnest($1::uuid[], $2::uuid[], $3::float8[], $4::float8[], $5::float8[],
                     $6::float8[], $7::bool[])
              AS k(game, player, before, after, rd, volatility, voided)
         WHERE h.game_id = k.game AND h.player_id = k.player",
        &lines.iter().map(|l| l.game).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.player).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.before.rating).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.rating).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.rd).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.after.volatility).collect::<Vec<_>>(),
        &lines.iter().map(|l| l.voided).collect::<Vec<_>>(),
    )
    .execute(connection)
    .await?;
    Ok(())
}

fn result_word(stored: &str) -> &'static str {
    match stored {
        "win" => "win",
        "loss" => "loss",
        _ => "draw",
    }
}

/// Since when the bounded gains before a replay's first game can still
/// weigh on it.
struct Since {
    linked: OffsetDateTime,
    thin: OffsetDateTime,
}

/// Where each of `players` stood before line `start`: their last counted
/// line before it (a newcomer's defaults when none), how many counted
/// lines they had, and the gains from linked opponents and the moves
/// against thin ones that can still weigh on the first game replayed.
async fn start_ledger(
    connection: &mut PgConnection,
    ledger: &mut Ledger,
    variant: VariantName,
    players: &BTreeSet<Uuid>,
    start: i64,
    since: Since,
) -> Result<(), sqlx::Error> {
    let players: Vec<Uuid> = players.iter().copied().collect();
    let rows = sqlx::query!(
        r#"SELECT DISTINCT ON (player_id) player_id, rating_after, rd_after, volatility_after,
                  rated_at,
                  count(*) OVER (PARTITION BY player_id) AS "games!"
           FROM rating_history
           WHERE variant = $1 AND player_id = ANY($2) AND seq < $3 AND NOT voided
           ORDER BY player_id, seq DESC"#,
        variant.as_str(),
        &players,
        start,
    )
    .fetch_all(&mut *connection)
    .await?;
    for row in rows {
        let standing = Standing {
            rating: Rating {
                rating: row.rating_after,
                rd: row.rd_after,
                volatility: row.volatility_after,
            },
            games: row.games as i32,
            last_rated: Some(row.rated_at),
        };
        ledger.start_from(row.player_id, variant, standing);
    }
    let gains = sqlx::query!(
        r#"SELECT player_id, rated_at, GREATEST(rating_after - rating_before, 0) AS "gained!"
           FROM rating_history
           WHERE variant = $1 AND player_id = ANY($2) AND seq < $3 AND linked AND NOT voided
             AND rated_at > $4
           ORDER BY seq"#,
        variant.as_str(),
        &players,
        start,
        since.linked,
    )
    .fetch_all(&mut *connection)
    .await?;
    for row in gains {
        ledger.gained_before(row.player_id, variant, row.rated_at, row.gained);
    }
    let moves = sqlx::query!(
        r#"SELECT player_id, rated_at, rating_after - rating_before AS "moved!"
           FROM rating_history
           WHERE variant = $1 AND player_id = ANY($2) AND seq < $3 AND opponent_thin
             AND NOT voided AND rated_at > $4
           ORDER BY seq"#,
        variant.as_str(),
        &players,
        start,
        since.thin,
    )
    .fetch_all(connection)
    .await?;
    for row in moves {
        ledger.moved_by_thin_before(row.player_id, variant, row.rated_at, row.moved);
    }
    Ok(())
}
