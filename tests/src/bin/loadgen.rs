//! `loadgen`: simulated players and watchers against running services.
//!
//! Players sign in as guests, queue for a ranked game (paired with each
//! other by matchmaking) or start a game against the server's AI, play it
//! with random legal moves after `--think-ms`, rematch for
//! `--games-per-player` games, and leave. Either `--players` are kept busy
//! (a closed model: a leaving player is replaced) or new players arrive at
//! `--arrival-rate` per second whatever the servers' pace (an open model,
//! so a slow server faces the same arrivals instead of fewer: no
//! coordinated omission). Watchers attach to live games (or all to one,
//! `--watch-one`), and `--idle` sockets are held open to weigh a socket.
//!
//! The report (text, and JSON with `--json`): the move round trip (send to
//! the mover's own `moved`, the durable write included), time to match,
//! moves/s, the delay from a move's send until watchers see it (each
//! delivery, and the last watcher of each move), errors by code, and the
//! servers' memory and CPU (`--server-pids`).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressStyle};
use mancala_proto::Session;
use mancala_tests::client::{Api, ClientError, JsonSocket};
use mancala_tests::report::{Latency, histogram};
use mancala_tests::server_stats::{Sampler, ServerUsage};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, Serialize, ValueEnum)]
#[serde(rename_all = "snake_case")]
enum Opponent {
    /// Another simulated player, through the ranked queue.
    Queue,
    /// The server's AI (beginner), through `/v1/ai-games`.
    Ai,
}

#[derive(Parser, Debug)]
#[command(about = "Simulated players and watchers against the Mancala Arena services")]
struct Args {
    /// Matchmaking's base URL (accounts, lobby, AI games).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    base: String,
    /// game-room instances, comma separated; a game goes to one by its id,
    /// as the ingress hashes it. Default: --base.
    #[arg(long, value_delimiter = ',')]
    games: Vec<String>,
    /// Players at once, each replaced when it leaves (closed model).
    #[arg(long, default_value_t = 200)]
    players: usize,
    /// New players per second instead (open model).
    #[arg(long)]
    arrival_rate: Option<f64>,
    /// Closed model: the players arrive evenly over this long, and what
    /// happens before they all have is warm-up, left out of the figures.
    #[arg(long, default_value_t = 10)]
    ramp_secs: u64,
    /// Games each player plays, rematching, before leaving.
    #[arg(long, default_value_t = 3)]
    games_per_player: u32,
    #[arg(long, value_enum, default_value_t = Opponent::Queue)]
    opponent: Opponent,
    /// Pause before each move.
    #[arg(long, default_value_t = 300)]
    think_ms: u64,
    #[arg(long, default_value = "kalah")]
    variant: String,
    /// The ranked queue's time control, `initial+increment` seconds.
    #[arg(long, default_value = "3+2")]
    time_control: String,
    /// Watchers attached to live games.
    #[arg(long, default_value_t = 0)]
    watchers: usize,
    /// All watchers on one game, whose players wait until they are in.
    #[arg(long)]
    watch_one: bool,
    /// Threads the watchers are spread over, so that draining thousands
    /// of sockets is not one thread's work.
    #[arg(long, default_value_t = 1)]
    watcher_threads: usize,
    /// Idle watch sockets held open, to weigh a socket in server memory.
    #[arg(long, default_value_t = 0)]
    idle: usize,
    #[arg(long, default_value_t = 30)]
    duration_secs: u64,
    /// Also report each window of this many seconds on its own (moves,
    /// round trip, server memory): what a long run shows drifting.
    #[arg(long)]
    window_secs: Option<u64>,
    /// Server processes whose memory and CPU the report gives.
    #[arg(long, value_delimiter = ',')]
    server_pids: Vec<u32>,
    /// Also write the report here, as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// A shell command run when the warm-up ends and again at the deadline,
    /// with `WINDOW=steady` and then `WINDOW=end` in its environment: what
    /// snapshots other processes' counters (Postgres, Redis) over exactly
    /// the window the figures are taken in.
    #[arg(long)]
    window_hook: Option<String>,
    /// A name for this run in the report.
    #[arg(long, default_value = "")]
    label: String,
    /// No progress bar (logs, CI).
    #[arg(long)]
    quiet: bool,
}

/// When a move was sent, and when its last watcher (so far) saw it.
type Delivery = (Instant, Option<Instant>);

/// What every task shares (one thread: `Rc` and `RefCell`).
struct Ctx {
    api: Api,
    args: Args,
    time_control: (u32, u32),
    deadline: Instant,
    /// The end of the warm-up: moves sent before it are not counted.
    steady_from: Instant,
    round_trip: RefCell<Histogram<u64>>,
    /// The round trips of the current window (`--window-secs`).
    window_round_trip: RefCell<Histogram<u64>>,
    time_to_match: RefCell<Histogram<u64>>,
    moves: Cell<u64>,
    games: Cell<u64>,
    players: Cell<u64>,
    errors: RefCell<BTreeMap<String, u64>>,
    /// What players and watchers (on any thread) share.
    spectators: Arc<Spectators>,
}

