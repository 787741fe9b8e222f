//! Choosing pairs in one queue: pure, so a tick over 100,000 tickets can be
//! measured and tested without Redis.
//!
//! Lichess's pools are the model. A ticket's acceptable rating difference
//! (its window) starts narrow and widens by about 12 points per missed
//! wave. Two tickets may meet when their difference is within the wider of
//! their windows, they did not just play each other, and neither is
//! provisional while the other is not (unless both have waited long).
//! Among the allowed pairs, the tick takes as many pairs as it can at the
//! least total rating difference. Ratings lie on a line, so an optimal
//! matching pairs neighbours in rating order, and a dynamic programme over
//! the sorted tickets finds it in O(n log n).

use uuid::Uuid;

/// A player waiting in a queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticket {
    pub player: Uuid,
    pub rating: f64,
    pub rd: f64,
    /// When they joined (clock ms).
    pub joined_ms: u64,
    /// Their last opponent in this queue, not to be paired again at once.
    pub last_opponent: Option<Uuid>,
    /// Games with the first move minus games without, recently.
    pub first_balance: i32,
}

/// How windows open.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairingRules {
    /// The window when a ticket arrives.
    pub base_window: f64,
    /// Added per wave a ticket waits.
    pub widen_per_wave: f64,
    /// A wave's length (ms): the pairing tick.
    pub wave_ms: u64,
    /// RD at or above which a rating is provisional.
    pub provisional_rd: f64,
    /// After this many waves, provisional and established players may meet.
    pub mixed_after_waves: u64,
}

impl Default for PairingRules {
    fn default() -> PairingRules {
        PairingRules {
            base_window: 50.0,
            widen_per_wave: 12.0,
            wave_ms: 2_000,
            provisional_rd: 110.0,
            mixed_after_waves: 5,
        }
    }
}

impl PairingRules {
    /// Waves missed by a ticket at `now`.
    pub fn waves(&self, ticket: &Ticket, now: u64) -> u64 {
        now.saturating_sub(ticket.joined_ms) / self.wave_ms.max(1)
    }

    /// The rating difference a ticket accepts at `now`.
    pub fn window(&self, ticket: &Ticket, now: u64) -> f64 {
        self.base_window + self.widen_per_wave * self.waves(ticket, now) as f64
    }

    fn provisional(&self, ticket: &Ticket) -> bool {
        ticket.rd >= self.provisional_rd
    }

    /// Whether two tickets may meet at `now`.
    pub fn allowed(&self, a: &Ticket, b: &Ticket, now: u64) -> bool {
        if a.player == b.player
            || a.last_opponent == Some(b.player)
            || b.last_opponent == Some(a.player)
        {
            return false;
        }
        if self.provisional(a) != self.provisional(b)
            && self.waves(a, now).min(self.waves(b, now)) < self.mixed_after_waves
        {
            return false;
        }
        (a.rating - b.rating).abs() <= self.window(a, now).max(self.window(b, now))
    }
}

/// The pairs of this tick, as indexes into `tickets`.
pub fn pair(tickets: &[Ticket], rules: &PairingRules, now: u64) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..tickets.len()).collect();
    order.sort_by(|&a, &b| tickets[a].rating.total_cmp(&tickets[b].rating));
    // best[i]: (pairs, -total difference) over the first i sorted tickets,
    // compared lexicographically: most pairs first, then least difference.
    let n = order.len();
    let mut best: Vec<(usize, f64)> = vec![(0, 0.0); n + 1];
    let mut paired_last: Vec<bool> = vec![false; n + 1];
    for i in 1..=n {
        best[i] = best[i - 1];
        if i >= 2 {
            let (a, b) = (&tickets[order[i - 2]], &tickets[order[i - 1]]);
            if rules.allowed(a, b, now) {
                let (pairs, cost) = best[i - 2];
                let candidate = (pairs + 1, cost - (a.rating - b.rating).abs());
                if candidate.0 > best[i].0 || (candidate.0 == best[i].0 && candidate.1 > best[i].1)
                {
                    best[i] = candidate;
                    paired_last[i] = true;
                }
            }
        }
    }
    let mut pairs = Vec::with_capacity(best[n].0);
    let mut i = n;
    while i >= 2 {
        if paired_last[i] {
            pairs.push((order[i - 2], order[i - 1]));
            i -= 2;
        } else {
            i -= 1;
        }
    }
    pairs
}

