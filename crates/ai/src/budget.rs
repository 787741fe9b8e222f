//! How much a search may do. The crate reads no clock: a caller with a
//! deadline trips a stop flag when it passes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A search budget: a node count, a stop flag, both, or neither.
///
/// A node count makes a search reproducible (same position, seed and budget,
/// same move); a stop flag lets a caller on a deadline end it early. The
/// search checks both every [`Budget::CHECK_EVERY`] nodes and always finishes
/// its first iteration, so it has a legal move to give.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    nodes: Option<u64>,
    stop: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// How often, in nodes, a search looks at its budget.
    pub const CHECK_EVERY: u64 = 1024;

    /// No limit: the search runs to its level's depth or to the end of the
    /// game tree.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// At most `nodes` nodes.
    pub fn nodes(nodes: u64) -> Budget {
        Budget {
            nodes: Some(nodes),
            stop: None,
        }
    }

    /// Until the caller stores `true` in `stop`.
    pub fn until(stop: Arc<AtomicBool>) -> Budget {
        Budget {
            nodes: None,
            stop: Some(stop),
        }
    }

    /// This budget, also ending at `nodes` nodes.
    #[must_use]
    pub fn with_nodes(mut self, nodes: u64) -> Budget {
        self.nodes = Some(nodes);
        self
    }

    /// This budget, also ending when `stop` is tripped.
    #[must_use]
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Budget {
        self.stop = Some(stop);
        self
    }

    /// The node limit, if any.
    pub fn node_limit(&self) -> Option<u64> {
        self.nodes
    }

    /// Whether a search that has visited `nodes` nodes must stop.
    #[inline]
    pub(crate) fn exhausted(&self, nodes: u64) -> bool {
        self.nodes.is_some_and(|limit| nodes >= limit)
            || self
                .stop
                .as_ref()
                .is_some_and(|stop| stop.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_ends_at_its_node_count_or_its_flag() {
        assert!(!Budget::unlimited().exhausted(u64::MAX));
        assert!(!Budget::nodes(10).exhausted(9));
        assert!(Budget::nodes(10).exhausted(10));
        let stop = Arc::new(AtomicBool::new(false));
        let budget = Budget::until(stop.clone()).with_nodes(100);
        assert!(!budget.exhausted(5));
        stop.store(true, Ordering::Relaxed);
        assert!(budget.exhausted(5));
    }
}