/// The games to watch and the deliveries seen, shared across threads.
struct Spectators {
    deadline: Instant,
    games: Vec<String>,
    watch_one: bool,
    /// Live games, for watchers to pick from.
    live: Mutex<Vec<String>>,
    cursor: AtomicUsize,
    /// `--watch-one`: the game every watcher follows, and how many are in.
    featured: Mutex<Option<String>>,
    attached: AtomicUsize,
    /// When each move was sent, and when its last watcher saw it.
    sent: Mutex<HashMap<(String, u64), Delivery>>,
    delay: Mutex<Histogram<u64>>,
    errors: Mutex<BTreeMap<String, u64>>,
}

/// A lock that a panicked holder does not poison for the rest.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Spectators {
    fn over(&self) -> bool {
        Instant::now() >= self.deadline
    }

    fn error(&self, what: &str) {
        *lock(&self.errors).entry(what.to_owned()).or_default() += 1;
    }

    fn games_base(&self, game: &str) -> String {
        games_base(&self.games, game)
    }
}

impl Ctx {
    fn error(&self, what: &str) {
        *self.errors.borrow_mut().entry(what.to_owned()).or_default() += 1;
    }

    fn client_error(&self, error: &ClientError) {
        self.error(&describe(error));
    }

    fn over(&self) -> bool {
        Instant::now() >= self.deadline
    }

    fn games_base(&self, game: &str) -> String {
        games_base(&self.args.games, game)
    }
}

/// An error's name in the report: the HTTP status and code, or what broke.
fn describe(error: &ClientError) -> String {
    match error {
        ClientError::Status { status, body } => {
            let code = serde_json::from_str::<Value>(body)
                .ok()
                .and_then(|body| body["code"].as_str().map(str::to_owned));
            format!("http_{status}_{}", code.unwrap_or_default())
        }
        ClientError::Closed => "socket_closed".into(),
        ClientError::Http(_) => "http".into(),
        ClientError::Socket(_) => "socket".into(),
        ClientError::Decode(_) => "decode".into(),
    }
}

/// The instance a game lives on: the same for everyone, by its id.
fn games_base(bases: &[String], game: &str) -> String {
    let hash = game.bytes().fold(0u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(byte as u64)
    });
    bases[(hash % bases.len() as u64) as usize].replacen("http", "ws", 1)
}

fn micros(since: Instant) -> u64 {
    (since.elapsed().as_micros() as u64).max(1)
}

/// A seeded xorshift: random legal moves that repeat for a given seed.
struct Moves(u64);

impl Moves {
    fn pick(&mut self, legal: &[u64]) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        legal[(self.0 % legal.len() as u64) as usize]
    }
}