/// What a waiting player can expect, from the tickets waiting now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forecast {
    /// Milliseconds until a pairing wave that may pair `mine` with someone
    /// waiting now, or until the AI fallback when nobody waiting is within
    /// reach before it.
    pub wait_ms: u64,
    /// Whether `wait_ms` is the AI fallback (nobody waiting can be paired
    /// with `mine` before it) rather than a person in reach.
    pub ai_fallback: bool,
    /// Others waiting who will not be paired with `mine` at once because
    /// the two just played each other.
    pub held_apart: u64,
}

/// When `mine` can expect an opponent among `tickets` (theirs included or
/// not): the first wave after `now` at which the windows let some other
/// ticket meet it, at most `fallback_at` (clock ms). An estimate: that
/// other may be paired with someone closer first, and newcomers may come.
pub fn forecast(
    mine: &Ticket,
    tickets: &[Ticket],
    rules: &PairingRules,
    now: u64,
    fallback_at: u64,
) -> Forecast {
    let wave = rules.wave_ms.max(1);
    let others = tickets.iter().filter(|other| other.player != mine.player);
    let held_apart = others
        .clone()
        .filter(|other| {
            mine.last_opponent == Some(other.player) || other.last_opponent == Some(mine.player)
        })
        .count() as u64;
    // The waves from the next one to the fallback, each checked against
    // every other ticket: a few dozen steps with the default settings.
    let mut at = now - now % wave + wave;
    while at < fallback_at {
        if others.clone().any(|other| rules.allowed(mine, other, at)) {
            return Forecast {
                wait_ms: at - now,
                ai_fallback: false,
                held_apart,
            };
        }
        at += wave;
    }
    Forecast {
        wait_ms: fallback_at.saturating_sub(now),
        ai_fallback: true,
        held_apart,
    }
}

