//! Games against the AI, on one device, and by invitation.

use std::time::Duration;

use serde_json::json;

use crate::helpers::TestApp;
use crate::lobby_client::Socket;

#[actix_web::test]
async fn the_ai_on_either_side() {
    let app = TestApp::spawn().await;
    let me = app.guest().await;
    // The seed's "start second against the intermediate AI".
    let (status, game) = app
        .post(
            "/v1/ai-games",
            json!({"variant": {"variant": "kalah"}, "level": "intermediate", "side": "second"}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    assert_eq!(status, 201, "{game}");
    assert_eq!(game["seat"], 1);
    let mut play = Socket::open(&app.games, game["ws_path"].as_str().unwrap()).await;
    play.send(json!({"t": "auth", "d": {"token": me.access_token}}))
        .await;
    let moved = play.find("moved", Duration::from_secs(10)).await.unwrap();
    assert_eq!(moved["d"]["by"], 0, "the AI opens");
    let (_, first) = app
        .post(
            "/v1/ai-games",
            json!({"variant": {"variant": "oware"}, "level": "beginner", "side": "first"}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    assert_eq!(first["seat"], 0);
    let (status, _) = app
        .post(
            "/v1/ai-games",
            json!({"variant": {"variant": "oware"}, "level": "perfect", "side": "first"}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    assert_eq!(status, 400, "no perfect Oware AI");
    let (status, hotseat) = app
        .post(
            "/v1/hotseat-games",
            json!({"variant": {"variant": "mangala"}}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    assert_eq!((status, hotseat["seat"].clone()), (201, json!(0)));
    app.cleanup().await;
}

#[actix_web::test]
async fn invites_accept_expire_and_refuse_misuse() {
    let app = TestApp::spawn().await;
    let (me, friend, third) = (app.guest().await, app.guest().await, app.guest().await);
    let (status, invite) = app
        .post(
            "/v1/invites",
            json!({"variant": {"variant": "kalah"}}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    assert_eq!(status, 201, "{invite}");
    let code = invite["code"].as_str().unwrap().to_owned();
    assert!(invite["url"].as_str().unwrap().ends_with(&code));
    assert!(code.len() >= 22, "128 random bits");
    let (_, shown) = app
        .get(&format!("/v1/invites/{code}"), None)
        .await
        .into_parts();
    assert_eq!(
        (shown["creator"]["id"].clone(), shown["status"].clone()),
        (json!(me.player.id), json!("open"))
    );

    let accept = |token: String| {
        let path = format!("/v1/invites/{code}/accept");
        let app = &app;
        async move { app.post(&path, json!({}), Some(&token)).await.into_parts() }
    };
    let (status, error) = accept(me.access_token.clone()).await;
    assert_eq!((status, error["code"].clone()), (409, json!("not_allowed")));
    let (status, game) = accept(friend.access_token.clone()).await;
    assert_eq!((status, game["seat"].clone()), (201, json!(1)));
    let (status, error) = accept(third.access_token.clone()).await;
    assert_eq!((status, error["code"].clone()), (409, json!("invite_used")));
    let (_, record) = app
        .get_at(
            &app.games,
            &format!("/v1/games/{}", game["game_id"].as_str().unwrap()),
        )
        .await
        .into_parts();
    assert_eq!(
        record["seats"][0]["player"],
        json!(me.player.id),
        "the creator moves first"
    );
    assert!(record["room"].is_string());

    // Nobody takes the next one for a day.
    let (_, late) = app
        .post(
            "/v1/invites",
            json!({"variant": {"variant": "oware"}}),
            Some(&me.access_token),
        )
        .await
        .into_parts();
    app.clock.advance(24 * 3600 * 1000);
    let path = format!("/v1/invites/{}/accept", late["code"].as_str().unwrap());
    let fresh = app
        .signer(crate::helpers::ISSUER, crate::helpers::AUDIENCE)
        .issue(&friend.player.id.to_string(), app.clock.now_secs())
        .unwrap();
    let (status, error) = app.post(&path, json!({}), Some(&fresh)).await.into_parts();
    assert_eq!(
        (status, error["code"].clone()),
        (410, json!("invite_expired"))
    );
    let (status, _) = app.get("/v1/invites/nonsense", None).await.into_parts();
    assert_eq!(status, 404);
    app.cleanup().await;
}
