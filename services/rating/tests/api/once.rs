//! Every rated game changes ratings exactly once.

use mancala_rating::worker::Outcome;
use sqlx::Connection;

use crate::helpers::World;

#[actix_web::test]
async fn two_workers_racing_for_one_game_rate_it_once() {
    let world = World::new().await;
    let (south, north) = (
        world.player("south", false).await,
        world.player("north", false).await,
    );
    let game = world.rated_game(south, north, "p0").await;
    let (first, second) = (world.rater().await, world.rater().await);
    let (a, b) = tokio::join!(first.apply_next(), second.apply_next());
    let outcomes = [a.unwrap(), b.unwrap()];
    let applied = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Applied(_)))
        .count();
    assert_eq!(applied, 1, "{outcomes:?}");
    // Delivered again (a repeated notice): nothing left to apply.
    assert_eq!(first.apply_next().await.unwrap(), Outcome::Idle);
    let (rating, rd, games) = world.rating(south).await.unwrap();
    assert_eq!(games, 1);
    assert!(rating > 1500.0 && rd < 500.0);
    let history: i64 = sqlx::query_scalar("SELECT count(*) FROM rating_history WHERE game_id = $1")
        .bind(game)
        .fetch_one(&world.stores.postgres)
        .await
        .unwrap();
    assert_eq!(history, 2);
    world.cleanup().await;
}

#[actix_web::test]
async fn a_worker_that_dies_mid_transaction_leaves_the_game_for_the_next() {
    let world = World::new().await;
    let (south, north) = (
        world.player("south", false).await,
        world.player("north", false).await,
    );
    let game = world.rated_game(south, north, "draw").await;
    // A worker claims the row, starts writing, and its connection dies.
    let url = mancala_platform::testing::database_url(&world.stores.database);
    let mut doomed =
        sqlx::PgConnection::connect(mancala_platform::ExposeSecret::expose_secret(&url))
            .await
            .unwrap();
    sqlx::query("BEGIN").execute(&mut doomed).await.unwrap();
    let claimed: uuid::Uuid = sqlx::query_scalar(
        "SELECT game_id FROM rating_outbox WHERE processed_at IS NULL FOR UPDATE SKIP LOCKED",
    )
    .fetch_one(&mut doomed)
    .await
    .unwrap();
    assert_eq!(claimed, game);
    sqlx::query("UPDATE ratings SET games = games + 100")
        .execute(&mut doomed)
        .await
        .unwrap();
    // Meanwhile another worker finds the row taken.
    let rater = world.rater().await;
    assert_eq!(rater.apply_next().await.unwrap(), Outcome::Idle);
    drop(doomed); // the connection closes; Postgres rolls back
    let mut applied = None;
    for _ in 0..50 {
        match rater.apply_next().await.unwrap() {
            Outcome::Applied(done) => {
                applied = Some(done);
                break;
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
    assert_eq!(applied.unwrap().game, game);
    assert_eq!(rater.apply_next().await.unwrap(), Outcome::Idle);
    assert_eq!(world.rating(north).await.unwrap().2, 1);
    world.cleanup().await;
}

#[actix_web::test]
async fn two_workers_rating_a_newcomers_first_games_lose_no_update() {
    let world = World::new().await;
    let (south, north) = (
        world.player("south", false).await,
        world.player("north", false).await,
    );
    world.rated_game(south, north, "p0").await;
    world.rated_game(south, north, "p1").await;
    let (first, second) = (world.rater().await, world.rater().await);
    let (a, b) = tokio::join!(first.apply_next(), second.apply_next());
    assert!(matches!(a.unwrap(), Outcome::Applied(_)));
    assert!(matches!(b.unwrap(), Outcome::Applied(_)));
    assert_eq!(world.rating(south).await.unwrap().2, 2);
    assert_eq!(world.rating(north).await.unwrap().2, 2);
    world.cleanup().await;
}

/// Every player's (rating, rd, games) and their history rows in order.
async fn ratings_and_history(world: &World, players: &[uuid::Uuid]) -> Vec<String> {
    let mut seen = Vec::new();
    for player in players {
        let (rating, rd, games) = world.rating(*player).await.unwrap();
        seen.push(format!("{rating:.6} {rd:.6} {games}"));
        let history: Vec<(String, f64, f64)> = sqlx::query_as(
            "SELECT result, rating_before, rating_after FROM rating_history
             WHERE player_id = $1 ORDER BY rating_before, rating_after",
        )
        .bind(player)
        .fetch_all(&world.stores.postgres)
        .await
        .unwrap();
        for (result, before, after) in history {
            seen.push(format!("{result} {before:.6} -> {after:.6}"));
        }
    }
    seen
}

#[actix_web::test]
async fn a_batch_rates_each_game_from_where_the_one_before_left_off() {
    // The same five games between three players, rated one transaction per
    // game in one world and all in one batch in the other, end the same.
    let results = [
        (0, 1, "p0"),
        (1, 2, "draw"),
        (0, 2, "p1"),
        (1, 0, "p0"),
        (2, 0, "p0"),
    ];
    let mut outcomes = Vec::new();
    for batched in [false, true] {
        let world = World::new().await;
        let mut players = Vec::new();
        for name in ["ann", "bob", "cid"] {
            players.push(world.player(name, false).await);
        }
        let mut games = Vec::new();
        for (south, north, result) in results {
            games.push(
                world
                    .rated_game(players[south], players[north], result)
                    .await,
            );
        }
        let rater = world.rater().await;
        let applied = if batched {
            let batch = rater.apply_pending(64).await.unwrap();
            assert_eq!(batch.len(), games.len());
            batch
        } else {
            let mut one_by_one = Vec::new();
            for _ in &games {
                one_by_one.push(rater.apply_next().await.unwrap());
            }
            one_by_one
        };
        // In the order the games ended.
        let order: Vec<_> = applied
            .iter()
            .map(|outcome| match outcome {
                Outcome::Applied(done) => done.game,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(order, games);
        assert_eq!(rater.apply_next().await.unwrap(), Outcome::Idle);
        let (_, _, games_played) = world.rating(players[0]).await.unwrap();
        assert_eq!(games_played, 4);
        outcomes.push(ratings_and_history(&world, &players).await);
        world.cleanup().await;
    }
    assert_eq!(outcomes[0], outcomes[1]);
}
