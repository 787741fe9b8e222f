//! Ratings replayed from the history: a replay of what the worker applied
//! comes to the stored numbers to the bit, and a mark makes every rating
//! what it would have been had the marked account's games never counted.

use mancala_rating::context::Context;
use uuid::Uuid;

use crate::helpers::World;

/// The players of a small club: index 0 is the booster, 1 the account it
/// feeds (from the same network, so their games are linked), 7 a guest.
const PLAYERS: usize = 8;

async fn add_players(world: &World, ids: &[Uuid]) {
    for (index, id) in ids.iter().enumerate() {
        let network = if index <= 1 {
            Some("10.0.0.0/24")
        } else {
            None
        };
        sqlx::query("INSERT INTO players (id, display_name, signup_network) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(format!("P{index}"))
            .bind(network)
            .execute(&world.stores.postgres)
            .await
            .unwrap();
        if let Some(network) = network {
            sqlx::query(
                "INSERT INTO player_networks (player_id, network, first_seen, last_seen)
                 VALUES ($1, $2, now(), now() + interval '60 days')",
            )
            .bind(id)
            .bind(network)
            .execute(&world.stores.postgres)
            .await
            .unwrap();
        }
        if index != 7 {
            sqlx::query(
                "INSERT INTO credentials (player_id, username, password_hash) VALUES ($1, $2, 'x')",
            )
            .bind(id)
            .bind(format!("club{index}"))
            .execute(&world.stores.postgres)
            .await
            .unwrap();
        }
    }
}

/// A deterministic season: day by day, a few rounds of games, each pair
/// and result drawn from a fixed sequence. The booster (0) loses most of
/// its games to 1.
fn season() -> Vec<Vec<(usize, usize, &'static str)>> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n) as usize
    };
    (0..12)
        .map(|_| {
            (0..14)
                .map(|_| {
                    if next(4) == 0 {
                        let south_is_booster = next(2) == 0;
                        let (south, north) = if south_is_booster { (0, 1) } else { (1, 0) };
                        let result = if south_is_booster { "p1" } else { "p0" };
                        return (south, north, result);
                    }
                    let south = next(PLAYERS as u64);
                    let mut north = next(PLAYERS as u64);
                    if north == south {
                        north = (south + 1) % PLAYERS;
                    }
                    (south, north, ["p0", "p1", "draw"][next(3)])
                })
                .collect()
        })
        .collect()
}

/// Plays the season in `world`, leaving out the games `skip` says; each
/// day's games are rated at the day's end.
async fn play(world: &World, rater: &Context, ids: &[Uuid], skip: impl Fn(usize, usize) -> bool) {
    for day in season() {
        for (south, north, result) in day {
            if !skip(south, north) {
                world.rated_game(ids[south], ids[north], result).await;
            }
        }
        world.clock.advance(3_600_000);
        rater.drain().await;
        world.clock.advance(23 * 3_600_000);
    }
}

/// A rating row to the bit: player, rating, RD and volatility as bits,
/// games, last rated.
type Row = (Uuid, u64, u64, u64, i32, Option<String>);

/// Every rating row of the club, to the bit.
async fn ratings(world: &World, ids: &[Uuid]) -> Vec<Row> {
    let mut rows: Vec<(Uuid, f64, f64, f64, i32, Option<String>)> = sqlx::query_as(
        "SELECT player_id, rating, rd, volatility, games, rfc3339(last_rated_at)
         FROM ratings WHERE player_id = ANY($1) AND variant = 'kalah' ORDER BY player_id",
    )
    .bind(ids)
    .fetch_all(&world.stores.postgres)
    .await
    .unwrap();
    rows.sort_by_key(|row| row.0);
    rows.into_iter()
        .map(|(id, rating, rd, volatility, games, last)| {
            (
                id,
                rating.to_bits(),
                rd.to_bits(),
                volatility.to_bits(),
                games,
                last,
            )
        })
        .collect()
}

