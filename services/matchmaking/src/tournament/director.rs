//! The running arenas' loops: the planner makes the schedule's arenas
//! (once each, whichever instance gets there first), and each wave the
//! instance holding an arena's lease pairs its waiting players and makes
//! their games. A wave's seats are taken in Postgres (one transaction,
//! `store::seat_wave`) before game-room makes its games (one batch), so
//! two instances cannot seat a player twice while a lease changes hands.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use mancala_proto::game::{CreateGame, CreatedGame, MAX_BATCH_GAMES, SeatInfo, SeatRequest, Side};
use mancala_proto::lobby::{LobbyServerMessage, Matched};
use uuid::Uuid;

use super::pairing::{self, Waiting};
use super::schedule::{Rule, due};
use super::scoring::Outcome;
use super::standings::{outcome, standings};
use super::store::{self, Row};
use crate::context::Context;
use crate::pairer::tell;
use crate::queue::store as queues;

/// How often the planner looks at the schedule.
const PLAN_EVERY: Duration = Duration::from_secs(30);
/// Players a wave tells of their game at once.
const TELLS_AT_ONCE: usize = 64;
/// The largest wave this process made (players paired, seconds taken).
static LARGEST_WAVE: std::sync::Mutex<(usize, f64)> = std::sync::Mutex::new((0, 0.0));
/// No new pairing in an arena's last seconds: the game could not count.
const LAST_PAIRING_SECS: i64 = 10;

/// Starts the planner (when there is a schedule) and the arenas' loop.
pub(crate) fn spawn(deps: Context, rules: Arc<Vec<Rule>>) {
    if !rules.is_empty() {
        let deps = deps.clone();
        actix_web::rt::spawn(async move {
            let mut ticks = tokio::time::interval(PLAN_EVERY);
            loop {
                ticks.tick().await;
                plan(&deps, &rules).await;
            }
        });
    }
    actix_web::rt::spawn(async move {
        let mut ticks = tokio::time::interval(deps.settings.tournament_wave);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut leases: HashMap<Uuid, Led> = Default::default();
        loop {
            ticks.tick().await;
            if let Err(error) = direct(&deps, &mut leases).await {
                tracing::warn!(%error, "tournament wave");
            }
        }
    });
}

/// Makes the arenas the schedule wants now (each once, by its key).
pub(crate) async fn plan(deps: &Context, rules: &[Rule]) -> usize {
    let now = deps.clock.now_utc();
    let mut made = 0;
    for planned in due(rules, now) {
        match store::insert_planned(&deps.postgres, &planned, now).await {
            Ok(true) => made += 1,
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, key = planned.key, "planning an arena"),
        }
    }
    made
}

/// An arena this instance leads: its lease, and what its standings
/// were at the last wave (to tell watchers only of a change).
#[derive(Default)]
struct Led {
    token: u64,
    seen: u64,
}

/// One wave over the running arenas with work (`store::running`) that this
/// instance leads.
async fn direct(deps: &Context, leases: &mut HashMap<Uuid, Led>) -> Result<(), sqlx::Error> {
    let now = deps.clock.now_utc();
    let pass_started = std::time::Instant::now();
    let running = store::running(&deps.postgres, now).await?;
    metrics::gauge!("tournament_pass_arenas").set(running.len() as f64);
    leases.retain(|id, _| running.iter().any(|row| row.id == *id));
    let lease_ms = (deps.settings.tournament_wave.as_millis() as u64 * 3).max(1_000);
    for row in running {
        let name = format!("tournament:{}", row.id);
        let held = leases.get(&row.id).map(|led| led.token);
        match queues::lead(
            &deps.redis,
            &name,
            deps.settings.instance.id(),
            held,
            lease_ms,
        )
        .await
        {
            Ok(Some(token)) => leases.entry(row.id).or_default().token = token,
            Ok(None) => {
                leases.remove(&row.id);
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, tournament = %row.id, "tournament lease");
                continue;
            }
        }
        let pairing = (row.ends_at - now).whole_seconds() >= LAST_PAIRING_SECS;
        match wave(deps, &row, pairing).await {
            Ok(waved) => {
                let led = leases.entry(row.id).or_default();
                if waved.made > 0 || waved.standings != led.seen {
                    led.seen = waved.standings;
                    super::live::changed(deps, row.id).await;
                }
            }
            Err(error) => tracing::warn!(%error, tournament = %row.id, "tournament pairing"),
        }
    }
    metrics::histogram!("tournament_pass_seconds").record(pass_started.elapsed().as_secs_f64());
    Ok(())
}

/// What a wave did.
pub(crate) struct Waved {
    /// Games made.
    pub made: usize,
    /// A digest of the standings and who is in a game, paused or out.
    pub standings: u64,
}

