//! `arena`: matchmaking, game-room and rating in one process, one port.

use std::process::ExitCode;

use clap::Parser;
use mancala_arena::{Arena, ArenaSettings};
use mancala_game_room::RoomSettings;
use mancala_matchmaking::{AccountSettings, MatchSettings};
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, Settings};
use mancala_rating::RatingSettings;

#[derive(Parser)]
#[command(about = "Mancala Arena in one process")]
struct Args {
    /// Where to listen (overrides APP_BIND).
    #[arg(long)]
    bind: Option<String>,
}

fn settings(args: &Args) -> Result<ArenaSettings, mancala_platform::ConfigError> {
    let mut vars: Vec<(String, String)> = std::env::vars().collect();
    if let Some(bind) = &args.bind {
        vars.push(("APP_BIND".into(), bind.clone()));
    }
    Ok(ArenaSettings {
        shared: Settings::from_vars(vars.clone())?,
        accounts: AccountSettings::from_vars(vars.clone())?,
        matching: MatchSettings::from_vars(vars.clone())?,
        rooms: RoomSettings::from_vars(vars.clone())?,
        rating: RatingSettings::from_vars(vars)?,
    })
}

#[actix_web::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let settings = match settings(&args) {
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
