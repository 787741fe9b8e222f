//! Services as processes, for the end-to-end tests: start a workspace
//! binary on a port and wait for `/readyz`, kill it (SIGKILL), and talk to
//! it over HTTP and WebSockets with plain JSON.

// A harness for tests: a failure is a panic that names what went wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use awc::ws::{Frame, Message};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;

/// A service process, killed when dropped so a failing test leaves none.
pub struct Service {
    child: Child,
    pub base: String,
}

impl Service {
    /// The process id, for reading its memory and CPU.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn kill(&mut self) {
        // SIGKILL: no drain, no lease handed over.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGSTOP: the process stands still (a long pause, a VM stolen away)
    /// with its sockets and leases as they were, until [`Service::thaw`].
    pub fn freeze(&self) {
        let _ = Command::new("kill")
            .args(["-STOP", &self.child.id().to_string()])
            .status();
    }

    /// SIGCONT: it goes on from where it stood, believing what it did.
    pub fn thaw(&self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
    }

    /// SIGTERM, as an orchestrator stops a process, and waits for it to
    /// exit without blocking the test's other tasks: how long it took.
    pub async fn terminate(&mut self) -> Duration {
        let asked = Instant::now();
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        while let Ok(None) = self.child.try_wait() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        asked.elapsed()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A binary of this workspace, beside the running test's own directory.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first",
        path.display()
    );
    path
}

/// A port free a moment ago (the service binds it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn client() -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(20))
        .max_http_version(awc::http::Version::HTTP_11)
        .finish()
}

/// Starts a service binary on `port` and waits until it is ready.
pub async fn start(name: &str, port: u16, env: &[(&str, String)]) -> Service {
    start_with(name, "127.0.0.1", port, env, Stdio::inherit()).await
}

/// [`start`] listening on `host` (say `0.0.0.0`), reached at 127.0.0.1.
pub async fn start_on(name: &str, host: &str, port: u16, env: &[(&str, String)]) -> Service {
    start_with(name, host, port, env, Stdio::inherit()).await
}

/// [`start`], its log lines (standard error) written to `log`.
pub async fn start_logged(
    name: &str,
    port: u16,
    env: &[(&str, String)],
    log: &std::path::Path,
) -> Service {
    let file = std::fs::File::create(log).unwrap();
    start_with(name, "127.0.0.1", port, env, Stdio::from(file)).await
}

async fn start_with(
    name: &str,
    host: &str,
    port: u16,
    env: &[(&str, String)],
    stderr: Stdio,
) -> Service {
    let base = format!("http://127.0.0.1:{port}");
    let child = Command::new(binary(name))
        .args(["--bind", &format!("{host}:{port}")])
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let service = Service { child, base };
    let client = client();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let url = format!("{}/readyz", service.base);
        if let Ok(response) = client.get(url).send().await
            && response.status().is_success()
        {
            return service;
        }
        assert!(Instant::now() < deadline, "{name} never became ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A JSON request that must succeed.
pub async fn request(method: &str, url: String, body: Option<Value>, token: Option<&str>) -> Value {
    let (status, body) = call(method, url.clone(), body, token).await;
    assert!(
        (200..300).contains(&status),
        "{method} {url}: {status} {body}"
    );
    body
}

/// A JSON request: its status and body (`null` when the body is not JSON).
pub async fn call(
    method: &str,
    url: String,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    call_with(&client(), method, url, body, token).await
}

/// A client whose connections leave from `local`, an address of this
/// machine: on loopback, any of 127.0.0.0/8, so that each of many
/// accounts can come from a network (a /24) of its own, as accounts of a
/// ring spread over many networks do.
pub fn client_from(local: std::net::IpAddr) -> awc::Client {
    awc::Client::builder()
        .timeout(Duration::from_secs(20))
        .max_http_version(awc::http::Version::HTTP_11)
        .local_address(local)
        .finish()
}

/// [`call`] from the address `local` (see [`client_from`]).
pub async fn call_from(
    local: std::net::IpAddr,
    method: &str,
    url: String,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    call_with(&client_from(local), method, url, body, token).await
}

async fn call_with(
    client: &awc::Client,
    method: &str,
    url: String,
    body: Option<Value>,
    token: Option<&str>,
) -> (u16, Value) {
    let mut request = match method {
        "POST" => client.post(&url),
        "DELETE" => client.delete(&url),
        _ => client.get(&url),
    };
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = match body {
        Some(body) => request.send_json(&body).await.unwrap(),
        None => request.send().await.unwrap(),
    };
    let bytes = response.body().await.unwrap();
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (response.status().as_u16(), json)
}

type Framed = actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>;

/// A socket speaking `{"t", "d"}` JSON.
pub struct Ws(Framed);

impl Ws {
    pub async fn open(url: String) -> Result<Ws, String> {
        let (_, framed) = client()
            .ws(url.replacen("http", "ws", 1))
            .connect()
            .await
            .map_err(|error| error.to_string())?;
        Ok(Ws(framed))
    }

    pub async fn send(&mut self, message: Value) {
        self.0
            .send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
    }

    /// The next JSON message, or `None` when the socket closes or stays
    /// silent for `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(wait, self.0.next()).await.ok()??;
            match frame.ok()? {
                Frame::Text(bytes) => return serde_json::from_slice(&bytes).ok(),
                Frame::Ping(bytes) => {
                    let _ = self.0.send(Message::Pong(bytes)).await;
                }
                Frame::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Sends a raw frame (binary, oversize text...).
    pub async fn send_raw(&mut self, message: Message) {
        let _ = self.0.send(message).await;
    }

    /// Reads past any messages to the close frame: its code, or `None`
    /// when the connection ends without one or stays open for `wait`.
    pub async fn close_code(&mut self, wait: Duration) -> Option<u16> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = tokio::time::timeout(left, self.0.next()).await.ok()??;
            if let Frame::Close(reason) = frame.ok()? {
                return reason.map(|reason| u16::from(reason.code));
            }
        }
    }

    /// Reads until a message of type `kind`: its data, or `None` when the
    /// socket closes or `wait` passes first.
    pub async fn until_or_none(&mut self, kind: &str, wait: Duration) -> Option<Value> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.next(left).await?;
            if message["t"] == kind {
                return Some(message["d"].clone());
            }
        }
    }

    /// Reads until a message of type `kind`, panicking after `wait`.
    pub async fn until(&mut self, kind: &str, wait: Duration) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .next(left)
                .await
                .unwrap_or_else(|| panic!("no {kind} within {wait:?}"));
            if message["t"] == kind {
                return message["d"].clone();
            }
            assert_ne!(message["t"], "error", "waiting for {kind}: {message}");
        }
    }
}

