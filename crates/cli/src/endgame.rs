//! `mancala endgame`: Kalah endgame tables built once and kept in a file,
//! and the flags by which the solving commands choose a table.
//!
//! Building a table takes time that grows with its size (16 stones: a few
//! seconds; 22 stones: two minutes, half a gigabyte), and a bigger table
//! saves a proof far more: from the start of six-pit Kalah with four
//! stones, a sixth of the nodes at 22 stones than at 16. So the commands
//! that solve either build a small table each run or read a big one that
//! `mancala endgame build` wrote, as "Solving Kalah" loaded its databases.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use mancala_ai::Endgame;
use mancala_rules::{KalahEnd, KalahOptions};

use crate::Failure;
use crate::position_args::EndRule;

#[derive(Debug, Args)]
pub(crate) struct EndgameArgs {
    #[command(subcommand)]
    command: EndgameCommand,
}

#[derive(Debug, Subcommand)]
enum EndgameCommand {
    /// Build a table and write it to a file.
    Build(BuildArgs),
    /// Read a file back, check its checksum, and check its gains against
    /// their moves.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// Every configuration of at most this many stones in the pits:
    /// C(k + 12, 12) bytes on six pits (22: 548 MB).
    #[arg(long)]
    stones: u8,
    /// Pits per side (1..=6).
    #[arg(long, default_value_t = 6)]
    pits: u8,
    /// A lone last stone in an own empty pit goes to the store even when
    /// the opposite pit is empty.
    #[arg(long)]
    empty_capture: bool,
    /// The end rule.
    #[arg(long, value_enum, default_value_t = EndRule::Immediate)]
    end: EndRule,
    /// The file to write (written beside it first, then renamed).
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The file to check.
    file: PathBuf,
    /// Check the gains of one configuration in this many against their
    /// moves (1: all of them, as long as a build).
    #[arg(long, default_value_t = 1)]
    every: u64,
}

/// How a solving command gets its endgame table: read from a file, or
/// built now.
#[derive(Debug, Args)]
pub(crate) struct EndgameChoice {
    /// Answer positions with at most this many stones left in the pits from
    /// an endgame table built first (C(k + 2 pits, 2 pits) bytes; 0: none).
    /// The command's default unless given.
    #[arg(long)]
    endgame_stones: Option<u8>,
    /// Read the endgame table from this file (`mancala endgame build`)
    /// instead of building one, when its rules are the board's.
    #[arg(long, env = "MANCALA_ENDGAME_FILE", conflicts_with = "endgame_stones")]
    endgame_file: Option<PathBuf>,
}

impl EndgameChoice {
    /// A table of `stones` built each run, whatever the environment says.
    pub(crate) fn stones(stones: u8) -> EndgameChoice {
        EndgameChoice {
            endgame_stones: Some(stones),
            endgame_file: None,
        }
    }

    /// The table for boards of `options`: the file's when one is given and
    /// covers them, else one of `default_stones` built now (none for 0).
    pub(crate) fn table(
        &self,
        options: KalahOptions,
        default_stones: u8,
    ) -> Result<Option<Endgame>, Failure> {
        if let Some(path) = &self.endgame_file {
            let table = load(path)?;
            if table.covers(options) {
                return Ok(Some(table));
            }
            eprintln!(
                "{} is for other rules than this board's: building a table instead",
                path.display()
            );
        }
        let stones = self.endgame_stones.unwrap_or(default_stones);
        if stones == 0 {
            return Ok(None);
        }
        eprintln!("building the endgame table (up to {stones} stones)");
        Ok(Some(Endgame::build(options, stones)))
    }
}

pub(crate) fn run(args: &EndgameArgs) -> Result<(), Failure> {
    match &args.command {
        EndgameCommand::Build(args) => build(args),
        EndgameCommand::Check(args) => check(args),
    }
}

fn build(args: &BuildArgs) -> Result<(), Failure> {
    // The stones a pit only cap the table (at the board's stones): six
    // is the most a board may have.
    let options = KalahOptions::new(args.pits, 6)
        .map_err(|error| Failure::Usage(error.to_string()))?
        .with_empty_capture(args.empty_capture)
        .with_end(match args.end {
            EndRule::Immediate => KalahEnd::Immediate,
            EndRule::OnTurn => KalahEnd::OnTurn,
        });
    let started = Instant::now();
    let table = Endgame::build(options, args.stones);
    let built = started.elapsed().as_secs_f64();
    save(&table, &args.out)?;
    println!(
        "{} entries (up to {} stones) built in {built:.1} s, written to {} in {:.1} s",
        table.bytes(),
        table.max_stones(),
        args.out.display(),
        started.elapsed().as_secs_f64() - built
    );
    Ok(())
}

fn check(args: &CheckArgs) -> Result<(), Failure> {
    let started = Instant::now();
    let table = load(&args.file)?;
    let loaded = started.elapsed().as_secs_f64();
    let checked = table
        .audit(args.every)
        .map_err(|error| io_failure(&args.file, &error))?;
    println!(
        "{}: read and checksum in {loaded:.1} s; {checked} gains agree with their moves ({:.1} s)",
        args.file.display(),
        started.elapsed().as_secs_f64() - loaded
    );
    Ok(())
}

/// Reads a table that [`save`] wrote, checking its header and checksum.
pub(crate) fn load(path: &Path) -> Result<Endgame, Failure> {
    let file = File::open(path).map_err(|error| io_failure(path, &error))?;
    Endgame::read_from(&mut BufReader::with_capacity(1 << 20, file))
        .map_err(|error| io_failure(path, &error))
}

/// Writes `table` beside `path` and renames it there, so that a reader
/// never sees half a file.
fn save(table: &Endgame, path: &Path) -> Result<(), Failure> {
    let fail = |error: std::io::Error| io_failure(path, &error);
    let partial = path.with_extension("partial");
    let mut out = BufWriter::new(File::create(&partial).map_err(fail)?);
    out.write_all(&table.header()).map_err(fail)?;
    out.write_all(table.as_bytes()).map_err(fail)?;
    out.into_inner()
        .map_err(|error| fail(error.into_error()))?
        .sync_all()
        .map_err(fail)?;
    std::fs::rename(&partial, path).map_err(fail)
}

fn io_failure(path: &Path, error: &dyn std::fmt::Display) -> Failure {
    eprintln!("error: {}: {error}", path.display());
    Failure::Exit(1)
}
