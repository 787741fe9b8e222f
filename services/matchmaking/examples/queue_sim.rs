//! A simulated arrival stream through the pairing rules: players arrive at
//! `RATE` a second with spread ratings, a wave runs every 2 s, and whoever
//! waits 20 s gets the AI. Prints time-to-match percentiles and the mean
//! rating difference of the pairs. Pure: simulated time, no services.
//!
//! `cargo run --release -p mancala-matchmaking --example queue_sim [RATE]`

use mancala_matchmaking::queue::pairing::{PairingRules, Ticket, pair};
use uuid::Uuid;

fn main() {
    let rate: f64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(20.0);
    let rules = PairingRules::default();
    let fallback_ms = 20_000;
    let minutes = 30;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut waiting: Vec<Ticket> = Vec::new();
    let mut waits: Vec<u64> = Vec::new();
    let mut differences: Vec<f64> = Vec::new();
    let mut fallbacks = 0usize;
    let mut arrivals = 0usize;
    let mut owed = 0.0;
    let end = minutes * 60_000;
    let mut now = 0;
    while now < end {
        now += rules.wave_ms;
        owed += rate * rules.wave_ms as f64 / 1000.0;
        while owed >= 1.0 {
            owed -= 1.0;
            arrivals += 1;
            waiting.push(Ticket {
                player: Uuid::new_v4(),
                rating: 1500.0 + (next() + next() + next() - 1.5) * 580.0,
                rd: if next() < 0.2 { 300.0 } else { 60.0 },
                joined_ms: now - (next() * rules.wave_ms as f64) as u64,
                last_opponent: None,
                first_balance: 0,
            });
        }
        let pairs = pair(&waiting, &rules, now);
        let mut gone = vec![false; waiting.len()];
        for (a, b) in pairs {
            for index in [a, b] {
                waits.push(now - waiting[index].joined_ms);
                gone[index] = true;
            }
            differences.push((waiting[a].rating - waiting[b].rating).abs());
        }
        for (index, ticket) in waiting.iter().enumerate() {
            if !gone[index] && now - ticket.joined_ms >= fallback_ms {
                fallbacks += 1;
                gone[index] = true;
            }
        }
        let mut index = 0;
        waiting.retain(|_| {
            index += 1;
            !gone[index - 1]
        });
    }
    waits.sort_unstable();
    let at = |q: f64| waits[((waits.len() as f64 - 1.0) * q) as usize] as f64 / 1000.0;
    let mean = differences.iter().sum::<f64>() / differences.len().max(1) as f64;
    println!(
        "{rate} players/s for {minutes} min: {arrivals} arrivals, {} pairs, {fallbacks} AI fallbacks ({:.1}%)\n\
         time to match: p50 {:.1} s, p95 {:.1} s; mean rating difference {mean:.1}",
        differences.len(),
        100.0 * fallbacks as f64 / arrivals as f64,
        at(0.5),
        at(0.95),
    );
}
