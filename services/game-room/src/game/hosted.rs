//! The games this instance hosts. A game is hosted by at most one instance
//! at a time, under a Redis lease the host renews; the first instance asked
//! for a game that nobody hosts loads it from Postgres and takes the lease.

use mancala_platform::clock::millis_of;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::OnceCell;
use uuid::Uuid;

use super::host::{self, GameHandle};
use super::live::GameInfo;
use super::rematch;
use super::replay::{ReplayError, replay};
use crate::context::Context;
use crate::lease::{Lease, NotLeased};
use std::future::Future;
use std::pin::Pin;

impl From<NotLeased> for HostError {
    fn from(refused: NotLeased) -> HostError {
        match refused {
            NotLeased::Elsewhere(url) => HostError::Elsewhere(url),
            NotLeased::Redis(error) => HostError::Redis(error),
        }
    }
}

/// Why a game cannot be hosted here.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("no such game")]
    NotFound,
    /// Hosted by another instance, reachable at this URL if it said.
    #[error("hosted by another instance ({0:?})")]
    Elsewhere(Option<String>),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// This instance is stopping: it hosts nothing new.
    #[error("this instance is stopping")]
    Stopping,
}

/// This instance's hosted games; cheap to clone.
#[derive(Clone)]
pub struct HostedGames {
    deps: Context,
    games: Arc<Mutex<HashMap<Uuid, Arc<OnceCell<GameHandle>>>>>,
    /// Set by the drain: from then on nothing new is hosted here, so a
    /// player reconnecting during the stop is not held by a process about
    /// to exit.
    stopping: Arc<std::sync::atomic::AtomicBool>,
}

impl HostedGames {
    pub fn new(deps: Context) -> HostedGames {
        HostedGames {
            deps,
            games: Arc::new(Mutex::new(HashMap::new())),
            stopping: Default::default(),
        }
    }

    pub fn deps(&self) -> &Context {
        &self.deps
    }

