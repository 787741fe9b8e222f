//! Latency percentiles and the load report, as JSON and as text.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Microsecond latencies up to a minute, three significant figures.
pub fn histogram() -> Result<Histogram<u64>, hdrhistogram::CreationError> {
    Histogram::new_with_bounds(1, 60_000_000, 3)
}

/// Percentiles of one latency, in milliseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub count: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    pub fn of(histogram: &Histogram<u64>) -> Latency {
        let ms = |micros: u64| micros as f64 / 1000.0;
        Latency {
            count: histogram.len(),
            p50_ms: ms(histogram.value_at_quantile(0.50)),
            p95_ms: ms(histogram.value_at_quantile(0.95)),
            p99_ms: ms(histogram.value_at_quantile(0.99)),
            max_ms: ms(histogram.max()),
        }
    }
}
