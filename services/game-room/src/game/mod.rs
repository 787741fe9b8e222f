//! Games in play: the pure model (`live`), the task that owns a hosted
//! game (`actor`), and this instance's set of hosted games (`rooms`).

pub mod actor;
pub mod live;
pub mod load;
pub mod rematch;
pub mod rooms;

pub use actor::{GameHandle, Joined};
pub use live::{GameInfo, LiveGame};
pub use rooms::{HostError, Rooms};