    /// The local handle of a game hosted here, if it is.
    pub fn local(&self, game: Uuid) -> Option<GameHandle> {
        let games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        games.get(&game).and_then(|cell| cell.get().cloned())
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The game's handle, loading and hosting it here if nobody hosts it.
    pub async fn host(&self, game: Uuid) -> Result<GameHandle, HostError> {
        if self.is_stopping() {
            return Err(HostError::Stopping);
        }
        let cell = {
            let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
            let cell = games.entry(game).or_default().clone();
            count_hosted(&games);
            cell
        };
        let handle = cell
            .get_or_try_init(|| async {
                let settings = &self.deps.settings;
                let lease = Lease::acquire(
                    &self.deps.redis,
                    game,
                    settings.instance.id(),
                    settings.lease.as_millis() as u64,
                )
                .await?;
                match self.take_over(game).await {
                    Ok(Some((live, epoch, room_closes))) => Ok(host::spawn(
                        live,
                        self.deps.clone(),
                        lease,
                        epoch,
                        room_closes,
                        Arc::new(self.clone()),
                    )),
                    Ok(None) => {
                        lease.release(&self.deps.redis).await;
                        Err(HostError::NotFound)
                    }
                    Err(error) => {
                        lease.release(&self.deps.redis).await;
                        Err(error)
                    }
                }
            })
            .await
            .cloned();
        if handle.is_err() {
            self.remove_cell(game, &cell);
        }
        handle
    }

    /// Takes the lease on a game this instance is about to create, so it
    /// can host it from its commit on (`host_new`): `None` when Redis
    /// cannot give it, and the game is then created for anyone to load.
    pub(crate) async fn lease_new(&self, game: Uuid) -> Option<Lease> {
        if self.is_stopping() {
            return None;
        }
        let settings = &self.deps.settings;
        let millis = settings.lease.as_millis() as u64;
        Lease::acquire(&self.deps.redis, game, settings.instance.id(), millis)
            .await
            .ok()
    }

    /// Hosts a game this instance has just committed under `lease` and
    /// `epoch`: its players find it here with nothing to load, check or
    /// claim (a series' next game, made by the host of the one before).
    pub(crate) async fn host_new(
        &self,
        live: super::LiveGame,
        lease: Lease,
        epoch: i64,
        room_closes: Option<u64>,
    ) {
        let cell = {
            let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
            let cell = games.entry(live.id()).or_default().clone();
            count_hosted(&games);
            cell
        };
        // Were a socket already loading it (it cannot: the id is new), that
        // load wins and this task is never started.
        let (deps, hosted) = (self.deps.clone(), self.clone());
        cell.get_or_init(|| async move {
            host::spawn(live, deps, lease, epoch, room_closes, Arc::new(hosted))
        })
        .await;
    }

    /// Under the lease: raises the game's epoch (fencing off any previous
    /// host), then replays it; with when its room closes (ms).
    async fn take_over(
        &self,
        game: Uuid,
    ) -> Result<Option<(super::LiveGame, i64, Option<u64>)>, HostError> {
        let postgres = &self.deps.postgres;
        let Some(epoch) = crate::store::claim_epoch(postgres, game)
            .await
            .map_err(ReplayError::from)?
        else {
            return Ok(None);
        };
        let Some(live) = replay(postgres, game).await? else {
            return Ok(None);
        };
        let room_closes = match live.info().room {
            None => None,
            Some(room) => crate::store::room_deadline(postgres, room)
                .await
                .map_err(ReplayError::from)?
                .map(|(expires, closed)| if closed { 0 } else { millis_of(expires) }),
        };
        Ok(Some((live, epoch, room_closes)))
    }

    /// Releases every hosted game and closes its sockets, so their players
    /// reconnect at once (to another instance, or to this one restarted):
    /// the graceful drain. Each host stops after its last write and answers
    /// once its lease is released; the hosts drain side by side.
    pub async fn drain(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::Release);
        let cells: Vec<(Uuid, Arc<OnceCell<GameHandle>>)> = {
            let games = self.games.lock().unwrap_or_else(|e| e.into_inner());
            games
                .iter()
                .map(|(game, cell)| (*game, cell.clone()))
                .collect()
        };
        let draining: Vec<_> = cells
            .into_iter()
            .map(|(game, cell)| tokio::spawn(self.clone().drain_once_hosted(game, cell)))
            .collect();
        let games = draining.len();
        for host in draining {
            let _ = host.await;
        }
        tracing::info!(games, "drained: every game handed over");
    }

