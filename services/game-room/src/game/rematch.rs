//! The next game of a series: sides swapped, same variant, time control
//! and room. Against the AI, on one device, or in a casual friend's room it
//! starts when either side asks; between two players otherwise (a ranked
//! pairing, a rated room) it is an offer the other must accept, so nobody
//! is put into a rated game they did not agree to.

use mancala_platform::clock::millis_of;
use mancala_proto::VariantSpec;
use mancala_proto::game::SeatInfo;
use mancala_proto::game::ServerMessage;
use time::OffsetDateTime;
use uuid::Uuid;

use super::LiveGame;
use super::live::GameInfo;
use super::ranked;
use crate::context::Context;
use crate::lease::Lease;
use crate::store::{self, NewGame, NewSeat};

/// Whether a rematch needs both players to ask.
pub(crate) fn needs_agreement(info: &GameInfo) -> bool {
    info.between_people() && (info.room.is_none() || info.asked_rated())
}

/// The message that sends both players to the next game.
pub(crate) fn started(next: Uuid) -> ServerMessage {
    ServerMessage::Rematch {
        game_id: next,
        play_path: format!("/v1/games/{next}/play"),
    }
}

/// A rematch made here, for its maker to host from its commit: both
/// players are connected to this instance, so their sockets find it with
/// nothing to load (the one claim of its epoch is the insert itself).
pub(crate) struct ToHost {
    pub live: LiveGame,
    pub lease: Lease,
    pub epoch: i64,
    pub room_closes: Option<u64>,
}

/// Creates the rematch `id` of a finished game, once: returns the next
/// game (the one already made if another request won), or `None` when its
/// room has closed, and the game to host when this call made it under
/// `lease`. A rated game's rematch is rated unless the pair has had its
/// rated games of the day (`pair_limit`).
pub(crate) async fn create(
    context: &Context,
    info: &GameInfo,
    now: OffsetDateTime,
    pair_limit: u32,
    id: Uuid,
    lease: Option<Lease>,
) -> Result<(Option<Uuid>, Option<ToHost>), sqlx::Error> {
    let postgres = &context.postgres;
    let mut room_closes = None;
    if let Some(room) = info.room {
        match store::room_deadline(postgres, room).await? {
            Some((expires, false)) if expires > now => room_closes = Some(millis_of(expires)),
            _ => {
                if let Some(lease) = lease {
                    lease.release(&context.redis).await;
                }
                return Ok((None, None));
            }
        }
    }
    // Seat 0 of the new game is seat 1 of this one. A seat an AI took over
    // stays with the AI.
    let seat = |index: usize| {
        let old = &info.seats[index];
        NewSeat {
            player: if old.ai.is_some() { None } else { old.player },
            ai: old.ai.clone(),
            rating: old.rating,
            rd: None,
        }
    };
    let mut seats = [seat(1), seat(0)];
    let mut tx = store::begin_planned_once(postgres).await?;
    // A series shows each player's rating as it is now, not as it was at
    // its first game: the previous games have been rated since.
    let variant = VariantSpec::from(info.variant).name();
    let shows_ratings = info.asked_rated() || seats.iter().any(|seat| seat.rating.is_some());
    if shows_ratings {
        let players = seats.each_ref().map(|seat| seat.player);
        let now_rated = store::current_ratings(&mut tx, players, variant.as_str()).await?;
        for (seat, rated) in seats.iter_mut().zip(now_rated) {
            if let Some((rating, rd)) = rated {
                (seat.rating, seat.rd) = (Some(rating), Some(rd));
            }
        }
    }
    let (rated, casual_reason) =
        ranked::decide(&mut tx, info.asked_rated(), &seats, pair_limit, now).await?;
    let next = NewGame {
        id,
        variant: serde_json::to_value(VariantSpec::from(info.variant)).unwrap_or_default(),
        rated,
        seats,
        time_control: info.time_control,
        room: info.room,
        // A rematch is a game between the two, outside any tournament.
        tournament: None,
        casual_reason,
        epoch: if lease.is_some() { HOSTED_EPOCH } else { 0 },
    };
    store::insert_game(&mut tx, &next, now).await?;
    let linked = store::link_rematch(&mut tx, info.id, next.id).await?;
    if linked != Some(next.id) {
        // Another request made the next game: this one is never inserted.
        if let Some(lease) = lease {
            lease.release(&context.redis).await;
        }
        return Ok((linked, None));
    }
    tx.commit().await?;
    let to_host = lease.map(|lease| ToHost {
        live: LiveGame::new(next_info(info, &next, now)),
        lease,
        epoch: HOSTED_EPOCH,
        room_closes,
    });
    Ok((linked, to_host))
}

/// The epoch of a game hosted from its creation: the first claim of it.
const HOSTED_EPOCH: i64 = 1;

/// The next game as its host knows it: what loading its row would give.
fn next_info(info: &GameInfo, next: &NewGame, now: OffsetDateTime) -> GameInfo {
    let seat = |index: usize, from: usize| {
        let made = &next.seats[index];
        // As the row's join names it: the player, else the AI's level.
        let name = match (made.player, &made.ai) {
            (Some(_), _) => info.seats[from].name.clone(),
            (None, ai) => ai.clone().unwrap_or_default(),
        };
        SeatInfo {
            player: made.player,
            name,
            ai: made.ai.clone(),
            rating: made.rating,
        }
    };
    GameInfo {
        id: next.id,
        variant: info.variant,
        rated: next.rated,
        seats: [seat(0, 1), seat(1, 0)],
        time_control: next.time_control,
        room: next.room,
        created_ms: millis_of(now),
        against_ai: next.seats.iter().any(|seat| seat.ai.is_some()),
        casual_reason: next.casual_reason,
        tournament: None,
        berserk: [false; 2],
    }
}
