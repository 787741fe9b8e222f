//! Group commit: every hosted game of an instance writes through one
//! writer task. Whatever the games queued while the flushes in flight (two
//! at most) were out goes out together: the plain moves as one multi-row statement
//! (each row fenced by its game's epoch and ply, so a fenced row fails
//! only its own game), everything else (a move that ends the game, an end,
//! an undo, a takeover) in one transaction beside it. A game waits for its
//! own write's commit before it answers anyone, so each game has at most
//! one write in a batch, and nothing is acknowledged before its batch
//! committed. One commit (one WAL flush) then serves many moves.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mancala_platform::clock::timestamp;
use mancala_proto::game::Over;
use mancala_rules::Side;
use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::StoredMove;
use super::{
    EndRow, MoveRow, OffenceRow, append_moves, berserk, finish_games, lock_held_games, take_over,
    undo,
};

/// A change to a hosted game.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// A move; when it ends the game, with its result (one transaction).
    Move {
        stored: StoredMove,
        version: u64,
        ends: Option<Over>,
        /// Whether that end moves the players' ratings, as the host
        /// decided it (`mancala_proto::game::rates_its_players`): the
        /// rating outbox row is written only then.
        rates: bool,
        /// Which seats had moved before it.
        moved_before: [bool; 2],
    },
    /// The end from outside the moves (a resignation, a flag, a claim...)
    /// at `at_ms`, with the offence of the player who caused it, if any.
    End {
        over: Over,
        at_ms: u64,
        offence: Option<OffenceRow>,
        /// As for a move that ends the game.
        rates: bool,
        /// The moves played, and which seats ever moved.
        plies: u32,
        moved: [bool; 2],
    },
    /// Moves taken back to `ply`, the side to move starting at `at_ms`.
    Undo { ply: u32, version: u64, at_ms: u64 },
    /// `seat` goes berserk (an arena's game, before its first move).
    Berserk { seat: Side, version: u64 },
    /// An AI of `level` takes an absent player's seat.
    TakeOver {
        seat: Side,
        level: String,
        version: u64,
        /// The absent player's (leaving a game asked for as rated).
        offence: Option<OffenceRow>,
    },
}

impl Change {
    /// The change's name in metrics and logs.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Change::Move { .. } => "move",
            Change::End { .. } => "end",
            Change::Undo { .. } => "undo",
            Change::TakeOver { .. } => "take_over",
            Change::Berserk { .. } => "berserk",
        }
    }

    fn is_plain_move(&self) -> bool {
        matches!(self, Change::Move { ends: None, .. })
    }
}

/// Why a write did not happen.
#[derive(Clone, Debug, thiserror::Error)]
pub(crate) enum CommitError {
    /// Another host has the game (or it is no longer live): this one must
    /// stop.
    #[error("the game is hosted elsewhere now")]
    Fenced,
    /// Postgres failed; nothing of the batch was written, and the write may
    /// be retried. Shared by every write of the failed batch.
    #[error(transparent)]
    Store(Arc<sqlx::Error>),
}

impl From<sqlx::Error> for CommitError {
    fn from(error: sqlx::Error) -> CommitError {
        CommitError::Store(Arc::new(error))
    }
}

struct Pending {
    game: Uuid,
    epoch: i64,
    change: Change,
    done: oneshot::Sender<Result<(), CommitError>>,
}

impl Pending {
    /// The move's row, when this is a move.
    fn move_row(&self) -> Option<MoveRow> {
        match &self.change {
            Change::Move {
                stored,
                version,
                moved_before,
                ..
            } => Some(MoveRow {
                game: self.game,
                epoch: self.epoch,
                stored: *stored,
                version: *version,
                moved_before: *moved_before,
            }),
            _ => None,
        }
    }
}

/// The instance's writer: cheap to clone, one task behind it.
#[derive(Clone, Debug)]
pub(crate) struct GroupCommit {
    sender: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writer; a flush takes at most `batch` writes.
    pub(crate) fn start(pool: PgPool, batch: usize) -> GroupCommit {
        let batch = batch.max(1);
        let (sender, receiver) = mpsc::channel(batch * 4);
        tokio::spawn(run(pool, receiver, batch));
        GroupCommit { sender }
    }

