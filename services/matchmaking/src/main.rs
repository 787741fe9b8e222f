//! `matchmaking`: the accounts (and later queue) service on its own port.

use mancala_matchmaking::{AccountSettings, Application, MatchSettings};
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, Settings};

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    let vars = mancala_platform::cli::environment("Mancala Arena's matchmaking service");
    let settings = match Settings::from_vars(vars.clone()) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("matchmaking: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    init_logging(settings.log_format);
    let account_settings = match AccountSettings::from_vars(vars.clone()) {
        Ok(settings) => settings,
        Err(error) => {
            tracing::error!(%error, "bad settings");
            return std::process::ExitCode::from(2);
        }
    };
    let match_settings = match MatchSettings::from_vars(vars) {
        Ok(settings) => settings,
        Err(error) => {
            tracing::error!(%error, "bad settings");
            return std::process::ExitCode::from(2);
        }
    };
    let built = Application::build(settings, account_settings, match_settings, Clock::system());
    let application = match built.await {
        Ok(application) => application,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing::info!(port = application.port(), "matchmaking listening");
    match application.run_until_stopped().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "server failed");
            std::process::ExitCode::FAILURE
        }
    }
}
