//! Search speed: nodes per second per variant, time to a fixed depth, and
//! solving small Kalah boards exactly.
//!
//! `cargo bench -p mancala-ai --bench search`
//! (Kalah 6x4 from the start takes tens of seconds: `mancala solve` measures
//! it, see the README.)

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mancala_ai::{Budget, Evaluate, Searcher, Solver};
use mancala_rules::{Game, Kalah, KalahOptions, Mangala, Oware};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

fn bench_depth<P: Evaluate>(c: &mut Criterion, name: &str, start: P, depth: u32) {
    let game = Game::new(start);
    // Nodes of one search, for the throughput figure.
    let mut probe = Searcher::<P>::new(20);
    let nodes = probe
        .search(
            &game,
            depth,
            &Budget::unlimited(),
            &mut Xoshiro256PlusPlus::seed_from_u64(1),
        )
        .map_or(1, |result| result.nodes);
    let mut group = c.benchmark_group("search_to_depth");
    group.sample_size(10);
    group.throughput(Throughput::Elements(nodes));
    group.bench_with_input(BenchmarkId::new(name, depth), &depth, |b, &depth| {
        b.iter(|| {
            let mut searcher = Searcher::<P>::new(20);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            black_box(searcher.search(&game, depth, &Budget::unlimited(), &mut rng))
        });
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    bench_depth(c, "kalah", Kalah::default(), 14);
    bench_depth(c, "oware", Oware::new(), 12);
    bench_depth(c, "mangala", Mangala::new(), 11);

    let mut group = c.benchmark_group("solve");
    group.sample_size(10);
    for (pits, seeds) in [(4, 4), (5, 3), (6, 2)] {
        for empty_capture in [false, true] {
            let options =
                KalahOptions::new(pits, seeds).map(|o| o.with_empty_capture(empty_capture));
            let Ok(options) = options else { continue };
            let name = format!(
                "{pits}x{seeds}{}",
                if empty_capture { "-empty-capture" } else { "" }
            );
            let start = Kalah::new(options);
            group.bench_function(name, |b| {
                b.iter(|| Solver::new(64 << 20).solve(black_box(&start), &Budget::unlimited()));
            });
        }
    }
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
