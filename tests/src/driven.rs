//! Games driven through a fault, as players would drive them: a socket
//! that drops is reopened (on any instance), `unavailable` is retried, and
//! the state after a reconnect says whether a move in flight was stored.
//! What each game saw acknowledged is checked against its stored record.

// A harness for tests and benches: a failure is a panic that names it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Ws, percentile, pits, play_when_free, recorded_moves, request};

const THINK: Duration = Duration::from_millis(40);

/// A game's moves as the players saw them acknowledged: (ply, seat, pit).
pub type Moves = Vec<(u64, u64, u64)>;

pub struct Game {
    pub id: String,
    pub tokens: [String; 2],
}

/// How many games have made their first `IN_PLAY` moves: a fault is
/// struck once every game is under way, however slow the machine.
pub type Started = Rc<std::cell::Cell<usize>>;

pub const IN_PLAY: usize = 4;

/// Waits until every one of `games` games is under way.
pub async fn until_all_started(started: &Started, games: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while started.get() < games {
        assert!(
            Instant::now() < deadline,
            "only {} of {games} games started",
            started.get()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What a driven game reports.
pub struct Outcome {
    pub id: String,
    pub acknowledged: Moves,
    pub over: bool,
    /// From a socket's loss to both players back in the game.
    pub reconnects: Vec<Duration>,
    pub unavailable: u64,
    /// When each acknowledged move was acknowledged (a move found stored
    /// after a reconnect counts from the reconnect).
    pub acknowledged_at: Vec<Instant>,
}

/// How a move sent ended.
enum Answer {
    Moved(Value),
    Refused,
    Lost,
}

async fn answer(ws: &mut Ws, ply: u64, game: &str) -> Answer {
    while let Some(message) = ws.next(Duration::from_secs(5)).await {
        match message["t"].as_str() {
            Some("moved") if message["d"]["ply"] == ply => {
                return Answer::Moved(message["d"].clone());
            }
            Some("error") if message["d"]["code"] == "unavailable" => return Answer::Refused,
            Some("error") => panic!("{game}: {message}"),
            _ => {}
        }
    }
    Answer::Lost
}

/// Plays `game` until `plies` moves are acknowledged or it ends.
pub async fn drive(
    game: Game,
    bases: Rc<RefCell<Vec<String>>>,
    plies: u64,
    started: Started,
) -> Outcome {
    drive_thinking(game, bases, plies, started, THINK).await
}

/// [`drive`], each player thinking `think` before a move.
pub async fn drive_thinking(
    game: Game,
    bases: Rc<RefCell<Vec<String>>>,
    plies: u64,
    started: Started,
    think: Duration,
) -> Outcome {
    let mut sockets: [Option<Ws>; 2] = [None, None];
    let mut outcome = Outcome {
        id: game.id.clone(),
        acknowledged: Vec::new(),
        over: false,
        reconnects: Vec::new(),
        unavailable: 0,
        acknowledged_at: Vec::new(),
    };
    let mut in_flight: Option<(u64, u64, u64)> = None;
    let mut lost_at: Option<Instant> = None;
    let (mut turn, mut legal) = (0usize, Vec::new());
    while (outcome.acknowledged.len() as u64) < plies {
        if sockets.iter().any(Option::is_none) {
            let bases = bases.borrow().clone();
            for (seat, socket) in sockets.iter_mut().enumerate() {
                let (ws, state) = play_when_free(
                    &bases,
                    &game.id,
                    &game.tokens[seat],
                    Duration::from_secs(30),
                )
                .await;
                *socket = Some(ws);
                let ply = state["ply"].as_u64().unwrap();
                // A move in flight when the socket dropped was stored or
                // not; the game's ply says which.
                if let Some(sent) = in_flight.take()
                    && ply == sent.0
                {
                    outcome.acknowledged.push(sent);
                    outcome.acknowledged_at.push(Instant::now());
                }
                assert_eq!(
                    ply,
                    outcome.acknowledged.len() as u64,
                    "{}: a move was lost",
                    game.id
                );
                turn = state["turn"].as_u64().unwrap_or(0) as usize;
                legal = pits(&state["legal"]);
            }
            if let Some(at) = lost_at.take() {
                outcome.reconnects.push(at.elapsed());
            }
        }
        if legal.is_empty() {
            outcome.over = true;
            break;
        }
        tokio::time::sleep(think).await;
        let ply = outcome.acknowledged.len() as u64 + 1;
        let pit = legal[(ply as usize * 5 + game.id.len()) % legal.len()];
        let mover = turn;
        in_flight = Some((ply, mover as u64, pit));
        let ws = sockets[mover].as_mut().unwrap();
        ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
            .await;
        match answer(ws, ply, &game.id).await {
            Answer::Moved(moved) => {
                outcome.acknowledged.push(in_flight.take().unwrap());
                outcome.acknowledged_at.push(Instant::now());
                if outcome.acknowledged.len() == IN_PLAY {
                    started.set(started.get() + 1);
                }
                turn = moved["turn"].as_u64().unwrap_or(0) as usize;
                legal = pits(&moved["legal"]);
                // The other player's copy keeps their socket read; a
                // socket that died shows on the next move.
                if let Some(other) = sockets[1 - mover].as_mut()
                    && other
                        .until_or_none("moved", Duration::from_secs(5))
                        .await
                        .is_none()
                {
                    sockets = [None, None];
                    lost_at = Some(Instant::now());
                }
            }
            Answer::Refused => {
                // Not stored (Postgres away): the same move again, later.
                outcome.unavailable += 1;
                in_flight = None;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Answer::Lost => {
                sockets = [None, None];
                lost_at = Some(Instant::now());
            }
        }
    }
    outcome
}

/// Every acknowledged move is in the game's record, in order.
pub async fn check_records(base: &str, outcomes: &[Outcome]) {
    for outcome in outcomes {
        let stored: Moves = recorded_moves(base, &outcome.id).await;
        assert_eq!(stored, outcome.acknowledged, "{}", outcome.id);
    }
}

/// `count` casual Kalah games between fresh guests, made through game-room's
/// internal endpoint on `games`.
pub async fn new_games(accounts: &str, games: &str, token: &str, count: usize) -> Vec<Game> {
    let mut made = Vec::new();
    for _ in 0..count {
        let mut players = Vec::new();
        for _ in 0..2 {
            let session = request(
                "POST",
                format!("{accounts}/v1/auth/guest"),
                Some(json!({})),
                None,
            )
            .await;
            players.push((
                session["player"]["id"].as_str().unwrap().to_owned(),
                session["access_token"].as_str().unwrap().to_owned(),
            ));
        }
        let seats: Vec<Value> = players
            .iter()
            .map(|(id, _)| json!({"player": {"id": id, "rating": 1500.0, "rd": 350.0}}))
            .collect();
        let created = request(
            "POST",
            format!("{games}/internal/v1/games"),
            Some(json!({"variant": {"variant": "kalah"}, "seats": seats, "rated": false})),
            Some(token),
        )
        .await;
        made.push(Game {
            id: created["id"].as_str().unwrap().to_owned(),
            tokens: [players[0].1.clone(), players[1].1.clone()],
        });
    }
    made
}

pub async fn drive_all(
    games: Vec<Game>,
    bases: &Rc<RefCell<Vec<String>>>,
    plies: u64,
    started: &Started,
) -> Vec<Outcome> {
    drive_all_thinking(games, bases, plies, started, THINK).await
}

/// [`drive_all`], each player thinking `think` before a move.
pub async fn drive_all_thinking(
    games: Vec<Game>,
    bases: &Rc<RefCell<Vec<String>>>,
    plies: u64,
    started: &Started,
    think: Duration,
) -> Vec<Outcome> {
    let drivers = games.into_iter().map(|game| {
        actix_rt::spawn(drive_thinking(
            game,
            bases.clone(),
            plies,
            started.clone(),
            think,
        ))
    });
    let mut outcomes = Vec::new();
    for driver in drivers.collect::<Vec<_>>() {
        outcomes.push(driver.await.unwrap());
    }
    outcomes
}

/// For each game that was still being played at `fault`, how long after it
/// its next move was acknowledged (a game over before it is left out, one
/// that never moved again counts as never).
pub fn moving_again_after(outcomes: &[Outcome], fault: Instant) -> Vec<Option<Duration>> {
    outcomes
        .iter()
        .filter(|outcome| {
            !outcome.over || outcome.acknowledged_at.last().is_some_and(|at| *at > fault)
        })
        .map(|outcome| {
            outcome
                .acknowledged_at
                .iter()
                .find(|at| **at > fault)
                .map(|at| at.duration_since(fault))
        })
        .collect()
}

/// The gaps, sorted, as a line for the test's output: p50, p99, max.
pub fn summary(gaps: &[Option<Duration>]) -> String {
    let mut moved: Vec<Duration> = gaps.iter().flatten().copied().collect();
    format!(
        "{} of {} games moved again; p50 {:?}, p99 {:?}, max {:?}",
        moved.len(),
        gaps.len(),
        percentile(&mut moved, 0.5),
        percentile(&mut moved, 0.99),
        percentile(&mut moved, 1.0)
    )
}

/// The baseline beside a fault's gaps: the time between a game's
/// consecutive acknowledged moves before `fault`, p50 and p99.
pub fn pace_before(outcomes: &[Outcome], fault: Instant) -> (Duration, Duration) {
    let mut gaps: Vec<Duration> = outcomes
        .iter()
        .flat_map(|outcome| {
            outcome
                .acknowledged_at
                .windows(2)
                .filter(|pair| pair[1] < fault)
                .map(|pair| pair[1].duration_since(pair[0]))
                .collect::<Vec<_>>()
        })
        .collect();
    (percentile(&mut gaps, 0.5), percentile(&mut gaps, 0.99))
}
