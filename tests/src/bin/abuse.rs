//! What one hostile guest costs everyone else: a probe player's move round
//! trip (a hotseat Oware game, a move every 20 ms) measured alone, then
//! while each attack runs, with the server's memory. One run, one server:
//! the figures are ratios to the same run's baseline.
//!
//! `abuse --base http://127.0.0.1:18080 --server-pid PID [--phase-secs 10]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use mancala_tests::abuse::{self, Tally};
use mancala_tests::harness::{Guest, guest, percentile};
use mancala_tests::server_stats;
use serde_json::{Value, json};

#[derive(Parser)]
struct Args {
    /// The server (the `arena` process).
    #[arg(long, default_value = "http://127.0.0.1:18080")]
    base: String,
    /// The server's process id, for its memory.
    #[arg(long)]
    server_pid: u32,
    /// How long each attack runs.
    #[arg(long, default_value_t = 10)]
    phase_secs: u64,
    /// Attacks to run (default: all).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Where to write the table as JSON.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    #[arg(long, default_value = "")]
    label: String,
    /// Also run an honest player against this AI level (e.g. `advanced`),
    /// timing each AI reply, beside the hotseat probe.
    #[arg(long)]
    ai_probe: Option<String>,
    /// After the last attack, wait this long and read the server's memory
    /// again: what the crowd left behind.
    #[arg(long, default_value_t = 0)]
    settle_secs: u64,
}

/// The probe's round trips, gathered while it runs (on its own thread, so
/// that the attacks' client work never delays its reads).
type Samples = Arc<Mutex<Vec<Duration>>>;

/// What the probes gather: the hotseat player's move round trips and the
/// honest AI player's reply times.
#[derive(Default)]
struct Probes {
    moves: Samples,
    ai_replies: Samples,
}