fn pits(legal: &Value) -> Vec<u64> {
    legal
        .as_array()
        .map(|pits| pits.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// Opens a game's play socket and authenticates: the socket and its state.
/// Follows one `elsewhere` to the instance that hosts the game.
async fn join_game(ctx: &Ctx, game: &str, token: &str) -> Result<(JsonSocket, Value), ClientError> {
    let mut url = format!("{}/v1/games/{game}/play", ctx.games_base(game));
    for _ in 0..2 {
        let mut socket = JsonSocket::open(&ctx.api, &url).await?;
        socket
            .send(json!({"t": "auth", "d": {"token": token}}))
            .await?;
        loop {
            let message = socket.receive().await?;
            match message["t"].as_str() {
                Some("state") => return Ok((socket, message["d"].clone())),
                Some("elsewhere") => {
                    let host = message["d"]["url"].as_str().unwrap_or_default();
                    url = format!("{}/v1/games/{game}/play", host.replacen("http", "ws", 1));
                    break;
                }
                Some("error") => {
                    ctx.error(message["d"]["code"].as_str().unwrap_or("error"));
                    return Err(ClientError::Closed);
                }
                _ => {}
            }
        }
    }
    Err(ClientError::Closed)
}

/// Queues in the lobby until matched: the game id.
async fn queue(ctx: &Ctx, token: &str) -> Result<String, Setback> {
    let url = format!("{}/v1/lobby", ctx.args.base.replacen("http", "ws", 1));
    let mut lobby = JsonSocket::open(&ctx.api, &url).await?;
    lobby
        .send(json!({"t": "auth", "d": {"token": token}}))
        .await?;
    let (initial, increment) = ctx.time_control;
    lobby
        .send(json!({"t": "queue_join", "d": {"variant": ctx.args.variant,
            "time_control": {"initial_secs": initial, "increment_secs": increment}}}))
        .await?;
    let queued = Instant::now();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), lobby.receive())
            .await
            .map_err(|_| ClientError::Closed)??;
        match message["t"].as_str() {
            Some("matched") => {
                let _ = ctx.time_to_match.borrow_mut().record(micros(queued));
                lobby.close().await;
                return Ok(message["d"]["game_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned());
            }
            Some("error") => {
                let setback = socket_setback(ctx, &message);
                lobby.close().await;
                return Err(setback);
            }
            _ => {}
        }
    }
}

/// Starts a game against the AI: its id.
async fn ai_game(ctx: &Ctx, token: &str) -> Result<String, Setback> {
    let answer = ctx
        .api
        .post_json(
            format!("{}/v1/ai-games", ctx.args.base),
            json!({"variant": {"variant": ctx.args.variant}, "level": "beginner",
                "side": "random"}),
            Some(token),
        )
        .await
        .map_err(|error| counted_setback(ctx, error))?;
    Ok(answer["game_id"].as_str().unwrap_or_default().to_owned())
}

/// A failed request as a setback, counted in the report when it is a
/// refusal (a failure is counted where the player gives up).
fn counted_setback(ctx: &Ctx, error: ClientError) -> Setback {
    if refusal_wait(&error).is_some() {
        ctx.client_error(&error);
    }
    Setback::from(error)
}

/// Why a player's way to a game stopped short.
enum Setback {
    /// The server is busy: the same player comes back after this long.
    Refused(Duration),
    /// Anything else: the player leaves.
    Failed(ClientError),
}

impl From<ClientError> for Setback {
    fn from(error: ClientError) -> Setback {
        match refusal_wait(&error) {
            Some(wait) => Setback::Refused(wait),
            None => Setback::Failed(error),
        }
    }
}

/// How long a refused request is told to wait: a `503` with `Retry-After`
/// (the body repeats it as `retry_after`).
fn refusal_wait(error: &ClientError) -> Option<Duration> {
    let ClientError::Status { status: 503, body } = error else {
        return None;
    };
    let body = serde_json::from_str::<Value>(body).ok()?;
    Some(told_to_wait(&body))
}

/// The wait an error body asks for; a refusal that names none gets ours.
fn told_to_wait(body: &Value) -> Duration {
    body["retry_after"]
        .as_u64()
        .map_or(COME_BACK_AFTER, Duration::from_secs)
}

/// An `error` message on a socket: counted, and a refusal when the server
/// is busy.
fn socket_setback(ctx: &Ctx, message: &Value) -> Setback {
    let code = message["d"]["code"].as_str().unwrap_or("error");
    ctx.error(code);
    if code == "unavailable" {
        Setback::Refused(told_to_wait(&message["d"]))
    } else {
        Setback::Failed(ClientError::Closed)
    }
}

/// What follows a game.
enum Next {
    /// The rematch, by its id.
    Rematch(String),
    /// No rematch: none was asked for, or none came.
    Over,
    /// The rematch was refused: the server is busy.
    Refused(Duration),
}

/// Plays one game to its end, and asks for a rematch if `rematch`.
async fn play(
    ctx: &Ctx,
    game: &str,
    token: &str,
    moves: &mut Moves,
    rematch: bool,
) -> Result<Next, ClientError> {
    let (mut socket, state) = join_game(ctx, game, token).await?;
    let you = state["you"].as_u64();
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        pits(&state["legal"]),
        state["ply"].as_u64().unwrap_or(0),
    );
    // One of the two players speaks for the game (both, against the AI).
    let counts_the_game = you == Some(0) || ctx.args.opponent.is_ai();
    if counts_the_game {
        let spectators = &ctx.spectators;
        lock(&spectators.live).push(game.to_owned());
        if ctx.args.watch_one && ctx.args.watchers > 0 {
            spectators.attached.store(0, Ordering::SeqCst);
            *lock(&spectators.featured) = Some(game.to_owned());
        }
    }
    if ctx.args.watch_one && ctx.args.watchers > 0 {
        // The moves are what is measured: every watcher in first.
        let waiting = Instant::now();
        while ctx.spectators.attached.load(Ordering::SeqCst) < ctx.args.watchers
            && waiting.elapsed() < Duration::from_secs(60)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let mut result = None;
    loop {
        if turn.is_some() && turn == you && !ctx.over() {
            tokio::time::sleep(Duration::from_millis(ctx.args.think_ms)).await;
            let pit = moves.pick(&legal);
            ply += 1;
            let sent = Instant::now();
            if ctx.args.watchers > 0 {
                lock(&ctx.spectators.sent).insert((game.to_owned(), ply), (sent, None));
            }
            socket
                .send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                .await?;
            loop {
                let message = socket.receive().await?;
                match message["t"].as_str() {
                    Some("moved") if message["d"]["ply"].as_u64() == Some(ply) => {
                        if sent < ctx.deadline && sent >= ctx.steady_from {
                            let _ = ctx.round_trip.borrow_mut().record(micros(sent));
                            let _ = ctx.window_round_trip.borrow_mut().record(micros(sent));
                            ctx.moves.set(ctx.moves.get() + 1);
                        }
                        turn = message["d"]["turn"].as_u64();
                        legal = pits(&message["d"]["legal"]);
                        break;
                    }
                    Some("over") => {
                        turn = None;
                        result = Some(message);
                        break;
                    }
                    Some("error") => {
                        ctx.error(message["d"]["code"].as_str().unwrap_or("error"));
                        return Err(ClientError::Closed);
                    }
                    _ => {}
                }
            }
            if result.is_some() {
                break;
            }
            continue;
        }
        if ctx.over() {
            break;
        }
        let Ok(message) = tokio::time::timeout(Duration::from_secs(1), socket.receive()).await
        else {
            continue;
        };
        let message = message?;
        match message["t"].as_str() {
            Some("moved") => {
                ply = message["d"]["ply"].as_u64().unwrap_or(ply);
                turn = message["d"]["turn"].as_u64();
                legal = pits(&message["d"]["legal"]);
            }
            Some("over") => {
                result = Some(message);
                break;
            }
            Some("error") => ctx.error(message["d"]["code"].as_str().unwrap_or("error")),
            _ => {}
        }
    }
    if counts_the_game {
        lock(&ctx.spectators.live).retain(|live| live != game);
    }
    if result.is_none() {
        socket.close().await;
        return Ok(Next::Over);
    }
    if counts_the_game {
        ctx.games.set(ctx.games.get() + 1);
    }
    if !rematch || ctx.over() {
        socket.close().await;
        return Ok(Next::Over);
    }
    socket.send(json!({"t": "rematch"})).await?;
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        let Ok(message) = tokio::time::timeout(Duration::from_secs(1), socket.receive()).await
        else {
            continue;
        };
        let message = message?;
        let next = match message["t"].as_str() {
            Some("rematch") => match message["d"]["game_id"].as_str() {
                Some(next) => Next::Rematch(next.to_owned()),
                None => Next::Over,
            },
            Some("error") => match socket_setback(ctx, &message) {
                Setback::Refused(wait) => Next::Refused(wait),
                Setback::Failed(_) => Next::Over,
            },
            _ => continue,
        };
        socket.close().await;
        return Ok(next);
    }
    ctx.error("no_rematch");
    socket.close().await;
    Ok(Next::Over)
}