async fn mark(world: &World, booster: Uuid, lift: bool) {
    if lift {
        sqlx::query("UPDATE sanctions SET lifted_at = now() WHERE player_id = $1")
            .bind(booster)
            .execute(&world.stores.postgres)
            .await
            .unwrap();
    } else {
        sqlx::query(
            "INSERT INTO sanctions (player_id, kind, reason, created_at, covers_from)
             VALUES ($1, 'booster', 'fed P1', now(), 'epoch')",
        )
        .bind(booster)
        .execute(&world.stores.postgres)
        .await
        .unwrap();
    }
    sqlx::query("INSERT INTO rating_recomputes (player_id, requested_at) VALUES ($1, now())")
        .bind(booster)
        .execute(&world.stores.postgres)
        .await
        .unwrap();
}

#[actix_web::test]
async fn a_replay_of_what_the_worker_applied_comes_to_the_stored_ratings_to_the_bit() {
    let world = World::new().await;
    let ids: Vec<Uuid> = (0..PLAYERS).map(|_| Uuid::now_v7()).collect();
    add_players(&world, &ids).await;
    let rater = world.rater().await;
    play(&world, &rater, &ids, |_, _| false).await;
    let check = rater.check_history().await.unwrap();
    assert!(check.lines > 250, "{check:?}");
    assert_eq!(
        (check.lines_changed, check.ratings_changed),
        (0, 0),
        "{check:?}"
    );
    // The check sees a rating that does not follow from the history.
    sqlx::query("UPDATE ratings SET rating = rating + 0.001 WHERE player_id = $1")
        .bind(ids[3])
        .execute(&world.stores.postgres)
        .await
        .unwrap();
    let check = rater.check_history().await.unwrap();
    assert_eq!(
        (check.lines_changed, check.ratings_changed),
        (0, 1),
        "{check:?}"
    );
    world.cleanup().await;
}

#[actix_web::test]
async fn a_marked_booster_leaves_every_rating_as_if_its_games_had_never_counted() {
    let marked = World::new().await;
    let mut without = World::new().await;
    without.clock = marked.clock.clone();
    let ids: Vec<Uuid> = (0..PLAYERS).map(|_| Uuid::now_v7()).collect();
    add_players(&marked, &ids).await;
    add_players(&without, &ids).await;
    let (rater, other) = (marked.rater().await, without.rater().await);
    // One season in each world at the same times: in one the booster's
    // games are played, in the other they never were.
    for day in season() {
        for (south, north, result) in day {
            marked.rated_game(ids[south], ids[north], result).await;
            if south != 0 && north != 0 {
                without.rated_game(ids[south], ids[north], result).await;
            }
        }
        marked.clock.advance(3_600_000);
        rater.drain().await;
        other.drain().await;
        marked.clock.advance(23 * 3_600_000);
    }
    let farmed = ratings(&marked, &ids).await;
    let honest = ratings(&without, &ids).await;
    assert_ne!(
        farmed[1..],
        honest[1..],
        "the booster's games moved ratings"
    );

    mark(&marked, ids[0], false).await;
    let done = rater.recompute_next().await.unwrap().unwrap();
    assert!(done.replayed.ratings_changed >= 6, "{done:?}");
    let after = ratings(&marked, &ids).await;
    let others = |rows: &[Row]| {
        rows.iter()
            .filter(|row| row.0 != ids[0])
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        others(&after),
        others(&honest),
        "everyone as if the games never counted"
    );
    let check = rater.check_history().await.unwrap();
    assert_eq!((check.lines_changed, check.ratings_changed), (0, 0));
    let voided: i64 = sqlx::query_scalar("SELECT count(*) FROM rating_history WHERE voided")
        .fetch_one(&marked.stores.postgres)
        .await
        .unwrap();
    assert!(voided > 20, "{voided} lines voided");

    // Lifted: back to the numbers before the mark, to the bit.
    mark(&marked, ids[0], true).await;
    rater.recompute_next().await.unwrap().unwrap();
    assert_eq!(ratings(&marked, &ids).await, farmed);
    marked.cleanup().await;
    without.cleanup().await;
}
