//! One pairing tick over 1,000, 10,000 and 100,000 waiting tickets, and
//! one arena tournament wave of 500 and 5,000 waiting players (the issue's
//! bound: 500 in 100 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mancala_matchmaking::queue::pairing::{PairingRules, Ticket, pair};
use mancala_matchmaking::tournament::pairing::{self as arena, Waiting};
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

/// Players of a running arena, waiting at once: scores 0 to 30, ratings
/// as above, each with a last opponent among the others.
fn arena_wave(c: &mut Criterion) {
    let mut group = c.benchmark_group("arena wave");
    group.sample_size(20);
    for count in [500, 5_000] {
        let waiting: Vec<Waiting> = tickets(count)
            .into_iter()
            .enumerate()
            .map(|(n, ticket)| Waiting {
                player: ticket.player,
                score: (n * 7 % 31) as i32,
                rating: ticket.rating,
                last_opponent: None,
                since_ms: ticket.joined_ms,
                first_balance: (n % 3) as i32 - 1,
            })
            .collect();
        let mut waiting = waiting;
        for n in 0..count {
            waiting[n].last_opponent = Some(waiting[(n * 31 + 1) % count].player);
        }
        group.bench_with_input(
            BenchmarkId::from_parameter(count),
            &waiting,
            |b, waiting| {
                b.iter(|| arena::pair(waiting, 60_000, 0x5555_5555));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, tick, arena_wave);
criterion_main!(benches);
