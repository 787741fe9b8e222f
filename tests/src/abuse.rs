//! What a hostile guest does to one server, as reusable attacks: the abuse
//! tests assert what each is refused or bounded to, and the `abuse` bench
//! measures what each costs a second player meanwhile. Every attack talks
//! to the public API only, as a script in a browser's place would.

// A harness for tests and benches: a failure is a panic that names it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Guest, Ws, call, client};

const WAIT: Duration = Duration::from_secs(10);

/// HTTP answers by status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally(pub BTreeMap<u16, u32>);

impl Tally {
    pub fn add(&mut self, status: u16) {
        *self.0.entry(status).or_default() += 1;
    }

    pub fn of(&self, status: u16) -> u32 {
        self.0.get(&status).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u32 {
        self.0.values().sum()
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(status, count)| format!("{count}×{status}"))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

/// A POST that may be refused: its status, body and `Retry-After`.
pub async fn post(url: String, body: Value, token: Option<&str>) -> (u16, Value, Option<String>) {
    let mut request = client().post(&url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = request.send_json(&body).await.unwrap();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let bytes = response.body().await.unwrap_or_default();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (response.status().as_u16(), json, retry_after)
}

/// Asks for `count` games against the `level` AI, the AI to move first,
/// as fast as the server answers: the tally and the games made.
pub async fn ai_games(base: &str, who: &Guest, level: &str, count: usize) -> (Tally, Vec<String>) {
    let mut tally = Tally::default();
    let mut made = Vec::new();
    for _ in 0..count {
        let body = json!({"variant": {"variant": "kalah"}, "level": level, "side": "second"});
        let (status, answer, _) = post(format!("{base}/v1/ai-games"), body, Some(&who.token)).await;
        tally.add(status);
        if let Some(id) = answer["game_id"].as_str() {
            made.push(id.to_owned());
        }
    }
    (tally, made)
}

/// A play socket on `game`, authenticated: the socket and its `state`, or
/// the error that refused it.
pub async fn open_play(base: &str, game: &str, who: &Guest) -> Result<(Ws, Value), Value> {
    let mut ws = Ws::open(format!("{base}/v1/games/{game}/play"))
        .await
        .map_err(|error| json!({"code": "socket", "message": error}))?;
    ws.send(json!({"t": "auth", "d": {"token": who.token}}))
        .await;
    match ws.next(WAIT).await {
        Some(message) if message["t"] == "state" => Ok((ws, message["d"].clone())),
        Some(message) => Err(message["d"].clone()),
        None => Err(json!({"code": "closed"})),
    }
}

/// Opens the games and answers every AI move at once with a legal move,
/// until `until`: the moves made. The AI thinks on each of them.
pub async fn play_against_ai(base: &str, who: &Guest, games: &[String], until: Instant) -> u64 {
    let mut tasks = Vec::new();
    for game in games {
        let (base, game) = (base.to_owned(), game.clone());
        let who = Guest {
            id: who.id.clone(),
            token: who.token.clone(),
        };
        tasks.push(actix_rt::spawn(async move {
            let Ok((mut ws, state)) = open_play(&base, &game, &who).await else {
                return 0;
            };
            let you = state["you"].clone();
            let mut made = 0;
            while Instant::now() < until {
                let left = until.saturating_duration_since(Instant::now());
                let Some(message) = ws.next(left).await else {
                    break;
                };
                let d = &message["d"];
                if message["t"] == "over" {
                    break;
                }
                let mine = message["t"] == "moved" && d["turn"] == you;
                if let (true, Some(pit)) = (mine, d["legal"].get(0).and_then(Value::as_u64)) {
                    let ply = d["ply"].as_u64().unwrap_or(0) + 1;
                    ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                        .await;
                    made += 1;
                }
            }
            made
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap_or(0);
    }
    total
}

/// An honest player against the `level` AI, one Kalah game at a time,
/// moving first and thinking `think` before each move: records how long
/// the AI took to answer each move (from the move sent to the AI's first
/// `moved`), for ever. A finished game makes the next.
pub async fn honest_ai_player(
    base: String,
    level: &'static str,
    think: Duration,
    replies: std::sync::Arc<std::sync::Mutex<Vec<Duration>>>,
) {
    let player = crate::harness::guest(&base).await;
    loop {
        let body = json!({"variant": {"variant": "kalah"}, "level": level, "side": "first"});
        let (_, answer, _) = post(format!("{base}/v1/ai-games"), body, Some(&player.token)).await;
        let Some(game) = answer["game_id"].as_str().map(str::to_owned) else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let Ok((mut ws, mut state)) = open_play(&base, &game, &player).await else {
            continue;
        };
        let you = state["you"].clone();
        'game: loop {
            if state["turn"].is_null() {
                break;
            }
            if state["turn"] != you {
                // The AI is to move (e.g. after a reconnect): wait for it.
                match next_moved(&mut ws).await {
                    Some(moved) => state = moved,
                    None => break,
                }
                continue;
            }
            let Some(pit) = state["legal"].get(0).and_then(Value::as_u64) else {
                break;
            };
            tokio::time::sleep(think).await;
            let ply = state["ply"].as_u64().unwrap_or(0) + 1;
            let sent = Instant::now();
            ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                .await;
            loop {
                let Some(moved) = next_moved(&mut ws).await else {
                    break 'game;
                };
                let by_ai = moved["by"] != you;
                state = moved;
                if by_ai {
                    replies.lock().unwrap().push(sent.elapsed());
                    break;
                }
                if state["turn"] != you {
                    continue;
                }
                // An extra turn: no AI reply to time.
                break;
            }
        }
    }
}

/// The next `moved` on a play socket, or `None` once the game is over or
/// the socket is gone (a minute without one counts as gone).
async fn next_moved(ws: &mut Ws) -> Option<Value> {
    loop {
        let message = ws.next(Duration::from_secs(60)).await?;
        match message["t"].as_str() {
            Some("moved") => return Some(message["d"].clone()),
            Some("over" | "error") => return None,
            _ => {}
        }
    }
}

/// A hotseat Kalah game played to its end by `who` (the first legal pit
/// every move): its id, or `None` when the server refused.
pub async fn hotseat_game_played(base: &str, who: &Guest) -> Option<String> {
    let body = json!({"variant": {"variant": "kalah"}});
    let (_, answer, _) = post(format!("{base}/v1/hotseat-games"), body, Some(&who.token)).await;
    let game = answer["game_id"].as_str()?.to_owned();
    let (mut ws, mut state) = open_play(base, &game, who).await.ok()?;
    while let Some(pit) = state["legal"].get(0).and_then(Value::as_u64) {
        let ply = state["ply"].as_u64().unwrap_or(0) + 1;
        ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
            .await;
        match next_moved(&mut ws).await {
            Some(moved) => state = moved,
            // `over` follows the last move.
            None => break,
        }
        if state["turn"].is_null() {
            break;
        }
    }
    Some(game)
}

/// Asks for a game's analysis (as `who`, or signed out): the status (0
/// when no answer came within a minute) and how long the answer took.
pub async fn ask_analysis(base: &str, game: &str, who: Option<&Guest>) -> (u16, Duration) {
    let asked = Instant::now();
    let client = awc::Client::builder()
        .timeout(Duration::from_secs(60))
        .max_http_version(awc::http::Version::HTTP_11)
        .finish();
    let mut request = client.get(format!("{base}/v1/games/{game}/analysis"));
    if let Some(who) = who {
        request = request.bearer_auth(&who.token);
    }
    let status = match request.send().await {
        Ok(mut response) => {
            let _ = response.body().limit(1 << 20).await;
            response.status().as_u16()
        }
        Err(_) => 0,
    };
    (status, asked.elapsed())
}

/// What the players of just-finished games met while strangers flooded
/// the analyses.
#[derive(Debug, Default)]
pub struct AnalysisFlood {
    /// The strangers' answers.
    pub strangers: Tally,
    /// The players' answers, and how long each took.
    pub players: Tally,
    pub player_waits: Vec<Duration>,
}

/// `strangers` signed-out clients ask, in parallel and over and over, for
/// the analyses of `games` (finished games, each a different one in turn),
/// while one honest player plays hotseat games to their end and asks for
/// each one's analysis, until `until`.
pub async fn analysis_flood(
    base: &str,
    games: &[String],
    strangers: usize,
    honest: &Guest,
    until: Instant,
) -> AnalysisFlood {
    let mut flooders = Vec::new();
    for n in 0..strangers {
        let (base, games) = (base.to_owned(), games.to_vec());
        flooders.push(actix_rt::spawn(async move {
            let mut tally = Tally::default();
            let mut next = n * 7;
            while Instant::now() < until && !games.is_empty() {
                let (status, _) = ask_analysis(&base, &games[next % games.len()], None).await;
                tally.add(status);
                next += 1;
                if status == 429 || status == 503 {
                    // A browser's client would wait; a flood does not.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            tally
        }));
    }
    let mut flood = AnalysisFlood::default();
    while Instant::now() < until {
        let Some(game) = hotseat_game_played(base, honest).await else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let (status, waited) = ask_analysis(base, &game, Some(honest)).await;
        flood.players.add(status);
        flood.player_waits.push(waited);
    }
    for flooder in flooders {
        if let Ok(tally) = flooder.await {
            for (status, count) in tally.0 {
                flood
                    .strangers
                    .0
                    .insert(status, flood.strangers.of(status) + count);
            }
        }
    }
    flood
}

/// What an undo loop came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Undos {
    pub sent: u64,
    /// Undos the server carried out.
    pub done: u64,
    /// Undos refused as `rate_limited`.
    pub refused: u64,
}

/// Resigns the games, so that their AI stops thinking (between the
/// bench's attacks).
pub async fn resign_all(base: &str, who: &Guest, games: &[String]) {
    for game in games {
        if let Ok((mut ws, _)) = open_play(base, game, who).await {
            ws.send(json!({"t": "resign"})).await;
            let _ = ws.next(Duration::from_secs(2)).await;
        }
    }
}

/// In each game, plays a move and takes it back, every `every`, until
/// `until`.
pub async fn undo_loop(
    base: &str,
    who: &Guest,
    games: &[String],
    every: Duration,
    until: Instant,
) -> Undos {
    let mut tasks = Vec::new();
    for game in games {
        let (base, game) = (base.to_owned(), game.clone());
        let who = Guest {
            id: who.id.clone(),
            token: who.token.clone(),
        };
        tasks.push(actix_rt::spawn(async move {
            let Ok((mut ws, mut state)) = open_play(&base, &game, &who).await else {
                return Undos::default();
            };
            let mut undos = Undos::default();
            let you = state["you"].clone();
            while Instant::now() < until {
                if state["turn"] == you
                    && let Some(pit) = state["legal"].get(0).and_then(Value::as_u64)
                {
                    let ply = state["ply"].as_u64().unwrap_or(0) + 1;
                    ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                        .await;
                }
                tokio::time::sleep(every / 2).await;
                ws.send(json!({"t": "undo"})).await;
                undos.sent += 1;
                // Follow the game through what comes back.
                let deadline = Instant::now() + every / 2;
                while let Some(message) = ws
                    .next(deadline.saturating_duration_since(Instant::now()))
                    .await
                {
                    let d = &message["d"];
                    match message["t"].as_str() {
                        Some("moved" | "undone" | "state") => {
                            state["turn"] = d["turn"].clone();
                            state["legal"] = d["legal"].clone();
                            state["ply"] = d["ply"].clone();
                            undos.done += u64::from(message["t"] == "undone");
                        }
                        Some("error") if d["code"] == "rate_limited" => undos.refused += 1,
                        Some("over") => return undos,
                        _ => {}
                    }
                }
            }
            undos
        }));
    }
    let mut total = Undos::default();
    for task in tasks {
        let undos = task.await.unwrap_or_default();
        total.sent += undos.sent;
        total.done += undos.done;
        total.refused += undos.refused;
    }
    total
}

/// One guest hoards: games against the AI, invites, hotseat games, lobby
/// and play sockets. The tallies of each, and the sockets refused.
pub struct Hoard {
    pub ai_games: Tally,
    pub invites: Tally,
    pub hotseat_games: Tally,
    pub lobby_sockets_refused: u32,
    pub play_sockets_refused: u32,
    /// The sockets still open, held until dropped.
    pub held: Vec<Ws>,
}

pub async fn hoard(base: &str, who: &Guest, scale: usize) -> Hoard {
    let (ai, ai_made) = ai_games(base, who, "beginner", 2 * scale).await;
    let mut invites = Tally::default();
    for _ in 0..2 * scale {
        let body = json!({"variant": {"variant": "kalah"}, "rated": false});
        let (status, _, _) = post(format!("{base}/v1/invites"), body, Some(&who.token)).await;
        invites.add(status);
    }
    let mut hotseat = Tally::default();
    let mut hotseat_made = Vec::new();
    for _ in 0..scale {
        let body = json!({"variant": {"variant": "oware"}});
        let (status, answer, _) =
            post(format!("{base}/v1/hotseat-games"), body, Some(&who.token)).await;
        hotseat.add(status);
        if let Some(id) = answer["game_id"].as_str() {
            hotseat_made.push(id.to_owned());
        }
    }
    let mut held = Vec::new();
    let mut lobby_refused = 0;
    for index in 0..3 * scale {
        let Ok(mut ws) = Ws::open(format!("{base}/v1/lobby")).await else {
            lobby_refused += 1;
            continue;
        };
        ws.send(json!({"t": "auth", "d": {"token": who.token}}))
            .await;
        let queue = ["kalah", "oware", "mangala"][index % 3];
        ws.send(json!({"t": "queue_join", "d": {"variant": queue,
            "time_control": {"initial_secs": 180, "increment_secs": 2}}}))
            .await;
        match ws.next(Duration::from_secs(2)).await {
            Some(message) if message["t"] == "error" => lobby_refused += 1,
            None => lobby_refused += 1,
            Some(_) => held.push(ws),
        }
    }
    let mut play_refused = 0;
    let games: Vec<&String> = ai_made.iter().chain(&hotseat_made).collect();
    for index in 0..3 * scale {
        let Some(game) = games.get(index % games.len().max(1)) else {
            break;
        };
        match open_play(base, game, who).await {
            Ok((ws, _)) => held.push(ws),
            Err(_) => play_refused += 1,
        }
    }
    Hoard {
        ai_games: ai,
        invites,
        hotseat_games: hotseat,
        lobby_sockets_refused: lobby_refused,
        play_sockets_refused: play_refused,
        held,
    }
}

/// `watchers` anonymous sockets watch `game`, each asking for the game
/// from the start as fast as its message credits allow, until `until`:
/// the syncs sent.
pub async fn sync_flood(base: &str, game: &str, watchers: usize, until: Instant) -> u64 {
    let mut tasks = Vec::new();
    for _ in 0..watchers {
        let url = format!("{base}/v1/games/{game}/watch");
        tasks.push(actix_rt::spawn(async move {
            let Ok(mut ws) = Ws::open(url).await else {
                return 0;
            };
            let mut sent = 0;
            while Instant::now() < until {
                ws.send(json!({"t": "sync", "d": {"since": 0}})).await;
                sent += 1;
                // Within the socket's credits: 10 a second.
                tokio::time::sleep(Duration::from_millis(110)).await;
                while ws.next(Duration::from_millis(1)).await.is_some() {}
            }
            sent
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap_or(0);
    }
    total
}

/// `count` requests whose JSON bodies come one byte every `gap`: how many
/// the server answered (or closed) within `wait`, and the statuses.
pub fn slow_bodies(base: &str, count: usize, gap: Duration, wait: Duration) -> (usize, Tally) {
    let address = base.trim_start_matches("http://").to_owned();
    let threads: Vec<_> = (0..count)
        .map(|_| {
            let address = address.clone();
            std::thread::spawn(move || slow_body(&address, gap, wait))
        })
        .collect();
    let mut tally = Tally::default();
    let mut ended = 0;
    for thread in threads {
        if let Ok(Some(status)) = thread.join() {
            ended += 1;
            tally.add(status);
        }
    }
    (ended, tally)
}

/// One slow request: the status it got within `wait` (0 for a close
/// without an answer), or `None` if it was still held open.
fn slow_body(address: &str, gap: Duration, wait: Duration) -> Option<u16> {
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    // A login: no token to check first, so the server must read the body.
    let body = br#"{"username":"nobody_here","password":"not the password"}"#;
    let head = format!(
        "POST /v1/auth/login HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.set_read_timeout(Some(gap)).ok()?;
    let started = Instant::now();
    let mut answer = Vec::new();
    for byte in body {
        if started.elapsed() >= wait {
            return None;
        }
        if stream.write_all(&[*byte]).is_err() {
            break;
        }
        let mut chunk = [0u8; 512];
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => {
                answer.extend_from_slice(&chunk[..read]);
                break;
            }
            Err(_) => {}
        }
    }
    if started.elapsed() >= wait && answer.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(&answer);
    Some(
        text.split_whitespace()
            .nth(1)
            .and_then(|status| status.parse().ok())
            .unwrap_or(0),
    )
}

/// Values Postgres cannot take, in paths and queries: each request and
/// the status it got.
pub async fn bad_values(base: &str) -> Vec<(String, u16)> {
    let player = uuid::Uuid::new_v4();
    let requests = [
        ("GET", format!("{base}/v1/invites/%00")),
        ("POST", format!("{base}/v1/invites/%00/accept")),
        (
            "GET",
            format!(
                "{base}/v1/players/{player}/games?before=9223372036854775807_{}",
                uuid::Uuid::new_v4()
            ),
        ),
        (
            "GET",
            format!(
                "{base}/v1/players/{player}/games?before=-5_{}",
                uuid::Uuid::new_v4()
            ),
        ),
        ("GET", format!("{base}/v1/games/live?variant=kal%00ah")),
        ("GET", format!("{base}/v1/leaderboard/kalah?offset=%00")),
    ];
    let mut answers = Vec::new();
    for (method, url) in requests {
        let body = (method == "POST").then(|| json!({}));
        let (status, _) = call(method, url.clone(), body, None).await;
        answers.push((format!("{method} {}", url.trim_start_matches(base)), status));
    }
    answers
}

/// What a sign-in and sign-out loop got.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoginLoop {
    pub signed_in: u32,
    /// Sign-ins refused, by the per-account or per-address limit.
    pub refused: u32,
}

/// Registers `accounts` players, then signs one of them in and straight
/// out again every `every`, round the accounts, until `until`.
pub async fn login_loop(base: &str, accounts: usize, every: Duration, until: Instant) -> LoginLoop {
    let stamp = std::process::id();
    let mut names = Vec::new();
    for n in 0..accounts {
        let name = format!("loop{stamp}_{n}");
        let (status, _, _) = post(
            format!("{base}/v1/auth/register"),
            json!({"username": name, "password": "correct horse battery"}),
            None,
        )
        .await;
        if status == 201 {
            names.push(name);
        }
    }
    let mut got = LoginLoop::default();
    let mut ticks = tokio::time::interval(every);
    for name in names.iter().cycle() {
        if Instant::now() >= until {
            break;
        }
        ticks.tick().await;
        let (status, session, _) = post(
            format!("{base}/v1/auth/login"),
            json!({"username": name, "password": "correct horse battery"}),
            None,
        )
        .await;
        if status != 200 {
            got.refused += 1;
            continue;
        }
        got.signed_in += 1;
        post(
            format!("{base}/v1/auth/logout"),
            json!({"refresh_token": session["refresh_token"]}),
            None,
        )
        .await;
    }
    got
}

/// The server's Prometheus text (`/metrics`).
pub async fn metrics_text(base: &str) -> Option<String> {
    let mut response = client().get(format!("{base}/metrics")).send().await.ok()?;
    let body = response.body().limit(1 << 24).await.ok()?;
    Some(String::from_utf8_lossy(&body).into_owned())
}

/// One series' value in Prometheus text: `series` is its name with its
/// labels as written (`waves_seconds{quantile="0.99"}`, `waves_seconds_count`).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.trim().parse().ok()
    })
}

/// A gauge's value in the server's Prometheus text (`/metrics`).
pub async fn gauge(base: &str, name: &str) -> Option<f64> {
    metric(&metrics_text(base).await?, name)
}
