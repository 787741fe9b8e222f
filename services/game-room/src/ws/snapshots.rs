//! Watchers' snapshots, shared: a game is loaded from Postgres at most once
//! per version and second per process, however many watchers ask, and
//! concurrent askers wait for the same load. Presence and the watcher count
//! are read with it; the clocks are stamped per answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytestring::ByteString;
use mancala_proto::game::ServerMessage;
use tokio::sync::OnceCell;
use uuid::Uuid;

use crate::context::Context;
use crate::game::LiveGame;
use crate::game::host::encode;
use crate::game::replay::replay;

/// How long a loaded game serves watchers that ask for no newer version:
/// its presence and watcher count may be this stale.
const FRESH_FOR: Duration = Duration::from_secs(1);
/// Games kept; past it the cache is cleared (a burst over many games
/// costs a reload, never unbounded memory).
const MOST_GAMES: usize = 10_000;

/// A game as watchers see it.
#[derive(Clone)]
struct Snapshot {
    live: Arc<LiveGame>,
    connected: [bool; 2],
    watchers: u32,
}

/// What one load found (no game, or the game), and when.
struct Loaded {
    snapshot: Option<Snapshot>,
    at: Instant,
}

/// One load, shared by everyone who asked while it ran.
type Load = Arc<OnceCell<Loaded>>;

/// The process's snapshots; cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Snapshots {
    games: Arc<Mutex<HashMap<Uuid, Entry>>>,
}

#[derive(Default)]
struct Entry {
    /// The newest version any watcher here has seen published: no
    /// snapshot older than it is handed out (a finished game sends no
    /// later event that would mend a stale one).
    newest: u64,
    /// The version the current load was asked for.
    wanted: u64,
    load: Option<Load>,
}

/// A snapshot could not be made: the database is unreachable.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unavailable;

impl Snapshots {
    /// The game at version `at_least` or newer, as a `state` for a watcher
    /// (and its version); `None` when there is no such game.
    pub(crate) async fn state(
        &self,
        deps: &Context,
        game: Uuid,
        at_least: u64,
    ) -> Result<Option<(u64, ByteString)>, Unavailable> {
        let cell = self.cell(game, at_least);
        let loaded = cell
            .get_or_try_init(|| fetch(deps, game))
            .await
            .map_err(|()| Unavailable)?;
        let Some(snapshot) = &loaded.snapshot else {
            return Ok(None);
        };
        let live = &snapshot.live;
        let state = live.state(
            None,
            snapshot.connected,
            snapshot.watchers,
            [None, None],
            deps.clock.now_millis(),
        );
        Ok(Some((
            live.version(),
            encode(&ServerMessage::State(Box::new(state))),
        )))
    }

    /// A watcher saw `version` of `game` published.
    pub(crate) fn saw(&self, game: Uuid, version: u64) {
        let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = games.get_mut(&game) {
            entry.newest = entry.newest.max(version);
        }
    }

    /// A notice without a version reached a watcher here (a rematch
    /// started, a room closed): the snapshot cached before it no longer
    /// says what the game is, so the next watcher loads it afresh.
    pub(crate) fn noticed(&self, game: Uuid) {
        let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = games.get_mut(&game) {
            entry.load = None;
        }
    }

    /// The load to share for `game` at `at_least`: the cached one while it
    /// is fresh and new enough, else a new one.
    fn cell(&self, game: Uuid, at_least: u64) -> Load {
        let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        if games.len() >= MOST_GAMES && !games.contains_key(&game) {
            games.clear();
        }
        let entry = games.entry(game).or_default();
        let at_least = at_least.max(entry.newest);
        if let Some(load) = &entry.load {
            let usable = match load.get() {
                // Loading: good if it was asked for as much.
                None => entry.wanted >= at_least,
                Some(loaded) => {
                    loaded.at.elapsed() < FRESH_FOR
                        && loaded
                            .snapshot
                            .as_ref()
                            .is_none_or(|snapshot| snapshot.live.version() >= at_least)
                }
            };
            if usable {
                return load.clone();
            }
        }
        let load = Load::default();
        entry.wanted = at_least;
        entry.load = Some(load.clone());
        load
    }
}

async fn fetch(deps: &Context, game: Uuid) -> Result<Loaded, ()> {
    let live = match replay(&deps.postgres, game).await {
        Ok(live) => live,
        Err(error) => {
            tracing::warn!(%error, %game, "loading a game to watch");
            return Err(());
        }
    };
    metrics::counter!("watch_snapshot_loads_total").increment(1);
    let snapshot = match live {
        None => None,
        Some(live) => Some(Snapshot {
            live: Arc::new(live),
            connected: deps.hub.presence(game).await,
            watchers: deps.hub.watchers(game).await,
        }),
    };
    Ok(Loaded {
        snapshot,
        at: Instant::now(),
    })
}
