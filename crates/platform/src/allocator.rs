//! The services' memory allocator: jemalloc, for less CPU a move than the
//! system allocator and memory it hands back after a burst (see
//! tests/PERFORMANCE.md). A binary declares it with
//! [`use_jemalloc!`](crate::use_jemalloc); `binary::run` turns on its
//! background threads.

#[doc(hidden)]
pub use tikv_jemallocator::Jemalloc;

/// Makes jemalloc the process's global allocator. Only a binary may do
/// this, once; a library that did would impose it on every test.
#[macro_export]
macro_rules! use_jemalloc {
    () => {
        #[global_allocator]
        static ALLOCATOR: $crate::allocator::Jemalloc = $crate::allocator::Jemalloc;
    };
}

/// Lets jemalloc give freed memory back to the system from background
/// threads, after its decay time, instead of only when the thread that
/// freed it next allocates: memory returns to its level after a burst even
/// when the process goes quiet. Harmless where jemalloc is not the global
/// allocator (it then configures an instance nobody uses).
pub fn return_memory_in_background() {
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
}
