//! `rating`: Glicko-2 updates, leaderboards and profiles, on their own port.

use mancala_rating::{Application, RatingSettings};

mancala_platform::service_main!(
    "rating",
    mancala_rating::declaration(),
    |parsed| parsed.get::<RatingSettings>(),
    Application::build,
);
