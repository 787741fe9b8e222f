//! Choosing a variant at run time: [`Variant`] names a rule set and
//! [`AnyPosition`] holds a position of any of them.

use std::fmt;

use crate::kalah::{Kalah, KalahOptions};
use crate::mangala::Mangala;
use crate::oware::Oware;
use crate::position::Position;
use crate::types::{EndReason, Pit, PitSet, Side};

/// A rule set with its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "variant", rename_all = "snake_case"))]
pub enum Variant {
    /// Kalah with its board size and rule options.
    Kalah(KalahOptions),
    /// Oware / Abapa.
    Oware,
    /// Mangala II.
    Mangala,
}

impl Variant {
    /// The starting position.
    pub fn start(&self) -> AnyPosition {
        match *self {
            Variant::Kalah(options) => AnyPosition::Kalah(Kalah::new(options)),
            Variant::Oware => AnyPosition::Oware(Oware::new()),
            Variant::Mangala => AnyPosition::Mangala(Mangala::new()),
        }
    }

    /// `"kalah"`, `"oware"` or `"mangala"`.
    pub const fn name(&self) -> &'static str {
        match self {
            Variant::Kalah(_) => "kalah",
            Variant::Oware => "oware",
            Variant::Mangala => "mangala",
        }
    }

    /// Whether games of this variant are offered for play (rather than only
    /// for analysis, like small Kalah boards).
    pub const fn is_playable(&self) -> bool {
        match self {
            Variant::Kalah(options) => options.is_playable(),
            Variant::Oware | Variant::Mangala => true,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A position of any variant, for code that picks the variant at run time.
/// Code that knows its variant can use [`Kalah`], [`Oware`] or [`Mangala`]
/// directly and skip the dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyPosition {
    Kalah(Kalah),
    Oware(Oware),
    Mangala(Mangala),
}

impl AnyPosition {
    /// The rule set this position is played under.
    pub fn variant(&self) -> Variant {
        match self {
            AnyPosition::Kalah(position) => Variant::Kalah(position.options()),
            AnyPosition::Oware(_) => Variant::Oware,
            AnyPosition::Mangala(_) => Variant::Mangala,
        }
    }
}

/// A variant's own position type, as held inside an [`AnyPosition`].
pub trait FromAny: Position {
    /// The position, when `position` is of this variant.
    fn from_any(position: &AnyPosition) -> Option<Self>;
}

impl FromAny for Kalah {
    fn from_any(position: &AnyPosition) -> Option<Kalah> {
        if let AnyPosition::Kalah(position) = position {
            Some(*position)
        } else {
            None
        }
    }
}

impl FromAny for Oware {
    fn from_any(position: &AnyPosition) -> Option<Oware> {
        if let AnyPosition::Oware(position) = position {
            Some(*position)
        } else {
            None
        }
    }
}

impl FromAny for Mangala {
    fn from_any(position: &AnyPosition) -> Option<Mangala> {
        if let AnyPosition::Mangala(position) = position {
            Some(*position)
        } else {
            None
        }
    }
}

macro_rules! dispatch {
    ($self:expr, $position:ident => $body:expr) => {
        match $self {
            AnyPosition::Kalah($position) => $body,
            AnyPosition::Oware($position) => $body,
            AnyPosition::Mangala($position) => $body,
        }
    };
}

macro_rules! dispatch_into {
    ($self:expr, $position:ident => $body:expr) => {
        match $self {
            AnyPosition::Kalah($position) => AnyPosition::Kalah($body),
            AnyPosition::Oware($position) => AnyPosition::Oware($body),
            AnyPosition::Mangala($position) => AnyPosition::Mangala($body),
        }
    };
}

impl Position for AnyPosition {
    fn turn(&self) -> Side {
        dispatch!(self, p => p.turn())
    }

    fn legal_moves(&self) -> PitSet {
        dispatch!(self, p => p.legal_moves())
    }

    fn play_unchecked(&self, pit: Pit) -> Self {
        dispatch_into!(self, p => p.play_unchecked(pit))
    }

    fn end_reason(&self) -> Option<EndReason> {
        dispatch!(self, p => p.end_reason())
    }

    fn score(&self) -> [u8; 2] {
        dispatch!(self, p => p.score())
    }

    fn pits_per_side(&self) -> u8 {
        dispatch!(self, p => p.pits_per_side())
    }

    fn row(&self, player: Side) -> [u8; 6] {
        dispatch!(self, p => p.row(player))
    }

    fn hash64(&self) -> u64 {
        dispatch!(self, p => p.hash64())
    }

    fn can_repeat(&self) -> bool {
        dispatch!(self, p => p.can_repeat())
    }

    fn end_by_repetition(&self) -> Self {
        dispatch_into!(self, p => p.end_by_repetition())
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;
    use crate::KalahEnd;

    #[test]
    fn variants_read_with_defaults_and_reject_unknown_fields() {
        let kalah: Variant = serde_json::from_str(r#"{"variant":"kalah","seeds":5}"#).unwrap();
        assert_eq!(kalah, Variant::Kalah(KalahOptions::new(6, 5).unwrap()));
        let full = Variant::Kalah(
            KalahOptions::new(4, 3)
                .unwrap()
                .with_empty_capture(true)
                .with_end(KalahEnd::OnTurn),
        );
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(serde_json::from_str::<Variant>(&text).unwrap(), full);
        assert!(serde_json::from_str::<Variant>(r#"{"variant":"kalah","seeds":9}"#).is_err());
        assert!(serde_json::from_str::<Variant>(r#"{"variant":"kalah","sides":2}"#).is_err());
        let oware: Variant = serde_json::from_str(r#"{"variant":"oware"}"#).unwrap();
        assert_eq!(oware, Variant::Oware);
    }
}