    /// Writes `change` to `game` under `epoch`: committed when this returns
    /// `Ok`.
    pub(crate) async fn write(
        &self,
        game: Uuid,
        epoch: i64,
        change: Change,
    ) -> Result<(), CommitError> {
        let (done, answer) = oneshot::channel();
        let pending = Pending {
            game,
            epoch,
            change,
            done,
        };
        let gone = || CommitError::from(sqlx::Error::PoolClosed);
        self.sender.send(pending).await.map_err(|_| gone())?;
        answer.await.unwrap_or_else(|_| Err(gone()))
    }
}

/// Flushes in flight at once. One flush is one statement in one backend:
/// while it runs, the next batch can go out on other connections, so
/// Postgres works on both at once (a game has at most one write pending,
/// so concurrent flushes never hold the same game, and never reorder one).
const FLUSHES_IN_FLIGHT: usize = 2;

async fn run(pool: PgPool, mut receiver: mpsc::Receiver<Pending>, batch: usize) {
    let mut idle: Vec<Flusher> = (0..FLUSHES_IN_FLIGHT)
        .map(|_| Flusher::new(pool.clone()))
        .collect();
    let mut busy = tokio::task::JoinSet::new();
    let mut open = true;
    while open || !busy.is_empty() {
        tokio::select! {
            // A free flusher takes whatever is waiting.
            received = async {
                let mut pending = Vec::with_capacity(batch);
                let count = receiver.recv_many(&mut pending, batch).await;
                (count, pending)
            }, if open && !idle.is_empty() => {
                let (count, pending) = received;
                if count == 0 {
                    open = false;
                    continue;
                }
                metrics::histogram!("game_write_batch_size").record(pending.len() as f64);
                // The branch runs only while one is idle; were none, a new
                // one rather than a lost batch.
                let mut flusher = idle.pop().unwrap_or_else(|| Flusher::new(pool.clone()));
                busy.spawn(async move {
                    flusher.flush(pending).await;
                    flusher
                });
            }
            Some(done) = busy.join_next(), if !busy.is_empty() => match done {
                Ok(flusher) => idle.push(flusher),
                // A flush that panicked dropped its batch (each of its
                // games sees its write fail) and its connections.
                Err(_) => idle.push(Flusher::new(pool.clone())),
            }
        }
    }
}

/// One flush's connections: the plain moves on one, the rest beside it.
struct Flusher {
    moves: Lane,
    others: Lane,
}

impl Flusher {
    fn new(pool: PgPool) -> Flusher {
        Flusher {
            moves: Lane::new(pool.clone()),
            others: Lane::new(pool),
        }
    }

    async fn flush(&mut self, batch: Vec<Pending>) {
        let started = Instant::now();
        let (plain, other): (Vec<Pending>, Vec<Pending>) =
            batch.into_iter().partition(|p| p.change.is_plain_move());
        let (plain_held, other_held) = tokio::join!(
            self.moves
                .run(async |connection| write_moves(connection, &plain).await),
            self.others
                .run(async |connection| write_others(connection, &other).await),
        );
        answer(plain, plain_held);
        answer(other, other_held);
        metrics::histogram!("game_write_flush_seconds").record(started.elapsed().as_secs_f64());
    }
}

/// A connection the writer keeps between flushes. The pool checks a
/// connection with a round trip each time it is taken and returned; the
/// writer, which uses one hundreds of times a second, checks it only after
/// it sat idle (when Postgres may have restarted meanwhile), and drops it
/// when a statement on it fails.
struct Lane {
    pool: PgPool,
    held: Option<(PoolConnection<Postgres>, Instant)>,
}

