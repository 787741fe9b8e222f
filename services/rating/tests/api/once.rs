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
