//! `game-room`: live games over WebSocket, on their own port.

use std::process::ExitCode;

use mancala_game_room::{Application, GameRoomSettings};
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, Settings};

#[actix_web::main]
async fn main() -> ExitCode {
    let vars = mancala_platform::cli::environment("Mancala Arena's game-room service");
    let settings = match Settings::from_vars(vars.clone()) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("game-room: {error}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.log_format);
    let room_settings = match GameRoomSettings::from_vars(vars) {
        Ok(settings) => settings,
        Err(error) => {
            tracing::error!(%error, "bad settings");
            return ExitCode::from(2);
        }
    };
    let application = match Application::build(settings, room_settings, Clock::system()).await {
        Ok(application) => application,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(port = application.port(), "game-room listening");
    match application.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "server failed");
            ExitCode::FAILURE
        }
    }
}
