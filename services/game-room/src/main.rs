//! `game-room`: live games over WebSocket, on their own port.

use std::process::ExitCode;

use mancala_game_room::{Application, GameRoomSettings};
use mancala_platform::binary;

/// jemalloc: less CPU a move than the system allocator, and memory it
/// hands back after a burst (see tests/PERFORMANCE.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[actix_web::main]
async fn main() -> ExitCode {
    // jemalloc gives freed memory back to the system from background
    // threads, after its decay time, instead of only when this thread next
    // allocates: memory returns to its level after a burst even when the
    // process goes quiet.
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
    let declaration = mancala_game_room::declaration();
    let read = |parsed: &binary::Parsed| parsed.get::<GameRoomSettings>();
    binary::run("game-room", declaration, read, Application::build).await
}
