//! Games in play: the pure model (`live`), the host that owns a game
//! while this instance serves it (`host`), this instance's hosted games
//! (`hosted`), and what counts for rating between games (`ranked`).
//! "Room" always means a friend room: a series of games between two
//! friends.

pub mod host;
pub mod hosted;
pub mod live;
pub mod load;
pub mod ranked;
pub mod rematch;

pub use host::{GameHandle, Joined};
pub use hosted::{HostError, HostedGames};
pub use live::{GameInfo, LiveGame};
