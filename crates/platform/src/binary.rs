//! The `main` of a service binary, written once: read the declared
//! settings (exit 2 on a bad one, before anything starts), start logging,
//! build the service, serve until a signal stops it.

use std::future::Future;
use std::process::ExitCode;

pub use crate::cli::{Declaration, Parsed};
use crate::telemetry::init_logging;
use crate::{Clock, ConfigError, Settings};

/// A built service, ready to serve.
pub trait Service: Sized {
    /// The port it listens on.
    fn port(&self) -> u16;

    /// Serves until SIGTERM or Ctrl-C, then stops as it should.
    fn run_until_stopped(self) -> impl Future<Output = std::io::Result<()>>;
}

/// A service binary's whole `main`: jemalloc as its allocator, then
/// [`run`] on actix's runtime with these arguments.
#[macro_export]
macro_rules! service_main {
    ($name:literal, $declaration:expr, $read:expr, $build:expr $(,)?) => {
        $crate::use_jemalloc!();

        fn main() -> ::std::process::ExitCode {
            $crate::binary::block_on($crate::binary::run($name, $declaration, $read, $build))
        }
    };
}

/// Runs `future` to its end on actix's runtime (what `#[actix_web::main]`
/// does), for [`service_main!`](crate::service_main).
pub fn block_on<T>(future: impl Future<Output = T>) -> T {
    actix_web::rt::System::new().block_on(future)
}

/// Runs the binary `name` declared by `declaration`: `read` takes the
/// service's own settings from what was parsed (the shared ones are read
/// here), `build` makes the service from both and the system clock.
pub async fn run<Own, App, Built, Error>(
    name: &'static str,
    declaration: Declaration,
    read: impl FnOnce(&Parsed) -> Result<Own, ConfigError>,
    build: impl FnOnce(Settings, Own, Clock) -> Built,
) -> ExitCode
where
    Built: Future<Output = Result<App, Error>>,
    Error: std::fmt::Display,
    App: Service,
{
    crate::allocator::return_memory_in_background();
    let read = declaration.parse_process().and_then(|parsed| {
        let shared: Settings = parsed.get()?;
        let own = read(&parsed)?;
        Ok((parsed, shared, own))
    });
    let (parsed, settings, own) = match read {
        Ok(read) => read,
        Err(error) => {
            eprintln!("{name}: {error}");
            return ExitCode::from(2);
        }
    };
    init_logging(settings.log_format, &settings.log_filter);
    parsed.warn_unknown();
    let clock = Clock::system_offset(settings.clock_offset_secs);
    let service = match build(settings, own, clock).await {
        Ok(service) => service,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(port = service.port(), "{name} listening");
    match service.run_until_stopped().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "server failed");
            ExitCode::FAILURE
        }
    }
}
