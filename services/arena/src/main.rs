//! `arena`: matchmaking, game-room and rating in one process, one port.

use std::process::ExitCode;

use mancala_arena::{Arena, ArenaSettings};
use mancala_game_room::GameRoomSettings;
use mancala_matchmaking::{AccountSettings, MatchSettings};
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, Settings};
use mancala_rating::RatingSettings;

fn settings(vars: Vec<(String, String)>) -> Result<ArenaSettings, mancala_platform::ConfigError> {
    Ok(ArenaSettings {
        shared: Settings::from_vars(vars.clone())?,
        accounts: AccountSettings::from_vars(vars.clone())?,
        matching: MatchSettings::from_vars(vars.clone())?,
        game_room: GameRoomSettings::from_vars(vars.clone())?,
        rating: RatingSettings::from_vars(vars.clone())?,
        web_dir: mancala_arena::web::web_dir(&vars),
    })
}

#[actix_web::main]
async fn main() -> ExitCode {
    let vars = mancala_platform::cli::environment("Mancala Arena in one process");
    let settings = match settings(vars) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("arena: {error}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.shared.log_format);
    let arena = match Arena::build(settings, Clock::system()).await {
        Ok(arena) => arena,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    println!("Mancala Arena is ready: http://{}", arena.address());
    match arena.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "server failed");
            ExitCode::FAILURE
        }
    }
}
