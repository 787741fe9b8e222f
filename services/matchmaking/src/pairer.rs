//! The pairing loop of one queue. Every instance runs one per queue; only
//! the holder of the queue's lease pairs, and every claim carries the
//! lease's fencing token, so two instances that both believe they lead
//! still never pair a player twice.

use futures_util::StreamExt;
use mancala_proto::ErrorBody;
use mancala_proto::game::{CreateGame, CreatedGame, SeatInfo, SeatRequest, Side};
use mancala_proto::lobby::{LobbyServerMessage, Matched};
use uuid::Uuid;

use crate::context::Context;
use crate::queue::QueueSpec;
use crate::queue::pairing::{Ticket, first_mover, pair};
use crate::queue::store::{self, Claim};
use crate::ratings;

pub(crate) use mancala_proto::bus::names::player_channel;

/// Games asked of game-room at once by one pairing wave.
const GAMES_AT_ONCE: usize = 32;

/// Starts one pairing loop per configured queue, for as long as the process
/// runs.
pub(crate) fn spawn_pairers(deps: Context) {
    for name in deps.settings.queues.clone() {
        if let Some(queue) = QueueSpec::parse(&name) {
            let deps = deps.clone();
            actix_web::rt::spawn(async move { run(deps, queue).await });
        }
    }
}

async fn run(deps: Context, queue: QueueSpec) {
    let mut ticks = tokio::time::interval(deps.settings.wave);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut token = None;
    let lease_ms = (deps.settings.wave.as_millis() as u64 * 3).max(1_000);
    loop {
        ticks.tick().await;
        token = match store::lead(
            &deps.redis,
            &queue.name,
            deps.settings.instance.id(),
            token,
            lease_ms,
        )
        .await
        {
            Ok(token) => token,
            Err(error) => {
                tracing::warn!(%error, queue = queue.name, "queue lease");
                None
            }
        };
        if let Some(token) = token
            && let Err(error) = tick(&deps, &queue, token).await
        {
            tracing::warn!(%error, queue = queue.name, "pairing tick");
        }
    }
}

/// One pairing wave.
pub(crate) async fn tick(
    deps: &Context,
    queue: &QueueSpec,
    token: u64,
) -> Result<(), redis::RedisError> {
    let now = deps.clock.now_millis();
    // O(log n + those gone): the set stays the players online.
    store::forget_gone(&deps.redis, now).await?;
    // Tickets first, then whether their holders are alive: a ticket's
    // player was marked alive before they joined, so every ticket read here
    // has its mark when asked after. (The other order drops a player who
    // joins between the two reads.) Only the holders are asked about, so a
    // wave costs what the queue holds, not what the lobby holds.
    let waiting = store::tickets(&deps.redis, &queue.name).await?;
    let holders: Vec<Uuid> = waiting.iter().map(|ticket| ticket.player).collect();
    let alive = store::alive_among(&deps.redis, &holders, now).await?;
    let mut tickets = Vec::new();
    for ticket in waiting {
        if alive.contains(&ticket.player) {
            tickets.push(ticket);
        } else {
            // Their last lobby socket closed longer ago than the grace.
            store::leave(&deps.redis, ticket.player, Some(&queue.name)).await?;
        }
    }
    let mut pairs = pair(&tickets, &deps.rules, now);
    let mut places = deps.admission.free_places();
    if let Some(places) = places {
        fit_places(&mut pairs, &tickets, places);
    }
    let mut paired = vec![false; tickets.len()];
    let mut claimed = Vec::new();
    let mut fenced = false;
    for (a, b) in pairs {
        match store::claim(
            &deps.redis,
            &queue.name,
            token,
            &[tickets[a].player, tickets[b].player],
        )
        .await?
        {
            Claim::Claimed => {
                paired[a] = true;
                paired[b] = true;
                claimed.push((a, b));
                places = places.map(|places| places.saturating_sub(1));
            }
            Claim::Gone => {}
            Claim::Fenced => {
                fenced = true;
                break;
            }
        }
    }
    // Each game is a round trip to game-room and a Postgres insert: made
    // a few dozen at a time, a wave of a thousand pairs takes a fraction
    // of a second, not the tens of seconds one at a time would.
    futures_util::stream::iter(claimed)
        .for_each_concurrent(GAMES_AT_ONCE, |(a, b)| {
            start_game(deps, queue, &tickets[a], &tickets[b])
        })
        .await;
    if fenced {
        return Ok(());
    }
    let fallback = deps.settings.ai_fallback.as_millis() as u64;
    for (index, ticket) in tickets.iter().enumerate() {
        if paired[index] || now.saturating_sub(ticket.joined_ms) < fallback {
            continue;
        }
        // An AI game is a game too, and the dearest: while the instance
        // is full, the player waits for a place like everyone else.
        if places == Some(0) {
            break;
        }
        match store::claim(&deps.redis, &queue.name, token, &[ticket.player]).await? {
            Claim::Claimed => {
                places = places.map(|places| places.saturating_sub(1));
                start_ai_game(deps, queue, ticket).await;
            }
            Claim::Gone => {}
            Claim::Fenced => return Ok(()),
        }
    }
    Ok(())
}

