//! `matchmaking`: accounts, queues, invites and the lobby, on its own port.

use mancala_matchmaking::{AccountSettings, Application, MatchSettings};
use mancala_platform::cli::Parsed;
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, ConfigError, Settings};

type Read = (Parsed, Settings, AccountSettings, MatchSettings);

fn settings() -> Result<Read, ConfigError> {
    let parsed = mancala_matchmaking::declaration().parse_process()?;
    let (shared, accounts, matching) = (parsed.get()?, parsed.get()?, parsed.get()?);
    Ok((parsed, shared, accounts, matching))
}

/// jemalloc: less CPU a move than the system allocator, and memory it
/// hands back after a burst (see tests/PERFORMANCE.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    // jemalloc gives freed memory back to the system from background
    // threads, after its decay time, instead of only when this thread next
    // allocates: memory returns to its level after a burst even when the
    // process goes quiet.
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
    let (parsed, settings, account_settings, match_settings) = match settings() {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("matchmaking: {error}");
            return std::process::ExitCode::from(2);
        }
    };
    init_logging(settings.log_format, &settings.log_filter);
    parsed.warn_unknown();
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
