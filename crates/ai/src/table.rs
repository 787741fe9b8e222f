//! The transposition table of the heuristic search.

/// What a stored value says about the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Exact,
    /// The true value is at least this (a beta cut-off).
    Lower,
    /// The true value is at most this (no move raised alpha).
    Upper,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: u64,
    value: i32,
    /// Remaining depth the value was searched to; `SOLVED` when the subtree
    /// reached the end of the game everywhere, so it holds at any depth.
    depth: u8,
    bound: u8,
    /// The best move's pit, 0 when none is known.
    best: u8,
}

/// A probed entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) value: i32,
    pub(crate) depth: u32,
    pub(crate) bound: Bound,
    pub(crate) best: Option<u8>,
    pub(crate) solved: bool,
}

const SOLVED: u8 = u8::MAX;

/// One slot per hash bucket, replaced by any newer search of another
/// position or a deeper one of the same: simple, and the iterative deepening
/// refills what it loses.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    slots: Vec<Slot>,
    mask: usize,
}

impl Table {
    /// A table of `2^bits` slots of 16 bytes.
    pub(crate) fn new(bits: u32) -> Table {
        let len = 1usize << bits;
        Table {
            slots: vec![Slot::default(); len],
            mask: len - 1,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }

    pub(crate) fn clear(&mut self) {
        self.slots.fill(Slot::default());
    }

    #[inline]
    pub(crate) fn probe(&self, key: u64) -> Option<Entry> {
        let slot = self.slots[key as usize & self.mask];
        if slot.key != key || slot.bound == 0 {
            return None;
        }
        let bound = match slot.bound {
            1 => Bound::Exact,
            2 => Bound::Lower,
            _ => Bound::Upper,
        };
        Some(Entry {
            value: slot.value,
            depth: if slot.depth == SOLVED {
                u32::MAX
            } else {
                u32::from(slot.depth)
            },
            bound,
            best: (slot.best != 0).then_some(slot.best),
            solved: slot.depth == SOLVED,
        })
    }

    #[inline]
    pub(crate) fn store(
        &mut self,
        key: u64,
        value: i32,
        depth: u32,
        bound: Bound,
        best: u8,
        solved: bool,
    ) {
        let slot = &mut self.slots[key as usize & self.mask];
        let depth = if solved {
            SOLVED
        } else {
            depth.min(u32::from(SOLVED - 1)) as u8
        };
        if slot.key == key && slot.depth > depth {
            return;
        }
        let bound = match bound {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        *slot = Slot {
            key,
            value,
            depth,
            bound,
            best,
        };
    }
}