/// Plays hotseat Oware moves every 20 ms, for ever, recording each move's
/// round trip; a finished game makes the next.
async fn probe(base: String, samples: Samples, game: Arc<Mutex<String>>) {
    let player = guest(&base).await;
    loop {
        let answer = abuse::post(
            format!("{base}/v1/hotseat-games"),
            json!({"variant": {"variant": "oware"}}),
            Some(&player.token),
        )
        .await;
        let Some(id) = answer.1["game_id"].as_str().map(str::to_owned) else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        *game.lock().unwrap() = id.clone();
        let Ok((mut ws, mut state)) = abuse::open_play(&base, &id, &player).await else {
            continue;
        };
        while let Some(pit) = state["legal"].get(0).and_then(Value::as_u64) {
            let ply = state["ply"].as_u64().unwrap_or(0) + 1;
            let sent = Instant::now();
            ws.send(json!({"t": "move", "d": {"pit": pit, "ply": ply}}))
                .await;
            let Some(moved) = until_moved(&mut ws).await else {
                break;
            };
            samples.lock().unwrap().push(sent.elapsed());
            state = moved;
            if state["turn"].is_null() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn until_moved(ws: &mut mancala_tests::harness::Ws) -> Option<Value> {
    loop {
        let message = ws.next(Duration::from_secs(30)).await?;
        match message["t"].as_str() {
            Some("moved") => return Some(message["d"].clone()),
            Some("error" | "over") => return None,
            _ => {}
        }
    }
}

struct Row {
    attack: String,
    outcome: String,
    p50_ms: f64,
    p99_ms: f64,
    rss_before_mb: f64,
    /// jemalloc's allocated and resident bytes before the attack (MB).
    heap_before_mb: (f64, f64),
    rss_peak_mb: f64,
    rss_after_mb: f64,
    /// The honest AI player's reply times, when it runs: how many, p50,
    /// p99 and the slowest (ms).
    ai_replies: Option<(usize, f64, f64, f64)>,
}

/// jemalloc's allocated and resident megabytes, from the server's metrics.
async fn heap(base: &str) -> (f64, f64) {
    let read = |kind: &'static str| async move {
        abuse::gauge(base, &format!("heap_bytes{{kind=\"{kind}\"}}"))
            .await
            .unwrap_or(0.0)
            / (1 << 20) as f64
    };
    (read("allocated").await, read("resident").await)
}

async fn fresh_guest(base: &str) -> Guest {
    guest(base).await
}

/// Runs `attack` while sampling the probe and the server's memory.
async fn phase<F, Fut>(name: &str, args: &Args, probes: &Probes, attack: F) -> Row
where
    F: FnOnce(Instant) -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let rss_before = server_stats::read(&[args.server_pid]).rss_bytes as f64 / (1 << 20) as f64;
    let heap_before = heap(&args.base).await;
    let until = Instant::now() + Duration::from_secs(args.phase_secs);
    let samples = &probes.moves;
    samples.lock().unwrap().clear();
    probes.ai_replies.lock().unwrap().clear();
    let peak = Rc::new(RefCell::new(0u64));
    let sampler = {
        let (peak, pid) = (peak.clone(), args.server_pid);
        actix_rt::spawn(async move {
            loop {
                let rss = server_stats::read(&[pid]).rss_bytes;
                peak.replace_with(|top| (*top).max(rss));
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    };
    let outcome = attack(until).await;
    let left = until.saturating_duration_since(Instant::now());
    tokio::time::sleep(left).await;
    sampler.abort();
    let mut taken: Vec<Duration> = samples.lock().unwrap().drain(..).collect();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let ai_replies = args.ai_probe.as_ref().map(|_| {
        let mut replies: Vec<Duration> = probes.ai_replies.lock().unwrap().drain(..).collect();
        let count = replies.len();
        (
            count,
            ms(percentile(&mut replies, 0.50)),
            ms(percentile(&mut replies, 0.99)),
            ms(replies.iter().max().copied().unwrap_or_default()),
        )
    });
    let row = Row {
        attack: name.to_owned(),
        outcome,
        p50_ms: ms(percentile(&mut taken, 0.50)),
        p99_ms: ms(percentile(&mut taken, 0.99)),
        rss_before_mb: rss_before,
        heap_before_mb: heap_before,
        rss_peak_mb: *peak.borrow() as f64 / (1 << 20) as f64,
        rss_after_mb: server_stats::read(&[args.server_pid]).rss_bytes as f64 / (1 << 20) as f64,
        ai_replies,
    };
    eprintln!(
        "{name}: p50 {:.1} ms, p99 {:.1} ms over {} moves; RSS peak {:.0} MB; {}",
        row.p50_ms,
        row.p99_ms,
        taken.len(),
        row.rss_peak_mb,
        row.outcome
    );
    if let Some((count, p50, p99, max)) = row.ai_replies {
        eprintln!(
            "{name}: the honest AI replied in p50 {p50:.0} ms, p99 {p99:.0} ms, max {max:.0} ms \
             ({count} replies)"
        );
    }
    if row.ai_replies.is_some() {
        // Where the AI's time went, as the server counts it: the wait for a
        // worker, the search on it, and the two together.
        let text = abuse::metrics_text(&args.base).await.unwrap_or_default();
        for line in text.lines().filter(|line| {
            (line.starts_with("ai_") || line.starts_with("runtime_lag"))
                && (line.contains("quantile=\"0.99\"") || line.contains("quantile=\"1\""))
        }) {
            eprintln!("{name}: server {line}");
        }
    }
    // Let the server settle before the next attack.
    tokio::time::sleep(Duration::from_secs(2)).await;
    row
}

fn main() {
    let args = Args::parse();
    actix_rt::System::new().block_on(run(args));
}

async fn run(args: Args) {
    let base = args.base.trim_end_matches('/').to_owned();
    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|only| only == name);
    let probes = Probes::default();
    let probe_game = Arc::new(Mutex::new(String::new()));
    {
        let (base, samples, game) = (base.clone(), probes.moves.clone(), probe_game.clone());
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(probe(base, samples, game));
        });
    }
    if let Some(level) = &args.ai_probe {
        let level: &'static str = Box::leak(level.clone().into_boxed_str());
        let (base, replies) = (base.clone(), probes.ai_replies.clone());
        std::thread::spawn(move || {
            actix_rt::System::new().block_on(abuse::honest_ai_player(
                base,
                level,
                Duration::from_millis(300),
                replies,
            ));
        });
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut rows = vec![
        phase("baseline", &args, &probes, |_| async {
            String::from("the probe alone")
        })
        .await,
    ];

    if wanted("perfect") {
        rows.push(
            phase(
                "200 Perfect games asked, 40 played fast",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        let flooder = fresh_guest(&base).await;
                        let (tally, made) = abuse::ai_games(&base, &flooder, "perfect", 200).await;
                        let playing: Vec<String> = made.into_iter().take(40).collect();
                        let moves = abuse::play_against_ai(&base, &flooder, &playing, until).await;
                        abuse::resign_all(&base, &flooder, &playing).await;
                        format!(
                            "asked: {tally}; {moves} moves answered in {} games",
                            playing.len()
                        )
                    }
                },
            )
            .await,
        );
    }
    if wanted("perfect-many") {
        rows.push(
            phase(
                "20 guests, 10 Perfect games each, played fast",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        let mut players = Vec::new();
                        let mut asked = Tally::default();
                        for _ in 0..20 {
                            let player = fresh_guest(&base).await;
                            let (tally, made) =
                                abuse::ai_games(&base, &player, "perfect", 10).await;
                            for (status, count) in tally.0 {
                                asked.0.insert(status, asked.of(status) + count);
                            }
                            players.push((player, made));
                        }
                        let plays = players.iter().map(|(player, made)| {
                            abuse::play_against_ai(&base, player, made, until)
                        });
                        let moves: u64 = futures_util::future::join_all(plays)
                            .await
                            .into_iter()
                            .sum();
                        for (player, made) in &players {
                            abuse::resign_all(&base, player, made).await;
                        }
                        format!("asked: {asked}; {moves} moves answered")
                    }
                },
            )
            .await,
        );
    }
    if wanted("analysis") {
        rows.push(
            phase(
                "16 strangers asking for the analyses of 60 finished games",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        // Six players make the games: 10 each keeps within
                        // the games one player may make a minute.
                        let mut games = Vec::new();
                        for _ in 0..6 {
                            let maker = fresh_guest(&base).await;
                            for _ in 0..10 {
                                if let Some(game) = abuse::hotseat_game_played(&base, &maker).await
                                {
                                    games.push(game);
                                }
                            }
                        }
                        let honest = fresh_guest(&base).await;
                        let flood = abuse::analysis_flood(&base, &games, 16, &honest, until).await;
                        let mut waits = flood.player_waits.clone();
                        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                        format!(
                            "{} games; strangers: {}; the players of {} just-finished games: {} \
                             (their wait p50 {:.0} ms, max {:.0} ms)",
                            games.len(),
                            flood.strangers,
                            waits.len(),
                            flood.players,
                            ms(percentile(&mut waits, 0.5)),
                            ms(percentile(&mut waits, 1.0)),
                        )
                    }
                },
            )
            .await,
        );
    }
    if wanted("undo") {
        rows.push(
            phase(
                "3 Perfect games, move + undo every 0.2 s",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        let looper = fresh_guest(&base).await;
                        let (_, made) = abuse::ai_games(&base, &looper, "perfect", 3).await;
                        let undos = abuse::undo_loop(
                            &base,
                            &looper,
                            &made,
                            Duration::from_millis(200),
                            until,
                        )
                        .await;
                        abuse::resign_all(&base, &looper, &made).await;
                        format!(
                            "{} undos sent, {} done, {} refused",
                            undos.sent, undos.done, undos.refused
                        )
                    }
                },
            )
            .await,
        );
    }
    if wanted("hoard") {
        rows.push(
            phase("one guest: 200 AI, 200 invites, 100 hotseat, 300 + 300 sockets", &args, &probes, |until| {
                let base = base.clone();
                async move {
                    let hoarder = fresh_guest(&base).await;
                    let hoard = abuse::hoard(&base, &hoarder, 100).await;
                    let summary = format!(
                        "AI {}; invites {}; hotseat {}; {} sockets held, {} lobby and {} play refused",
                        hoard.ai_games,
                        hoard.invites,
                        hoard.hotseat_games,
                        hoard.held.len(),
                        hoard.lobby_sockets_refused,
                        hoard.play_sockets_refused
                    );
                    tokio::time::sleep(until.saturating_duration_since(Instant::now())).await;
                    drop(hoard);
                    summary
                }
            })
            .await,
        );
    }
    if wanted("sync") {
        let game = probe_game.lock().unwrap().clone();
        rows.push(
            phase(
                "100 anonymous watchers sending sync",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        let syncs = abuse::sync_flood(&base, &game, 100, until).await;
                        format!("{syncs} syncs sent")
                    }
                },
            )
            .await,
        );
    }
    if wanted("slow") {
        rows.push(
            phase("50 bodies at a byte every 5 s", &args, &probes, |_| {
                let base = base.clone();
                async move {
                    let (ended, tally) = actix_rt::task::spawn_blocking(move || {
                        abuse::slow_bodies(
                            &base,
                            50,
                            Duration::from_secs(5),
                            Duration::from_secs(30),
                        )
                    })
                    .await
                    .unwrap_or((0, Tally::default()));
                    format!("{ended} of 50 ended by the server within 30 s ({tally})")
                }
            })
            .await,
        );
    }
    if wanted("logins") {
        rows.push(
            phase(
                "sign-in + sign-out, 20 a second, over 6 accounts",
                &args,
                &probes,
                |until| {
                    let base = base.clone();
                    async move {
                        let loop_ =
                            abuse::login_loop(&base, 6, Duration::from_millis(50), until).await;
                        // The follow tick that lists the last sign-outs.
                        tokio::time::sleep(Duration::from_millis(1_500)).await;
                        let listed = abuse::gauge(&base, "sessions_revoked_listed").await;
                        format!(
                            "{} signed in and out, then refused: {}; revoked sessions listed: {}",
                            loop_.signed_in,
                            loop_.refused,
                            listed.map_or("?".into(), |n| n.to_string())
                        )
                    }
                },
            )
            .await,
        );
    }
    if wanted("bad") {
        rows.push(
            phase("NUL bytes and out-of-range cursors", &args, &probes, |_| {
                let base = base.clone();
                async move {
                    let answers = abuse::bad_values(&base).await;
                    let mut tally = Tally::default();
                    for (_, status) in &answers {
                        tally.add(*status);
                    }
                    format!("{tally}")
                }
            })
            .await,
        );
    }

    let settled = if args.settle_secs > 0 {
        tokio::time::sleep(Duration::from_secs(args.settle_secs)).await;
        let rss = server_stats::read(&[args.server_pid]).rss_bytes as f64 / (1 << 20) as f64;
        Some((rss, heap(&args.base).await))
    } else {
        None
    };
    let baseline = rows[0].p99_ms.max(0.001);
    let ai_column = args.ai_probe.is_some();
    let mut table = format!(
        "{}\n\n| attack | what the server did | probe move p50 / p99 | p99 ÷ baseline |{} server RSS peak / after |\n|---|---|---|---|{}---|\n",
        args.label,
        if ai_column {
            " honest AI reply p50 / p99 / max (replies) |"
        } else {
            ""
        },
        if ai_column { "---|" } else { "" },
    );
    for row in &rows {
        let ai = row
            .ai_replies
            .map_or(String::new(), |(count, p50, p99, max)| {
                format!(" {p50:.0} / {p99:.0} / {max:.0} ms ({count}) |")
            });
        table.push_str(&format!(
            "| {} | {} | {:.1} / {:.1} ms | {:.1}× |{ai} {:.0} / {:.0} MB |\n",
            row.attack,
            row.outcome,
            row.p50_ms,
            row.p99_ms,
            row.p99_ms / baseline,
            row.rss_peak_mb,
            row.rss_after_mb
        ));
    }
    let rss_at_start = rows.last().map_or(0.0, |row| row.rss_before_mb);
    let heap_at_start = rows.last().map_or((0.0, 0.0), |row| row.heap_before_mb);
    if let Some((settled, heap_settled)) = settled {
        table.push_str(&format!(
            "\nServer RSS before the last attack {rss_at_start:.0} MB; {} s after it {settled:.0} MB ({:+.0}%). \
             jemalloc allocated / resident: {:.1} / {:.1} MB before, {:.1} / {:.1} MB after.\n",
            args.settle_secs,
            (settled / rss_at_start.max(0.001) - 1.0) * 100.0,
            heap_at_start.0,
            heap_at_start.1,
            heap_settled.0,
            heap_settled.1,
        ));
    }
    println!("{table}");
    if let Some(path) = &args.json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|row| {
                json!({"attack": row.attack, "outcome": row.outcome, "p50_ms": row.p50_ms,
                       "p99_ms": row.p99_ms, "rss_peak_mb": row.rss_peak_mb,
                       "rss_after_mb": row.rss_after_mb,
                       "ai_reply": row.ai_replies.map(|(count, p50, p99, max)|
                           json!({"count": count, "p50_ms": p50, "p99_ms": p99,
                                  "max_ms": max}))})
            })
            .collect();
        let text = serde_json::to_string_pretty(&json!({"label": args.label, "rows": rows,
            "rss_before_last_mb": rss_at_start, "rss_settled_mb": settled.map(|(rss, _)| rss),
            "settle_secs": args.settle_secs}))
        .unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::write(path.with_extension("md"), table).unwrap();
    }
}
