//! Transparent huge pages for the solver's tables.
//!
//! A proof spends most of its time waiting for memory: the transposition
//! table and the endgame table are far larger than the caches, and with
//! 4 KiB pages nearly every probe also misses the TLB, which on a virtual
//! machine costs a page walk through two sets of page tables. Where the
//! kernel gives huge pages only on request (`madvise`, the usual setting)
//! something has to ask. This command allocates with jemalloc, which asks
//! (`MADV_HUGEPAGE`) for every mapping it makes when its `thp` option is
//! `always`; it reads its options once, at start, from the environment, so
//! the commands that solve start themselves again with it set, once.
//! (glibc's `glibc.malloc.hugetlb=1` tunable, used before, left the zeroed
//! tables on 4 KiB pages with the glibc of Debian 12.)
//! `MANCALA_HUGE_PAGES=0` turns this off.

/// The variable jemalloc (as built by `tikv-jemalloc-sys`, with its
/// `_rjem_` prefix) reads its options from.
const OPTIONS: &str = "_RJEM_MALLOC_CONF";
const ALWAYS: &str = "thp:always";

/// Restarts this process with huge pages asked for, unless it already has
/// or may not; returns only when it does not restart.
pub(crate) fn ask() {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;

        if std::env::var("MANCALA_HUGE_PAGES").is_ok_and(|value| value == "0") {
            return;
        }
        let options = std::env::var(OPTIONS).unwrap_or_default();
        if options.contains("thp:") {
            return;
        }
        let Ok(program) = std::env::current_exe() else {
            return;
        };
        let options = if options.is_empty() {
            ALWAYS.to_owned()
        } else {
            format!("{options},{ALWAYS}")
        };
        // `exec` returns only if it failed; then go on without.
        let _ = std::process::Command::new(program)
            .args(std::env::args_os().skip(1))
            .env(OPTIONS, options)
            .exec();
    }
}
