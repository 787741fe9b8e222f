//! `game-room`: live games over WebSocket, on their own port.

use mancala_game_room::{Application, GameRoomSettings};

mancala_platform::service_main!(
    "game-room",
    mancala_game_room::declaration(),
    |parsed| parsed.get::<GameRoomSettings>(),
    Application::build,
);
