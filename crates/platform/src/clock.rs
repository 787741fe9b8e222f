//! The time services read, injected so that tests can move it.
//!
//! Production code asks a [`Clock`] instead of `SystemTime::now()`. Tests
//! build a manual clock and advance it, so expiry and timeouts are tested
//! without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;

/// Wall-clock time in milliseconds since the Unix epoch: real, or moved by
/// hand in tests. Cheap to clone; clones of a manual clock share its time.
#[derive(Clone, Debug)]
pub struct Clock(Source);

#[derive(Clone, Debug)]
enum Source {
    System,
    /// The system's, moved by a fixed number of milliseconds.
    Offset(i64),
    Manual(Arc<AtomicU64>),
}

impl Clock {
    /// The operating system's clock.
    pub fn system() -> Clock {
        Clock(Source::System)
    }

    /// The operating system's clock moved by `seconds` (back when
    /// negative): a process rehearsing a time of day, such as an
    /// end-to-end test of a schedule. Time still passes at its pace.
    pub fn system_offset(seconds: i64) -> Clock {
        if seconds == 0 {
            Clock::system()
        } else {
            Clock(Source::Offset(seconds.saturating_mul(1000)))
        }
    }

    /// A clock that stands at `millis` until [`Clock::advance`] moves it.
    pub fn manual(millis: u64) -> Clock {
        Clock(Source::Manual(Arc::new(AtomicU64::new(millis))))
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_millis(&self) -> u64 {
        match &self.0 {
            Source::System => system_millis(),
            Source::Offset(offset) => system_millis().saturating_add_signed(*offset),
            Source::Manual(millis) => millis.load(Ordering::SeqCst),
        }
    }

    /// Whole seconds since the Unix epoch.
    pub fn now_secs(&self) -> u64 {
        self.now_millis() / 1000
    }

    /// Now, as a time Postgres stores (`timestamptz`).
    pub fn now_utc(&self) -> OffsetDateTime {
        timestamp(self.now_millis())
    }

    /// Moves a manual clock forward; the system clock cannot be moved, so
    /// this does nothing to it.
    pub fn advance(&self, millis: u64) {
        if let Source::Manual(now) = &self.0 {
            now.fetch_add(millis, Ordering::SeqCst);
        }
    }
}

fn system_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64)
}

/// A time of the clock (ms since the Unix epoch) as a `timestamptz`.
pub fn timestamp(millis: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// A stored time as the clock counts it (ms since the Unix epoch; 0 for
/// a time before it).
pub fn millis_of(at: OffsetDateTime) -> u64 {
    u64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_clones_share_it() {
        let clock = Clock::manual(5_000);
        let clone = clock.clone();
        assert_eq!(clock.now_secs(), 5);
        clone.advance(2_500);
        assert_eq!(clock.now_millis(), 7_500);
    }

    #[test]
    fn the_system_clock_is_after_2020() {
        assert!(Clock::system().now_secs() > 1_577_836_800);
        let clock = Clock::manual(1_764_547_200_123);
        assert_eq!(millis_of(clock.now_utc()), 1_764_547_200_123);
        assert_eq!(clock.now_utc().year(), 2025);
    }

    #[test]
    fn an_offset_clock_runs_at_the_systems_pace_a_fixed_distance_away() {
        let ahead = Clock::system_offset(3_600);
        let behind = Clock::system_offset(-3_600);
        let gap = ahead.now_millis() - behind.now_millis();
        // Read a moment apart: two hours, give or take the reads.
        assert!((7_200_000..7_201_000).contains(&gap), "{gap}");
    }
}
