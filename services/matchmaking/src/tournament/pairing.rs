//! Pairing in a running arena: the players who are present and not in a
//! game are paired again at once, each with a waiting player of near
//! score and rating, never with the one they just played while someone
//! else waits. Lichess's arena is the model: ranks close in the
//! standings meet, so the leaders play the leaders.
//!
//! Pure, and linear after a sort: a wave of 500 waiting players is paired
//! in well under a millisecond (see the `tournament_pairing` example).

use uuid::Uuid;

/// How far down the players left over one looks for an opponent.
const LOOK_AHEAD: usize = 8;
/// Points of score that weigh as much as this many rating points.
const RATING_PER_POINT: f64 = 100.0;
/// Two players who just met may meet again only when nobody else waits
/// and both have waited this long (lichess makes them wait too).
pub const REMATCH_AFTER_MS: u64 = 10_000;

/// A player waiting for their next game.
#[derive(Clone, Debug, PartialEq)]
pub struct Waiting {
    pub player: Uuid,
    pub score: i32,
    pub rating: f64,
    /// Their last opponent in this tournament.
    pub last_opponent: Option<Uuid>,
    /// Since when they wait (clock ms).
    pub since_ms: u64,
    /// Games with the first move minus games without, in this tournament.
    pub first_balance: i32,
}

fn distance(a: &Waiting, b: &Waiting) -> f64 {
    f64::from((a.score - b.score).abs()) * RATING_PER_POINT + (a.rating - b.rating).abs()
}

fn just_met(a: &Waiting, b: &Waiting) -> bool {
    a.last_opponent == Some(b.player) || b.last_opponent == Some(a.player)
}

/// The pairs of this wave, as indexes into `waiting`: the first of each
/// pair moves first (the one who had the first move less often; a tie by
/// `coin`, one bit a pair, lowest first).
pub fn pair(waiting: &[Waiting], now_ms: u64, coin: u64) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..waiting.len()).collect();
    // The standings' order: score, then rating.
    order.sort_by(|&a, &b| {
        let (a, b) = (&waiting[a], &waiting[b]);
        b.score
            .cmp(&a.score)
            .then_with(|| b.rating.total_cmp(&a.rating))
            .then_with(|| a.player.cmp(&b.player))
    });
    let alone_together = waiting.len() == 2;
    let allowed = |a: usize, b: usize| {
        let (me, them) = (&waiting[a], &waiting[b]);
        !just_met(me, them)
            || (alone_together
                && now_ms.saturating_sub(me.since_ms) >= REMATCH_AFTER_MS
                && now_ms.saturating_sub(them.since_ms) >= REMATCH_AFTER_MS)
    };
    // Neighbours in the standings' order, as many pairs as there can be,
    // then the least total distance: a dynamic programme over the sorted
    // list (best[i]: pairs and minus the distance over the first i).
    let n = order.len();
    let mut best: Vec<(usize, f64)> = vec![(0, 0.0); n + 1];
    let mut paired_last = vec![false; n + 1];
    for i in 2..=n {
        best[i] = best[i - 1];
        let (a, b) = (order[i - 2], order[i - 1]);
        if allowed(a, b) {
            let (pairs, cost) = best[i - 2];
            let candidate = (pairs + 1, cost - distance(&waiting[a], &waiting[b]));
            if candidate.0 > best[i].0 || (candidate.0 == best[i].0 && candidate.1 > best[i].1) {
                best[i] = candidate;
                paired_last[i] = true;
            }
        }
    }
    let mut taken = vec![false; waiting.len()];
    let mut found = Vec::with_capacity(n / 2);
    let mut i = n;
    while i >= 2 {
        if paired_last[i] {
            found.push((order[i - 2], order[i - 1]));
            taken[order[i - 2]] = true;
            taken[order[i - 1]] = true;
            i -= 2;
        } else {
            i -= 1;
        }
    }
    // Neighbours who just met leave gaps: those left over take the nearest
    // allowed one left over a little further down.
    let left: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&index| !taken[index])
        .collect();
    for (position, &index) in left.iter().enumerate() {
        if taken[index] {
            continue;
        }
        let me = &waiting[index];
        let nearest = left[position + 1..]
            .iter()
            .copied()
            .filter(|&other| !taken[other])
            .take(LOOK_AHEAD)
            .filter(|&other| allowed(index, other))
            .min_by(|&a, &b| distance(me, &waiting[a]).total_cmp(&distance(me, &waiting[b])));
        if let Some(other) = nearest {
            taken[index] = true;
            taken[other] = true;
            found.push((index, other));
        }
    }
    found
        .into_iter()
        .enumerate()
        .map(|(k, (a, b))| first_mover_first(waiting, a, b, (coin >> (k % 64)) & 1 == 1))
        .collect()
}

