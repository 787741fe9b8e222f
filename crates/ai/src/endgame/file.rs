//! Endgame tables kept between runs: a header that names the rules and
//! the size, then the gains byte for byte.
//!
//! A table of 22 stones takes minutes to build and removes most of a
//! proof's nodes (the solver from the start searches a sixth of the nodes
//! it searches with 16), so it pays to build it once and load it, as
//! "Solving Kalah" loaded its databases. This crate opens no files: a
//! caller writes [`Endgame::header`] and [`Endgame::as_bytes`] where it
//! likes, and reads a table back from any reader it opened
//! ([`Endgame::read_from`]), or fills the bytes [`Endgame::expect`] hands
//! out itself and [`PendingEndgame::finish`] checks them.

use std::io::Read;

use mancala_rules::{KalahEnd, KalahOptions};
use zerocopy::IntoBytes;

use super::Endgame;
use crate::rank::Ranks;

/// Bytes of the header before the gains.
pub const HEADER_BYTES: usize = 32;

/// The first eight bytes of every file: the format and its version.
const MAGIC: &[u8; 8] = b"MKEGTB01";

/// Why bytes are not an endgame table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndgameFileError {
    #[error("not an endgame table file (or one of another version)")]
    NotATable,
    #[error("the header names no Kalah board: {0}")]
    Rules(String),
    #[error("the header says {header} entries; {stones} stones on this board make {expected}")]
    Size {
        header: u64,
        stones: u8,
        expected: u64,
    },
    #[error("the gains do not match the header's checksum: the file is damaged")]
    Checksum,
    #[error("more bytes follow the gains than the header says")]
    TooLong,
    #[error("reading: {0}")]
    Read(String),
}

/// A table whose gains are still being read.
#[derive(Debug)]
pub struct PendingEndgame {
    table: Endgame,
    checksum: u64,
}

impl PendingEndgame {
    /// The bytes to fill with the gains that follow the header.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.table.values.as_mut_bytes()
    }

    /// The table, once its gains match the header's checksum.
    pub fn finish(self) -> Result<Endgame, EndgameFileError> {
        if checksum(self.table.values.as_bytes()) != self.checksum {
            return Err(EndgameFileError::Checksum);
        }
        Ok(self.table)
    }
}

impl Endgame {
    /// The header that goes before [`Endgame::as_bytes`] in a file.
    pub fn header(&self) -> [u8; HEADER_BYTES] {
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(MAGIC);
        let options = self.options;
        header[8] = options.pits();
        header[9] = options.seeds();
        header[10] = u8::from(options.empty_capture());
        header[11] = match options.end() {
            KalahEnd::Immediate => 0,
            KalahEnd::OnTurn => 1,
        };
        header[12] = self.max_stones;
        header[16..24].copy_from_slice(&(self.values.len() as u64).to_le_bytes());
        header[24..32].copy_from_slice(&checksum(self.values.as_bytes()).to_le_bytes());
        header
    }

    /// The gains as bytes, in rank order: what follows the header.
    pub fn as_bytes(&self) -> &[u8] {
        self.values.as_bytes()
    }

    /// Reads a table that [`Endgame::header`] and [`Endgame::as_bytes`]
    /// wrote, to its end, checking the header and the checksum.
    pub fn read_from(reader: &mut impl Read) -> Result<Endgame, EndgameFileError> {
        let failed = |error: std::io::Error| EndgameFileError::Read(error.to_string());
        let mut header = [0u8; HEADER_BYTES];
        reader.read_exact(&mut header).map_err(failed)?;
        let mut pending = Endgame::expect(&header)?;
        reader.read_exact(pending.bytes_mut()).map_err(failed)?;
        if reader.read(&mut [0u8; 1]).map_err(failed)? != 0 {
            return Err(EndgameFileError::TooLong);
        }
        pending.finish()
    }

