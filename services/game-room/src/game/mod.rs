//! Games in play: the pure model (`live`), the task that owns a hosted
//! game (`actor`), this instance's set of hosted games (`rooms`), and what
//! counts for rating between games (`ranked`).

pub mod actor;
pub mod live;
pub mod load;
pub mod ranked;
pub mod rematch;
pub mod rooms;

pub use actor::{GameHandle, Joined};
pub use live::{GameInfo, LiveGame};
pub use rooms::{HostError, Rooms};
