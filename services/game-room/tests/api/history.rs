//! The partitioned game history: where games and moves land, that the live
//! paths read the newest partition, and the migration that moved the
//! existing history.

use mancala_platform::MIGRATOR;
use mancala_platform::testing::TestStores;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use crate::helpers::{World, seat};

/// The partition of this UTC month, as the migration names it.
async fn this_month(pool: &PgPool, table: &str) -> String {
    sqlx::query_scalar(&format!(
        "SELECT '{table}_' || to_char(now() AT TIME ZONE 'UTC', 'YYYY_MM')"
    ))
    .fetch_one(pool)
    .await
    .unwrap()
}

/// Which partition holds the row of `id` in `table`.
async fn partition_of(pool: &PgPool, table: &str, column: &str, id: Uuid) -> Vec<String> {
    sqlx::query_scalar(&format!(
        "SELECT DISTINCT tableoid::regclass::text FROM {table} WHERE {column} = $1"
    ))
    .bind(id)
    .fetch_all(pool)
    .await
    .unwrap()
}

/// The partitions of `table` that a plan names (its scans and their indexes).
fn partitions_in(plan: &str, table: &str) -> std::collections::BTreeSet<String> {
    plan.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter_map(|word| word.strip_prefix(&format!("{table}_")))
        .map(|rest| {
            let month = if rest.starts_with("before") {
                "before"
            } else {
                &rest[..rest.len().min(7)]
            };
            format!("{table}_{month}")
        })
        .collect()
}

async fn plan(pool: &PgPool, query: &str) -> String {
    let lines: Vec<String> = sqlx::query_scalar(&format!("EXPLAIN (ANALYZE, COSTS OFF) {query}"))
        .fetch_all(pool)
        .await
        .unwrap();
    lines.join("\n")
}

#[actix_web::test]
async fn a_new_game_and_its_moves_go_to_this_month_s_partition_and_are_read_from_it_alone() {
    let world = World::new().await;
    let pool = world.stores.postgres.clone();
    let instance = world.instance().await;
    let (alice, alice_token) = world.player("Alice").await;
    let (bob, bob_token) = world.player("Bob").await;
    // A game of Alice's from two months ago, before the first month this
    // database had: it lives in the partition of everything older.
    let old: Uuid = sqlx::query_scalar(
        "INSERT INTO games (id, variant, seat0_player, seat1_player, rated, created_at)
         VALUES (uuid_v7_floor(utc_month(now(), -2)) , '{\"variant\":\"kalah\"}', $1, $2, false,
                 utc_month(now(), -2))
         RETURNING id",
    )
    .bind(alice)
    .bind(bob)
    .fetch_one(&pool)
    .await
    .unwrap();

    let game = instance
        .create(json!({"variant": "kalah"}), [seat(alice), seat(bob)], false)
        .await;
    let (mut south, _) = instance.play(&game, &alice_token).await;
    let (mut north, _) = instance.play(&game, &bob_token).await;
    south.play_move(1, 1).await;
    north.moved().await;
    north.play_move(1, 2).await;
    south.moved().await;

    assert_eq!(
        partition_of(&pool, "games", "id", game.id).await,
        [this_month(&pool, "games").await]
    );
    assert_eq!(
        partition_of(&pool, "game_moves", "game_id", game.id).await,
        [this_month(&pool, "game_moves").await]
    );
    let old_month = "games_before";
    assert_eq!(partition_of(&pool, "games", "id", old).await, [old_month]);

    // Loading a game and its moves reads one partition of each.
    let load = plan(
        &pool,
        &format!(
            "SELECT ply, pit FROM game_moves WHERE game_id = '{}' ORDER BY ply",
            game.id
        ),
    )
    .await;
    assert_eq!(partitions_in(&load, "game_moves").len(), 1, "{load}");
    let row = plan(
        &pool,
        &format!("SELECT * FROM games WHERE id = '{}'", game.id),
    )
    .await;
    assert_eq!(partitions_in(&row, "games").len(), 1, "{row}");

    // A first page of Alice's recent games is read from the newest
    // partitions: the older month's is never reached.
    let (_, page) = instance
        .get(&format!("/v1/players/{alice}/games?limit=1"))
        .await;
    assert_eq!(page["games"][0]["id"], game.id.to_string());
    let recent = plan(
        &pool,
        &format!("SELECT id FROM games WHERE seat0_player = '{alice}' ORDER BY id DESC LIMIT 1"),
    )
    .await;
    let old_scan = recent
        .lines()
        .find(|line| line.contains(old_month))
        .unwrap_or_else(|| panic!("{recent}"))
        .to_owned();
    assert!(old_scan.contains("never executed"), "{recent}");
    // The next page reaches it.
    let next = page["next"].as_str().unwrap();
    let (_, page) = instance
        .get(&format!("/v1/players/{alice}/games?limit=1&before={next}"))
        .await;
    assert_eq!(page["games"][0]["id"], old.to_string());
    world.cleanup().await;
}

