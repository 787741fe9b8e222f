//! One pairing tick over 1,000, 10,000 and 100,000 waiting tickets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mancala_matchmaking::queue::pairing::{PairingRules, Ticket, pair};
use uuid::Uuid;

/// Tickets with ratings around 1500 (a sum of uniforms: roughly normal,
/// sd about 290) who joined over the last minute.
fn tickets(count: usize) -> Vec<Ticket> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..count)
        .map(|_| Ticket {
            player: Uuid::new_v4(),
            rating: 1500.0 + (next() + next() + next() - 1.5) * 580.0,
            rd: if next() < 0.2 { 300.0 } else { 60.0 },
            joined_ms: (next() * 60_000.0) as u64,
            last_opponent: None,
            first_balance: 0,
        })
        .collect()
}

fn tick(c: &mut Criterion) {
    let rules = PairingRules::default();
    let mut group = c.benchmark_group("pairing tick");
    group.sample_size(10);
    for count in [1_000, 10_000, 100_000] {
        let waiting = tickets(count);
        group.bench_with_input(
            BenchmarkId::from_parameter(count),
            &waiting,
            |b, waiting| {
                b.iter(|| pair(waiting, &rules, 60_000));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, tick);
criterion_main!(benches);
