//! Places on the AI workers, shared by player rather than by request. A
//! player with ten games against the Perfect AI asks for ten searches; a
//! first-come queue would make everyone else wait behind all ten. Here each
//! waiting search belongs to an *owner* (the person it plays against, or
//! who asked for the hint), and a freed place goes to the waiting owner
//! who has used the workers least: each owner's worker time is counted
//! (virtual time, as in fair queueing), and an owner who comes back after
//! a rest starts level with those waiting: not with the credit of the
//! rest, nor with the debt of searches past. A player who asks one search
//! at a time (the AI's reply, then their own move) is always back from a
//! rest, so their search goes next when a worker frees, however long
//! their searches are and whatever a crowd has queued; only owners who
//! keep several searches waiting are counted against each other, and a
//! crowd shares what is left.
//!
//! A freed place can be long in coming: a `Perfect` search may run to its
//! deadline. So an owner who must wait while nothing of theirs runs asks
//! one running search to yield: the one whose owner has used the workers
//! most. The search ends soon after (the pool decides how soon) with the
//! best move it has, and the place goes to whoever is next. A crowd's
//! searches are cut short while others wait; alone, a search runs its
//! whole budget.
//!
//! No clock is read here: the caller says how long each place was used.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use uuid::Uuid;

/// The places, and who waits for them.
#[derive(Debug)]
pub(crate) struct FairShare {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    free: usize,
    owners: HashMap<Uuid, Owner>,
    /// The used time of the owner served last, when it was served (it
    /// only grows): where an owner arriving or coming back starts.
    floor: u64,
    /// Numbers the waits in the order they came: owners level in used
    /// time and in searches waiting are served in that order.
    arrivals: u64,
    /// The places in use, in the order they were taken.
    running: Vec<Running>,
    /// Numbers the places taken.
    taken: u64,
}

/// A place in use, and how to ask its search to yield.
#[derive(Debug)]
struct Running {
    id: u64,
    owner: Uuid,
    asked: bool,
    yield_now: Arc<Notify>,
}

impl State {
    /// The worker time `owner` is counted as having used: an owner
    /// forgotten was level with the floor.
    fn used(&self, owner: &Uuid) -> u64 {
        self.owners.get(owner).map_or(self.floor, |o| o.used)
    }

    /// `owner` is about to wait with nothing of theirs running: asks the
    /// running search of the owner who has used the workers most (the
    /// oldest among equals) to yield, unless every one is asked already.
    fn ask_to_yield(&mut self, owner: Uuid) {
        if self.running.iter().any(|running| running.owner == owner) {
            return;
        }
        let chosen = self
            .running
            .iter()
            .enumerate()
            .filter(|(_, running)| !running.asked)
            .map(|(index, running)| {
                (
                    self.used(&running.owner),
                    std::cmp::Reverse(running.id),
                    index,
                )
            })
            .max();
        if let Some((_, _, index)) = chosen {
            let running = &mut self.running[index];
            running.asked = true;
            running.yield_now.notify_one();
        }
    }
}

#[derive(Debug, Default)]
struct Owner {
    /// Worker time used, in microseconds.
    used: u64,
    /// Each wait with its arrival number.
    waiting: VecDeque<(u64, oneshot::Sender<()>)>,
}

/// A place on a worker; give it back with [`Place::release`].
#[derive(Debug)]
pub(crate) struct Place {
    share: Arc<FairShare>,
    owner: Uuid,
    used: Duration,
    id: u64,
    yield_now: Arc<Notify>,
}

impl Place {
    /// Gives the place back, charging its owner `used` of worker time.
    pub(crate) fn release(mut self, used: Duration) {
        self.used = used;
    }

    /// Notified (once, and remembered until awaited) when another owner
    /// waits and this search should end soon.
    pub(crate) fn yield_asked(&self) -> Arc<Notify> {
        self.yield_now.clone()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.share.give_back(self.owner, self.used, Some(self.id));
    }
}

/// A wait for a place; dropping it (a cancelled search) leaves the queue,
/// and gives back a place that was handed to it meanwhile.
struct Waiting {
    share: Arc<FairShare>,
    owner: Uuid,
    handed: Option<oneshot::Receiver<()>>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some(mut handed) = self.handed.take() {
            handed.close();
            if handed.try_recv().is_ok() {
                self.share.give_back(self.owner, Duration::ZERO, None);
            }
        }
    }
}

