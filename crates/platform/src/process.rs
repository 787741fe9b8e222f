//! What the services running in one process share: one clock, one reading
//! of the process's load, one view of the signed-out sessions. The arena
//! runs three services over one of each; a service alone makes its own.

use crate::clock::Clock;
use crate::load::Load;
use crate::revocation::Revocations;

#[derive(Clone)]
pub struct ProcessContext {
    pub clock: Clock,
    pub load: Load,
    /// Shared, so that a sign-out taken by one service is refused by the
    /// others in the process at once rather than at their next follow.
    pub revocations: Revocations,
}