/// A connection from the pool, set up for the writer's statements.
///
/// Their plans are made once per connection. Left to itself, Postgres
/// plans each execution again ("custom plans"): the games and moves are
/// partitioned, a plan made for the statement's parameters prunes
/// partitions the generic plan must keep, and so the generic plan always
/// looks dearer, while what it keeps is pruned when it starts for almost
/// nothing. Planning was half of Postgres's CPU a move
/// (`deploy/bench.sh costs` with pg_stat_statements and `perf`).
///
/// A plan made once, though, may be made while the tables are small (a
/// new deployment, a fresh benchmark) and would then scan the whole games
/// table on every flush for as long as the connection lives: sequential
/// scans are off on these connections. They find their games by primary
/// key. The connection never goes back to the pool with these settings:
/// it is closed when the writer lets it go.
async fn writer_connection(pool: &PgPool) -> Result<PoolConnection<Postgres>, sqlx::Error> {
    let mut connection = pool.acquire().await?;
    connection.close_on_drop();
    sqlx::query(
        "SELECT set_config('enable_seqscan', 'off', false), \
                set_config('plan_cache_mode', 'force_generic_plan', false)",
    )
    .execute(&mut *connection)
    .await?;
    Ok(connection)
}

/// Idle longer than this, a held connection is pinged before it is used.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(2);

impl Lane {
    fn new(pool: PgPool) -> Lane {
        Lane { pool, held: None }
    }

    async fn connection(&mut self) -> Result<&mut PgConnection, sqlx::Error> {
        if let Some((connection, used)) = &mut self.held
            && used.elapsed() > CHECK_AFTER_IDLE
            && sqlx::Connection::ping(&mut **connection).await.is_err()
        {
            self.discard();
        }
        let connection = match self.held.take() {
            Some((connection, _)) => connection,
            None => writer_connection(&self.pool).await?,
        };
        let (connection, _) = self.held.insert((connection, Instant::now()));
        Ok(connection)
    }

    /// After a failed statement the connection may be broken or mid-way
    /// through a transaction: close it rather than hand it back.
    fn discard(&mut self) {
        if let Some((mut connection, _)) = self.held.take() {
            connection.close_on_drop();
        }
    }

    async fn run<T>(
        &mut self,
        write: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let written = match self.connection().await {
            Ok(connection) => write(connection).await,
            Err(error) => Err(error),
        };
        if written.is_err() {
            self.discard();
        }
        written
    }
}

fn answer(batch: Vec<Pending>, held: Result<Vec<bool>, sqlx::Error>) {
    match held {
        Ok(held) => {
            for (pending, held) in batch.into_iter().zip(held) {
                let _ = pending.done.send(if held {
                    Ok(())
                } else {
                    Err(CommitError::Fenced)
                });
            }
        }
        Err(error) => {
            let error = CommitError::from(error);
            for pending in batch {
                let _ = pending.done.send(Err(error.clone()));
            }
        }
    }
}

/// The plain moves: one statement, committed on its own.
async fn write_moves(
    connection: &mut PgConnection,
    plain: &[Pending],
) -> Result<Vec<bool>, sqlx::Error> {
    if plain.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<MoveRow> = plain.iter().filter_map(Pending::move_row).collect();
    let written: HashSet<Uuid> = append_moves(connection, &rows).await?;
    Ok(plain.iter().map(|p| written.contains(&p.game)).collect())
}

