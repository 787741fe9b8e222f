//! What every request meets before a handler, so that one client cannot
//! tie the server up: a path or query holding a NUL byte (which Postgres
//! cannot take) is refused at once; a body must arrive within a deadline;
//! and one address may hold only so many requests in flight. WebSocket
//! upgrades are left alone: a socket is one long request with its own
//! limits.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::{HttpMessage, ResponseError};
use futures_util::Stream;
use mancala_proto::ErrorCode;

use crate::http::ApiError;

/// The limits, from the settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct HttpLimits {
    /// A request's body must have arrived this many seconds after its head.
    #[arg(env = "APP_HTTP_BODY_TIMEOUT_SECS", default_value = "10",
          value_parser = crate::values::positive_seconds)]
    pub body_timeout: Duration,
    /// Requests one address may have in flight at once (0: no limit).
    /// Behind a proxy every client shares its address: limit there.
    #[arg(env = "APP_HTTP_REQUESTS_PER_ADDRESS", default_value_t = 64)]
    pub requests_per_address: u32,
    /// HTTP worker threads (each a single-threaded runtime serving its
    /// share of the connections). Default: the number of cores.
    #[arg(env = "APP_HTTP_WORKERS")]
    pub http_workers: Option<u16>,
}

/// Requests in flight per address.
type InFlight = Arc<Mutex<HashMap<IpAddr, u32>>>;

/// The guards' shared state: one per server, shared by its workers.
#[derive(Clone)]
pub struct Guards {
    limits: HttpLimits,
    in_flight: InFlight,
}

fn is_upgrade(request: &ServiceRequest) -> bool {
    request
        .headers()
        .contains_key(actix_web::http::header::UPGRADE)
}

/// Whether the raw path or query spells a NUL byte.
fn holds_nul(request: &ServiceRequest) -> bool {
    let uri = request.uri();
    uri.path().contains("%00") || uri.query().is_some_and(|query| query.contains("%00"))
}

impl Guards {
    pub fn new(limits: HttpLimits) -> Guards {
        Guards {
            limits,
            in_flight: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The middleware (for `actix_web::middleware::from_fn`).
    pub async fn check<B: MessageBody>(
        self,
        mut request: ServiceRequest,
        next: Next<B>,
    ) -> Result<ServiceResponse<EitherBody<B>>, actix_web::Error> {
        let refuse = |request: ServiceRequest, error: ApiError| {
            Ok(request.into_response(error.error_response().map_into_right_body()))
        };
        if holds_nul(&request) {
            let error = ApiError::new(ErrorCode::InvalidInput, "the address holds a NUL byte");
            return refuse(request, error);
        }
        if is_upgrade(&request) {
            return next
                .call(request)
                .await
                .map(ServiceResponse::map_into_left_body);
        }
        let _slot = match self.enter(&request) {
            Some(slot) => slot,
            None => {
                let error = ApiError {
                    message: "too many requests in flight from your address".into(),
                    ..ApiError::rate_limited(1)
                };
                return refuse(request, error);
            }
        };
        let payload = request.take_payload();
        let timed = Timed {
            inner: payload,
            deadline: Box::pin(tokio::time::sleep(self.limits.body_timeout)),
            expired: false,
        };
        request.set_payload(Payload::Stream {
            payload: Box::pin(timed),
        });
        next.call(request)
            .await
            .map(ServiceResponse::map_into_left_body)
    }

    /// A place in flight for the request's address, given back on drop;
    /// `None` when the address has none left.
    fn enter(&self, request: &ServiceRequest) -> Option<Slot> {
        let limit = self.limits.requests_per_address;
        let Some(address) = request
            .peer_addr()
            .map(|peer| peer.ip())
            .filter(|_| limit > 0)
        else {
            return Some(Slot(None));
        };
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let count = in_flight.entry(address).or_default();
        if *count >= limit {
            return None;
        }
        *count += 1;
        Some(Slot(Some((self.in_flight.clone(), address))))
    }
}

/// A request in flight, counted against its address until dropped.
struct Slot(Option<(InFlight, IpAddr)>);

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some((in_flight, address)) = &self.0 {
            let mut in_flight = in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = in_flight.get_mut(address) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    in_flight.remove(address);
                }
            }
        }
    }
}

/// A body that fails once its deadline passes: a client sending a byte
/// every few seconds holds a worker's attention no longer than that.
struct Timed {
    inner: Payload,
    deadline: Pin<Box<tokio::time::Sleep>>,
    expired: bool,
}

impl Stream for Timed {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(context) {
            return Poll::Ready(item);
        }
        if self.deadline.as_mut().poll(context).is_ready() {
            self.expired = true;
            let late =
                std::io::Error::new(std::io::ErrorKind::TimedOut, "the body came too slowly");
            return Poll::Ready(Some(Err(PayloadError::Io(late))));
        }
        Poll::Pending
    }
}
