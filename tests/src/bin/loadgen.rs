//! `loadgen`: plays many concurrent games against running services and
//! reports the move round trip (client send to the mover's own `moved`,
//! the durable write included) and moves per second.
//!
//! Each of `--concurrency` slots signs two guests in, has game-room create
//! a game for them, plays it to the end with random legal moves (after
//! `--think-ms`), then starts another, until `--duration-secs` is up.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use clap::Parser;
use hdrhistogram::Histogram;
use mancala_proto::game::ServerMessage;
use mancala_proto::{ClientMessage, Session};
use mancala_tests::client::{Api, ClientError, GameSocket};
use mancala_tests::report::{Latency, histogram};
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(about = "Plays concurrent games against the services and reports latencies")]
struct Args {
    /// The accounts API (matchmaking) base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    accounts: String,
    /// The game-room base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    games: String,
    /// The token for game-room's internal endpoint (APP_INTERNAL_TOKEN).
    #[arg(long, env = "APP_INTERNAL_TOKEN")]
    service_token: String,
    /// Games in play at once.
    #[arg(long, default_value_t = 100)]
    concurrency: usize,
    #[arg(long, default_value_t = 20)]
    duration_secs: u64,
    /// Pause before each move.
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    #[arg(long, default_value = "kalah")]
    variant: String,
    /// Also write the report here, as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
}

#[derive(Debug, Serialize)]
struct Report {
    concurrency: usize,
    variant: String,
    think_ms: u64,
    seconds: f64,
    games_finished: u64,
    moves: u64,
    moves_per_second: f64,
    move_round_trip: Latency,
    errors: BTreeMap<String, u64>,
}

struct Tally {
    round_trip: Histogram<u64>,
    moves: u64,
    games: u64,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn error(&mut self, what: &str) {
        *self.errors.entry(what.to_owned()).or_default() += 1;
    }
}

type Shared = Rc<RefCell<Tally>>;

fn describe(error: &ClientError) -> String {
    match error {
        ClientError::Status { status, .. } => format!("http_{status}"),
        ClientError::Closed => "socket_closed".into(),
        ClientError::Http(_) => "http".into(),
        ClientError::Socket(_) => "socket".into(),
        ClientError::Decode(_) => "decode".into(),
    }
}

/// Waits on one socket for the `moved` of `ply`, counting errors.
async fn until_moved(socket: &mut GameSocket, ply: u32, tally: &Shared) -> Result<(), ClientError> {
    loop {
        match socket.receive().await? {
            ServerMessage::Moved(moved) if moved.ply == ply => return Ok(()),
            ServerMessage::Error(error) => {
                tally.borrow_mut().error(error.code.as_str());
                return Err(ClientError::Decode(error.message));
            }
            _ => {}
        }
    }
}

async fn play_one(
    api: &Api,
    args: &Args,
    players: &[Session; 2],
    seed: &mut u64,
    tally: &Shared,
    deadline: Instant,
) -> Result<(), ClientError> {
    let game = api
        .create_game(
            &args.service_token,
            &args.variant,
            [players[0].player.id, players[1].player.id],
            false,
        )
        .await?;
    let mut sockets = Vec::with_capacity(2);
    let mut state = None;
    for player in players {
        let mut socket = api.socket(&game.play_path).await?;
        socket
            .send(&ClientMessage::Auth {
                token: player.access_token.clone(),
            })
            .await?;
        loop {
            if let ServerMessage::State(snapshot) = socket.receive().await? {
                state = Some(snapshot);
                break;
            }
        }
        sockets.push(socket);
    }
    let Some(state) = state else { return Ok(()) };
    let (mut turn, mut legal, mut ply) = (state.turn, state.legal.clone(), state.ply);
    while let Some(mover) = turn {
        if Instant::now() >= deadline {
            break;
        }
        if args.think_ms > 0 {
            tokio::time::sleep(Duration::from_millis(args.think_ms)).await;
        }
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let pit = legal[(*seed % legal.len() as u64) as usize];
        ply += 1;
        let started = Instant::now();
        let mover = mover as usize;
        sockets[mover]
            .send(&ClientMessage::Move { pit, ply })
            .await?;
        // The mover's own `moved` is the acknowledgement.
        loop {
            match sockets[mover].receive().await? {
                ServerMessage::Moved(moved) if moved.ply == ply => {
                    let micros = started.elapsed().as_micros() as u64;
                    let mut shared = tally.borrow_mut();
                    let _ = shared.round_trip.record(micros.max(1));
                    shared.moves += 1;
                    turn = moved.turn;
                    legal = moved.legal;
                    break;
                }
                ServerMessage::Error(error) => {
                    tally.borrow_mut().error(error.code.as_str());
                    return Err(ClientError::Decode(error.message));
                }
                _ => {}
            }
        }
        until_moved(&mut sockets[1 - mover], ply, tally).await?;
    }
    if turn.is_none() {
        tally.borrow_mut().games += 1;
    }
    for socket in sockets {
        socket.close().await;
    }
    Ok(())
}

async fn slot(api: Api, args: Rc<Args>, index: usize, tally: Shared, deadline: Instant) {
    let mut seed = 0x2545_f491_4f6c_dd1d ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let players = match (api.guest().await, api.guest().await) {
        (Ok(a), Ok(b)) => [a, b],
        (Err(error), _) | (_, Err(error)) => {
            tally.borrow_mut().error(&describe(&error));
            return;
        }
    };
    while Instant::now() < deadline {
        if let Err(error) = play_one(&api, &args, &players, &mut seed, &tally, deadline).await {
            tally.borrow_mut().error(&describe(&error));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let system = actix_rt::System::new();
    let outcome = system.block_on(run(args));
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("loadgen: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let api = Api::new(&args.accounts, &args.games);
    let tally: Shared = Rc::new(RefCell::new(Tally {
        round_trip: histogram()?,
        moves: 0,
        games: 0,
        errors: BTreeMap::new(),
    }));
    let args = Rc::new(args);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.duration_secs);
    let mut slots = Vec::new();
    for index in 0..args.concurrency {
        slots.push(actix_rt::spawn(slot(
            api.clone(),
            args.clone(),
            index,
            tally.clone(),
            deadline,
        )));
    }
    for task in slots {
        let _ = task.await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let tally = tally.borrow();
    let report = Report {
        concurrency: args.concurrency,
        variant: args.variant.clone(),
        think_ms: args.think_ms,
        seconds,
        games_finished: tally.games,
        moves: tally.moves,
        moves_per_second: tally.moves as f64 / seconds,
        move_round_trip: Latency::of(&tally.round_trip),
        errors: tally.errors.clone(),
    };
    println!(
        "{} games at once, {:.1} s: {} moves, {:.0} moves/s, {} games finished\n\
         move round trip: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms\n\
         errors: {:?}",
        report.concurrency,
        report.seconds,
        report.moves,
        report.moves_per_second,
        report.games_finished,
        report.move_round_trip.p50_ms,
        report.move_round_trip.p95_ms,
        report.move_round_trip.p99_ms,
        report.move_round_trip.max_ms,
        report.errors,
    );
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