/// The rest, in one transaction: the moves that end their games in one
/// statement, then every end in one more; undos and takeovers (rare) one
/// by one. Each is fenced on its own game's epoch; one that is refused
/// changes nothing (its statements match no row).
async fn write_others(
    connection: &mut PgConnection,
    other: &[Pending],
) -> Result<Vec<bool>, sqlx::Error> {
    if other.is_empty() {
        return Ok(Vec::new());
    }
    let mut tx = sqlx::Connection::begin(connection).await?;
    let mut held = vec![true; other.len()];
    let ending: Vec<MoveRow> = other.iter().filter_map(Pending::move_row).collect();
    if !ending.is_empty() {
        // Their games' rows first, locked under the hosts' epochs: once a
        // move is written, nothing can fence the end beside it.
        let games: Vec<(Uuid, i64)> = ending.iter().map(|row| (row.game, row.epoch)).collect();
        let locked = lock_held_games(&mut tx, &games).await?;
        let ending: Vec<MoveRow> = ending
            .into_iter()
            .filter(|row| locked.contains(&row.game))
            .collect();
        let written = append_moves(&mut *tx, &ending).await?;
        for (pending, held) in other.iter().zip(held.iter_mut()) {
            if matches!(pending.change, Change::Move { .. }) {
                *held = written.contains(&pending.game);
            }
        }
    }
    let ends: Vec<EndRow> = other
        .iter()
        .zip(&held)
        .filter(|(_, held)| **held)
        .filter_map(|(p, _)| {
            let (over, at_ms, offence, rates, plies, moved) = match &p.change {
                Change::Move {
                    stored,
                    ends: Some(over),
                    rates,
                    moved_before,
                    ..
                } => {
                    let mut moved = *moved_before;
                    moved[stored.played.seat.index()] = true;
                    (over, stored.at_ms, None, *rates, stored.played.ply, moved)
                }
                Change::End {
                    over,
                    at_ms,
                    offence,
                    rates,
                    plies,
                    moved,
                } => (over, *at_ms, *offence, *rates, *plies, *moved),
                _ => return None,
            };
            Some(EndRow {
                game: p.game,
                epoch: p.epoch,
                over,
                at: timestamp(at_ms),
                offence,
                rates,
                plies,
                moved,
            })
        })
        .collect();
    if !ends.is_empty() {
        let ended = finish_games(&mut tx, &ends).await?;
        for (pending, held) in other.iter().zip(held.iter_mut()) {
            if matches!(pending.change, Change::Move { .. } | Change::End { .. }) {
                *held = *held && ended.contains(&pending.game);
            }
        }
    }
    for (pending, held) in other.iter().zip(held.iter_mut()) {
        let (game, epoch) = (pending.game, pending.epoch);
        *held = match &pending.change {
            Change::Undo {
                ply,
                version,
                at_ms,
            } => undo(&mut tx, game, epoch, *ply, *version, timestamp(*at_ms)).await?,
            Change::TakeOver {
                seat,
                level,
                version,
                offence,
            } => take_over(&mut tx, game, epoch, *seat, level, *version, *offence).await?,
            Change::Berserk { seat, version } => {
                berserk(&mut tx, game, epoch, *seat, *version).await?
            }
            Change::Move { .. } | Change::End { .. } => *held,
        };
    }
    tx.commit().await?;
    Ok(held)
}

#[cfg(test)]
mod tests {
    use mancala_platform::testing::TestStores;
    use mancala_proto::game::{EndReason, GameResult, PlayedMove};

    use super::*;
    use crate::store::{NewGame, NewSeat, claim_epoch, insert_game};

    async fn ai_game(pool: &PgPool) -> (Uuid, i64) {
        let seat = || NewSeat {
            player: None,
            ai: Some("beginner".into()),
            rating: None,
            rd: None,
        };
        let game = NewGame {
            id: Uuid::now_v7(),
            variant: serde_json::json!({"variant": "kalah"}),
            rated: false,
            seats: [seat(), seat()],
            time_control: None,
            room: None,
            tournament: None,
            casual_reason: None,
            epoch: 0,
        };
        let mut connection = pool.acquire().await.unwrap();
        insert_game(&mut connection, &game, timestamp(1_000))
            .await
            .unwrap();
        let epoch = claim_epoch(pool, game.id).await.unwrap().unwrap();
        (game.id, epoch)
    }

    /// A writer, and three games held under their epochs.
    async fn writer_and_games(pool: &PgPool) -> (GroupCommit, [(Uuid, i64); 3]) {
        let writer = GroupCommit::start(pool.clone(), 64);
        let games = [
            ai_game(pool).await,
            ai_game(pool).await,
            ai_game(pool).await,
        ];
        (writer, games)
    }

