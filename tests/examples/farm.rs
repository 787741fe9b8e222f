//! The rating-farming attack, replayed against a running server: guest V
//! invites guest F to a rated Kalah room; in each game V resigns before
//! anyone moves, and F asks for the rematch alone. It prints what the
//! ladder made of it. Against a server that rates only games really played
//! by both players, who agreed to play them, nothing moves.
//!
//! `cargo run -p mancala-tests --example farm -- http://127.0.0.1:8080 40`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mancala_tests::harness::{Guest, Ws, call, guest, request};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

fn main() {
    let mut args = std::env::args().skip(1);
    let base = args
        .next()
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned());
    let games: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(40);
    actix_rt::System::new().block_on(run(base.trim_end_matches('/').to_owned(), games));
}

async fn play_socket(base: &str, game: &str, who: &Guest) -> Ws {
    let mut ws = Ws::open(format!("{base}/v1/games/{game}/play"))
        .await
        .unwrap();
    ws.send(json!({"t": "auth", "d": {"token": who.token}}))
        .await;
    ws.until("state", WAIT).await;
    ws
}

/// The Kalah rating and rated games of a player (1500 and 0 before any).
async fn kalah(base: &str, who: &Guest) -> (f64, u64) {
    let (_, profile) = call("GET", format!("{base}/v1/players/{}", who.id), None, None).await;
    profile["ratings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|rating| rating["variant"] == "kalah")
        .map_or((1500.0, 0), |rating| {
            (
                rating["rating"].as_f64().unwrap_or(1500.0),
                rating["games"].as_u64().unwrap_or(0),
            )
        })
}

/// Waits for the rating service to settle: the figure stops changing.
async fn settled(base: &str, who: &Guest) -> (f64, u64) {
    let mut last = kalah(base, who).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = kalah(base, who).await;
        if now == last {
            break;
        }
        last = now;
    }
    last
}

async fn run(base: String, games: usize) {
    let started = Instant::now();
    let victim = guest(&base).await;
    let farmer = guest(&base).await;
    let invite = request(
        "POST",
        format!("{base}/v1/invites"),
        Some(json!({"variant": {"variant": "kalah"}, "rated": true,
                    "time_control": {"initial_secs": 180, "increment_secs": 2}})),
        Some(&victim.token),
    )
    .await;
    let code = invite["code"].as_str().unwrap();
    let accepted = request(
        "POST",
        format!("{base}/v1/invites/{code}/accept"),
        None,
        Some(&farmer.token),
    )
    .await;
    let mut game = accepted["game_id"].as_str().unwrap().to_owned();
    let mut played = Vec::new();
    let mut refused = None;
    for _ in 0..games {
        let mut v = play_socket(&base, &game, &victim).await;
        let mut f = play_socket(&base, &game, &farmer).await;
        played.push(game.clone());
        v.send(json!({"t": "resign"})).await;
        v.until("over", WAIT).await;
        f.until("over", WAIT).await;
        f.send(json!({"t": "rematch"})).await;
        // The next game starts at once, or the rematch is only an offer.
        match f.until_or_none("rematch", Duration::from_secs(2)).await {
            Some(next) => game = next["game_id"].as_str().unwrap().to_owned(),
            None => {
                refused = Some("the rematch was only an offer: no next game");
                break;
            }
        }
    }
    let (farmer_rating, farmer_games) = settled(&base, &farmer).await;
    let (victim_rating, victim_games) = settled(&base, &victim).await;
    let mut rated_without_moves = 0;
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for id in &played {
        let (_, record) = call("GET", format!("{base}/v1/games/{id}"), None, None).await;
        let moves = record["moves"].as_array().map_or(0, Vec::len);
        if record["rated"] == Value::Bool(true) && record["status"] == "over" && moves == 0 {
            rated_without_moves += 1;
        }
        let status = format!(
            "{}/{}",
            record["status"].as_str().unwrap_or("?"),
            record["reason"].as_str().unwrap_or("-")
        );
        *statuses.entry(status).or_default() += 1;
    }
    println!(
        "farm: {} games played in {:.1} s{}",
        played.len(),
        started.elapsed().as_secs_f64(),
        refused.map_or(String::new(), |why| format!(" ({why})"))
    );
    println!("  records: {statuses:?}; rated with a result and no moves: {rated_without_moves}");
    println!("  farmer F: kalah {farmer_rating:.0} after {farmer_games} rated games");
    println!("  victim V: kalah {victim_rating:.0} after {victim_games} rated games");
}