impl Opponent {
    fn is_ai(self) -> bool {
        matches!(self, Opponent::Ai)
    }
}

/// How long a player that failed waits before the next one of its slot
/// arrives, and how long a refused one waits when the server names no
/// time.
const COME_BACK_AFTER: Duration = Duration::from_secs(5);

/// As the web client does: a new access token before the old one expires
/// (a socket is authenticated when it opens). False when that failed.
async fn keep_fresh(ctx: &Ctx, session: &mut Session, signed_in: &mut Instant) -> bool {
    if signed_in.elapsed() < Duration::from_secs(session.expires_in / 2) {
        return true;
    }
    match ctx.api.refresh(&session.refresh_token).await {
        Ok(fresh) => {
            (*session, *signed_in) = (fresh, Instant::now());
            true
        }
        Err(error) => {
            ctx.client_error(&error);
            false
        }
    }
}

/// One simulated player, from sign-in to leaving, as a person with the web
/// client: told the server is busy (a refused sign-in, queue entry or
/// rematch), it waits the `Retry-After` it was given and tries again,
/// keeping its guest session as the browser keeps it; a game without a
/// rematch sends it back to the queue. Whether it left on an error (then
/// the next player of the slot comes only after a while, rather than at
/// once: a load generator that retries at full speed measures its own
/// storm, not the server).
async fn player(ctx: Rc<Ctx>, index: u64) -> bool {
    ctx.players.set(ctx.players.get() + 1);
    let mut moves = Moves(0x2545_f491_4f6c_dd1d ^ (index + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut session = loop {
        match ctx.api.guest().await {
            Ok(session) => break session,
            Err(error) => {
                ctx.client_error(&error);
                match refusal_wait(&error) {
                    Some(wait) if !ctx.over() => tokio::time::sleep(wait).await,
                    _ => return true,
                }
            }
        }
    };
    let mut signed_in = Instant::now();
    let mut played = 0;
    while played < ctx.args.games_per_player && !ctx.over() {
        if !keep_fresh(&ctx, &mut session, &mut signed_in).await {
            return true;
        }
        let first = match ctx.args.opponent {
            Opponent::Queue => queue(&ctx, &session.access_token).await,
            Opponent::Ai => ai_game(&ctx, &session.access_token).await,
        };
        let mut game = match first {
            Ok(game) => game,
            Err(Setback::Refused(wait)) => {
                tokio::time::sleep(wait).await;
                continue;
            }
            Err(Setback::Failed(error)) => {
                ctx.client_error(&error);
                return true;
            }
        };
        loop {
            if !keep_fresh(&ctx, &mut session, &mut signed_in).await {
                return true;
            }
            played += 1;
            let rematch = played < ctx.args.games_per_player;
            match play(&ctx, &game, &session.access_token, &mut moves, rematch).await {
                Ok(Next::Rematch(next)) => game = next,
                Ok(Next::Over) => break,
                Ok(Next::Refused(wait)) => {
                    tokio::time::sleep(wait).await;
                    break;
                }
                Err(error) => {
                    ctx.client_error(&error);
                    return true;
                }
            }
        }
    }
    false
}

/// One watcher: follows live games (or the featured one) until the end.
async fn watcher(spectators: Arc<Spectators>, api: Api) {
    let mut last: Option<String> = None;
    while !spectators.over() {
        let game = if spectators.watch_one {
            lock(&spectators.featured)
                .clone()
                .filter(|game| Some(game) != last.as_ref())
        } else {
            let live = lock(&spectators.live);
            (!live.is_empty()).then(|| {
                let cursor = spectators.cursor.fetch_add(1, Ordering::Relaxed);
                live[cursor % live.len()].clone()
            })
        };
        let Some(game) = game else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        last = Some(game.clone());
        if let Err(error) = watch(&spectators, &api, &game).await {
            spectators.error(&describe(&error));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Just what a watcher needs of a message: its type and ply, decoded
/// without building the rest.
#[derive(serde::Deserialize)]
struct Head<'a> {
    t: &'a str,
    #[serde(default)]
    d: Option<PlyOnly>,
}

#[derive(serde::Deserialize)]
struct PlyOnly {
    #[serde(default)]
    ply: Option<u64>,
}

async fn watch(spectators: &Spectators, api: &Api, game: &str) -> Result<(), ClientError> {
    let url = format!("{}/v1/games/{game}/watch", spectators.games_base(game));
    let mut socket = JsonSocket::open(api, &url).await?;
    loop {
        let Ok(text) = tokio::time::timeout(Duration::from_secs(1), socket.receive_text()).await
        else {
            if spectators.over() {
                break;
            }
            continue;
        };
        let text = text?;
        let Ok(message) = serde_json::from_slice::<Head>(&text) else {
            spectators.error("decode");
            continue;
        };
        match message.t {
            "state" => {
                spectators.attached.fetch_add(1, Ordering::SeqCst);
            }
            "moved" => {
                let ply = message.d.and_then(|d| d.ply).unwrap_or(0);
                let now = Instant::now();
                if let Some((sent, last)) = lock(&spectators.sent).get_mut(&(game.to_owned(), ply))
                {
                    let _ = lock(&spectators.delay).record((now - *sent).as_micros().max(1) as u64);
                    *last = Some(last.map_or(now, |last| last.max(now)));
                }
            }
            "over" => break,
            _ => {}
        }
        if spectators.over() {
            break;
        }
    }
    socket.close().await;
    Ok(())
}

#[derive(Debug, Serialize)]
struct IdleReport {
    sockets: usize,
    opened: usize,
    server_rss_before_mb: f64,
    server_rss_after_mb: f64,
    server_bytes_per_socket: f64,
}

/// One window of a long run.
#[derive(Debug, Serialize)]
struct Window {
    /// Seconds from the start of the run to the window's end.
    ends_at_secs: u64,
    moves_per_second: f64,
    move_round_trip: Latency,
    /// Errors seen in the window.
    errors: u64,
    server_rss_mb: f64,
}

/// Where the open window began.
struct WindowStart {
    at: Instant,
    moves: u64,
    errors: u64,
}

impl WindowStart {
    fn at(ctx: &Ctx, at: Instant) -> WindowStart {
        WindowStart {
            at,
            moves: ctx.moves.get(),
            errors: ctx.errors.borrow().values().sum(),
        }
    }

    fn close(self, ctx: &Ctx, started: Instant, rss_bytes: u64) -> Window {
        let mut round_trip = ctx.window_round_trip.borrow_mut();
        let window = Window {
            ends_at_secs: started.elapsed().as_secs(),
            moves_per_second: (ctx.moves.get() - self.moves) as f64
                / self.at.elapsed().as_secs_f64(),
            move_round_trip: Latency::of(&round_trip),
            errors: ctx.errors.borrow().values().sum::<u64>() - self.errors,
            server_rss_mb: rss_bytes as f64 / (1024.0 * 1024.0),
        };
        round_trip.reset();
        window
    }
}

/// Holds `count` watch sockets open on a few idle games, and weighs them.
async fn idle(ctx: Rc<Ctx>, count: usize, sampler: Rc<RefCell<Sampler>>) -> Option<IdleReport> {
    let games = count.div_ceil(500).max(1);
    let mut ids = Vec::new();
    // A guest each: one player may only have a few casual games going.
    for _ in 0..games {
        let made = async {
            let session = ctx.api.guest().await?;
            ctx.api
                .post_json(
                    format!("{}/v1/hotseat-games", ctx.args.base),
                    json!({"variant": {"variant": ctx.args.variant}}),
                    Some(&session.access_token),
                )
                .await
        };
        match made.await {
            Ok(game) => ids.push(game["game_id"].as_str()?.to_owned()),
            Err(error) => {
                ctx.client_error(&error);
                return None;
            }
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = sampler.borrow_mut().sample().rss_bytes;
    let opened = Rc::new(Cell::new(0usize));
    let mut tasks = Vec::new();
    for index in 0..count {
        let url = format!(
            "{}/v1/games/{}/watch",
            ctx.games_base(&ids[index % games]),
            ids[index % games]
        );
        let (ctx, opened) = (ctx.clone(), opened.clone());
        tasks.push(actix_rt::spawn(async move {
            let Ok(mut socket) = JsonSocket::open(&ctx.api, &url).await else {
                ctx.error("idle_socket");
                return;
            };
            if socket.receive().await.is_ok() {
                opened.set(opened.get() + 1);
            }
            // Idle: read (pings, counts) until the run ends.
            while !ctx.over() {
                if tokio::time::timeout(Duration::from_secs(1), socket.receive())
                    .await
                    .is_ok_and(|received| received.is_err())
                {
                    ctx.error("idle_socket_closed");
                    return;
                }
            }
        }));
        if index % 500 == 499 {
            // Opened in waves, as people arrive, not in one burst.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let waiting = Instant::now();
    while opened.get() < count && waiting.elapsed() < Duration::from_secs(120) && !ctx.over() {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Settle: watcher counts published, buffers shrunk.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = sampler.borrow_mut().sample().rss_bytes;
    let mb = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    Some(IdleReport {
        sockets: count,
        opened: opened.get(),
        server_rss_before_mb: mb(before),
        server_rss_after_mb: mb(after),
        server_bytes_per_socket: (after.saturating_sub(before)) as f64 / opened.get().max(1) as f64,
    })
}

#[derive(Debug, Serialize)]
struct Report {
    label: String,
    opponent: Opponent,
    players: usize,
    arrival_rate: Option<f64>,
    games_per_player: u32,
    think_ms: u64,
    variant: String,
    watchers: usize,
    watch_one: bool,
    seconds: f64,
    players_started: u64,
    games_finished: u64,
    moves: u64,
    moves_per_second: f64,
    move_round_trip: Latency,
    time_to_match: Latency,
    watcher_delay: Latency,
    last_watcher_delay: Latency,
    idle: Option<IdleReport>,
    /// `--window-secs`: each window on its own, in order.
    windows: Vec<Window>,
    errors: BTreeMap<String, u64>,
    server: Option<ServerUsage>,
    /// This load client's own CPU over the window.
    client: ServerUsage,
}

fn main() -> std::process::ExitCode {
    let mut args = Args::parse();
    if args.games.is_empty() {
        args.games = vec![args.base.clone()];
    }
    let system = actix_rt::System::new();
    match system.block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("loadgen: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// At the end of the warm-up the CPU counters start over and the hook
/// snapshots the stores; at the deadline the hook snapshots them again.
/// The hook runs on threads of their own, the second waiting for the
/// first: the players on this one keep their pace, even if a snapshot
/// hangs.
async fn measured_window(
    ctx: Rc<Ctx>,
    server: Rc<RefCell<Sampler>>,
    client: Rc<RefCell<Sampler>>,
) -> Option<std::thread::JoinHandle<()>> {
    let hook = |phase: &'static str, after: Option<std::thread::JoinHandle<()>>| {
        let command = ctx.args.window_hook.clone()?;
        Some(std::thread::spawn(move || {
            if let Some(earlier) = after {
                let _ = earlier.join();
            }
            match std::process::Command::new("sh")
                .args(["-c", &command])
                .env("WINDOW", phase)
                .status()
            {
                Ok(status) if status.success() => {}
                outcome => eprintln!("loadgen: the window hook ({phase}): {outcome:?}"),
            }
        }))
    };
    tokio::time::sleep_until(ctx.steady_from.into()).await;
    server.borrow_mut().open_window();
    client.borrow_mut().open_window();
    let steady = hook("steady", None);
    tokio::time::sleep_until(ctx.deadline.into()).await;
    hook("end", steady)
}

fn time_control(text: &str) -> Result<(u32, u32), String> {
    let (initial, increment) = text
        .split_once('+')
        .ok_or_else(|| format!("time control {text:?}: expected initial+increment"))?;
    let minutes: u32 = initial
        .parse()
        .map_err(|_| format!("bad minutes in {text:?}"))?;
    let increment = increment
        .parse()
        .map_err(|_| format!("bad increment in {text:?}"))?;
    Ok((minutes * 60, increment))
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let ctx = Rc::new(Ctx {
        api: Api::new(&args.base, &args.games[0]),
        time_control: time_control(&args.time_control)?,
        deadline: started + Duration::from_secs(args.duration_secs),
        steady_from: started
            + if args.arrival_rate.is_none() && args.players > 0 {
                Duration::from_secs(args.ramp_secs.min(args.duration_secs / 2))
            } else {
                Duration::ZERO
            },
        round_trip: RefCell::new(histogram()?),
        window_round_trip: RefCell::new(histogram()?),
        time_to_match: RefCell::new(histogram()?),
        moves: Cell::new(0),
        games: Cell::new(0),
        players: Cell::new(0),
        errors: RefCell::default(),
        spectators: Arc::new(Spectators {
            deadline: started + Duration::from_secs(args.duration_secs),
            games: args.games.clone(),
            watch_one: args.watch_one,
            live: Mutex::default(),
            cursor: AtomicUsize::new(0),
            featured: Mutex::default(),
            attached: AtomicUsize::new(0),
            sent: Mutex::default(),
            delay: Mutex::new(histogram()?),
            errors: Mutex::default(),
        }),
        args,
    });
    let sampler = Rc::new(RefCell::new(Sampler::start(ctx.args.server_pids.clone())));
    let client = Rc::new(RefCell::new(Sampler::start(vec![std::process::id()])));
    let window = actix_rt::spawn(measured_window(
        ctx.clone(),
        sampler.clone(),
        client.clone(),
    ));
    let progress = if ctx.args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(ctx.args.duration_secs)
    };
    progress.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {msg}")?.progress_chars("=> "),
    );
    let windows = Rc::new(RefCell::new(Vec::new()));
    let ticker = actix_rt::spawn({
        let (ctx, sampler, progress) = (ctx.clone(), sampler.clone(), progress.clone());
        let windows = windows.clone();
        async move {
            let mut window = WindowStart::at(&ctx, started);
            while !ctx.over() {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let reading = sampler.borrow_mut().sample();
                if let Some(every) = ctx.args.window_secs
                    && window.at.elapsed() >= Duration::from_secs(every.max(1))
                {
                    windows
                        .borrow_mut()
                        .push(window.close(&ctx, started, reading.rss_bytes));
                    window = WindowStart::at(&ctx, Instant::now());
                }
                progress.set_position(started.elapsed().as_secs());
                progress.set_message(format!(
                    "{} moves, {} games, {} players, {} errors, server {:.0} MB",
                    ctx.moves.get(),
                    ctx.games.get(),
                    ctx.players.get(),
                    ctx.errors.borrow().values().sum::<u64>(),
                    reading.rss_bytes as f64 / (1024.0 * 1024.0),
                ));
            }
        }
    });
    let idle_task = (ctx.args.idle > 0)
        .then(|| actix_rt::spawn(idle(ctx.clone(), ctx.args.idle, sampler.clone())));
    // Watchers: a share on this thread, the rest on threads of their own,
    // each with its own runtime and HTTP client.
    let threads = ctx.args.watcher_threads.max(1);
    let mut helpers = Vec::new();
    for thread in 0..threads {
        let share = ctx.args.watchers / threads + usize::from(thread < ctx.args.watchers % threads);
        if thread == 0 {
            for _ in 0..share {
                actix_rt::spawn(watcher(ctx.spectators.clone(), ctx.api.clone()));
            }
            continue;
        }
        let spectators = ctx.spectators.clone();
        let (base, games) = (ctx.args.base.clone(), ctx.args.games[0].clone());
        helpers.push(std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let api = Api::new(&base, &games);
                let watchers: Vec<_> = (0..share)
                    .map(|_| actix_rt::spawn(watcher(spectators.clone(), api.clone())))
                    .collect();
                for watcher in watchers {
                    let _ = watcher.await;
                }
            });
        }));
    }
    let players_task = actix_rt::spawn({
        let ctx = ctx.clone();
        async move {
            let mut index = 0u64;
            if let Some(rate) = ctx.args.arrival_rate {
                // Arrivals on a fixed schedule, whatever the servers' pace.
                let every = Duration::from_secs_f64(1.0 / rate.max(0.001));
                let mut next = Instant::now();
                while !ctx.over() {
                    actix_rt::spawn(player(ctx.clone(), index));
                    index += 1;
                    next += every;
                    tokio::time::sleep_until(next.into()).await;
                }
            } else if ctx.args.players > 0 {
                let players = ctx.args.players as u64;
                let ramp = ctx.steady_from.saturating_duration_since(Instant::now());
                let slots: Vec<_> = (0..players)
                    .map(|slot| {
                        let ctx = ctx.clone();
                        let arrives = ramp.mul_f64(slot as f64 / players as f64);
                        actix_rt::spawn(async move {
                            tokio::time::sleep(arrives).await;
                            let mut round = 0u64;
                            while !ctx.over() {
                                if player(ctx.clone(), slot + round * 1_000_000).await {
                                    tokio::time::sleep(COME_BACK_AFTER).await;
                                }
                                round += 1;
                            }
                        })
                    })
                    .collect();
                for slot in slots {
                    let _ = slot.await;
                }
            }
        }
    });
    tokio::time::sleep_until(ctx.deadline.into()).await;
    let idle_report = match idle_task {
        Some(task) => task.await.ok().flatten(),
        None => None,
    };
    // Moves in flight at the deadline finish; none after it counts.
    let _ = tokio::time::timeout(Duration::from_secs(5), players_task).await;
    let _ = ticker.await;
    progress.finish_and_clear();
    // Rates over the measured (steady) part of the run.
    let seconds = ctx.deadline.duration_since(ctx.steady_from).as_secs_f64();
    let mut last_watcher = histogram()?;
    for helper in helpers {
        let _ = helper.join();
    }
    for (sent, last) in lock(&ctx.spectators.sent).values() {
        if let Some(last) = last {
            let _ = last_watcher.record((*last - *sent).as_micros().max(1) as u64);
        }
    }
    let server = (!ctx.args.server_pids.is_empty()).then(|| sampler.borrow_mut().usage());
    let client = client.borrow_mut().usage();
    if let Ok(Some(hooks)) = window.await {
        let _ = hooks.join();
    }
    let report = Report {
        label: ctx.args.label.clone(),
        opponent: ctx.args.opponent,
        players: ctx.args.players,
        arrival_rate: ctx.args.arrival_rate,
        games_per_player: ctx.args.games_per_player,
        think_ms: ctx.args.think_ms,
        variant: ctx.args.variant.clone(),
        watchers: ctx.args.watchers,
        watch_one: ctx.args.watch_one,
        seconds,
        players_started: ctx.players.get(),
        games_finished: ctx.games.get(),
        moves: ctx.moves.get(),
        moves_per_second: ctx.moves.get() as f64 / seconds,
        move_round_trip: Latency::of(&ctx.round_trip.borrow()),
        time_to_match: Latency::of(&ctx.time_to_match.borrow()),
        watcher_delay: Latency::of(&lock(&ctx.spectators.delay)),
        last_watcher_delay: Latency::of(&last_watcher),
        idle: idle_report,
        windows: windows.take(),
        errors: {
            let mut errors = ctx.errors.borrow().clone();
            for (what, count) in lock(&ctx.spectators.errors).iter() {
                *errors.entry(what.clone()).or_default() += count;
            }
            errors
        },
        server,
        client,
    };
    print_summary(&report);
    if let Some(path) = &ctx.args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

fn print_summary(report: &Report) {
    let latency = |name: &str, latency: &Latency| {
        if latency.count > 0 {
            println!(
                "{name}: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} samples)",
                latency.p50_ms, latency.p95_ms, latency.p99_ms, latency.max_ms, latency.count
            );
        }
    };
    println!(
        "{}{:.0} s: {} players, {} games finished, {} moves ({:.0} moves/s)",
        if report.label.is_empty() {
            String::new()
        } else {
            format!("[{}] ", report.label)
        },
        report.seconds,
        report.players_started,
        report.games_finished,
        report.moves,
        report.moves_per_second
    );
    latency("move round trip", &report.move_round_trip);
    latency("time to match", &report.time_to_match);
    latency("watcher delay (each delivery)", &report.watcher_delay);
    latency("last watcher delay (per move)", &report.last_watcher_delay);
    if let Some(idle) = &report.idle {
        println!(
            "idle sockets: {} of {} open; server RSS {:.1} -> {:.1} MB: {:.1} KB per socket",
            idle.opened,
            idle.sockets,
            idle.server_rss_before_mb,
            idle.server_rss_after_mb,
            idle.server_bytes_per_socket / 1024.0
        );
    }
    for window in &report.windows {
        println!(
            "window to {:>5} s: {:>6.0} moves/s, round trip p50 {:.2} / p99 {:.2} ms, {} errors, server {:.0} MB",
            window.ends_at_secs,
            window.moves_per_second,
            window.move_round_trip.p50_ms,
            window.move_round_trip.p99_ms,
            window.errors,
            window.server_rss_mb
        );
    }
    if let Some(server) = &report.server {
        println!(
            "server: RSS {:.0} MB at start, {:.0} MB peak, {:.0} MB at end; CPU {:.2} cores",
            server.rss_start_mb, server.rss_peak_mb, server.rss_end_mb, server.cpu_cores
        );
    }
    println!("errors: {:?}", report.errors);
}