/// A guest signed in through the accounts API.
#[derive(Clone, Debug)]
pub struct Guest {
    pub id: String,
    pub token: String,
}

/// A new guest on the server at `base`, as the web client makes one.
pub async fn guest(base: &str) -> Guest {
    let session = request(
        "POST",
        format!("{base}/v1/auth/guest"),
        Some(serde_json::json!({})),
        None,
    )
    .await;
    Guest {
        id: session["player"]["id"].as_str().unwrap().to_owned(),
        token: session["access_token"].as_str().unwrap().to_owned(),
    }
}

/// Opens a game's play socket on the first of `bases` that serves it,
/// retrying while a host whose lease has not run out still holds the game;
/// the socket and its `state`.
pub async fn play_when_free(
    bases: &[String],
    game: &str,
    token: &str,
    patience: Duration,
) -> (Ws, Value) {
    let deadline = Instant::now() + patience;
    loop {
        for base in bases {
            if let Ok(mut ws) = Ws::open(format!("{base}/v1/games/{game}/play")).await {
                ws.send(serde_json::json!({"t": "auth", "d": {"token": token}}))
                    .await;
                if let Some(message) = ws.next(Duration::from_secs(5)).await
                    && message["t"] == "state"
                {
                    return (ws, message["d"].clone());
                }
            }
        }
        assert!(Instant::now() < deadline, "{game} never became playable");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The legal pits of a `state` or `moved`.
pub fn pits(legal: &Value) -> Vec<u64> {
    legal
        .as_array()
        .map(|pits| pits.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// The `quantile` of `samples` (nearest rank); zero when there are none.
pub fn percentile(samples: &mut [Duration], quantile: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * quantile).round() as usize;
    samples.get(index).copied().unwrap_or_default()
}

/// A game's stored moves as `(ply, seat, pit)`, from its record.
pub async fn recorded_moves(base: &str, game: &str) -> Vec<(u64, u64, u64)> {
    let record = request("GET", format!("{base}/v1/games/{game}"), None, None).await;
    record["moves"]
        .as_array()
        .map(|moves| {
            moves
                .iter()
                .map(|m| {
                    let field = |name: &str| m[name].as_u64().unwrap_or(u64::MAX);
                    (field("ply"), field("seat"), field("pit"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A guest who registers as `name`: their id and access token.
pub async fn registered_player(matchmaking: &str, name: &str) -> (String, String) {
    let guest = request(
        "POST",
        format!("{matchmaking}/v1/auth/guest"),
        Some(serde_json::json!({})),
        None,
    )
    .await;
    let token = guest["access_token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let session = request(
        "POST",
        format!("{matchmaking}/v1/auth/register"),
        Some(serde_json::json!({"username": name, "password": "correct horse battery"})),
        Some(&token),
    )
    .await;
    (
        session["player"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        session["access_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A guest made from the address `local` who registers as `name` there:
/// their id and access token (an account whose sign-up network is
/// `local`'s /24).
pub async fn registered_from(base: &str, name: &str, local: std::net::IpAddr) -> (String, String) {
    let (status, guest) = call_from(
        local,
        "POST",
        format!("{base}/v1/auth/guest"),
        Some(serde_json::json!({})),
        None,
    )
    .await;
    assert_eq!(status, 201, "a guest from {local}: {guest}");
    let token = guest["access_token"].as_str().unwrap_or_default();
    let (status, session) = call_from(
        local,
        "POST",
        format!("{base}/v1/auth/register"),
        Some(serde_json::json!({"username": name, "password": "correct horse battery"})),
        Some(token),
    )
    .await;
    assert_eq!(status, 201, "{name} from {local}: {session}");
    (
        session["player"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        session["access_token"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A lobby socket signed in with `token` and queued for ranked Kalah 3+2.
pub async fn queued_for_ranked_kalah(matchmaking: &str, token: &str) -> Ws {
    let mut lobby = Ws::open(format!("{matchmaking}/v1/lobby"))
        .await
        .unwrap_or_else(|error| panic!("the lobby: {error}"));
    lobby
        .send(serde_json::json!({"t": "auth", "d": {"token": token}}))
        .await;
    lobby
        .send(
            serde_json::json!({"t": "queue_join", "d": {"variant": "kalah",
            "time_control": {"initial_secs": 180, "increment_secs": 2}}}),
        )
        .await;
    lobby
}
