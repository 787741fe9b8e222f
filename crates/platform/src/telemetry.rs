//! Logs and metrics.
//!
//! Logs go through `tracing`: JSON lines for collectors or pretty lines for
//! a terminal, filtered by `RUST_LOG` (default `info`). Every HTTP request
//! runs in a span with a request id (`tracing-actix-web`), returned to the
//! client in the `x-request-id` header so a report can be matched to the
//! logs. Metrics are Prometheus text at `GET /metrics`.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpResponse, web};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One JSON object a line, for log collectors.
    Json,
    /// Human-readable lines, for a terminal.
    Pretty,
}

/// Installs the global log subscriber. A process calls it once, in `main`;
/// a second call (tests) leaves the first in place.
pub fn init_logging(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _already_installed = match format {
        LogFormat::Json => builder.json().with_current_span(true).try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

/// Checks a `RUST_LOG` filter when the settings are read, so a typo is an
/// error at start rather than silence.
pub fn log_filter(text: &str) -> Result<String, String> {
    EnvFilter::try_new(text)
        .map(|_| text.to_owned())
        .map_err(|error| error.to_string())
}

/// The request-id and tracing middleware, for `App::wrap`.
pub fn request_tracing() -> tracing_actix_web::TracingLogger<RequestSpan> {
    tracing_actix_web::TracingLogger::new()
}

/// Each request's span, with the fields `tracing-actix-web`'s default gives
/// it that a log line reads (method, route, target, status, request id,
/// error). Its default builder works the route out before routing, by
/// running every route's pattern (a regex each, two dozen in the arena)
/// against the path a second time, and reads the connection's details,
/// even when no span is recorded. Here the route is read once routing has
/// found it, from what routing recorded, and nothing is worked out for a
/// span not recorded. The target is the path alone: a query may carry a
/// secret.
pub struct RequestSpan;

impl tracing_actix_web::RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> tracing::Span {
        let id = request
            .extensions()
            .get::<tracing_actix_web::RequestId>()
            .copied();
        tracing::info_span!(
            "HTTP request",
            http.method = %request.method(),
            http.route = tracing::field::Empty,
            http.target = %request.uri().path(),
            http.status_code = tracing::field::Empty,
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            request_id = id.map(tracing::field::display),
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(
        span: tracing::Span,
        outcome: &Result<ServiceResponse<B>, actix_web::Error>,
    ) {
        if span.is_disabled() {
            return;
        }
        if let Ok(response) = outcome {
            let route = response.request().match_pattern();
            span.record("http.route", route.as_deref().unwrap_or("default"));
        }
        tracing_actix_web::DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// Copies the request id that [`request_tracing`] assigned into the
/// response's `x-request-id` header. Wrap it inside `request_tracing`:
/// `App::new().wrap(from_fn(expose_request_id)).wrap(request_tracing())`.
pub async fn expose_request_id(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = request
        .extensions()
        .get::<tracing_actix_web::RequestId>()
        .copied();
    let mut response = next.call(request).await?;
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id.to_string()).ok()) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("x-request-id"), value);
    }
    Ok(response)
}

/// Counts every request and times it: `http_requests_total` and
/// `http_request_duration_seconds`, labelled by method, route pattern (not
/// the raw path, so ids do not explode the label set) and status.
pub async fn record_http_metrics(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let _in_flight = InFlight::start();
    let method = request.method().to_string();
    let started = std::time::Instant::now();
    let response = next.call(request).await?;
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let labels = [
        ("method", method),
        ("route", route),
        ("status", response.status().as_u16().to_string()),
    ];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    Ok(response)
}

/// HTTP requests being handled in this process now (a socket counts until
/// its upgrade is answered): a stopping process waits for none before it
/// closes its connections.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct InFlight;

impl InFlight {
    fn start() -> InFlight {
        IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Requests being handled in this process now.
pub fn requests_in_flight() -> usize {
    IN_FLIGHT.load(std::sync::atomic::Ordering::Acquire)
}

/// A Prometheus recorder for this process's metrics. Install it once with
/// [`install_metrics`]; tests build their own with this.
pub fn metrics_recorder() -> (
    metrics_exporter_prometheus::PrometheusRecorder,
    PrometheusHandle,
) {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    (recorder, handle)
}

/// The process's Prometheus recorder, installed on first use: metrics are
/// process-wide by nature (`metrics::counter!` anywhere lands in it), so
/// every service mounted in one process shares it. Returns the handle that
/// `/metrics` renders; `None` only if another recorder was installed first.
pub fn install_metrics() -> Option<PrometheusHandle> {
    static HANDLE: std::sync::OnceLock<Option<PrometheusHandle>> = std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let (recorder, handle) = metrics_recorder();
            metrics::set_global_recorder(recorder).ok()?;
            spawn_upkeep(handle.clone(), UPKEEP_EVERY);
            Some(handle)
        })
        .clone()
}

/// How often each runtime thread's watch wakes, and how late a wake must be
/// before the log names it.
const LAG_TICK: std::time::Duration = std::time::Duration::from_millis(100);
const LAG_TOLD: std::time::Duration = std::time::Duration::from_millis(250);

/// Watches the runtime thread it is called on, once per thread: a task
/// that wakes every [`LAG_TICK`] and records how late it woke
/// (`runtime_lag_seconds`). Every socket, host and timer of a thread
/// waits while it is blocked, so a late wake is a stall that every game on
/// it felt, however rare: a percentile of move round trips hides one
/// stall of seconds, this does not.
pub fn watch_runtime_lag() {
    thread_local! {
        static WATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if WATCHED.with(|watched| watched.replace(true)) {
        return;
    }
    if tokio::runtime::Handle::try_current().is_err() {
        WATCHED.with(|watched| watched.set(false));
        return;
    }
    let thread = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_owned();
    // On a thread's own runtime (actix's are one thread each) the task
    // stays on that thread.
    tokio::spawn(async move {
        let mut every = tokio::time::interval(LAG_TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let due = every.tick().await;
            let late = tokio::time::Instant::now().saturating_duration_since(due);
            metrics::histogram!("runtime_lag_seconds").record(late.as_secs_f64());
            if late > LAG_TOLD {
                tracing::warn!(
                    thread,
                    late_ms = late.as_millis(),
                    "a runtime thread was blocked: everything on it waited"
                );
            }
        }
    });
}

/// How often histogram samples are folded into their summaries.
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// A recorder built on its own keeps every histogram sample until
/// `/metrics` is scraped: unscraped, a busy instance grew by megabytes a
/// minute (one sample per move write, per flush, per request). A plain
/// thread folds them in on a timer, whatever runtime the services use.
fn spawn_upkeep(handle: PrometheusHandle, every: std::time::Duration) {
    let spawned = std::thread::Builder::new()
        .name("metrics-upkeep".into())
        .spawn(move || {
            loop {
                std::thread::sleep(every);
                handle.run_upkeep();
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "no metrics upkeep: histograms grow until scraped");
    }
}

/// `GET /metrics`: Prometheus text exposition.
pub fn configure_metrics(config: &mut web::ServiceConfig, handle: PrometheusHandle) {
    config
        .app_data(web::Data::new(handle))
        .route("/metrics", web::get().to(metrics_text));
}

async fn metrics_text(handle: web::Data<PrometheusHandle>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(handle.render())
}

#[cfg(test)]
mod tests {
    use actix_web::{App, test};

    use super::*;

    #[actix_web::test]
    async fn metrics_are_served_as_prometheus_text() {
        let (recorder, handle) = metrics_recorder();
        metrics::with_local_recorder(&recorder, || {
            metrics::counter!("games_started_total", "variant" => "kalah").increment(3);
        });
        let app =
            test::init_service(App::new().configure(|config| configure_metrics(config, handle)))
                .await;
        let response =
            test::call_service(&app, test::TestRequest::get().uri("/metrics").to_request()).await;
        assert_eq!(response.status().as_u16(), 200);
        let body = String::from_utf8(test::read_body(response).await.to_vec()).unwrap();
        assert!(
            body.contains(r#"games_started_total{variant="kalah"} 3"#),
            "{body}"
        );
    }

    #[actix_web::test]
    async fn requests_are_counted_by_route_pattern() {
        // The middleware records into the global recorder: install it here
        // (the only test of this binary that does).
        let handle = install_metrics().unwrap();
        let app = test::init_service(
            App::new()
                .wrap(actix_web::middleware::from_fn(record_http_metrics))
                .route(
                    "/games/{id}",
                    web::get().to(|| async { HttpResponse::Ok().finish() }),
                ),
        )
        .await;
        for id in ["a", "b"] {
            let request = test::TestRequest::get()
                .uri(&format!("/games/{id}"))
                .to_request();
            test::call_service(&app, request).await;
        }
        let text = handle.render();
        assert!(
            text.contains(
                r#"http_requests_total{method="GET",route="/games/{id}",status="200"} 2"#
            ),
            "{text}"
        );
        assert!(text.contains("http_request_duration_seconds"), "{text}");
    }

    /// Collects what a subscriber writes.
    #[derive(Clone, Default)]
    struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Written {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[actix_web::test]
    async fn a_request_span_names_the_route_that_served_it_and_not_the_query() {
        let written = Written::default();
        let writer = written.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .with_ansi(false)
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        let ok = || async { HttpResponse::Ok().finish() };
        let app = test::init_service(
            App::new()
                .wrap(request_tracing())
                .route("/players/{id}", web::get().to(ok))
                .route("/games/{id}/play", web::get().to(ok)),
        )
        .await;
        let request = test::TestRequest::get()
            .uri("/games/g1/play?token=secret")
            .to_request();
        let response = test::call_service(&app, request).await;
        assert_eq!(response.status(), 200);
        drop(response);
        let text = String::from_utf8(written.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains(r#"http.route="/games/{id}/play""#), "{text}");
        assert!(text.contains("http.target=/games/g1/play"), "{text}");
        assert!(text.contains("http.status_code=200"), "{text}");
        assert!(text.contains("request_id="), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[actix_web::test]
    async fn every_response_carries_a_request_id() {
        init_logging(LogFormat::Pretty, "info");
        let app = test::init_service(
            App::new()
                .wrap(actix_web::middleware::from_fn(expose_request_id))
                .wrap(request_tracing())
                .route("/", web::get().to(|| async { HttpResponse::Ok().finish() })),
        )
        .await;
        let response =
            test::call_service(&app, test::TestRequest::get().uri("/").to_request()).await;
        assert!(response.headers().contains_key("x-request-id"));
    }
}