impl FairShare {
    pub(crate) fn new(places: usize) -> Arc<FairShare> {
        Arc::new(FairShare {
            state: Mutex::new(State {
                free: places.max(1),
                ..State::default()
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for `owner`'s search: at once when one is free and nobody
    /// waits, else when it is this owner's turn.
    pub(crate) async fn acquire(self: &Arc<Self>, owner: Uuid) -> Place {
        let handed = {
            let mut guard = self.state();
            let state = &mut *guard;
            let nobody_waits = state.owners.values().all(|o| o.waiting.is_empty());
            let entry = state.owners.entry(owner).or_default();
            if entry.waiting.is_empty() {
                // Arriving or back from a rest: level with those served.
                // An owner whose search still runs keeps what it used.
                let running = state.running.iter().any(|running| running.owner == owner);
                entry.used = if running {
                    entry.used.max(state.floor)
                } else {
                    state.floor
                };
            }
            if state.free > 0 && nobody_waits {
                state.free -= 1;
                state.floor = entry.used;
                None
            } else {
                let first_wait = entry.waiting.is_empty();
                let (hand, handed) = oneshot::channel();
                entry.waiting.push_back((state.arrivals, hand));
                state.arrivals += 1;
                if first_wait {
                    state.ask_to_yield(owner);
                }
                Some(handed)
            }
        };
        if let Some(handed) = handed {
            let mut waiting = Waiting {
                share: self.clone(),
                owner,
                handed: Some(handed),
            };
            if let Some(receiver) = waiting.handed.as_mut() {
                // The sender lives in the queue until it is handed a place
                // or the share is gone with every place.
                let _ = receiver.await;
            }
            waiting.handed = None;
        }
        let yield_now = Arc::new(Notify::new());
        let mut state = self.state();
        let id = state.taken;
        state.taken += 1;
        state.running.push(Running {
            id,
            owner,
            asked: false,
            yield_now: yield_now.clone(),
        });
        Place {
            share: self.clone(),
            owner,
            used: Duration::ZERO,
            id,
            yield_now,
        }
    }

    /// Charges `owner` and hands the place to the least-served waiting
    /// owner whose wait is still on, or frees it. Among owners level in
    /// time the one with fewer searches waiting goes first: when a crowd
    /// arrives all at once, every owner is level, and a player with one
    /// search must not wait behind every crowd member's first.
    fn give_back(&self, owner: Uuid, used: Duration, place: Option<u64>) {
        let mut state = self.state();
        if let Some(place) = place {
            state.running.retain(|running| running.id != place);
        }
        if let Some(entry) = state.owners.get_mut(&owner) {
            entry.used = entry
                .used
                .saturating_add(used.as_micros().min(u128::from(u64::MAX)) as u64);
        }
        loop {
            let next = state
                .owners
                .iter()
                .filter_map(|(id, o)| Some((o.used, o.waiting.len(), o.waiting.front()?.0, *id)))
                .min()
                .map(|(used, _, _, id)| (id, used));
            let Some((next, used)) = next else {
                state.free += 1;
                break;
            };
            state.floor = state.floor.max(used);
            let Some((_, hand)) = state
                .owners
                .get_mut(&next)
                .and_then(|o| o.waiting.pop_front())
            else {
                continue;
            };
            if hand.send(()).is_ok() {
                break;
            }
            // That search was cancelled while it waited: the next one.
        }
        // Owners level with the floor and waiting for nothing are
        // remembered by the floor alone.
        let floor = state.floor;
        state
            .owners
            .retain(|_, o| !o.waiting.is_empty() || o.used > floor);
    }

    /// Searches waiting for a place, and owners remembered.
    #[cfg(test)]
    fn sizes(&self) -> (usize, usize) {
        let state = self.state();
        let waiting = state.owners.values().map(|o| o.waiting.len()).sum();
        (waiting, state.owners.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// The order places were handed out in.
    type Order = Arc<Mutex<Vec<Uuid>>>;

    /// Starts a wait for `who`, which, once served, notes its turn and
    /// gives the place back charged `use_for`; lets it queue first.
    async fn wait_for(
        share: &Arc<FairShare>,
        who: Uuid,
        use_for: Duration,
        order: &Order,
    ) -> tokio::task::JoinHandle<()> {
        let (share, order) = (share.clone(), order.clone());
        let task = tokio::spawn(async move {
            let place = share.acquire(who).await;
            order.lock().unwrap_or_else(|e| e.into_inner()).push(who);
            place.release(use_for);
        });
        tokio::task::yield_now().await;
        task
    }

    async fn all(tasks: Vec<tokio::task::JoinHandle<()>>) {
        for task in tasks {
            task.await.unwrap_or_else(|e| panic!("{e}"));
        }
    }

    fn taken(order: &Order) -> Vec<Uuid> {
        order.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    #[tokio::test]
    async fn a_player_with_one_search_goes_before_a_crowd_that_queued_many() {
        let share = FairShare::new(1);
        let order = Order::default();
        let (crowd, honest) = (owner(1), owner(2));
        let running = share.acquire(crowd).await;
        let mut waits = Vec::new();
        for _ in 0..10 {
            waits.push(wait_for(&share, crowd, Duration::from_millis(900), &order).await);
        }
        waits.push(wait_for(&share, honest, Duration::from_millis(50), &order).await);
        running.release(Duration::from_millis(900));
        all(waits).await;
        assert_eq!(taken(&order)[0], honest);
        assert_eq!(share.sizes().0, 0);
    }

    #[tokio::test]
    async fn owners_take_turns_by_the_time_they_used_and_level_ones_in_arrival_order() {
        let share = FairShare::new(1);
        let order = Order::default();
        // `b` sorts first by id: arrival order, not the id, breaks ties.
        let (a, b) = (owner(2), owner(1));
        let first = share.acquire(owner(3)).await;
        let mut waits = Vec::new();
        for who in [a, a, a, b, b, b] {
            waits.push(wait_for(&share, who, Duration::from_millis(100), &order).await);
        }
        first.release(Duration::from_millis(100));
        all(waits).await;
        assert_eq!(taken(&order), vec![a, b, a, b, a, b]);
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_the_queue_and_loses_no_place() {
        let share = FairShare::new(1);
        let order = Order::default();
        let held = share.acquire(owner(1)).await;
        let cancelled = wait_for(&share, owner(2), Duration::ZERO, &order).await;
        cancelled.abort();
        let _ = cancelled.await;
        drop(held);
        let again = tokio::time::timeout(Duration::from_secs(1), share.acquire(owner(3))).await;
        assert!(again.is_ok(), "the place was lost");
        assert_eq!(share.sizes().0, 0);
        assert!(taken(&order).is_empty());
    }

    #[tokio::test]
    async fn a_place_handed_to_a_wait_cancelled_meanwhile_goes_to_the_next() {
        let share = FairShare::new(1);
        let order = Order::default();
        let held = share.acquire(owner(1)).await;
        // Queued, then dropped without ever being polled again.
        let mut gone = Box::pin(share.acquire(owner(2)));
        let polled = futures_util::FutureExt::now_or_never(gone.as_mut());
        assert!(polled.is_none());
        let next = wait_for(&share, owner(3), Duration::ZERO, &order).await;
        held.release(Duration::from_millis(1));
        drop(gone);
        all(vec![next]).await;
        assert_eq!(taken(&order), vec![owner(3)]);
    }

    #[tokio::test]
    async fn a_rest_earns_no_credit_and_idle_owners_are_forgotten() {
        let share = FairShare::new(1);
        let order = Order::default();
        let (rested, busy) = (owner(1), owner(2));
        share
            .acquire(rested)
            .await
            .release(Duration::from_millis(10));
        // `busy` runs up a lot of time while `rested` is away.
        for _ in 0..5 {
            share.acquire(busy).await.release(Duration::from_secs(1));
        }
        // Both queue behind a running search: the rested one goes first
        // (it used less), but it starts level, not 5 s ahead.
        let running = share.acquire(busy).await;
        let mut waits = Vec::new();
        for who in [rested, rested, rested, busy] {
            waits.push(wait_for(&share, who, Duration::from_secs(1), &order).await);
        }
        running.release(Duration::from_secs(1));
        all(waits).await;
        let order = taken(&order);
        assert_eq!(order[0], rested);
        assert!(
            order[..3].contains(&busy),
            "the rested owner took every turn: {order:?}"
        );
        assert!(share.sizes().1 <= 2);
    }

    fn asked(place: &Place) -> bool {
        futures_util::FutureExt::now_or_never(place.yield_asked().notified()).is_some()
    }

    /// Queues a wait for `who` that is never served in the test.
    fn queue(share: &Arc<FairShare>, who: Uuid) -> impl std::future::Future<Output = Place> {
        let share = share.clone();
        let mut wait = Box::pin(async move { share.acquire(who).await });
        assert!(futures_util::FutureExt::now_or_never(wait.as_mut()).is_none());
        wait
    }

    #[tokio::test]
    async fn a_waiting_owner_with_nothing_running_asks_the_busiest_search_to_yield() {
        let share = FairShare::new(2);
        let (crowd, other, honest) = (owner(1), owner(2), owner(3));
        let crowds = share.acquire(crowd).await;
        let others = share.acquire(other).await;
        share.state().owners.entry(crowd).or_default().used = 5_000_000;
        let _honest = queue(&share, honest);
        assert!(asked(&crowds), "the owner who used the most yields");
        assert!(!asked(&others));
        // A second wait of the same owner asks nothing more; nor does an
        // owner whose own search runs.
        let _again = queue(&share, honest);
        let _own = queue(&share, other);
        assert!(!asked(&others));
        // The next owner to wait asks the other search, which yields too.
        let _next = queue(&share, owner(5));
        assert!(asked(&others));
    }

    #[tokio::test]
    async fn a_yielded_place_goes_to_the_owner_who_asked_before_the_crowd() {
        let share = FairShare::new(1);
        let order = Order::default();
        let (crowd, honest) = (owner(1), owner(2));
        let running = share.acquire(crowd).await;
        let mut waits = Vec::new();
        for _ in 0..5 {
            waits.push(wait_for(&share, crowd, Duration::from_millis(900), &order).await);
        }
        assert!(
            !asked(&running),
            "its own searches never make an owner yield"
        );
        waits.push(wait_for(&share, honest, Duration::from_millis(50), &order).await);
        assert!(asked(&running));
        running.release(Duration::from_millis(200));
        all(waits).await;
        assert_eq!(taken(&order)[0], honest);
        assert!(share.state().running.is_empty(), "every place given back");
    }

    #[tokio::test]
    async fn a_player_with_one_search_at_a_time_is_never_behind_a_crowd_however_long_it_searches() {
        let share = FairShare::new(1);
        let (crowd, honest) = (owner(1), owner(2));
        for _ in 0..20 {
            let order = Order::default();
            let running = share.acquire(crowd).await;
            let mut waits = Vec::new();
            for _ in 0..3 {
                waits.push(wait_for(&share, crowd, Duration::from_millis(5), &order).await);
            }
            // The honest search costs twenty times a crowd's.
            waits.push(wait_for(&share, honest, Duration::from_millis(100), &order).await);
            running.release(Duration::from_millis(5));
            all(waits).await;
            assert_eq!(taken(&order)[0], honest);
        }
    }

    #[tokio::test]
    async fn a_player_with_one_search_goes_before_a_crowd_that_arrived_at_once_before_them() {
        let share = FairShare::new(1);
        let order = Order::default();
        let running = share.acquire(owner(99)).await;
        let mut waits = Vec::new();
        // Twenty owners, level at the floor, five searches each.
        for crowd in 0..20 {
            for _ in 0..5 {
                waits.push(wait_for(&share, owner(crowd), Duration::from_millis(5), &order).await);
            }
        }
        let honest = owner(100);
        waits.push(wait_for(&share, honest, Duration::from_millis(100), &order).await);
        running.release(Duration::from_millis(5));
        all(waits).await;
        assert_eq!(taken(&order)[0], honest);
    }

    #[tokio::test]
    async fn many_places_are_all_used() {
        let share = FairShare::new(3);
        let held: Vec<Place> = futures_util::future::join_all((0..3).map(|n| {
            let share = share.clone();
            async move { share.acquire(owner(n)).await }
        }))
        .await;
        let order = Order::default();
        let fourth = wait_for(&share, owner(9), Duration::ZERO, &order).await;
        assert!(taken(&order).is_empty(), "a fourth place was handed out");
        drop(held);
        all(vec![fourth]).await;
        assert_eq!(taken(&order), vec![owner(9)]);
    }
}