/// Keeps the pairs the instance has `places` for, those who have waited
/// longest first; the others stay in the queue for the next wave. Without
/// this, the players admitted to the queue just before the instance filled
/// up (a wave's worth) would all be paired past its limit, and each game
/// over it would be taken from the games in progress.
fn fit_places(pairs: &mut Vec<(usize, usize)>, tickets: &[Ticket], places: u64) {
    let places = usize::try_from(places).unwrap_or(usize::MAX);
    if pairs.len() <= places {
        return;
    }
    pairs.sort_by_key(|&(a, b)| tickets[a].joined_ms.min(tickets[b].joined_ms));
    pairs.truncate(places);
}

async fn seat_info(deps: &Context, ticket: &Ticket) -> SeatInfo {
    SeatInfo {
        player: Some(ticket.player),
        name: ratings::name(&deps.postgres, ticket.player)
            .await
            .ok()
            .flatten()
            .unwrap_or_default(),
        ai: None,
        rating: Some(ticket.rating),
    }
}

pub(crate) async fn tell(deps: &Context, player: Uuid, message: &LobbyServerMessage) {
    let text = serde_json::to_string(message).unwrap_or_default();
    if let LobbyServerMessage::Matched(matched) = message {
        // Published once: a lobby socket that was down at that moment
        // (a reload, a dropped network) hears it when it comes back.
        store::remember_match(&deps.redis, player, matched.game_id, &text).await;
    }
    deps.pubsub.publish(&player_channel(player), text).await;
}

/// Puts claimed players back, at their old place, when their game could
/// not be made: nobody is lost.
async fn requeue(deps: &Context, queue: &QueueSpec, tickets: &[&Ticket], why: ErrorBody) {
    tracing::warn!(
        queue = queue.name,
        players = tickets.len(),
        "a game could not be made; requeueing"
    );
    for ticket in tickets {
        let mut attempt = 0u64;
        while let Err(error) = store::join(&deps.redis, &queue.name, ticket).await {
            attempt += 1;
            if attempt >= 10 {
                tracing::error!(%error, player = %ticket.player, "requeueing a player failed");
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100 * attempt)).await;
        }
        tell(deps, ticket.player, &LobbyServerMessage::Error(why.clone())).await;
    }
}