#[actix_web::test]
async fn the_migration_moves_existing_games_and_keeps_their_keys() {
    // The database as it was before the history was partitioned (the
    // migrations before that one).
    let before = MIGRATOR
        .migrations
        .iter()
        .position(|migration| migration.description.contains("partitioned history"))
        .expect("the partitioning migration");
    let stores = TestStores::migrated_up_to(before).await.unwrap();
    let pool = stores.postgres.clone();
    let player: Uuid = sqlx::query_scalar(
        "INSERT INTO players (id, display_name, created_at) VALUES ($1, 'Old timer', now())
         RETURNING id",
    )
    .bind(Uuid::now_v7())
    .fetch_one(&pool)
    .await
    .unwrap();
    // A game from 2024 (its id made then), finished and rated, and one of
    // now, live, each with moves.
    let from_2024 = Uuid::new_v7(uuid::Timestamp::from_unix(
        uuid::NoContext,
        1_718_000_000,
        0,
    ));
    let from_now = Uuid::now_v7();
    for (id, status) in [(from_2024, "over"), (from_now, "live")] {
        let over = status == "over";
        sqlx::query(
            "INSERT INTO games (id, variant, seat0_player, seat1_ai, rated, status, result,
                                reason, created_at, ended_at, plies)
             VALUES ($1, '{\"variant\":\"kalah\"}', $2, 'advanced', $3, $4,
                     CASE WHEN $3 THEN 'p0' END, CASE WHEN $3 THEN 'resigned' END, now(),
                     CASE WHEN $3 THEN now() END, 2)",
        )
        .bind(id)
        .bind(player)
        .bind(over)
        .bind(status)
        .execute(&pool)
        .await
        .unwrap();
        for ply in 1..=2 {
            sqlx::query(
                "INSERT INTO game_moves (game_id, ply, seat, pit, played_at)
                 VALUES ($1, $2, $3, 3, now())",
            )
            .bind(id)
            .bind(ply)
            .bind((ply - 1) % 2)
            .execute(&pool)
            .await
            .unwrap();
        }
    }
    sqlx::query("INSERT INTO rating_outbox (game_id, created_at) VALUES ($1, now())")
        .bind(from_2024)
        .execute(&pool)
        .await
        .unwrap();

    MIGRATOR.run(&pool).await.unwrap();

    // Each month from the oldest game's on has its partition.
    assert_eq!(
        partition_of(&pool, "games", "id", from_2024).await,
        ["games_2024_06"]
    );
    assert_eq!(
        partition_of(&pool, "game_moves", "game_id", from_2024).await,
        ["game_moves_2024_06"]
    );
    assert_eq!(
        partition_of(&pool, "games", "id", from_now).await,
        [this_month(&pool, "games").await]
    );
    let moves: i64 = sqlx::query_scalar("SELECT count(*) FROM game_moves")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(moves, 4);
    // The keys still hold: a ply is still unique, the outbox still points
    // at its game, and a game still needs its player.
    let again = sqlx::query(
        "INSERT INTO game_moves (game_id, ply, seat, pit, played_at) VALUES ($1, 1, 0, 4, now())",
    )
    .bind(from_now)
    .execute(&pool)
    .await;
    assert!(again.is_err(), "a second ply 1 was taken");
    let orphan = sqlx::query("INSERT INTO rating_outbox (game_id, created_at) VALUES ($1, now())")
        .bind(Uuid::now_v7())
        .execute(&pool)
        .await;
    assert!(orphan.is_err(), "an outbox row for no game was taken");
    let outbox: i64 =
        sqlx::query_scalar("SELECT count(*) FROM rating_outbox o JOIN games g ON g.id = o.game_id")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(outbox, 1);
    // The months ahead are ready, and making them again makes nothing.
    let made: i32 = sqlx::query_scalar("SELECT ensure_history_partitions(3)")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(made, 0);
    stores.cleanup().await.unwrap();
}
