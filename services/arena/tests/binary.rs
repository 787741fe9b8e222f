//! The real `arena` binary, started as a process against the real Postgres
//! and Redis (a fresh database and key prefix): a guest signs in, starts a
//! game against the AI, plays a move over the game socket, and the AI
//! answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use awc::ws::{Frame, Message};
use futures_util::{SinkExt, StreamExt};
use mancala_platform::ExposeSecret;
use mancala_platform::testing::{TestStores, database_url, redis_url};
use serde_json::{Value, json};

struct Process(std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn post(client: &awc::Client, url: String, body: Value, token: Option<&str>) -> Value {
    let mut request = client.post(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = request.send_json(&body).await.unwrap();
    let bytes = response.body().await.unwrap();
    assert!(
        response.status().is_success(),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    serde_json::from_slice(&bytes).unwrap()
}

#[actix_web::test]
async fn a_guest_plays_the_ai_on_the_one_process_arena() {
    let stores = TestStores::new().await.unwrap();
    let web =
        std::env::temp_dir().join(format!("arena-web-{}", stores.prefix.trim_end_matches(':')));
    std::fs::create_dir_all(&web).unwrap();
    std::fs::write(
        web.join("index.html"),
        "<!doctype html><title>arena</title>",
    )
    .unwrap();
    std::fs::write(web.join("app.js"), "export const ok = true;").unwrap();
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arena"))
        .args(["--bind", "127.0.0.1:0"])
        .env(
            "DATABASE_URL",
            database_url(&stores.database).expose_secret(),
        )
        .env("REDIS_URL", redis_url().expose_secret())
        .env("APP_REDIS_PREFIX", &stores.prefix)
        .env("APP_LOG_FORMAT", "json")
        .env("APP_WEB_DIR", &web)
        .env("RUST_LOG", "warn")
        // Misspelt: read by nothing, so reported at start.
        .env("APP_AI_WORKRS", "3")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut process = Process(child);
    // Log lines may come first; the ready line names the address.
    let mut lines = BufReader::new(stdout).lines();
    let mut before_ready = Vec::new();
    let line = loop {
        let line = lines.next().expect("the ready line").unwrap();
        if line.starts_with("Mancala Arena is ready") {
            break line;
        }
        before_ready.push(line);
    };
    assert!(
        before_ready
            .iter()
            .any(|line| line.contains("APP_AI_WORKRS") && line.contains("WARN")),
        "a misspelt setting is reported: {before_ready:?}"
    );
    // Keep reading so the child never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let base = line.trim().rsplit(' ').next().unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    println!("arena ready after {:?}", started.elapsed());

    let client = awc::Client::builder()
        .timeout(Duration::from_secs(20))
        .finish();
    // The web client: its files, its page for the routes it resolves
    // itself, and the APIs never shadowed by it.
    for (path, status, body) in [
        ("/", 200, "<title>arena</title>"),
        ("/invite/abc123", 200, "<title>arena</title>"),
        ("/game/0193", 200, "<title>arena</title>"),
        ("/app.js", 200, "export const ok"),
        ("/nothing.js", 404, ""),
        ("/v1/nothing", 404, ""),
    ] {
        let mut response = client.get(format!("{base}{path}")).send().await.unwrap();
        let text = String::from_utf8(response.body().await.unwrap().to_vec()).unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}: {text}");
        assert!(text.contains(body), "{path}: {text}");
        if path.starts_with("/v1/") {
            assert!(
                !text.contains("<title>"),
                "{path} is the API's, not the page's"
            );
        }
    }
    let guest = post(&client, format!("{base}/v1/auth/guest"), json!({}), None).await;
    let token = guest["access_token"].as_str().unwrap().to_owned();
    let game = post(
        &client,
        format!("{base}/v1/ai-games"),
        json!({"variant": {"variant": "kalah"}, "level": "beginner", "side": "first"}),
        Some(&token),
    )
    .await;
    assert_eq!(game["seat"], 0);
    // Links name the address the arena really listens on.
    let invite = post(
        &client,
        format!("{base}/v1/invites"),
        json!({"variant": {"variant": "kalah"}, "rated": false}),
        Some(&token),
    )
    .await;
    let link = invite["url"].as_str().unwrap();
    assert!(link.starts_with(&base), "{link} is not on {base}");
    let url = format!(
        "{}{}",
        base.replacen("http", "ws", 1),
        game["ws_path"].as_str().unwrap()
    );
    let (_, mut socket) = client.ws(url).connect().await.unwrap();
    socket
        .send(Message::Text(
            json!({"t": "auth", "d": {"token": token}})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    socket
        .send(Message::Text(
            json!({"t": "move", "d": {"pit": 1, "ply": 1}})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let mut movers = Vec::new();
    while movers.len() < 2 {
        let frame = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a message")
            .unwrap()
            .unwrap();
        if let Frame::Text(bytes) = frame {
            let message: Value = serde_json::from_slice(&bytes).unwrap();
            if message["t"] == "moved" {
                movers.push(message["d"]["by"].as_u64().unwrap());
            }
        }
    }
    assert_eq!(movers, [0, 1], "the human's move, then the AI's");
    let (status, _) = {
        let response = client.get(format!("{base}/readyz")).send().await.unwrap();
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 200);
    // SIGTERM: the arena drains its games and exits by itself.
    let pid = process.0.id().to_string();
    let stopping = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = loop {
        if let Some(status) = process.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopping.elapsed() < Duration::from_secs(15),
            "the arena did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    println!("exited {:?} after SIGTERM", stopping.elapsed());
    let _ = std::fs::remove_dir_all(&web);
    stores.cleanup().await.unwrap();
}

#[test]
fn help_lists_every_setting_and_a_bad_value_names_its_variable() {
    let help = Command::new(env!("CARGO_BIN_EXE_arena"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let help = String::from_utf8(help.stdout).unwrap();
    for declared in mancala_arena::declaration().settings() {
        assert!(
            help.contains(&format!("[env: {}", declared.name)),
            "{} missing from --help",
            declared.name
        );
    }
    let refused = Command::new(env!("CARGO_BIN_EXE_arena"))
        .env("APP_RATING_WORKERS", "2.7")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8(refused.stderr).unwrap();
    assert!(said.contains("APP_RATING_WORKERS"), "{said}");
}
