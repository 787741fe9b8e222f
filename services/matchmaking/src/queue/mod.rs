//! Ranked queues: tickets in Redis, one pairing leader per queue at a time
//! (a lease with a fencing token), pairs by `pairing`, games created in
//! game-room before either player hears of them, and the AI fallback.

pub mod pairer;
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

    /// The queue's name for a variant and time control.
    pub fn name_of(variant: &str, time_control: TimeControl) -> String {
        format!(
            "{variant}:{}+{}",
            time_control.initial_secs / 60,
            time_control.increment_secs
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
        assert_eq!(
            QueueSpec::name_of(spec.variant.as_str(), spec.time_control),
            "kalah:3+2"
        );
        for bad in ["chess:3+2", "kalah", "kalah:0+1", "kalah:x+1"] {
            assert!(QueueSpec::parse(bad).is_none(), "{bad}");
        }
    }
}