    fn first_move() -> Change {
        Change::Move {
            stored: StoredMove {
                played: PlayedMove {
                    ply: 1,
                    seat: Side::South,
                    pit: 3,
                },
                clock_ms: None,
                at_ms: 2_000,
                hidden_ms: None,
            },
            version: 1,
            ends: None,
            rates: false,
            moved_before: [false, false],
        }
    }

    #[tokio::test]
    async fn a_fenced_game_fails_alone_and_the_batch_commits_the_rest() {
        let stores = TestStores::new().await.unwrap();
        let pool = stores.postgres.clone();
        let (writer, games) = writer_and_games(&pool).await;
        // Another host takes the second game: its old epoch is fenced.
        claim_epoch(&pool, games[1].0).await.unwrap();
        let written = futures_util::future::join_all(
            games
                .iter()
                .map(|&(game, epoch)| writer.write(game, epoch, first_move())),
        )
        .await;
        assert!(written[0].is_ok() && written[2].is_ok(), "{written:?}");
        assert!(
            matches!(written[1], Err(CommitError::Fenced)),
            "{written:?}"
        );
        for (index, (game, _)) in games.iter().enumerate() {
            let stored: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM game_moves WHERE game_id = $1 AND pit > 0",
            )
            .bind(game)
            .fetch_one(&pool)
            .await
            .unwrap();
            assert_eq!(stored, i64::from(index != 1), "game {index}");
        }
        // The same ply again (a retry after a lost answer) is not a second
        // move: the ply count fences it.
        let again = writer.write(games[0].0, games[0].1, first_move()).await;
        assert!(matches!(again, Err(CommitError::Fenced)), "{again:?}");
        drop(writer);
        stores.cleanup().await.unwrap();
    }

    /// Move `ply` of a game whose two seats have both moved (a move that
    /// only inserts into the log).
    fn later_move(ply: u32) -> Change {
        Change::Move {
            stored: StoredMove {
                played: PlayedMove {
                    ply,
                    seat: if ply % 2 == 1 {
                        Side::South
                    } else {
                        Side::North
                    },
                    pit: 1,
                },
                clock_ms: None,
                at_ms: 2_000 + u64::from(ply),
                hidden_ms: None,
            },
            version: u64::from(ply),
            ends: None,
            rates: false,
            moved_before: [true, true],
        }
    }

    /// The log of `game`: (ply, pit, epoch).
    async fn log(pool: &PgPool, game: Uuid) -> Vec<(i32, i16, i32)> {
        sqlx::query_as("SELECT ply, pit, epoch FROM game_moves WHERE game_id = $1 ORDER BY ply")
            .bind(game)
            .fetch_all(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_stale_host_meets_the_key_whatever_ply_it_writes_even_after_an_undo() {
        let stores = TestStores::new().await.unwrap();
        let pool = stores.postgres.clone();
        let (writer, [(game, first), ..]) = writer_and_games(&pool).await;
        for ply in 1..=4 {
            writer.write(game, first, later_move(ply)).await.unwrap();
        }
        // A second host takes the game: ply 5 is held for it.
        let second = claim_epoch(&pool, game).await.unwrap().unwrap();
        assert_eq!(log(&pool, game).await[4], (5, 0, second as i32));
        let stale = writer.write(game, first, later_move(5)).await;
        assert!(matches!(stale, Err(CommitError::Fenced)), "{stale:?}");
        // It takes three moves back: plies 2 to 5 are its placeholders now,
        // and the first host can write none of them. (A host writes its
        // plies in order, one at a time, and a row is never deleted: its
        // next ply is never past the log's last row plus one, which the
        // claim held.)
        let undo = Change::Undo {
            ply: 1,
            version: 5,
            at_ms: 3_000,
        };
        writer.write(game, second, undo).await.unwrap();
        for ply in [2, 5] {
            let stale = writer.write(game, first, later_move(ply)).await;
            assert!(
                matches!(stale, Err(CommitError::Fenced)),
                "ply {ply}: {stale:?}"
            );
        }
        writer.write(game, second, later_move(2)).await.unwrap();
        // A third host: the second one's placeholders become its own.
        let third = claim_epoch(&pool, game).await.unwrap().unwrap();
        let stale = writer.write(game, second, later_move(3)).await;
        assert!(matches!(stale, Err(CommitError::Fenced)), "{stale:?}");
        writer.write(game, third, later_move(3)).await.unwrap();
        let log = log(&pool, game).await;
        assert_eq!(
            log,
            [
                (1, 1, first as i32),
                (2, 1, second as i32),
                (3, 1, third as i32),
                (4, 0, third as i32),
                (5, 0, third as i32),
            ]
        );
        // What a new host replays: the moves, not the placeholders, and the
        // version of the last move.
        let (moves, version) = crate::store::moves_and_version(&pool, game).await.unwrap();
        assert_eq!((moves.len(), version), (3, 3));
        drop(writer);
        stores.cleanup().await.unwrap();
    }

    #[tokio::test]
    async fn an_opening_move_keeps_the_row_and_a_later_one_leaves_it() {
        let stores = TestStores::new().await.unwrap();
        let pool = stores.postgres.clone();
        let (writer, [(game, epoch), ..]) = writer_and_games(&pool).await;
        writer.write(game, epoch, first_move()).await.unwrap();
        let mut second = later_move(2);
        if let Change::Move { moved_before, .. } = &mut second {
            *moved_before = [true, false];
        }
        writer.write(game, epoch, second).await.unwrap();
        writer.write(game, epoch, later_move(3)).await.unwrap();
        let row: (i32, i16, i64) =
            sqlx::query_as("SELECT plies, moved, version FROM games WHERE id = $1")
                .bind(game)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(
            row,
            (2, 3, 2),
            "the row stops at the move that made both seats move"
        );
        let listed = crate::store::game(&pool, game).await.unwrap().unwrap();
        assert_eq!(listed.plies, 3, "a live game's count comes from its log");
        drop(writer);
        stores.cleanup().await.unwrap();
    }

    #[tokio::test]
    async fn ends_in_one_batch_each_stand_or_fall_alone() {
        let stores = TestStores::new().await.unwrap();
        let pool = stores.postgres.clone();
        let (writer, games) = writer_and_games(&pool).await;
        claim_epoch(&pool, games[2].0).await.unwrap();
        let over = |result, reason| Over {
            version: 1,
            result,
            reason,
            score: [30, 18],
        };
        let Change::Move { stored, .. } = first_move() else {
            unreachable!()
        };
        let changes = [
            Change::Move {
                stored,
                version: 1,
                ends: Some(over(GameResult::P0, EndReason::SideEmpty)),
                rates: false,
                moved_before: [false, false],
            },
            Change::End {
                over: over(GameResult::Aborted, EndReason::NoStart),
                at_ms: 3_000,
                offence: None,
                rates: false,
                plies: 0,
                moved: [false, false],
            },
            Change::End {
                over: over(GameResult::P1, EndReason::Resign),
                at_ms: 3_000,
                offence: None,
                rates: false,
                plies: 0,
                moved: [false, false],
            },
        ];
        let written = futures_util::future::join_all(
            games
                .iter()
                .zip(changes)
                .map(|(&(game, epoch), change)| writer.write(game, epoch, change)),
        )
        .await;
        assert!(written[0].is_ok() && written[1].is_ok(), "{written:?}");
        assert!(
            matches!(written[2], Err(CommitError::Fenced)),
            "{written:?}"
        );
        let mut seen = Vec::new();
        for (game, _) in games {
            let row: (String, Option<String>, i32) =
                sqlx::query_as("SELECT status, result, plies FROM games WHERE id = $1")
                    .bind(game)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
            seen.push(row);
        }
        assert_eq!(
            seen,
            [
                ("over".into(), Some("p0".into()), 1),
                ("aborted".into(), Some("aborted".into()), 0),
                ("live".into(), None, 0),
            ]
        );
        drop(writer);
        stores.cleanup().await.unwrap();
    }
}