fn first_mover_first(waiting: &[Waiting], a: usize, b: usize, heads: bool) -> (usize, usize) {
    let a_first = match waiting[a].first_balance.cmp(&waiting[b].first_balance) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => heads,
    };
    if a_first { (a, b) } else { (b, a) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(id: u128, score: i32, rating: f64) -> Waiting {
        Waiting {
            player: Uuid::from_u128(id),
            score,
            rating,
            last_opponent: None,
            since_ms: 0,
            first_balance: 0,
        }
    }

    fn ids(waiting: &[Waiting], pairs: &[(usize, usize)]) -> Vec<(u128, u128)> {
        let mut out: Vec<(u128, u128)> = pairs
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (waiting[a].player.as_u128(), waiting[b].player.as_u128());
                (a.min(b), a.max(b))
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn near_scores_meet_and_the_odd_one_waits() {
        let players = [
            waiting(1, 10, 1500.0),
            waiting(2, 0, 1500.0),
            waiting(3, 9, 1500.0),
            waiting(4, 1, 1500.0),
            waiting(5, 4, 1500.0),
        ];
        let pairs = pair(&players, 0, 0);
        assert_eq!(
            ids(&players, &pairs),
            [(1, 3), (2, 4)],
            "the middle one waits"
        );
    }

    #[test]
    fn among_equal_scores_near_ratings_meet() {
        let players = [
            waiting(1, 4, 1200.0),
            waiting(2, 4, 1900.0),
            waiting(3, 4, 1250.0),
            waiting(4, 4, 1850.0),
        ];
        assert_eq!(ids(&players, &pair(&players, 0, 0)), [(1, 3), (2, 4)]);
    }

    #[test]
    fn never_the_same_opponent_twice_in_a_row_while_another_waits() {
        let mut players = [
            waiting(1, 4, 1500.0),
            waiting(2, 4, 1500.0),
            waiting(3, 0, 1000.0),
        ];
        players[0].last_opponent = Some(players[1].player);
        let pairs = ids(&players, &pair(&players, 60_000, 0));
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].1, 3, "one of them plays the third: {pairs:?}");
        // Only the two of them: after both have waited a while.
        let two = &players[..2];
        assert!(pair(two, REMATCH_AFTER_MS - 1, 0).is_empty());
        assert_eq!(ids(two, &pair(two, REMATCH_AFTER_MS, 0)), [(1, 2)]);
    }

    #[test]
    fn the_first_move_goes_to_who_had_it_less() {
        let mut players = [waiting(1, 0, 1500.0), waiting(2, 0, 1500.0)];
        players[0].first_balance = 2;
        let pairs = pair(&players, 0, 0);
        assert_eq!(players[pairs[0].0].player.as_u128(), 2);
        players[0].first_balance = 0;
        let heads = pair(&players, 0, 1)[0].0;
        let tails = pair(&players, 0, 0)[0].0;
        assert_ne!(heads, tails, "a tie goes by the coin");
    }

    #[test]
    fn everyone_is_paired_once_at_most_and_never_with_themself() {
        let players: Vec<Waiting> = (0..501)
            .map(|n| {
                let mut w = waiting(n, (n % 17) as i32, 1000.0 + (n * 7 % 900) as f64);
                w.last_opponent = Some(Uuid::from_u128(n ^ 1));
                w
            })
            .collect();
        let pairs = pair(&players, 0, 0x5555);
        let mut seen = vec![false; players.len()];
        for &(a, b) in &pairs {
            assert_ne!(a, b);
            assert!(!seen[a] && !seen[b]);
            seen[a] = true;
            seen[b] = true;
            assert!(!just_met(&players[a], &players[b]));
        }
        assert!(pairs.len() >= 245, "{} pairs of 501", pairs.len());
    }
}