/// Pairs one arena's waiting players and makes their games.
pub(crate) async fn wave(deps: &Context, row: &Row, pairing: bool) -> Result<Waved, sqlx::Error> {
    let wave_started = std::time::Instant::now();
    let entrants = store::entrants(&deps.postgres, row.id).await?;
    let finished = store::finished_games(&deps.postgres, row.id, row.ends_at).await?;
    let mut digest = std::collections::hash_map::DefaultHasher::new();
    finished.len().hash(&mut digest);
    for entrant in &entrants {
        (
            entrant.player,
            entrant.paused,
            entrant.withdrawn,
            entrant.current_game,
        )
            .hash(&mut digest);
    }
    let standings_digest = digest.finish();
    if !pairing {
        return Ok(Waved {
            made: 0,
            standings: standings_digest,
        });
    }
    let done: HashMap<Uuid, &store::FinishedGame> = finished.iter().map(|g| (g.id, g)).collect();
    // A player whose last game they never started is paused (and loses a
    // point by the scoring) until they come back.
    let idle: std::collections::HashSet<Uuid> = entrants
        .iter()
        .filter(|entrant| {
            entrant
                .current_game
                .and_then(|game| done.get(&game))
                .is_some_and(|g| {
                    (0..2).any(|seat| {
                        g.seats[seat] == Some(entrant.player)
                            && outcome(g, seat) == Outcome::NoStart
                    })
                })
        })
        .map(|entrant| entrant.player)
        .collect();
    let idle_list: Vec<Uuid> = idle.iter().copied().collect();
    store::pause(&deps.postgres, row.id, &idle_list).await?;
    let live: std::collections::HashSet<Uuid> = store::live_games(&deps.postgres, row.id)
        .await?
        .into_iter()
        .map(|(game, _)| game)
        .collect();
    let now_ms = deps.clock.now_millis();
    // Free: no game yet, a game over, or a game never made (its maker
    // died after seating them), as `store::seat_wave` decides.
    let free = |entrant: &store::Entrant| match entrant.current_game {
        None => true,
        Some(game) if done.contains_key(&game) => true,
        Some(game) => {
            !live.contains(&game)
                && entrant.seated_ms.is_some_and(|at| {
                    now_ms.saturating_sub(at) > store::UNMADE_SEAT_SECS as u64 * 1000
                })
        }
    };
    let scores: std::collections::HashMap<Uuid, i32> = standings(&entrants, &finished)
        .into_iter()
        .map(|(entry, _)| (entry.player, entry.tally.score))
        .collect();
    let candidates: Vec<&store::Entrant> = entrants
        .iter()
        .filter(|e| !e.paused && !e.withdrawn && !idle.contains(&e.player))
        .filter(|e| free(e))
        .collect();
    let ids: Vec<Uuid> = candidates.iter().map(|e| e.player).collect();
    // Present: a lobby or tournament page open (the lobby's mark). Not
    // knowing who is present, nobody is paired, nor paused.
    let present = match queues::alive_among(&deps.redis, &ids, now_ms).await {
        Ok(present) => present,
        Err(error) => {
            tracing::warn!(%error, tournament = %row.id, "who is present");
            return Ok(Waved {
                made: 0,
                standings: standings_digest,
            });
        }
    };
    // Since their last game ended, or since they joined.
    let free_since = |e: &store::Entrant| {
        e.current_game
            .and_then(|game| done.get(&game))
            .map_or(e.joined_ms, |g| g.ended_ms)
    };
    // Left: no page of the site open for the lobby's grace, and free for
    // longer than that (one who just joined or just finished a game has
    // had the time to open one). Paused until they join again, as the
    // standings then say.
    let grace_ms = deps.settings.lobby_grace.as_millis() as u64;
    let left: Vec<Uuid> = candidates
        .iter()
        .filter(|e| !present.contains(&e.player))
        .filter(|e| now_ms.saturating_sub(free_since(e)) > grace_ms)
        .map(|e| e.player)
        .collect();
    store::pause(&deps.postgres, row.id, &left).await?;
    let waiting: Vec<Waiting> = candidates
        .iter()
        .filter(|e| present.contains(&e.player))
        .map(|e| Waiting {
            player: e.player,
            score: scores.get(&e.player).copied().unwrap_or(0),
            rating: e.rating,
            last_opponent: e.last_opponent,
            since_ms: free_since(e),
            first_balance: e.first_balance,
        })
        .collect();
    let pairs = pairing::pair(&waiting, now_ms, now_ms.rotate_left(17));
    let names: HashMap<Uuid, &str> = candidates
        .iter()
        .map(|e| (e.player, e.name.as_str()))
        .collect();
    let started = std::time::Instant::now();
    let paired = pairs.len() * 2;
    let pairs: Vec<[&Waiting; 2]> = pairs
        .into_iter()
        .map(|(first, second)| [&waiting[first], &waiting[second]])
        .collect();
    let made = start_games(deps, row, &pairs, &names).await?;
    if paired > 0 {
        // The whole wave: the fold, the pairing, every seat and game.
        let took = wave_started.elapsed().as_secs_f64();
        metrics::histogram!("tournament_wave_seconds").record(took);
        metrics::histogram!("tournament_wave_pairing_seconds")
            .record(started.elapsed().as_secs_f64());
        metrics::histogram!("tournament_wave_players").record(paired as f64);
        // The summaries above forget after a minute; the largest wave
        // since the start (an arena's first) is kept beside them.
        let mut largest = LARGEST_WAVE.lock().unwrap_or_else(|e| e.into_inner());
        if paired >= largest.0 {
            *largest = (paired, took);
            metrics::gauge!("tournament_wave_largest_players").set(paired as f64);
            metrics::gauge!("tournament_wave_largest_seconds").set(took);
        }
    }
    Ok(Waved {
        made,
        standings: standings_digest,
    })
}

