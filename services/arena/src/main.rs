//! `arena`: matchmaking, game-room and rating in one process, one port.

use std::process::ExitCode;
use std::time::Duration;

use mancala_arena::{Arena, ArenaSettings};
use mancala_platform::cli::Parsed;
use mancala_platform::telemetry::init_logging;
use mancala_platform::{Clock, ConfigError};

mancala_platform::use_jemalloc!();

fn settings() -> Result<(Parsed, ArenaSettings), ConfigError> {
    let parsed = mancala_arena::declaration().parse_process()?;
    let settings = ArenaSettings::from_parsed(&parsed)?;
    Ok((parsed, settings))
}

#[actix_web::main]
async fn main() -> ExitCode {
    mancala_platform::allocator::return_memory_in_background();
    let (parsed, settings) = match settings() {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("arena: {error}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.shared.log_format, &settings.shared.log_filter);
    parsed.warn_unknown();
    let clock = Clock::system_offset(settings.shared.clock_offset_secs);
    let arena = match Arena::build(settings, clock).await {
        Ok(arena) => arena,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    actix_web::rt::spawn(report_heap());
    println!("Mancala Arena is ready: http://{}", arena.address());
    match arena.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "server failed");
            ExitCode::FAILURE
        }
    }
}

/// Publishes jemalloc's own counts every few seconds: the bytes the
/// program holds (`allocated`) beside the pages the allocator keeps from
/// the system (`resident`). A resident size that grows while `allocated`
/// stays put is freed memory not yet handed back, not a leak.
async fn report_heap() {
    use tikv_jemalloc_ctl::{epoch, stats};
    let mut ticks = tokio::time::interval(Duration::from_secs(5));
    loop {
        ticks.tick().await;
        if epoch::advance().is_err() {
            return;
        }
        let counts = [
            ("allocated", stats::allocated::read()),
            ("active", stats::active::read()),
            ("resident", stats::resident::read()),
        ];
        for (kind, bytes) in counts {
            if let Ok(bytes) = bytes {
                metrics::gauge!("heap_bytes", "kind" => kind).set(bytes as f64);
            }
        }
    }
}
