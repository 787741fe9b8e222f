//! Places on the AI workers, shared by player rather than by request. A
//! player with ten games against the Perfect AI asks for ten searches; a
//! first-come queue would make everyone else wait behind all ten. Here each
//! waiting search belongs to an *owner* (the person it plays against, or
//! who asked for the hint), and a freed place goes to the waiting owner
//! who has used the workers least: each owner's worker time is counted
//! (virtual time, as in fair queueing), and an owner who comes back after
//! a rest starts level with those waiting, not with the credit of the
//! rest. So an honest player's one search goes next when a worker frees,
//! whatever a crowd has queued, and a crowd shares what is left.
//!
//! No clock is read here: the caller says how long each place was used.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
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
    /// time are served in that order.
    arrivals: u64,
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
}

impl Place {
    /// Gives the place back, charging its owner `used` of worker time.
    pub(crate) fn release(mut self, used: Duration) {
        self.used = used;
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.share.give_back(self.owner, self.used);
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
                self.share.give_back(self.owner, Duration::ZERO);
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
                entry.used = entry.used.max(state.floor);
            }
            if state.free > 0 && nobody_waits {
                state.free -= 1;
                state.floor = entry.used;
                None
            } else {
                let (hand, handed) = oneshot::channel();
                entry.waiting.push_back((state.arrivals, hand));
                state.arrivals += 1;
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
        Place {
            share: self.clone(),
            owner,
            used: Duration::ZERO,
        }
    }

    /// Charges `owner` and hands the place to the least-served waiting
    /// owner whose wait is still on, or frees it.
    fn give_back(&self, owner: Uuid, used: Duration) {
        let mut state = self.state();
        if let Some(entry) = state.owners.get_mut(&owner) {
            entry.used = entry
                .used
                .saturating_add(used.as_micros().min(u128::from(u64::MAX)) as u64);
        }
        loop {
            let next = state
                .owners
                .iter()
                .filter_map(|(id, o)| Some((o.used, o.waiting.front()?.0, *id)))
                .min()
                .map(|(used, _, id)| (id, used));
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
        let first = share.acquire(a).await;
        let mut waits = Vec::new();
        for who in [a, a, a, b, b, b] {
            waits.push(wait_for(&share, who, Duration::from_millis(100), &order).await);
        }
        first.release(Duration::from_millis(100));
        all(waits).await;
        assert_eq!(taken(&order), vec![b, a, b, a, b, a]);
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
