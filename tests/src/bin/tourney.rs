//! `tourney`: bots that play whole arena tournaments at human pace.
//!
//! A registered organiser makes `--arenas` private arenas starting
//! `--lead-secs` from now and lasting `--minutes`; `--players` guests
//! (spread over the arenas) join with the code before the start, and each
//! keeps what the tournament page keeps open: the lobby socket (presence,
//! and the `matched` of its next game) and the standings socket. A bot
//! plays each game it is given, thinking 1 to 5 s (seeded) a move, and
//! waits for the next pairing, until its arena ends.
//!
//! Measured in the same run: the move round trip; every standings push's
//! delay from the change to the bot (the server stamps the change, the
//! bot reads the same clock); how long a bot waits from a game's end to
//! its next pairing; the server's own wave figures (`/metrics`:
//! `tournament_wave_seconds`, the whole wave with every game made); and
//! the server's RSS and CPU, a minute at a time.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use hdrhistogram::Histogram;
use mancala_tests::abuse::{metric, metrics_text};
use mancala_tests::client::{Api, ClientError, JsonSocket};
use mancala_tests::harness::registered_player;
use mancala_tests::report::{Latency, histogram};
use mancala_tests::server_stats::{Sampler, ServerUsage};
use serde::Serialize;
use serde_json::{Value, json};

#[derive(Parser, Debug, Clone)]
#[command(about = "Bots playing arena tournaments at human pace")]
struct Args {
    /// The arena (or the proxy in front of the services).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    base: String,
    /// Processes whose RSS and CPU are reported.
    #[arg(long, value_delimiter = ',')]
    server_pids: Vec<u32>,
    /// Bots in all, spread evenly over the arenas.
    #[arg(long, default_value_t = 1000)]
    players: usize,
    #[arg(long, default_value_t = 1)]
    arenas: usize,
    /// How long each arena runs.
    #[arg(long, default_value_t = 30)]
    minutes: u32,
    /// Seconds from now to the start: the bots join meanwhile.
    #[arg(long, default_value_t = 60)]
    lead_secs: u32,
    #[arg(long, default_value_t = 1000)]
    think_min_ms: u64,
    #[arg(long, default_value_t = 5000)]
    think_max_ms: u64,
    /// Seconds of the clock and of the increment.
    #[arg(long, default_value_t = 180)]
    initial_secs: u32,
    #[arg(long, default_value_t = 2)]
    increment_secs: u32,
    /// Client threads (each a runtime with its share of the bots).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long, default_value = "tournament")]
    label: String,
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

/// What every bot adds to, across threads.
struct Tally {
    round_trip: Histogram<u64>,
    fanout: Histogram<u64>,
    repair: Histogram<u64>,
    window_round_trip: Histogram<u64>,
    window_fanout: Histogram<u64>,
    moves: u64,
    window_moves: u64,
    games: u64,
    pushes: u64,
    errors: BTreeMap<String, u64>,
    window_errors: u64,
}

type Shared = Arc<Mutex<Tally>>;

fn tally(shared: &Shared) -> std::sync::MutexGuard<'_, Tally> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn error(shared: &Shared, what: &str) {
    let mut tally = tally(shared);
    *tally.errors.entry(what.to_owned()).or_default() += 1;
    tally.window_errors += 1;
}

fn client_error(shared: &Shared, failure: &ClientError) {
    let what = match failure {
        ClientError::Status { status, .. } => format!("http_{status}"),
        ClientError::Http(_) => "http".to_owned(),
        ClientError::Socket(_) => "socket".to_owned(),
        ClientError::Closed => "closed".to_owned(),
        ClientError::Decode(_) => "decode".to_owned(),
    };
    error(shared, &what);
}

fn micros(since: Instant) -> u64 {
    (since.elapsed().as_micros() as u64).max(1)
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A seeded xorshift: think times and moves that repeat for a seed.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high.saturating_sub(low) + 1)
    }
}

