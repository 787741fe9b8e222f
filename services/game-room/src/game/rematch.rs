//! The next game of a series: sides swapped, same variant, time control
//! and room. Against the AI, on one device, or in a casual friend's room it
//! starts when either side asks; between two players otherwise (a ranked
//! pairing, a rated room) it is an offer the other must accept, so nobody
//! is put into a rated game they did not agree to.

use mancala_proto::VariantSpec;
use mancala_proto::game::ServerMessage;
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

use super::live::GameInfo;
use super::ranked;
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

/// Creates the rematch of a finished game, once: returns the next game (the
/// one already made if another request won), or `None` when its room has
/// closed. A rated game's rematch is rated unless the pair has had its
/// rated games of the day (`pair_limit`).
pub(crate) async fn create(
    postgres: &PgPool,
    info: &GameInfo,
    now: OffsetDateTime,
    pair_limit: u32,
) -> Result<Option<Uuid>, sqlx::Error> {
    if let Some(room) = info.room
        && store::room_deadline(postgres, room)
            .await?
            .is_none_or(|(expires, closed)| closed || expires <= now)
    {
        return Ok(None);
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
    let mut tx = postgres.begin().await?;
    // A series shows each player's rating as it is now, not as it was at
    // its first game: the previous games have been rated since.
    let variant = VariantSpec::from(info.variant).name();
    let shows_ratings = info.asked_rated() || seats.iter().any(|seat| seat.rating.is_some());
    for seat in seats.iter_mut().filter(|_| shows_ratings) {
        if let Some(player) = seat.player
            && let Some((rating, rd)) =
                store::current_rating(&mut tx, player, variant.as_str()).await?
        {
            (seat.rating, seat.rd) = (Some(rating), Some(rd));
        }
    }
    let (rated, casual_reason) =
        ranked::decide(&mut tx, info.asked_rated(), &seats, pair_limit, now).await?;
    let next = NewGame {
        id: Uuid::now_v7(),
        variant: serde_json::to_value(VariantSpec::from(info.variant)).unwrap_or_default(),
        rated,
        seats,
        time_control: info.time_control,
        room: info.room,
        casual_reason,
    };
    store::insert_game(&mut tx, &next, now).await?;
    let linked = store::link_rematch(&mut tx, info.id, next.id).await?;
    if linked == Some(next.id) {
        tx.commit().await?;
    }
    Ok(linked)
}
