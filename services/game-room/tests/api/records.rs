//! Records, histories and live lists.

use serde_json::json;

use crate::helpers::World;

/// A game as its creation answered, for opening it.
fn created(id: uuid::Uuid) -> mancala_proto::game::CreatedGame {
    mancala_proto::game::CreatedGame {
        id,
        play_path: format!("/v1/games/{id}/play"),
        watch_path: String::new(),
        rated: false,
        casual_reason: None,
    }
}

#[actix_web::test]
async fn records_histories_and_live_lists() {
    let (world, instance) = World::with_instance().await;
    let (alice, alice_token) = world.player("Alice").await;
    let (bob, _) = world.player("Bob").await;
    let (carol, _) = world.player("Carol").await;
    let mut ids = Vec::new();
    for (variant, opponent, rating) in [
        ("kalah", bob, 1400.0),
        ("oware", carol, 1900.0),
        ("kalah", carol, 1700.0),
    ] {
        let seats = [
            json!({"player": {"id": alice, "rating": rating, "rd": 60.0}}),
            json!({"player": {"id": opponent, "rating": rating, "rd": 60.0}}),
        ];
        // Casual: one player has one rated game at a time.
        ids.push(
            instance
                .create(json!({"variant": variant}), seats, false)
                .await
                .id,
        );
    }
    let (status, missing) = instance
        .get(&format!("/v1/games/{}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!((status, missing["code"].as_str()), (404, Some("not_found")));

    let (_, record) = instance.get(&format!("/v1/games/{}", ids[0])).await;
    assert_eq!(record["seats"][0]["name"], "Alice");
    assert_eq!(record["seats"][1]["rating"], 1400.0);
    assert_eq!(record["status"], "live");

    // History: newest first, two per page, by cursor.
    let (_, page) = instance
        .get(&format!("/v1/players/{alice}/games?limit=2"))
        .await;
    let listed: Vec<&str> = page["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].to_string(), ids[1].to_string()]);
    let next = page["next"].as_str().unwrap();
    let (_, page) = instance
        .get(&format!("/v1/players/{alice}/games?limit=2&before={next}"))
        .await;
    assert_eq!(page["games"][0]["id"], ids[0].to_string());
    assert_eq!(page["next"], serde_json::Value::Null);
    let (_, page) = instance
        .get(&format!("/v1/players/{bob}/games?variant=oware"))
        .await;
    assert_eq!(page["games"], json!([]));
    let (status, _) = instance
        .get(&format!("/v1/players/{alice}/games?limit=0"))
        .await;
    assert_eq!(status, 400);
    let (status, _) = instance
        .get(&format!("/v1/players/{alice}/games?sort=up"))
        .await;
    assert_eq!(status, 400);

    // Live games, highest rated first; the featured game per variant:
    // listed while a player has them open.
    let mut tabs = Vec::new();
    for &id in &ids {
        tabs.push(instance.play(&created(id), &alice_token).await.0);
    }
    let (_, live) = instance.get("/v1/games/live").await;
    let order: Vec<&str> = live["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [ids[1].to_string(), ids[2].to_string(), ids[0].to_string()]
    );
    // Nobody has moved yet: nothing is worth featuring.
    let (_, featured) = instance.get("/v1/games/featured").await;
    assert_eq!(featured, json!([]));
    // Both players of each game have moved (as the host records an
    // opening move: a bit a seat).
    sqlx::query("UPDATE games SET moved = 3 WHERE id = ANY($1)")
        .bind(&ids)
        .execute(&world.stores.postgres)
        .await
        .unwrap();
    let (_, featured) = instance.get("/v1/games/featured").await;
    let featured: Vec<&str> = featured
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(featured, [ids[2].to_string(), ids[1].to_string()]);

    // A finished game leaves the live list.
    let mut ws = tabs.swap_remove(1);
    ws.send(json!({"t": "resign"})).await;
    ws.event().await;
    let (_, live) = instance.get("/v1/games/live?variant=oware").await;
    assert_eq!(live["games"], json!([]));
    world.cleanup().await;
}

#[actix_web::test]
async fn records_and_lists_are_read_from_the_read_replica() {
    let world = World::new().await;
    // The "replica": the same database through connections that cannot
    // write and are named, so that what reached them can be seen.
    let reads = format!(
        "{}?application_name=mancala-reads&options=-c%20default_transaction_read_only%3Don",
        mancala_platform::ExposeSecret::expose_secret(&mancala_platform::testing::database_url(
            &world.stores.database
        ))
    );
    let instance = world
        .instance_with(
            &mancala_platform::testing::database_url(&world.stores.database),
            &[("DATABASE_READ_URL", &reads)],
        )
        .await;
    let (alice, alice_token) = world.player("Alice").await;
    let (bob, _) = world.player("Bob").await;
    let seats = [
        json!({"player": {"id": alice, "rating": 1500.0, "rd": 60.0}}),
        json!({"player": {"id": bob, "rating": 1500.0, "rd": 60.0}}),
    ];
    // Made on the primary (a read-only connection would refuse it).
    let game = instance
        .create(json!({"variant": "kalah"}), seats, true)
        .await;
    // Listed while Alice has it open.
    let _tab = instance.play(&game, &alice_token).await;
    // Whether the replica's connections began a statement starting with
    // `start` after `since` (pg_stat_activity keeps each connection's last
    // statement, cut at 1 kB, and when it began).
    let read_there = |start: &'static str, since: f64| {
        let postgres = world.stores.postgres.clone();
        async move {
            let seen: Vec<(String, f64)> = sqlx::query_as(
                "SELECT query, extract(epoch FROM query_start)::float8 FROM pg_stat_activity
                 WHERE application_name = 'mancala-reads' AND datname = current_database()",
            )
            .fetch_all(&postgres)
            .await
            .unwrap();
            assert!(
                seen.iter()
                    .any(|(query, at)| query.trim_start().starts_with(start) && *at >= since),
                "{start:?} not read from the replica since {since}: {seen:?}"
            );
        }
    };
    let now = || async {
        let at: f64 = sqlx::query_scalar("SELECT extract(epoch FROM clock_timestamp())::float8")
            .fetch_one(&world.stores.postgres)
            .await
            .unwrap();
        at
    };
    let since = now().await;
    let (status, record) = instance.get(&format!("/v1/games/{}", game.id)).await;
    assert_eq!(
        (status, record["seats"][0]["name"].as_str()),
        (200, Some("Alice"))
    );
    read_there("SELECT ply, seat, pit", since).await;
    let since = now().await;
    let (status, live) = instance.get("/v1/games/live").await;
    assert_eq!(status, 200);
    assert_eq!(live["games"][0]["id"], game.id.to_string());
    read_there("SELECT g.id, g.variant", since).await;
    let since = now().await;
    let (status, _) = instance.get("/v1/games/featured").await;
    assert_eq!(status, 200);
    read_there("SELECT g.id, g.variant", since).await;
    world.cleanup().await;
}
