//! The interface every variant's position implements.

use std::fmt::Debug;
use std::hash::Hash;

use crate::types::{EndReason, Outcome, Pit, PitSet, PlayError, PositionError, Side};

/// A position of one variant: the pits, the stores or captured tallies, the
/// player to move and, once the game has ended, why.
///
/// Positions are small `Copy` values. [`Position::play`] returns the next
/// position and never allocates; an illegal move returns an error and, the
/// position being a value, leaves it as it was.
///
/// Repetition (Oware rule 5(d), Mangala rule 4) depends on the game's history,
/// which a position does not hold: [`crate::Game`] applies it.
pub trait Position: Copy + Eq + Hash + Debug + Send + Sync + 'static {
    /// The player to move. After the end it is the player who would have
    /// moved next, which carries no meaning.
    fn turn(&self) -> Side;

    /// The pits the player to move may sow. Empty once the game is over.
    fn legal_moves(&self) -> PitSet;

    /// Plays a move the caller knows to be legal (one of
    /// [`Position::legal_moves`]). Debug builds check; release builds may
    /// produce a meaningless position for an illegal move, but never panic
    /// or break memory safety.
    #[must_use]
    fn play_unchecked(&self, pit: Pit) -> Self;

    /// Why the game ended, or `None` while it goes on.
    fn end_reason(&self) -> Option<EndReason>;

    /// Stones in each store (Kalah) or captured (Oware, Mangala).
    fn score(&self) -> [u8; 2];

    /// Pits on each side: 6, or fewer on a Kalah analysis board.
    fn pits_per_side(&self) -> u8;

    /// A player's pits, numbered 1..=6 from that player's left; entries past
    /// [`Position::pits_per_side`] are 0.
    fn row(&self, player: Side) -> [u8; 6];

    /// A 64-bit hash of everything that makes the position (pits, scores,
    /// player to move, end), for transposition tables. Deterministic across
    /// runs and machines.
    fn hash64(&self) -> u64;

    /// Whether this variant's positions can recur, so that a game must track
    /// repetitions. Kalah positions cannot: every cycle would need stones to
    /// leave a store.
    fn can_repeat(&self) -> bool;

    /// The position ended by the third occurrence rule: each player captures
    /// the stones left on their own side.
    #[must_use]
    fn end_by_repetition(&self) -> Self;

    /// Plays a move, checking it first.
    fn play(&self, pit: Pit) -> Result<Self, PlayError> {
        self.check(pit)?;
        Ok(self.play_unchecked(pit))
    }

    /// Whether `pit` may be played, and if not, why.
    fn check(&self, pit: Pit) -> Result<(), PlayError> {
        if self.is_over() {
            return Err(PlayError::GameOver);
        }
        let pits = self.pits_per_side();
        if pit.get() > pits {
            return Err(PlayError::PitOutOfRange {
                pit: pit.get(),
                pits,
            });
        }
        if self.row(self.turn())[pit.offset()] == 0 {
            return Err(PlayError::EmptyPit { pit: pit.get() });
        }
        if !self.legal_moves().contains(pit) {
            // A non-empty pit is illegal only under Oware's feeding rule.
            return Err(PlayError::MustFeed { pit: pit.get() });
        }
        Ok(())
    }

    /// Whether the game has ended.
    fn is_over(&self) -> bool {
        self.end_reason().is_some()
    }

    /// The result once the game has ended.
    fn outcome(&self) -> Option<Outcome> {
        self.end_reason()
            .map(|reason| Outcome::from_score(self.score(), reason))
    }

    /// Stones on the board, in stores and captured: constant through a game.
    fn total_stones(&self) -> u32 {
        let on_board: u32 = Side::BOTH
            .iter()
            .flat_map(|&p| self.row(p))
            .map(u32::from)
            .sum();
        on_board + self.score().iter().map(|&s| u32::from(s)).sum::<u32>()
    }
}

/// Mixes a position's 16 bytes and a variant tag into 64 bits.
///
/// Two rounds of a folded 64x64->128 multiply (the wyhash construction) give
/// every input bit a full avalanche at a cost of a few nanoseconds, cheaper
/// than updating a Zobrist key for every pit a sowing touches.
pub(crate) fn hash_bytes(bytes: [u8; 16], tag: u64) -> u64 {
    const K0: u64 = 0xa076_1d64_78bd_642f;
    const K1: u64 = 0xe703_7ed1_a0b4_28db;
    const K2: u64 = 0x8ebc_6af0_9c88_c6e3;
    let word = u128::from_le_bytes(bytes);
    let lo = word as u64;
    let hi = (word >> 64) as u64;
    let first = fold_multiply(lo ^ K0 ^ tag, hi ^ K1);
    fold_multiply(first ^ K2, tag ^ K0)
}

#[inline]
fn fold_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The twelve pits of a storeless board (Oware, Mangala) from two rows, after
/// checking that rows and tallies hold exactly `total` stones.
pub(crate) fn ring_of_twelve(
    rows: [[u8; 6]; 2],
    captured: [u8; 2],
    total: u32,
) -> Result<[u8; 12], PositionError> {
    let found = rows
        .iter()
        .flatten()
        .chain(&captured)
        .map(|&s| u32::from(s))
        .sum();
    if found != total {
        return Err(PositionError::StoneCount {
            found,
            expected: total,
        });
    }
    let mut pits = [0; 12];
    pits[..6].copy_from_slice(&rows[0]);
    pits[6..].copy_from_slice(&rows[1]);
    Ok(pits)
}

/// The hash of a storeless board: its pits, tallies, turn and status.
pub(crate) fn hash_ring_of_twelve(
    pits: &[u8; 12],
    captured: [u8; 2],
    turn: Side,
    status: u8,
    tag: u64,
) -> u64 {
    let mut bytes = [0; 16];
    bytes[..12].copy_from_slice(pits);
    bytes[12] = captured[0];
    bytes[13] = captured[1];
    bytes[14] = turn as u8;
    bytes[15] = status;
    hash_bytes(bytes, tag)
}

/// Encodes an optional end reason in one byte: 0 while the game goes on.
#[inline]
pub(crate) fn status_code(reason: Option<EndReason>) -> u8 {
    reason.map_or(0, |r| r as u8)
}
