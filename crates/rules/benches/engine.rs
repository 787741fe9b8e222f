//! Engine throughput: moves applied per second and perft leaves per second,
//! per variant.
//!
//! `cargo bench -p mancala-rules --bench engine`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mancala_rules::{Game, Kalah, Mangala, Oware, Pit, Position, perft, perft_position};

/// A fixed, legal game prefix per variant, replayed move by move: the cost
/// of `play` on realistic positions rather than only the start.
fn playout<P: Position>(start: P, plies: usize) -> Vec<(P, Pit)> {
    let mut position = start;
    let mut moves = Vec::with_capacity(plies);
    let mut choice = 0usize;
    while moves.len() < plies && !position.is_over() {
        let legal: Vec<Pit> = position.legal_moves().collect();
        // A deterministic spread over the legal moves.
        choice = choice.wrapping_mul(31).wrapping_add(7);
        let pit = legal[choice % legal.len()];
        moves.push((position, pit));
        position = position.play_unchecked(pit);
    }
    moves
}

fn bench_play<P: Position>(c: &mut Criterion, name: &str, start: P) {
    let moves = playout(start, 40);
    let mut group = c.benchmark_group("play");
    group.throughput(Throughput::Elements(moves.len() as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            for (position, pit) in &moves {
                black_box(black_box(position).play_unchecked(*pit));
            }
        });
    });
    group.finish();
}

fn bench_perft<P: Position>(c: &mut Criterion, name: &str, start: P, depth: u32) {
    let game = Game::new(start);
    let leaves = perft(&game, depth);
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    group.throughput(Throughput::Elements(leaves));
    group.bench_with_input(BenchmarkId::new(name, depth), &depth, |b, &depth| {
        b.iter(|| perft(black_box(&game), depth));
    });
    group.finish();
}

fn engine(c: &mut Criterion) {
    bench_play(c, "kalah", Kalah::default());
    bench_play(c, "oware", Oware::new());
    bench_play(c, "mangala", Mangala::new());
    bench_perft(c, "kalah", Kalah::default(), 10);
    bench_perft(c, "oware", Oware::new(), 9);
    bench_perft(c, "mangala", Mangala::new(), 9);
    let mut group = c.benchmark_group("perft_position");
    group.sample_size(10);
    let start = Kalah::default();
    group.throughput(Throughput::Elements(perft_position(&start, 10)));
    group.bench_function("kalah/10", |b| {
        b.iter(|| perft_position(black_box(&start), 10))
    });
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
