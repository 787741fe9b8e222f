//! Ranked queues: tickets in Redis, one pairing leader per queue at a time
//! (a lease with a fencing token), pairs by `pairing`, games created in
//! game-room before either player hears of them, and the AI fallback.

pub mod pairing;
pub mod store;

use mancala_proto::VariantName;
use mancala_proto::game::TimeControl;

/// A queue: a variant at a time control, named `kalah:3+2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSpec {
    pub name: String,
    pub variant: VariantName,
    pub time_control: TimeControl,
}

impl QueueSpec {
    pub fn parse(name: &str) -> Option<QueueSpec> {
        let (variant, clock) = name.split_once(':')?;
        let (initial, increment) = clock.split_once('+')?;
        let minutes: u32 = initial.parse().ok()?;
        let increment_secs: u32 = increment.parse().ok()?;
        let variant = VariantName::parse(variant)?;
        if minutes == 0 {
            return None;
        }
        Some(QueueSpec {
            name: name.to_owned(),
            variant,
            time_control: TimeControl {
                initial_secs: minutes * 60,
                increment_secs,
            },
        })
    }

    /// The configured queue for `variant` at exactly `time_control`: a
    /// clock the queues do not offer (3 min 59 s, say) matches none rather
    /// than the nearest.
    pub fn find(
        queues: &[String],
        variant: VariantName,
        time_control: TimeControl,
    ) -> Option<QueueSpec> {
        queues
            .iter()
            .filter_map(|name| QueueSpec::parse(name))
            .find(|queue| queue.variant == variant && queue.time_control == time_control)
    }

    /// The answer to a queue that is not offered, naming those that are.
    pub fn not_offered(
        queues: &[String],
        variant: VariantName,
        time_control: TimeControl,
    ) -> String {
        format!(
            "no ranked queue for {variant} at {} s + {} s; the queues are {} (GET /v1/queues)",
            time_control.initial_secs,
            time_control.increment_secs,
            queues.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names_round_trip() {
        let spec = QueueSpec::parse("kalah:3+2").unwrap();
        assert_eq!(spec.time_control.initial_secs, 180);
        let queues = ["kalah:3+2".to_owned(), "oware:5+3".to_owned()];
        assert_eq!(
            QueueSpec::find(&queues, VariantName::Kalah, spec.time_control),
            Some(spec)
        );
        let clock = |initial_secs, increment_secs| TimeControl {
            initial_secs,
            increment_secs,
        };
        // Exactly, or not at all: no rounding to the minute.
        for (variant, initial, increment) in [
            (VariantName::Kalah, 181, 2),
            (VariantName::Kalah, 239, 2),
            (VariantName::Kalah, 1, 0),
            (VariantName::Kalah, 180, 3),
            (VariantName::Mangala, 180, 2),
        ] {
            assert_eq!(
                QueueSpec::find(&queues, variant, clock(initial, increment)),
                None,
                "{variant} {initial}+{increment}"
            );
        }
        for bad in ["chess:3+2", "kalah", "kalah:0+1", "kalah:x+1"] {
            assert!(QueueSpec::parse(bad).is_none(), "{bad}");
        }
    }
}