/// Seats the wave's pairs (one transaction), has game-room make their
/// games (one call per [`MAX_BATCH_GAMES`]) and tells each player. A pair
/// found taken meanwhile is skipped; a game game-room refused gives its
/// seats back. Returns the games made.
async fn start_games(
    deps: &Context,
    row: &Row,
    pairs: &[[&Waiting; 2]],
    names: &HashMap<Uuid, &str>,
) -> Result<usize, sqlx::Error> {
    let seating: Vec<([Uuid; 2], Uuid)> = pairs
        .iter()
        .map(|pair| (pair.map(|w| w.player), Uuid::now_v7()))
        .collect();
    let seated = store::seat_wave(&deps.postgres, row.id, &seating, deps.clock.now_utc()).await?;
    let seated: Vec<([&Waiting; 2], Uuid)> = pairs
        .iter()
        .zip(&seating)
        .filter(|(_, (_, game))| seated.contains(game))
        .map(|(pair, (_, game))| (*pair, *game))
        .collect();
    let mut made = 0;
    for chunk in seated.chunks(MAX_BATCH_GAMES) {
        let requests: Vec<CreateGame> = chunk
            .iter()
            .map(|(players, game)| game_request(row, *players, *game))
            .collect();
        let answers = match deps.game_room.create_many(&requests).await {
            Ok(answers) => answers,
            Err(error) => {
                tracing::warn!(code = ?error.code, tournament = %row.id, "a wave's games could not be made");
                (0..chunk.len()).map(|_| Err(error.clone())).collect()
            }
        };
        let mut unmade = Vec::new();
        let mut told = Vec::new();
        for ((players, game), answer) in chunk.iter().zip(answers) {
            match answer {
                Ok(created) => {
                    made += 1;
                    told.extend(matched(row, *players, names, &created));
                }
                Err(error) => {
                    tracing::warn!(code = ?error.code, tournament = %row.id, "a tournament game could not be made");
                    unmade.push(*game);
                }
            }
        }
        store::unseat(&deps.postgres, row.id, &unmade).await?;
        futures_util::stream::iter(told)
            .for_each_concurrent(TELLS_AT_ONCE, |(player, message)| async move {
                tell(deps, player, &message).await;
            })
            .await;
    }
    metrics::counter!("tournament_games_total").increment(made as u64);
    Ok(made)
}

fn game_request(row: &Row, players: [&Waiting; 2], game: Uuid) -> CreateGame {
    let seat = |w: &Waiting| SeatRequest::Player {
        id: w.player,
        rating: Some(w.rating),
        rd: None,
    };
    CreateGame {
        id: Some(game),
        variant: row.shape.variant.standard(),
        seats: players.map(seat),
        rated: row.shape.rated,
        time_control: Some(row.shape.time_control),
        room: false,
        tournament: Some(row.id),
    }
}

/// What each of a made game's two players is told.
fn matched(
    row: &Row,
    players: [&Waiting; 2],
    names: &HashMap<Uuid, &str>,
    created: &CreatedGame,
) -> [(Uuid, LobbyServerMessage); 2] {
    [(0, Side::South), (1, Side::North)].map(|(seat, side)| {
        let opponent = players[1 - seat];
        let matched = Matched {
            game_id: created.id,
            queue: format!("tournament:{}", row.id),
            seat: side,
            opponent: SeatInfo {
                player: Some(opponent.player),
                name: names
                    .get(&opponent.player)
                    .copied()
                    .unwrap_or_default()
                    .to_owned(),
                ai: None,
                rating: Some(opponent.rating),
            },
            ws_path: created.play_path.clone(),
            rated: created.rated,
            casual_reason: created.casual_reason,
        };
        (players[seat].player, LobbyServerMessage::Matched(matched))
    })
}
