//! `game-room`: live games over WebSocket, on their own port.

use std::process::ExitCode;

use mancala_game_room::{Application, GameRoomSettings};
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, ConfigError, Settings};

fn settings() -> Result<(mancala_platform::cli::Parsed, Settings, GameRoomSettings), ConfigError> {
    let parsed = mancala_game_room::declaration().parse_process()?;
    let (shared, own) = (parsed.get()?, parsed.get()?);
    Ok((parsed, shared, own))
}

/// jemalloc: less CPU a move than the system allocator, and memory it
/// hands back after a burst (see tests/PERFORMANCE.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[actix_web::main]
async fn main() -> ExitCode {
    // jemalloc gives freed memory back to the system from background
    // threads, after its decay time, instead of only when this thread next
    // allocates: memory returns to its level after a burst even when the
    // process goes quiet.
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
    let (parsed, settings, room_settings) = match settings() {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("game-room: {error}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.log_format, &settings.log_filter);
    parsed.warn_unknown();
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