    /// A table of the size and rules `header` names, its gains to be read
    /// into [`PendingEndgame::bytes_mut`].
    pub fn expect(header: &[u8; HEADER_BYTES]) -> Result<PendingEndgame, EndgameFileError> {
        if &header[..8] != MAGIC {
            return Err(EndgameFileError::NotATable);
        }
        let end = match header[11] {
            0 => KalahEnd::Immediate,
            1 => KalahEnd::OnTurn,
            other => return Err(EndgameFileError::Rules(format!("end rule {other}"))),
        };
        let empty_capture = match header[10] {
            0 => false,
            1 => true,
            other => return Err(EndgameFileError::Rules(format!("capture rule {other}"))),
        };
        let options = KalahOptions::new(header[8], header[9])
            .map_err(|error| EndgameFileError::Rules(error.to_string()))?
            .with_empty_capture(empty_capture)
            .with_end(end);
        let max_stones = header[12];
        let board_stones = 2 * options.pits() * options.seeds();
        let entries = u64::from_le_bytes(word(header, 16));
        let expected = Endgame::entries(options.pits(), max_stones);
        if max_stones > board_stones || entries != expected {
            return Err(EndgameFileError::Size {
                header: entries,
                stones: max_stones,
                expected,
            });
        }
        let values = usize::try_from(entries).map_err(|_| EndgameFileError::Size {
            header: entries,
            stones: max_stones,
            expected,
        })?;
        Ok(PendingEndgame {
            table: Endgame {
                options,
                max_stones,
                ranks: Ranks::new(options.pits()),
                values: vec![0; values],
            },
            checksum: u64::from_le_bytes(word(header, 24)),
        })
    }
}

fn word(header: &[u8; HEADER_BYTES], at: usize) -> [u8; 8] {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&header[at..at + 8]);
    bytes
}

/// A 64-bit checksum of the gains, eight bytes a step (a table of 22
/// stones is half a gigabyte): enough to tell a damaged or truncated file,
/// not a defence against a forged one.
fn checksum(bytes: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunks = bytes.chunks_exact(8);
    let mut hash = bytes.len() as u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = (hash.rotate_left(23) ^ u64::from_le_bytes(word)).wrapping_mul(MULTIPLIER);
    }
    for &byte in chunks.remainder() {
        hash = (hash.rotate_left(23) ^ u64::from(byte)).wrapping_mul(MULTIPLIER);
    }
    hash ^ hash >> 29
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(table: &Endgame) -> Result<Endgame, EndgameFileError> {
        let mut bytes = table.header().to_vec();
        bytes.extend_from_slice(table.as_bytes());
        Endgame::read_from(&mut bytes.as_slice())
    }

    #[test]
    fn a_table_read_back_is_the_table_written() {
        let options = KalahOptions::new(3, 3)
            .unwrap()
            .with_empty_capture(true)
            .with_end(KalahEnd::OnTurn);
        let table = Endgame::build(options, 9);
        let read = round_trip(&table).unwrap();
        assert_eq!(read.options, table.options);
        assert_eq!(read.max_stones, 9);
        assert_eq!(read.values, table.values);
        assert!(read.covers(options));
    }

    #[test]
    fn a_damaged_or_foreign_file_is_refused() {
        let table = Endgame::build(KalahOptions::new(3, 3).unwrap(), 8);
        let header = table.header();

        let mut pending = Endgame::expect(&header).unwrap();
        pending.bytes_mut().copy_from_slice(table.as_bytes());
        pending.bytes_mut()[100] ^= 1;
        assert_eq!(pending.finish().unwrap_err(), EndgameFileError::Checksum);

        let mut foreign = header;
        foreign[..8].copy_from_slice(b"MKEGTB00");
        assert_eq!(
            Endgame::expect(&foreign).unwrap_err(),
            EndgameFileError::NotATable
        );

        let mut bigger = header;
        bigger[12] = 9;
        assert!(matches!(
            Endgame::expect(&bigger).unwrap_err(),
            EndgameFileError::Size { .. }
        ));

        let mut bytes = header.to_vec();
        bytes.extend_from_slice(table.as_bytes());
        bytes.push(0);
        assert_eq!(
            Endgame::read_from(&mut bytes.as_slice()).unwrap_err(),
            EndgameFileError::TooLong
        );
        bytes.truncate(bytes.len() - 2);
        assert!(matches!(
            Endgame::read_from(&mut bytes.as_slice()).unwrap_err(),
            EndgameFileError::Read(_)
        ));

        let mut seven_pits = header;
        seven_pits[8] = 7;
        assert!(matches!(
            Endgame::expect(&seven_pits).unwrap_err(),
            EndgameFileError::Rules(_)
        ));
    }
}
