//! Making games, one or a batch (a tournament's wave) in one transaction:
//! each game asked for is checked, and refused, on its own; the games
//! that pass are counted against their pairs' limit, fenced by their
//! tournament seats and inserted together.

use std::collections::HashSet;

use mancala_platform::ApiError;
use mancala_proto::game::{CasualReason, CreateGame, CreatedGame, GameRequest, SeatRequest};
use mancala_proto::{ErrorCode, VariantSpec};
use uuid::Uuid;

use super::ranked;
use crate::context::Context;
use crate::store::{self, NewGame, NewSeat};

/// One answer per game asked for, in order.
pub(crate) type Made = Vec<Result<CreatedGame, ApiError>>;

/// Makes the games asked for. An error of the whole (the database) means
/// none was made.
pub(crate) async fn make(deps: &Context, asked: Vec<CreateGame>) -> Result<Made, ApiError> {
    let now = deps.clock.now_utc();
    let mut answers: Vec<Option<Result<CreatedGame, ApiError>>> =
        (0..asked.len()).map(|_| None).collect();
    let mut checked: Vec<(usize, GameRequest)> = Vec::with_capacity(asked.len());
    let mut ids = HashSet::new();
    for (index, request) in asked.into_iter().enumerate() {
        match request.validate() {
            Ok(mut request) => {
                let id = *request.id.get_or_insert_with(Uuid::now_v7);
                if ids.insert(id) {
                    checked.push((index, request));
                } else {
                    answers[index] = Some(Err(invalid("this game id is asked for twice")));
                }
            }
            Err(error) => answers[index] = Some(Err(invalid(error.to_string()))),
        }
    }
    let postgres = &deps.postgres;
    let players: Vec<Uuid> = checked
        .iter()
        .flat_map(|(_, request)| request.seats.iter().filter_map(seat_player))
        .collect();
    let known = store::known_players(postgres, &players).await?;
    let ids: Vec<Uuid> = checked.iter().filter_map(|(_, r)| r.id).collect();
    let existing = store::made_games(postgres, &ids).await?;
    let mut games: Vec<(usize, NewGame, &'static str)> = Vec::with_capacity(checked.len());
    for (index, request) in checked {
        let id = request.id.unwrap_or_else(Uuid::now_v7);
        let seats = request.seats.clone().map(new_seat);
        answers[index] = if !seats
            .iter()
            .filter_map(|seat| seat.player)
            .all(|player| known.contains(&player))
        {
            Some(Err(invalid("unknown player")))
        } else if let Some(made) = existing.get(&id) {
            // A retry of a request whose answer was lost: the same game again.
            Some(if made.players == seats.clone().map(|seat| seat.player) {
                Ok(created(id, made.rated, made.casual_reason))
            } else {
                Err(invalid("this game id is taken"))
            })
        } else {
            games.push((
                index,
                new_game(id, &request, seats)?,
                request.variant.name(),
            ));
            None
        };
    }
    let mut tx = store::begin_planned_once(postgres).await?;
    let limit = deps.settings.rated_pair_limit;
    let asked_rated: Vec<(bool, &[NewSeat; 2])> =
        games.iter().map(|(_, g, _)| (g.rated, &g.seats)).collect();
    let decided = ranked::decide_many(&mut tx, &asked_rated, limit, now).await?;
    for ((_, game, _), (rated, casual_reason)) in games.iter_mut().zip(decided) {
        game.rated = rated;
        game.casual_reason = casual_reason;
    }
    let fenced: Vec<(Uuid, Uuid)> = games
        .iter()
        .filter_map(|(_, game, _)| game.tournament.map(|t| (t, game.id)))
        .collect();
    let held = store::hold_tournament_seats(&mut tx, &fenced, now).await?;
    let (games, taken): (Vec<_>, Vec<_>) = games
        .into_iter()
        .partition(|(_, game, _)| game.tournament.is_none() || held.contains(&game.id));
    for (index, _, _) in taken {
        answers[index] = Some(Err(ApiError::new(
            ErrorCode::NotAllowed,
            "a seat of this tournament game was taken meanwhile",
        )));
    }
    let life = deps.settings.room_life;
    for (_, game, _) in &games {
        if let Some(room) = game.room {
            store::insert_room(&mut tx, room, now, now + life).await?;
        }
    }
    let rows: Vec<NewGame> = games.iter().map(|(_, game, _)| game.clone()).collect();
    if !rows.is_empty() {
        store::insert_games(&mut tx, &rows, now).await?;
    }
    tx.commit().await?;
    for (index, game, variant) in games {
        metrics::counter!("games_created_total", "variant" => variant).increment(1);
        answers[index] = Some(Ok(created(game.id, game.rated, game.casual_reason)));
    }
    Ok(answers
        .into_iter()
        .map(|answer| answer.unwrap_or_else(|| Err(ApiError::internal())))
        .collect())
}

/// The answer for a game made.
pub(crate) fn created(id: Uuid, rated: bool, casual_reason: Option<CasualReason>) -> CreatedGame {
    CreatedGame {
        id,
        play_path: format!("/v1/games/{id}/play"),
        watch_path: format!("/v1/games/{id}/watch"),
        rated,
        casual_reason,
    }
}

fn new_game(id: Uuid, request: &GameRequest, seats: [NewSeat; 2]) -> Result<NewGame, ApiError> {
    Ok(NewGame {
        id,
        variant: serde_json::to_value(VariantSpec::from(request.variant))
            .map_err(|_| ApiError::internal())?,
        seats,
        // As asked until the pair's count decides.
        rated: request.rated,
        time_control: request.time_control,
        room: request.room.then(Uuid::now_v7),
        tournament: request.tournament,
        casual_reason: None,
        epoch: 0,
    })
}

fn seat_player(seat: &SeatRequest) -> Option<Uuid> {
    match seat {
        SeatRequest::Player { id, .. } => Some(*id),
        SeatRequest::Ai { .. } => None,
    }
}

fn new_seat(seat: SeatRequest) -> NewSeat {
    match seat {
        SeatRequest::Player { id, rating, rd } => NewSeat {
            player: Some(id),
            ai: None,
            rating,
            rd,
        },
        SeatRequest::Ai { level } => NewSeat {
            player: None,
            ai: Some(level),
            rating: None,
            rd: None,
        },
    }
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}