/// Who moves first: the one who has had the first move less often lately
/// (in Kalah the first player has a solved advantage); a tie goes by
/// `coin`.
pub fn first_mover(a: &Ticket, b: &Ticket, coin: bool) -> bool {
    match a.first_balance.cmp(&b.first_balance) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => coin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(rating: f64, joined_ms: u64) -> Ticket {
        Ticket {
            player: Uuid::new_v4(),
            rating,
            rd: 60.0,
            joined_ms,
            last_opponent: None,
            first_balance: 0,
        }
    }

    #[test]
    fn neighbours_are_paired_and_windows_hold() {
        let rules = PairingRules::default();
        let tickets = [
            ticket(1500.0, 0),
            ticket(1530.0, 0),
            ticket(1800.0, 0),
            ticket(1510.0, 0),
        ];
        let pairs = pair(&tickets, &rules, 0);
        assert_eq!(pairs.len(), 1);
        let (a, b) = pairs[0];
        let mut paired = [tickets[a].rating, tickets[b].rating];
        paired.sort_by(f64::total_cmp);
        // The closest two of the three near 1500, and not the 1800.
        assert_eq!(paired, [1500.0, 1510.0]);
    }

    #[test]
    fn windows_widen_with_waiting() {
        let rules = PairingRules::default();
        let tickets = [ticket(1500.0, 0), ticket(1600.0, 0)];
        assert!(pair(&tickets, &rules, 0).is_empty(), "100 apart, window 50");
        // +12 a wave: 50 + 12 * 4 = 98 < 100 after 4 waves; 110 after 5.
        assert!(pair(&tickets, &rules, 4 * rules.wave_ms).is_empty());
        assert_eq!(pair(&tickets, &rules, 5 * rules.wave_ms).len(), 1);
        assert_eq!(rules.window(&tickets[0], 5 * rules.wave_ms), 110.0);
    }

    #[test]
    fn most_pairs_first_then_least_difference() {
        let rules = PairingRules {
            base_window: 1000.0,
            ..PairingRules::default()
        };
        // Pairing the middle two would strand the ends: two pairs win.
        let tickets = [
            ticket(1000.0, 0),
            ticket(1100.0, 0),
            ticket(1120.0, 0),
            ticket(1220.0, 0),
        ];
        let pairs = pair(&tickets, &rules, 0);
        assert_eq!(pairs.len(), 2);
    }

    #[test]
    fn no_rematch_at_once_and_provisionals_among_themselves() {
        let rules = PairingRules::default();
        let mut a = ticket(1500.0, 0);
        let b = ticket(1500.0, 0);
        a.last_opponent = Some(b.player);
        assert!(!rules.allowed(&a, &b, 0));
        let mut new = ticket(1500.0, 0);
        new.rd = 350.0;
        let old = ticket(1500.0, 0);
        assert!(!rules.allowed(&new, &old, 0));
        assert!(rules.allowed(&new, &old, rules.mixed_after_waves * rules.wave_ms));
    }

    #[test]
    fn the_forecast_waits_for_the_windows_to_meet_and_names_the_fallback() {
        let rules = PairingRules::default();
        let mine = ticket(1500.0, 0);
        let fallback = 20_000;
        // Alone: the AI comes at the fallback, and says so.
        let alone = forecast(&mine, std::slice::from_ref(&mine), &rules, 1_000, fallback);
        assert_eq!(
            alone,
            Forecast {
                wait_ms: 19_000,
                ai_fallback: true,
                held_apart: 0
            }
        );
        // Someone near: the next wave.
        let near = ticket(1520.0, 0);
        let soon = forecast(&mine, &[mine.clone(), near], &rules, 1_000, fallback);
        assert_eq!((soon.wait_ms, soon.ai_fallback), (1_000, false));
        // 100 apart: windows of 50 + 12 a wave meet after 5 waves (10 s).
        let far = ticket(1600.0, 0);
        let later = forecast(&mine, std::slice::from_ref(&far), &rules, 1_000, fallback);
        assert_eq!((later.wait_ms, later.ai_fallback), (9_000, false));
        // 400 apart: not before the fallback.
        let out_of_reach = forecast(&mine, &[ticket(1900.0, 0)], &rules, 1_000, fallback);
        assert!(out_of_reach.ai_fallback);
        assert_eq!(out_of_reach.wait_ms, 19_000);
    }

    #[test]
    fn the_forecast_says_who_is_held_apart_as_a_last_opponent() {
        let rules = PairingRules::default();
        let mut mine = ticket(1500.0, 0);
        let last = ticket(1500.0, 0);
        mine.last_opponent = Some(last.player);
        let both = forecast(&mine, &[mine.clone(), last.clone()], &rules, 0, 20_000);
        assert_eq!(
            both,
            Forecast {
                wait_ms: 20_000,
                ai_fallback: true,
                held_apart: 1
            }
        );
        // Whichever of the two remembers the other.
        let mut theirs = last.clone();
        theirs.last_opponent = Some(mine.player);
        mine.last_opponent = None;
        let held = forecast(&mine, &[theirs, ticket(1510.0, 0)], &rules, 0, 20_000);
        assert_eq!((held.held_apart, held.ai_fallback), (1, false));
    }

    #[test]
    fn the_first_move_goes_to_who_had_it_less() {
        let mut a = ticket(1500.0, 0);
        let b = ticket(1500.0, 0);
        a.first_balance = 2;
        assert!(!first_mover(&a, &b, true));
        assert!(first_mover(&b, &a, false));
        assert!(first_mover(&ticket(1.0, 0), &ticket(1.0, 0), true));
    }
}