async fn start_game(deps: &Context, queue: &QueueSpec, a: &Ticket, b: &Ticket) {
    let coin = deps.clock.now_millis().is_multiple_of(2);
    let (first, second) = if first_mover(a, b, coin) {
        (a, b)
    } else {
        (b, a)
    };
    let seat = |ticket: &Ticket| SeatRequest::Player {
        id: ticket.player,
        rating: Some(ticket.rating),
        rd: Some(ticket.rd),
    };
    let request = CreateGame {
        id: None,
        variant: queue.variant.standard(),
        seats: [seat(first), seat(second)],
        rated: true,
        time_control: Some(queue.time_control),
        room: false,
        tournament: None,
    };
    let Some(created) = create_or_requeue(deps, queue, &request, &[a, b]).await else {
        return;
    };
    metrics::counter!("matches_total", "queue" => queue.name.clone()).increment(1);
    let _ = store::record_opponents(&deps.redis, &queue.name, first.player, second.player).await;
    let infos = [seat_info(deps, first).await, seat_info(deps, second).await];
    for (seat, ticket) in [(Side::South, first), (Side::North, second)] {
        let matched = Matched {
            game_id: created.id,
            queue: queue.name.clone(),
            seat,
            opponent: infos[seat.opponent().index()].clone(),
            ws_path: created.play_path.clone(),
            rated: created.rated,
            casual_reason: created.casual_reason,
        };
        tell(deps, ticket.player, &LobbyServerMessage::Matched(matched)).await;
    }
}

/// Creates the game in game-room; when it cannot be made, its players go
/// back to the queue, told why.
async fn create_or_requeue(
    deps: &Context,
    queue: &QueueSpec,
    request: &CreateGame,
    tickets: &[&Ticket],
) -> Option<CreatedGame> {
    match deps.game_room.create(request).await {
        Ok(created) => Some(created),
        Err(error) => {
            let why = ErrorBody::new(
                error.code,
                "the game could not be made; you are back in the queue",
            );
            requeue(deps, queue, tickets, why).await;
            None
        }
    }
}

async fn start_ai_game(deps: &Context, queue: &QueueSpec, ticket: &Ticket) {
    let variant = queue.variant.standard_rules();
    let level = mancala_ai::level_near(variant, ticket.rating);
    let balance_first = ticket.first_balance <= 0;
    let human = SeatRequest::Player {
        id: ticket.player,
        rating: Some(ticket.rating),
        rd: Some(ticket.rd),
    };
    let ai = SeatRequest::Ai {
        level: level.name().to_owned(),
    };
    let (seats, seat) = if balance_first {
        ([human, ai], Side::South)
    } else {
        ([ai, human], Side::North)
    };
    let request = CreateGame {
        id: None,
        variant: queue.variant.standard(),
        seats,
        // Rating a fallback game against the level's calibrated rating is
        // the rating service's part; game-room keeps AI games casual.
        rated: false,
        time_control: Some(queue.time_control),
        room: false,
        tournament: None,
    };
    let Some(created) = create_or_requeue(deps, queue, &request, &[ticket]).await else {
        return;
    };
    metrics::counter!("ai_fallbacks_total", "queue" => queue.name.clone()).increment(1);
    let matched = Matched {
        game_id: created.id,
        queue: queue.name.clone(),
        seat,
        opponent: SeatInfo {
            player: None,
            name: level.name().to_owned(),
            ai: Some(level.name().to_owned()),
            rating: mancala_ai::rating(variant, level),
        },
        ws_path: created.play_path,
        rated: created.rated,
        casual_reason: created.casual_reason,
    };
    tell(deps, ticket.player, &LobbyServerMessage::Matched(matched)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(joined_ms: u64) -> Ticket {
        Ticket {
            player: Uuid::new_v4(),
            rating: 1500.0,
            rd: 100.0,
            joined_ms,
            last_opponent: None,
            first_balance: 0,
        }
    }

    #[test]
    fn a_wave_makes_only_the_games_there_are_places_for_longest_waiting_first() {
        let tickets: Vec<Ticket> = [500, 100, 400, 300, 200, 600].map(ticket).into();
        let all = vec![(0, 5), (2, 3), (1, 4)];
        let mut pairs = all.clone();
        fit_places(&mut pairs, &tickets, 5);
        assert_eq!(pairs, all, "room for all: the wave is left as it is");
        fit_places(&mut pairs, &tickets, 2);
        assert_eq!(pairs, [(1, 4), (2, 3)]);
        fit_places(&mut pairs, &tickets, 0);
        assert!(pairs.is_empty());
    }
}
