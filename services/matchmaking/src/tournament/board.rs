//! An arena as its page shows it: the standings folded from the committed
//! games, and its live games. Read once, then cut into as many views
//! (a page, my row, my game) as there are viewers: the standings socket
//! reads one board per change and serves every watcher from it.

use std::collections::HashMap;

use mancala_proto::tournament::{StandingRow, Tournament, TournamentStatus, TournamentView};
use sqlx::PgPool;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

use super::standings::standings;
use super::store::{self, Row};

/// Rows of the standings a page shows.
pub(crate) const PAGE: usize = 10;

fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_default()
}

/// A tournament as the API shows it to `viewer`.
pub(crate) fn summary(row: &Row, now: OffsetDateTime, viewer: Option<Uuid>) -> Tournament {
    let (status, until) = if now < row.starts_at {
        (TournamentStatus::Upcoming, row.starts_at - now)
    } else if now < row.ends_at {
        (TournamentStatus::Running, row.ends_at - now)
    } else {
        (TournamentStatus::Finished, time::Duration::ZERO)
    };
    let mine = viewer.is_some() && row.created_by == viewer;
    Tournament {
        id: row.id,
        name: row.name.clone(),
        variant: row.shape.variant,
        time_control: row.shape.time_control,
        starts_at: rfc3339(row.starts_at),
        ends_at: rfc3339(row.ends_at),
        status,
        seconds_left: until.whole_seconds().max(0) as u64,
        rated: row.shape.rated,
        min_rating: row.shape.min_rating,
        max_rating: row.shape.max_rating,
        max_players: row.shape.max_players,
        players: row.players.max(0) as u32,
        private: row.code.is_some(),
        code: if mine { row.code.clone() } else { None },
    }
}

/// One arena as read at one moment, with what every view asks of it
/// worked out once: a thousand viewers must not each search the table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Board {
    pub row: Row,
    /// Everyone, best first.
    pub ranked: Vec<StandingRow>,
    /// Each player's index in `ranked`.
    places: HashMap<Uuid, usize>,
    /// Each seated player's live game.
    games: HashMap<Uuid, Uuid>,
    /// The live game whose better player stands highest.
    top_game: Option<Uuid>,
}

impl Board {
    /// Reads the arena `id`; `None` when there is none.
    pub(crate) async fn load(postgres: &PgPool, id: Uuid) -> Result<Option<Board>, sqlx::Error> {
        let Some(row) = store::get(postgres, id).await? else {
            return Ok(None);
        };
        let entrants = store::entrants(postgres, id).await?;
        let finished = store::finished_games(postgres, id, row.ends_at).await?;
        let live = store::live_games(postgres, id).await?;
        let ranked = standings(&entrants, &finished)
            .iter()
            .enumerate()
            .map(|(index, (entry, entrant))| StandingRow {
                rank: index as u32 + 1,
                player: entry.player,
                name: entrant.name.clone(),
                score: entry.tally.score,
                sheet: entry.tally.sheet.iter().map(|g| g.points).collect(),
                on_fire: entry.tally.on_fire(),
                performance: entry.tally.performance().map(f64::round),
                rating: entrant.rating.round(),
                games: entry.tally.sheet.len() as u32,
                paused: entrant.paused,
                withdrawn: entrant.withdrawn,
            })
            .collect();
        Ok(Some(Board::new(row, ranked, &live)))
    }

    pub(crate) fn new(
        row: Row,
        ranked: Vec<StandingRow>,
        live: &[(Uuid, [Option<Uuid>; 2])],
    ) -> Board {
        let places: HashMap<Uuid, usize> = ranked
            .iter()
            .enumerate()
            .map(|(index, row)| (row.player, index))
            .collect();
        let place = |player: &Option<Uuid>| {
            player
                .and_then(|p| places.get(&p).copied())
                .unwrap_or(usize::MAX)
        };
        let top_game = live
            .iter()
            .min_by_key(|(_, seats)| place(&seats[0]).min(place(&seats[1])))
            .map(|(game, _)| *game);
        let games = live
            .iter()
            .flat_map(|(game, seats)| seats.iter().flatten().map(move |player| (*player, *game)))
            .collect();
        Board {
            row,
            ranked,
            places,
            games,
            top_game,
        }
    }

    /// What `viewer` sees of it on `page` (from 1; clamped to the pages
    /// there are).
    pub(crate) fn view(
        &self,
        now: OffsetDateTime,
        viewer: Option<Uuid>,
        page: u32,
    ) -> TournamentView {
        let rows = &self.ranked;
        let pages = rows.len().div_ceil(PAGE).max(1) as u32;
        let page = page.clamp(1, pages);
        let start = (page as usize - 1) * PAGE;
        let me = viewer
            .and_then(|me| self.places.get(&me))
            .map(|&index| rows[index].clone());
        let my_game = viewer.and_then(|me| self.games.get(&me).copied());
        TournamentView {
            tournament: summary(&self.row, now, viewer),
            page,
            pages,
            standings: rows.iter().skip(start).take(PAGE).cloned().collect(),
            me,
            my_game,
            top_game: self.top_game,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::schedule::Shape;
    use mancala_proto::VariantName;
    use mancala_proto::game::TimeControl;
    use time::macros::datetime;

    fn board(players: usize, live: Vec<(Uuid, [Option<Uuid>; 2])>) -> Board {
        let ranked = (0..players)
            .map(|index| StandingRow {
                rank: index as u32 + 1,
                player: Uuid::from_u128(index as u128 + 1),
                name: format!("p{index}"),
                score: (players - index) as i32,
                sheet: vec![],
                on_fire: false,
                performance: None,
                rating: 1500.0,
                games: 0,
                paused: false,
                withdrawn: false,
            })
            .collect();
        Board::new(
            Row {
                id: Uuid::from_u128(99),
                name: "Arena".into(),
                code: None,
                created_by: None,
                shape: Shape {
                    variant: VariantName::Kalah,
                    time_control: TimeControl {
                        initial_secs: 180,
                        increment_secs: 2,
                    },
                    minutes: 30,
                    rated: true,
                    min_rating: None,
                    max_rating: None,
                    max_players: None,
                },
                starts_at: datetime!(2026-12-06 21:00 UTC),
                ends_at: datetime!(2026-12-06 21:30 UTC),
                players: players as i64,
            },
            ranked,
            &live,
        )
    }

    #[test]
    fn a_view_is_a_page_of_ten_with_my_row_wherever_it_is() {
        let me = Uuid::from_u128(25);
        let board = board(25, vec![]);
        let view = board.view(datetime!(2026-12-06 21:10 UTC), Some(me), 2);
        assert_eq!((view.page, view.pages), (2, 3));
        let ranks: Vec<u32> = view.standings.iter().map(|r| r.rank).collect();
        assert_eq!(ranks, (11..=20).collect::<Vec<_>>());
        assert_eq!(view.me.map(|r| r.rank), Some(25));
        // A page past the end shows the last one.
        assert_eq!(board.view(datetime!(2026-12-06 21:10 UTC), None, 9).page, 3);
    }

    #[test]
    fn the_top_game_is_the_best_placed_players_and_mine_is_mine() {
        let p = |n: u128| Some(Uuid::from_u128(n));
        let (low, high) = (Uuid::from_u128(1001), Uuid::from_u128(1002));
        let board = board(6, vec![(low, [p(5), p(6)]), (high, [p(4), p(2)])]);
        let view = board.view(datetime!(2026-12-06 21:10 UTC), p(6), 1);
        assert_eq!(view.top_game, Some(high));
        assert_eq!(view.my_game, Some(low));
    }
}
