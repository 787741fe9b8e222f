//! Records, histories and live lists.

use serde_json::json;

use crate::helpers::World;

#[actix_web::test]
async fn records_histories_and_live_lists() {
    let world = World::new().await;
    let instance = world.instance().await;
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
        ids.push(
            instance
                .create(json!({"variant": variant}), seats, true)
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

    // Live games, highest rated first; the featured game per variant.
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
    let (_, featured) = instance.get("/v1/games/featured").await;
    let featured: Vec<&str> = featured
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(featured, [ids[2].to_string(), ids[1].to_string()]);

    // A finished game leaves the live list.
    let game = mancala_proto::game::CreatedGame {
        id: ids[1],
        play_path: format!("/v1/games/{}/play", ids[1]),
        watch_path: String::new(),
        rated: false,
        casual_reason: None,
    };
    let (mut ws, _) = instance.play(&game, &alice_token).await;
    ws.send(json!({"t": "resign"})).await;
    ws.event().await;
    let (_, live) = instance.get("/v1/games/live?variant=oware").await;
    assert_eq!(live["games"], json!([]));
    world.cleanup().await;
}
