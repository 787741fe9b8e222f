//! Sanctions as data: a player's standing is computed from their offences
//! alone, at a given time, so it can be explained (these offences), lifted
//! (forgive the rows) and tested without a database or a clock.
//!
//! Each offence is weighed by how many offences the window ending at it
//! holds: the `ban_after`-th brings the first ban, from the offence on,
//! each later one the next (the last for every one after). A ban so made
//! never changes as time passes: an offence leaving the window later does
//! not shorten a ban already running.

use std::time::Duration;

use crate::config::FairPlaySettings;

/// What a player's record brings now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Standing {
    /// Offences in the window ending now.
    pub counted: u32,
    /// One more offence brings a ban.
    pub warned: bool,
    /// When ranked play opens again (ms), if it is closed now.
    pub banned_until: Option<u64>,
}

/// How far back offences can matter to a standing at some time: two
/// windows (the window of the oldest offence still able to make a ban)
/// and the longest ban.
pub(crate) fn lookback(policy: &FairPlaySettings) -> Duration {
    let longest = policy.bans.iter().max().copied().unwrap_or_default();
    policy.window * 2 + longest
}

/// The standing at `now` (ms) of a record whose offences happened at
/// `times` (ms, in any order).
pub(crate) fn standing(policy: &FairPlaySettings, times: &[u64], now: u64) -> Standing {
    let window = policy.window.as_millis() as u64;
    let mut times: Vec<u64> = times.iter().copied().filter(|&at| at <= now).collect();
    times.sort_unstable();
    let in_window_ending = |at: u64| {
        times
            .iter()
            .filter(|&&other| other <= at && other + window > at)
            .count() as u32
    };
    let ban_from = |at: u64| {
        let nth = in_window_ending(at);
        let step = nth.checked_sub(policy.ban_after)? as usize;
        let length = policy.bans.get(step).or(policy.bans.last())?;
        Some(at + length.as_millis() as u64)
    };
    let banned_until = times
        .iter()
        .filter_map(|&at| ban_from(at))
        .max()
        .filter(|&until| until > now);
    let counted = times.iter().filter(|&&at| at + window > now).count() as u32;
    Standing {
        counted,
        warned: banned_until.is_none() && counted + 1 >= policy.ban_after,
        banned_until,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000;
    const HOUR: u64 = 60 * MINUTE;

    fn policy() -> FairPlaySettings {
        FairPlaySettings {
            window: Duration::from_secs(24 * 3600),
            ban_after: 3,
            bans: vec![
                Duration::from_secs(600),
                Duration::from_secs(3600),
                Duration::from_secs(86_400),
            ],
        }
    }

    #[test]
    fn one_offence_is_nothing_two_a_warning_three_a_ban_each_longer() {
        let policy = policy();
        let clean = standing(&policy, &[], 0);
        assert_eq!(
            (clean.counted, clean.warned, clean.banned_until),
            (0, false, None)
        );
        let once = standing(&policy, &[HOUR], HOUR);
        assert_eq!(
            (once.counted, once.warned, once.banned_until),
            (1, false, None)
        );
        let twice = standing(&policy, &[HOUR, 2 * HOUR], 2 * HOUR);
        assert_eq!((twice.warned, twice.banned_until), (true, None));
        let offences = [HOUR, 2 * HOUR, 3 * HOUR];
        let third = standing(&policy, &offences, 3 * HOUR + MINUTE);
        assert_eq!(third.banned_until, Some(3 * HOUR + 10 * MINUTE));
        // Served: a warning again, since the next one is a ban.
        let served = standing(&policy, &offences, 3 * HOUR + 11 * MINUTE);
        assert_eq!((served.warned, served.banned_until), (true, None));
        let fourth = standing(&policy, &[HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR], 4 * HOUR);
        assert_eq!(fourth.banned_until, Some(5 * HOUR));
        let many: Vec<u64> = (1..=8).map(|n| n * MINUTE).collect();
        let eighth = standing(&policy, &many, 8 * MINUTE);
        assert_eq!(eighth.banned_until, Some(8 * MINUTE + 24 * HOUR));
    }

    #[test]
    fn a_ban_does_not_shrink_as_old_offences_leave_the_window() {
        let policy = policy();
        // Five offences, the last 23 hours after the first: a day's ban.
        let offences = [0, HOUR, 2 * HOUR, 3 * HOUR, 23 * HOUR];
        let last = 23 * HOUR;
        assert_eq!(
            standing(&policy, &offences, last).banned_until,
            Some(last + 24 * HOUR)
        );
        // A day after the first four, they have left the window; the ban
        // they brought runs its whole day.
        let later = standing(&policy, &offences, 30 * HOUR);
        assert_eq!(later.banned_until, Some(last + 24 * HOUR));
        assert_eq!(later.counted, 1);
    }

    #[test]
    fn offences_spread_wider_than_the_window_never_ban() {
        let policy = policy();
        let daily: Vec<u64> = (0..10).map(|day| day * 25 * HOUR).collect();
        for (n, &at) in daily.iter().enumerate() {
            let now = standing(&policy, &daily[..=n], at);
            assert_eq!(now.banned_until, None, "day {n}");
            assert_eq!(now.counted, 1);
        }
    }

    #[test]
    fn the_lookback_covers_every_offence_that_can_still_ban() {
        let policy = policy();
        assert_eq!(lookback(&policy), Duration::from_secs(3 * 86_400));
        // An offence just inside the lookback, as the third of a window
        // whose first is two windows back, still counts for its ban.
        let now = 48 * HOUR + 23 * HOUR;
        let offences = [24 * HOUR, 30 * HOUR, 47 * HOUR + 59 * MINUTE];
        let at = standing(&policy, &offences, 48 * HOUR);
        assert_eq!(at.banned_until, Some(47 * HOUR + 69 * MINUTE));
        assert_eq!(standing(&policy, &offences, now).banned_until, None);
    }
}