fn pits(legal: &Value) -> Vec<u64> {
    legal
        .as_array()
        .map(|pits| pits.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

fn ws(base: &str, path: &str) -> String {
    format!("{}{path}", base.replacen("http", "ws", 1))
}

/// One arena the bots play in.
#[derive(Clone)]
struct Arena {
    id: String,
    code: String,
    ends_at: Instant,
}

/// One bot, from joining to its arena's end.
async fn bot(args: Rc<Args>, api: Api, arena: Arena, shared: Shared, seed: u64) {
    let mut dice = Dice(0x2545_f491_4f6c_dd1d ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut session = match api.guest().await {
        Ok(session) => session,
        Err(failure) => return client_error(&shared, &failure),
    };
    let mut signed_in = Instant::now();
    let joined = api
        .post_json(
            format!("{}/v1/tournaments/{}/join", args.base, arena.id),
            json!({"code": arena.code}),
            Some(&session.access_token),
        )
        .await;
    // 204 has no body: a decode error is the success.
    if let Err(failure) = joined
        && !matches!(failure, ClientError::Decode(_))
    {
        return client_error(&shared, &failure);
    }
    // The standings socket, read to the end on a task of its own.
    let standings = {
        let (api, shared, token) = (api.clone(), shared.clone(), session.access_token.clone());
        let url = ws(&args.base, &format!("/v1/tournaments/{}/live", arena.id));
        let ends_at = arena.ends_at;
        actix_rt::spawn(async move { follow(api, url, token, shared, ends_at).await })
    };
    let (games_tx, mut games) = tokio::sync::mpsc::unbounded_channel::<String>();
    let lobby = {
        let (api, shared, token) = (api.clone(), shared.clone(), session.access_token.clone());
        let url = ws(&args.base, "/v1/lobby");
        actix_rt::spawn(async move { lobby(api, url, token, shared, games_tx).await })
    };
    let mut free_since = None;
    while Instant::now() < arena.ends_at {
        let left = arena.ends_at.saturating_duration_since(Instant::now());
        let Ok(Some(game)) = tokio::time::timeout(left, games.recv()).await else {
            break;
        };
        if let Some(since) = free_since.take() {
            let _ = tally(&shared).repair.record(micros(since));
        }
        if signed_in.elapsed() > Duration::from_secs(session.expires_in / 2) {
            match api.refresh(&session.refresh_token).await {
                Ok(fresh) => (session, signed_in) = (fresh, Instant::now()),
                Err(failure) => client_error(&shared, &failure),
            }
        }
        let ends_at = arena.ends_at;
        match play(
            &args,
            &api,
            &game,
            &session.access_token,
            &mut dice,
            &shared,
            ends_at,
        )
        .await
        {
            Ok(()) => free_since = Some(Instant::now()),
            Err(failure) => client_error(&shared, &failure),
        }
    }
    lobby.abort();
    let _ = standings.await;
}

/// The lobby socket: presence, and each `matched` of the arena.
async fn lobby(
    api: Api,
    url: String,
    token: String,
    shared: Shared,
    games: tokio::sync::mpsc::UnboundedSender<String>,
) {
    let opened = async {
        let mut socket = JsonSocket::open(&api, &url).await?;
        socket
            .send(json!({"t": "auth", "d": {"token": token}}))
            .await?;
        Ok::<_, ClientError>(socket)
    };
    let mut socket = match opened.await {
        Ok(socket) => socket,
        Err(failure) => return client_error(&shared, &failure),
    };
    loop {
        match socket.receive().await {
            Ok(message) if message["t"] == "matched" => {
                let game = message["d"]["game_id"].as_str().unwrap_or_default();
                if games.send(game.to_owned()).is_err() {
                    return;
                }
            }
            Ok(message) if message["t"] == "error" => {
                error(&shared, message["d"]["code"].as_str().unwrap_or("error"));
            }
            Ok(_) => {}
            Err(failure) => return client_error(&shared, &failure),
        }
    }
}

/// The standings socket until the arena's end: every push's delay.
async fn follow(api: Api, url: String, token: String, shared: Shared, ends_at: Instant) {
    let opened = async {
        let mut socket = JsonSocket::open(&api, &url).await?;
        socket
            .send(json!({"t": "auth", "d": {"token": token}}))
            .await?;
        Ok::<_, ClientError>(socket)
    };
    let mut socket = match opened.await {
        Ok(socket) => socket,
        Err(failure) => return client_error(&shared, &failure),
    };
    loop {
        let left = (ends_at + Duration::from_secs(5)).saturating_duration_since(Instant::now());
        let Ok(received) = tokio::time::timeout(left, socket.receive_text()).await else {
            break;
        };
        let text = match received {
            Ok(text) => text,
            Err(failure) => return client_error(&shared, &failure),
        };
        let now = wall_ms();
        // Only the stamp is read: a thousand bots on one thread.
        #[derive(serde::Deserialize)]
        struct Head {
            t: String,
            d: Option<Stamp>,
        }
        #[derive(serde::Deserialize)]
        struct Stamp {
            changed_at_ms: Option<u64>,
        }
        let Ok(head) = serde_json::from_slice::<Head>(&text) else {
            error(&shared, "decode");
            continue;
        };
        if head.t != "standings" {
            continue;
        }
        if let Some(at) = head.d.and_then(|d| d.changed_at_ms) {
            let delay = now.saturating_sub(at).max(1) * 1000;
            let mut tally = tally(&shared);
            tally.pushes += 1;
            let _ = tally.fanout.record(delay);
            let _ = tally.window_fanout.record(delay);
        }
    }
    socket.close().await;
}

/// Plays one game to its end, thinking before each move.
async fn play(
    args: &Args,
    api: &Api,
    game: &str,
    token: &str,
    dice: &mut Dice,
    shared: &Shared,
    ends_at: Instant,
) -> Result<(), ClientError> {
    let mut socket =
        JsonSocket::open(api, &ws(&args.base, &format!("/v1/games/{game}/play"))).await?;
    socket
        .send(json!({"t": "auth", "d": {"token": token}}))
        .await?;
    let state = loop {
        let message = socket.receive().await?;
        match message["t"].as_str() {
            Some("state") => break message["d"].clone(),
            Some("error") => {
                error(shared, message["d"]["code"].as_str().unwrap_or("error"));
                return Err(ClientError::Closed);
            }
            _ => {}
        }
    };
    let you = state["you"].as_u64();
    let (mut turn, mut legal, mut ply) = (
        state["turn"].as_u64(),
        pits(&state["legal"]),
        state["ply"].as_u64().unwrap_or(0),
    );
    let mut resigned = false;
    loop {
        // The arena is over: a game still going no longer counts, and a
        // person would leave it.
        if Instant::now() >= ends_at && !resigned {
            socket.send(json!({"t": "resign"})).await?;
            resigned = true;
        }
        if turn.is_some() && turn == you && !resigned {
            let think = dice.between(args.think_min_ms, args.think_max_ms);
            tokio::time::sleep(Duration::from_millis(think)).await;
            let pick = (dice.next() % legal.len().max(1) as u64) as usize;
            let Some(&pit) = legal.get(pick) else {
                error(shared, "no_legal_move");
                break;
            };
            ply += 1;
            let sent = Instant::now();
            socket
                .send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                .await?;
            loop {
                let message = socket.receive().await?;
                match message["t"].as_str() {
                    Some("moved") if message["d"]["ply"].as_u64() == Some(ply) => {
                        let mut tally = tally(shared);
                        let _ = tally.round_trip.record(micros(sent));
                        let _ = tally.window_round_trip.record(micros(sent));
                        tally.moves += 1;
                        tally.window_moves += 1;
                        drop(tally);
                        turn = message["d"]["turn"].as_u64();
                        legal = pits(&message["d"]["legal"]);
                        break;
                    }
                    Some("over") => {
                        turn = None;
                        break;
                    }
                    Some("error") => {
                        error(shared, message["d"]["code"].as_str().unwrap_or("error"));
                        socket.close().await;
                        return Err(ClientError::Closed);
                    }
                    _ => {}
                }
            }
            if turn.is_none() {
                break;
            }
            continue;
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
            Some("over") => break,
            // Both resigning at the end: the second is refused, rightly.
            Some("error") if !resigned => {
                error(shared, message["d"]["code"].as_str().unwrap_or("error"));
            }
            _ => {}
        }
    }
    if you == Some(0) {
        tally(shared).games += 1;
    }
    socket.close().await;
    Ok(())
}

/// The server's pairing waves, as it measured them.
#[derive(Debug, Default, Serialize)]
struct Waves {
    count: f64,
    /// The whole wave (standings fold, pairing, every seat and game), ms,
    /// over the last minute of the run (the server's summaries forget).
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    /// The largest wave since the server started (an arena's first):
    /// players paired, and how long it took, ms.
    largest_players: f64,
    largest_ms: f64,
    /// The pairing and game-making part of the waves, ms.
    pairing_max_ms: f64,
}

async fn waves(base: &str) -> Waves {
    let Some(text) = metrics_text(base).await else {
        return Waves::default();
    };
    let quantile = |name: &str, q: &str| {
        metric(&text, &format!("{name}{{quantile=\"{q}\"}}")).unwrap_or(0.0) * 1000.0
    };
    let value = |series: &str| metric(&text, series).unwrap_or(0.0);
    Waves {
        count: value("tournament_wave_seconds_count"),
        p50_ms: quantile("tournament_wave_seconds", "0.5"),
        p99_ms: quantile("tournament_wave_seconds", "0.99"),
        max_ms: quantile("tournament_wave_seconds", "1"),
        largest_players: value("tournament_wave_largest_players"),
        largest_ms: value("tournament_wave_largest_seconds") * 1000.0,
        pairing_max_ms: quantile("tournament_wave_pairing_seconds", "1"),
    }
}

#[derive(Debug, Serialize)]
struct Window {
    ends_at_secs: u64,
    moves_per_second: f64,
    move_round_trip: Latency,
    standings_fanout: Latency,
    errors: u64,
    server_rss_mb: f64,
}

#[derive(Debug, Serialize)]
struct Report {
    label: String,
    players: usize,
    arenas: usize,
    minutes: u32,
    think_ms: [u64; 2],
    seconds: f64,
    moves: u64,
    moves_per_second: f64,
    games: u64,
    standings_pushes: u64,
    move_round_trip: Latency,
    standings_fanout: Latency,
    /// From a game's end to the bot's next pairing.
    pairing_again: Latency,
    waves: Waves,
    errors: BTreeMap<String, u64>,
    server: ServerUsage,
    windows: Vec<Window>,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match actix_rt::System::new().block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("tourney: {failure}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new(&args.base, &args.base);
    let (_, organiser) =
        registered_player(&args.base, &format!("host{}", wall_ms() % 1_000_000)).await;
    let mut arenas = Vec::new();
    let ends_at = Instant::now()
        + Duration::from_secs(u64::from(args.lead_secs) + u64::from(args.minutes) * 60);
    for index in 0..args.arenas.max(1) {
        let made = api
            .post_json(
                format!("{}/v1/tournaments", args.base),
                json!({"name": format!("Bench arena {}", index + 1), "variant": "kalah",
                       "time_control": {"initial_secs": args.initial_secs,
                                        "increment_secs": args.increment_secs},
                       "minutes": args.minutes, "starts_in_secs": args.lead_secs,
                       "max_players": 10_000}),
                Some(&organiser),
            )
            .await?;
        arenas.push(Arena {
            id: made["id"].as_str().unwrap_or_default().to_owned(),
            code: made["code"].as_str().unwrap_or_default().to_owned(),
            ends_at,
        });
    }
    let shared: Shared = Arc::new(Mutex::new(Tally {
        round_trip: histogram()?,
        fanout: histogram()?,
        repair: histogram()?,
        window_round_trip: histogram()?,
        window_fanout: histogram()?,
        moves: 0,
        window_moves: 0,
        games: 0,
        pushes: 0,
        errors: BTreeMap::new(),
        window_errors: 0,
    }));
    let started = Instant::now();
    let sampler = Rc::new(RefCell::new(Sampler::start(args.server_pids.clone())));
    let windows = Rc::new(RefCell::new(Vec::new()));
    let ticker = actix_rt::spawn({
        let (shared, sampler, windows) = (shared.clone(), sampler.clone(), windows.clone());
        async move {
            let mut at = Instant::now();
            while Instant::now() < ends_at {
                tokio::time::sleep(Duration::from_secs(60)).await;
                let rss = sampler.borrow_mut().sample().rss_bytes;
                let mut tally = tally(&shared);
                let window = Window {
                    ends_at_secs: started.elapsed().as_secs(),
                    moves_per_second: tally.window_moves as f64 / at.elapsed().as_secs_f64(),
                    move_round_trip: Latency::of(&tally.window_round_trip),
                    standings_fanout: Latency::of(&tally.window_fanout),
                    errors: tally.window_errors,
                    server_rss_mb: rss as f64 / (1024.0 * 1024.0),
                };
                eprintln!(
                    "{:>5} s: {:.0} moves/s, move p99 {:.1} ms, push p99 {:.1} ms, {} errors, server {:.0} MB",
                    window.ends_at_secs,
                    window.moves_per_second,
                    window.move_round_trip.p99_ms,
                    window.standings_fanout.p99_ms,
                    window.errors,
                    window.server_rss_mb
                );
                windows.borrow_mut().push(window);
                tally.window_round_trip.reset();
                tally.window_fanout.reset();
                tally.window_moves = 0;
                tally.window_errors = 0;
                at = Instant::now();
            }
        }
    });
    // The bots, a share per thread, arriving over the lead's first half.
    let args = Rc::new(args);
    let threads = args.threads.max(1);
    let mut helpers = Vec::new();
    let arrive_over = Duration::from_secs(u64::from(args.lead_secs) / 2);
    for thread in 0..threads {
        let own: Vec<(usize, Arena)> = (0..args.players)
            .filter(|bot| bot % threads == thread)
            .map(|bot| (bot, arenas[bot % arenas.len()].clone()))
            .collect();
        let (shared, plain_args) = (shared.clone(), (*args).clone());
        let total = args.players.max(1);
        helpers.push(std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let args = Rc::new(plain_args);
                let api = Api::new(&args.base, &args.base);
                let began = Instant::now();
                let mut bots = Vec::new();
                for (bot, arena) in own {
                    let at = began + arrive_over.mul_f64(bot as f64 / total as f64);
                    tokio::time::sleep_until(at.into()).await;
                    bots.push(actix_rt::spawn(self::bot(
                        args.clone(),
                        api.clone(),
                        arena,
                        shared.clone(),
                        bot as u64,
                    )));
                }
                for bot in bots {
                    let _ = bot.await;
                }
            });
        }));
    }
    // The helper threads are joined off this runtime's thread.
    let joined = tokio::task::spawn_blocking(move || {
        for helper in helpers {
            let _ = helper.join();
        }
    });
    let _ = joined.await;
    ticker.abort();
    let seconds = started.elapsed().as_secs_f64();
    let waves = waves(&args.base).await;
    let server = sampler.borrow_mut().usage();
    let tally = tally(&shared);
    let playing = f64::from(args.minutes) * 60.0;
    let report = Report {
        label: args.label.clone(),
        players: args.players,
        arenas: arenas.len(),
        minutes: args.minutes,
        think_ms: [args.think_min_ms, args.think_max_ms],
        seconds,
        moves: tally.moves,
        moves_per_second: tally.moves as f64 / playing.max(1.0),
        games: tally.games,
        standings_pushes: tally.pushes,
        move_round_trip: Latency::of(&tally.round_trip),
        standings_fanout: Latency::of(&tally.fanout),
        pairing_again: Latency::of(&tally.repair),
        waves,
        errors: tally.errors.clone(),
        server,
        windows: std::mem::take(&mut *windows.borrow_mut()),
    };
    println!(
        "{}: {} bots in {} arena(s) of {} min; {} games, {} moves ({:.0}/s), move p50/p99 {:.2}/{:.2} ms; \
         standings pushes {} p50/p99/max {:.1}/{:.1}/{:.1} ms; paired again p50/p99 {:.0}/{:.0} ms; \
         waves {} p99 {:.1} ms max {:.1} ms (the last minute's), the largest {} players in {:.1} ms; server RSS {:.0}/{:.0}/{:.0} MB \
         (start/peak/end), CPU {:.2} cores; errors {:?}",
        report.label,
        report.players,
        report.arenas,
        report.minutes,
        report.games,
        report.moves,
        report.moves_per_second,
        report.move_round_trip.p50_ms,
        report.move_round_trip.p99_ms,
        report.standings_pushes,
        report.standings_fanout.p50_ms,
        report.standings_fanout.p99_ms,
        report.standings_fanout.max_ms,
        report.pairing_again.p50_ms,
        report.pairing_again.p99_ms,
        report.waves.count,
        report.waves.p99_ms,
        report.waves.max_ms,
        report.waves.largest_players,
        report.waves.largest_ms,
        report.server.rss_start_mb,
        report.server.rss_peak_mb,
        report.server.rss_end_mb,
        report.server.cpu_cores,
        report.errors,
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
