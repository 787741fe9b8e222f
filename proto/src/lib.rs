//! Mancala Arena's wire types. Everything a client or another service sees
//! is defined here, so that the services agree on it and the schema can be
//! generated from one place.

pub mod accounts;
pub mod bus;
pub mod error;
pub mod fair_play;
pub mod game;
pub mod lobby;
pub mod moderation;
pub mod rating;
pub mod schema;
pub mod text;
pub mod tournament;
pub mod variant;

pub use accounts::{Credentials, Player, RefreshRequest, Session};
pub use error::{ErrorBody, ErrorCode};
pub use game::{ClientMessage, ServerMessage};
pub use variant::{VariantName, VariantSpec};
