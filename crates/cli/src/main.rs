//! `mancala`: the rules engine on the command line.

mod ai;
mod book;
mod calibrate;
mod endgame;
mod huge_pages;
mod matches;
mod perft;
mod position_args;
mod replay;
mod solve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Mancala Arena's rules engine on the command line.
#[derive(Debug, Parser)]
#[command(name = "mancala", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay moves and print the position reached, as JSON.
    Replay(replay::ReplayArgs),
    /// Count the move sequences of a given length (perft).
    Perft(perft::PerftArgs),
    /// Solve a Kalah position exactly: its value and every best move.
    Solve(solve::SolveArgs),
    /// The AI's move for a position, and its evaluation.
    Ai(ai::AiArgs),
    /// Play an AI-against-AI match with sides alternating.
    Match(matches::MatchArgs),
    /// Rate the AI levels by a round robin between them and a random mover.
    Calibrate(calibrate::CalibrateArgs),
    /// Build or check the `Perfect` AI's opening book.
    Book(book::BookArgs),
    /// Build a Kalah endgame table into a file, or check one.
    Endgame(endgame::EndgameArgs),
}

/// jemalloc, because it can be told to put every large table on huge pages
/// (see `huge_pages`).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Solve(_)
            | Command::Match(_)
            | Command::Calibrate(_)
            | Command::Book(_)
            | Command::Endgame(_)
    ) {
        huge_pages::ask();
    }
    let result = match cli.command {
        Command::Replay(args) => replay::run(&args),
        Command::Perft(args) => perft::run(&args),
        Command::Solve(args) => solve::run(&args),
        Command::Ai(args) => ai::run(&args),
        Command::Match(args) => matches::run(&args),
        Command::Calibrate(args) => calibrate::run(&args),
        Command::Book(args) => book::run(&args),
        Command::Endgame(args) => endgame::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// A command that did not succeed: what to print and the exit code.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Bad input: exit code 2 with a JSON error on standard output.
    Input(serde_json::Value),
    /// Bad flags: exit code 2 with a message on standard error.
    Usage(String),
    /// Already reported: exit with this code.
    Exit(u8),
}

impl Failure {
    fn report(self) -> ExitCode {
        match self {
            Failure::Input(error) => println!("{error}"),
            Failure::Usage(message) => eprintln!("error: {message}"),
            Failure::Exit(code) => return ExitCode::from(code),
        }
        ExitCode::from(2)
    }
}
