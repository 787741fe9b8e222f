//! Leaderboards, ranks, eligibility over time, the rebuild, and profiles.

use mancala_rating::leaderboard;
use redis::AsyncCommands;
use uuid::Uuid;

use crate::helpers::{World, get};

/// A settled rating: 12 games, RD 60, rated now.
async fn settled(world: &World, player: Uuid, rating: f64) {
    sqlx::query(
        "INSERT INTO ratings (player_id, variant, rating, rd, volatility, games, last_rated_at)
         VALUES ($1, 'kalah', $2, 60, 0.06, 12, to_timestamp($3))",
    )
    .bind(player)
    .bind(rating)
    .bind(world.clock.now_secs() as f64)
    .execute(&world.stores.postgres)
    .await
    .unwrap();
}

#[actix_web::test]
async fn boards_rank_the_eligible_and_say_why_others_are_not() {
    let world = World::new().await;
    let (ann, bob, cyd) = (
        world.player("ann", true).await,
        world.player("bob", true).await,
        world.player("cyd", true).await,
    );
    let guest = world.player("Guest One", false).await;
    settled(&world, ann, 1700.0).await;
    settled(&world, bob, 1900.0).await;
    settled(&world, cyd, 1600.0).await;
    settled(&world, guest, 2500.0).await;
    let (base, rater) = world.service().await;
    leaderboard::rebuild(&rater).await.unwrap();
    let (status, board) = get(&format!("{base}/v1/leaderboard/kalah"), None).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = board["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bob", "ann", "cyd"], "the guest is not ranked");
    assert_eq!(board["entries"][1]["rank"], 2);
    let me = |player: Uuid| {
        let token = world
            .signer
            .issue(&player.to_string(), world.clock.now_secs())
            .unwrap();
        let url = format!("{base}/v1/leaderboard/kalah/me");
        async move { get(&url, Some(&token)).await.1 }
    };
    assert_eq!(me(ann).await["rank"], 2);
    assert_eq!(me(guest).await["reason"], "guest");
    let newcomer = world.player("dee", true).await;
    assert_eq!(me(newcomer).await["reason"], "no_rating");
    let (status, _) = get(&format!("{base}/v1/leaderboard/chess"), None).await;
    assert_eq!(status, 404);

    // The board is rebuilt from Postgres when Redis lost it.
    let _: () = world
        .stores
        .redis
        .connection()
        .del(world.stores.redis.key("leaderboard:{kalah}"))
        .await
        .unwrap();
    assert_eq!(
        get(&format!("{base}/v1/leaderboard/kalah"), None).await.1["entries"],
        serde_json::json!([])
    );
    leaderboard::rebuild(&rater).await.unwrap();
    assert_eq!(
        get(&format!("{base}/v1/leaderboard/kalah"), None).await.1["entries"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // A month without games: off the board (inactive), and RD has grown.
    world.clock.advance(31 * 86_400 * 1000);
    leaderboard::rebuild(&rater).await.unwrap();
    assert_eq!(me(ann).await["reason"], "inactive");
    let (_, profile) = get(&format!("{base}/v1/players/{ann}"), None).await;
    let rd = profile["ratings"][0]["rd"].as_f64().unwrap();
    assert!(rd > 60.0, "{rd}");
    assert_eq!(profile["ratings"][0]["provisional"], false);
    world.cleanup().await;
}

#[actix_web::test]
async fn rated_games_reach_profiles_history_and_the_board() {
    let world = World::new().await;
    let (ann, bob) = (
        world.player("ann", true).await,
        world.player("bob", true).await,
    );
    let (base, _rater) = world.service().await;
    let mut last = None;
    for round in 0..12 {
        let result = if round % 3 == 2 { "p1" } else { "p0" };
        last = Some(world.rated_game(ann, bob, result).await);
    }
    // The workers pick them up by polling (no notice in this test).
    let mut games = 0;
    for _ in 0..200 {
        games = world.rating(ann).await.map_or(0, |(_, _, games)| games);
        if games == 12 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(games, 12);
    let (_, profile) = get(&format!("{base}/v1/players/{ann}"), None).await;
    let kalah = &profile["ratings"][0];
    assert_eq!(
        (
            kalah["wins"].clone(),
            kalah["losses"].clone(),
            kalah["draws"].clone()
        ),
        (8.into(), 4.into(), 0.into())
    );
    assert_eq!(kalah["provisional"], kalah["rd"].as_f64().unwrap() >= 110.0);
    let (_, history) = get(&format!("{base}/v1/players/{ann}/ratings/kalah"), None).await;
    let points = history.as_array().unwrap();
    assert_eq!(points.len(), 12);
    assert_eq!(points[11]["game_id"], last.unwrap().to_string());
    world.cleanup().await;
}

#[actix_web::test]
async fn profiles_histories_and_boards_are_read_from_the_read_replica() {
    let mut world = World::new().await;
    // The "replica": the same database through connections that cannot
    // write and are named, so that what reached them can be seen.
    world.vars.push((
        "DATABASE_READ_URL".to_owned(),
        crate::helpers::read_only_url(&world.stores.database),
    ));
    let (ann, bob) = (
        world.player("ann", true).await,
        world.player("bob", true).await,
    );
    settled(&world, ann, 1700.0).await;
    settled(&world, bob, 1900.0).await;
    let (base, rater) = world.service().await;
    world.rated_game(ann, bob, "p0").await;
    for _ in 0..200 {
        if world
            .rating(ann)
            .await
            .is_some_and(|(_, _, games)| games == 13)
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    leaderboard::rebuild(&rater).await.unwrap();
    // Each answer is right, and its last statement ran on the replica's
    // connections (pg_stat_activity keeps each connection's last one).
    let read_there = |expected: &'static str| {
        let postgres = world.stores.postgres.clone();
        async move {
            let seen = crate::helpers::statements_on_reads(&postgres).await;
            assert!(
                seen.iter().any(|query| query.contains(expected)),
                "{expected:?} not read from the replica: {seen:?}"
            );
        }
    };
    let (status, board) = get(&format!("{base}/v1/leaderboard/kalah"), None).await;
    assert_eq!(status, 200);
    assert_eq!(board["entries"][0]["name"], "bob");
    read_there("p.display_name, r.rd, r.games FROM players p").await;
    let (status, profile) = get(&format!("{base}/v1/players/{ann}"), None).await;
    assert_eq!((status, profile["name"].as_str()), (200, Some("ann")));
    read_there("LEFT JOIN rating_history h").await;
    let (status, history) = get(&format!("{base}/v1/players/{ann}/ratings/kalah"), None).await;
    assert_eq!(status, 200);
    assert_eq!(history.as_array().map(Vec::len), Some(1));
    read_there("FROM rating_history WHERE player_id").await;
    world.cleanup().await;
}