    /// Drains a hosted game; one a socket was loading as the drain began
    /// (it passed the stopping check a moment before) is drained once it is
    /// hosted, so it leaves no lease behind to lapse; one whose load failed
    /// (its cell gone from the map) is let be, and so is one still loading
    /// after five seconds (a store that stopped answering).
    async fn drain_once_hosted(self, game: Uuid, cell: Arc<OnceCell<GameHandle>>) {
        for _ in 0..1_000 {
            if let Some(handle) = cell.get() {
                handle.drain().await;
                return;
            }
            let still_loading = {
                let games = self.games.lock().unwrap_or_else(|e| e.into_inner());
                games
                    .get(&game)
                    .is_some_and(|current| Arc::ptr_eq(current, &cell))
            };
            if !still_loading {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Tells other instances where clients reach this one, now and every
    /// lease period, so a Redis that restarted empty learns it again.
    pub async fn advertise_forever(&self, url: String) {
        let mut every = tokio::time::interval(self.deps.settings.lease);
        loop {
            every.tick().await;
            self.advertise(&url).await;
        }
    }

    /// Tells other instances where clients reach this one.
    pub async fn advertise(&self, url: &str) {
        let mut connection = self.deps.redis.connection();
        let advertised: Result<(), _> = redis::cmd("HSET")
            .arg(self.deps.redis.key(mancala_proto::bus::names::INSTANCES))
            .arg(self.deps.settings.instance.id())
            .arg(url)
            .query_async(&mut connection)
            .await;
        if let Err(error) = advertised {
            tracing::warn!(%error, "advertising this instance");
        }
    }

    /// Closes friend rooms past their time, now and then, for as long as
    /// the process runs (rooms nobody hosts included).
    pub fn spawn_room_sweeper(&self) {
        let deps = self.deps.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(deps.settings.room_sweep);
            loop {
                ticks.tick().await;
                let now = deps.clock.now_utc();
                let idle_before = now - deps.settings.room_idle;
                match crate::store::close_expired_rooms(&deps.postgres, now, idle_before).await {
                    Ok(aborted) if !aborted.is_empty() => {
                        tracing::info!(games = aborted.len(), "closed expired rooms");
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "sweeping rooms"),
                }
                // Well past the point a host would have aborted it itself.
                let turn_before = now - (deps.settings.first_move + 2 * deps.settings.lease);
                match crate::store::abort_unstarted(&deps.postgres, now, turn_before).await {
                    Ok(aborted) if !aborted.is_empty() => {
                        tracing::info!(games = aborted.len(), "aborted games nobody started");
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, "sweeping unstarted games"),
                }
                match sweep_abandoned(&deps, now).await {
                    Ok(0) => {}
                    Ok(ended) => tracing::info!(games = ended, "ended abandoned games"),
                    Err(error) => tracing::warn!(%error, "sweeping abandoned games"),
                }
            }
        });
    }

    fn remove_cell(&self, game: Uuid, cell: &Arc<OnceCell<GameHandle>>) {
        let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        if games
            .get(&game)
            .is_some_and(|current| Arc::ptr_eq(current, cell))
        {
            games.remove(&game);
            count_hosted(&games);
        }
    }

    /// Drops a game whose task ended, unless a newer task replaced it.
    fn forget_task(&self, handle: &GameHandle) {
        let mut games = self.games.lock().unwrap_or_else(|e| e.into_inner());
        let stale = games
            .get(&handle.id())
            .and_then(|cell| cell.get())
            .is_some_and(|current| current.same(handle));
        if stale {
            games.remove(&handle.id());
            count_hosted(&games);
        }
    }

    /// How many games this instance hosts.
    pub fn hosted(&self) -> usize {
        self.games.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl host::Series for HostedGames {
    fn rematch<'a>(
        &'a self,
        info: &'a GameInfo,
        now: time::OffsetDateTime,
        pair_limit: u32,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Uuid>, sqlx::Error>> + Send + 'a>> {
        Box::pin(async move {
            let id = Uuid::now_v7();
            let lease = self.lease_new(id).await;
            let (next, to_host) =
                rematch::create(&self.deps, info, now, pair_limit, id, lease).await?;
            if let Some(made) = to_host {
                self.host_new(made.live, made.lease, made.epoch, made.room_closes)
                    .await;
            }
            Ok(next)
        })
    }

    fn forget(&self, game: &GameHandle) {
        self.forget_task(game);
    }
}

/// Ends the games nobody plays any more: no move for `APP_ABANDONED_SECS`
/// and no host (a host stays while anyone has the game open, and for
/// `APP_GAME_IDLE_SECS` after). A closed tab's AI or hotseat game, or a
/// game both players walked out of, would otherwise stay "live" in the
/// lists for ever.
async fn sweep_abandoned(deps: &Context, now: time::OffsetDateTime) -> Result<usize, sqlx::Error> {
    let quiet = crate::store::quiet_games(&deps.postgres, now - deps.settings.abandoned).await?;
    let mut ended = 0;
    for (game, epoch) in quiet {
        if Lease::held(&deps.redis, game).await != Some(false) {
            continue; // hosted (or Redis cannot tell): someone is there
        }
        if crate::store::abandon(&deps.postgres, game, epoch, now).await? {
            ended += 1;
        }
    }
    Ok(ended)
}

/// The games this instance holds, live and finished, in the metrics: what
/// a soak watches to see finished games let go.
fn count_hosted(games: &HashMap<Uuid, Arc<OnceCell<GameHandle>>>) {
    metrics::gauge!("games_hosted").set(games.len() as f64);
}
