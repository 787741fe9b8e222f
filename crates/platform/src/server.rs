//! The HTTP server every service binary runs, with the same middleware,
//! body rules, health and metrics endpoints. A service contributes its
//! routes; main and the tests build it the same way (`Application::build`
//! in each service), on a given port or on port 0.

use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};

use crate::guard::{Guards, HttpLimits};
use crate::http::{Readiness, configure_health, json_config, not_found, path_config, query_config};
use crate::telemetry::{
    configure_metrics, expose_request_id, install_metrics, record_http_metrics, request_tracing,
};

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Config(#[from] crate::values::ConfigError),
    #[error("postgres: {0}")]
    Postgres(#[from] sqlx::Error),
    #[error("migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("keys: {0}")]
    Key(#[from] crate::jwt::KeyError),
    #[error("{0}")]
    Other(String),
    #[error("listening: {0}")]
    Io(#[from] std::io::Error),
}

/// The access-token verifier of a service that does not sign: with
/// `APP_JWT_PUBLIC_KEY`, or, when only the private key is configured (one
/// process running every service), with the key derived from it.
pub fn token_verifier(settings: &crate::Settings) -> Result<crate::jwt::TokenVerifier, StartError> {
    let public = match (&settings.jwt_public_key, &settings.jwt_private_key) {
        (Some(public), _) => public.clone(),
        (None, Some(seed)) => crate::jwt::TokenSigner::from_seed(seed, "", "", 1)?
            .public_key()
            .to_owned(),
        (None, None) => {
            return Err(StartError::Other(
                "set APP_JWT_PUBLIC_KEY (or APP_JWT_PRIVATE_KEY) to verify players".into(),
            ));
        }
    };
    Ok(crate::jwt::TokenVerifier::from_public_key(
        &public,
        &settings.jwt_issuer,
        &settings.jwt_audience,
        settings.jwt_leeway.as_secs(),
    )?)
}

/// A server bound to its port, not yet running.
pub struct Bound {
    pub server: Server,
    pub address: SocketAddr,
}

/// Binds `bind` (port 0 picks a free port) and builds the server: request
/// ids and tracing, HTTP metrics, the request guards (`guard`: NUL bytes,
/// body deadline, requests per address), the JSON body rules, `/healthz`,
/// `/readyz`, `/metrics`, and the service's own routes from `routes`.
pub fn serve<F>(
    bind: SocketAddr,
    readiness: Readiness,
    limits: HttpLimits,
    routes: F,
) -> Result<Bound, StartError>
where
    F: Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
{
    serve_on(TcpListener::bind(bind)?, readiness, limits, routes)
}

/// [`serve`] on a listener already bound (a service that must know its
/// address before it builds its routes).
pub fn serve_on<F>(
    listener: TcpListener,
    readiness: Readiness,
    limits: HttpLimits,
    routes: F,
) -> Result<Bound, StartError>
where
    F: Fn(&mut web::ServiceConfig) + Clone + Send + 'static,
{
    let address = listener.local_addr()?;
    let metrics = install_metrics();
    let guards = Guards::new(limits);
    let workers = limits.http_workers.map_or_else(
        || std::thread::available_parallelism().map_or(2, |cores| cores.get()),
        |workers| usize::from(workers.max(1)),
    );
    let server = HttpServer::new(move || {
        // Called on each worker thread as it starts.
        crate::telemetry::watch_runtime_lag();
        let readiness = readiness.clone();
        let metrics = metrics.clone();
        let guards = guards.clone();
        App::new()
            .wrap(from_fn(move |request, next| {
                guards.clone().check(request, next)
            }))
            .wrap(from_fn(record_http_metrics))
            .wrap(from_fn(expose_request_id))
            .wrap(request_tracing())
            .app_data(json_config())
            .app_data(path_config())
            .app_data(query_config())
            .default_service(web::to(not_found))
            .configure(|config| configure_health(config, readiness))
            .configure(|config| {
                if let Some(handle) = metrics {
                    configure_metrics(config, handle);
                }
            })
            .configure(routes.clone())
    })
    // A socket carries small frames that must leave at once (a move, then
    // the AI's reply); Nagle would hold the second until the client's
    // delayed ACK, 40 ms later.
    .on_connect(|connection, _| {
        if let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() {
            let _ = stream.set_nodelay(true);
        }
    })
    // Signals are handled in `run_until_signal`, so a service can drain
    // before the server stops.
    .disable_signals()
    .workers(workers)
    .shutdown_timeout(10)
    .listen(listener)?
    .run();
    Ok(Bound { server, address })
}

impl Bound {
    /// Serves until SIGINT or SIGTERM, then runs `drain` (a service hands
    /// its work to other instances), then stops, finishing requests in
    /// flight.
    pub async fn run_until_signal<D, Fut>(self, drain: D) -> std::io::Result<()>
    where
        D: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let handle = self.server.handle();
        let mut server = self.server;
        tokio::select! {
            result = &mut server => return result,
            () = shutdown_signal() => {}
        }
        tracing::info!("stopping: draining first");
        drain().await;
        crate::socket::close_all_for_restart();
        // actix's graceful stop looks at its open connections once a
        // second: an idle keep-alive connection alone held the exit (and a
        // restart in the same place) for a whole second. So the requests
        // in flight are awaited here, their answers given a moment to
        // leave, and the connections then closed at once.
        let patience = Instant::now() + Duration::from_secs(10);
        while crate::telemetry::requests_in_flight() > 0 && Instant::now() < patience {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        // The server future runs the stop command: poll both, or the stop
        // waits forever for a loop nobody drives.
        let ((), result) = tokio::join!(handle.stop(false), server);
        tracing::info!("stopped");
        result
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
