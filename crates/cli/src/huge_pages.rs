//! Transparent huge pages for the solver's tables.
//!
//! A proof spends most of its time waiting for memory: the transposition
//! table is far larger than the caches, and with 4 KiB pages nearly every
//! probe also misses the TLB, which on a virtual machine costs a page walk
//! through two sets of page tables. With 2 MiB pages the same solve of
//! Kalah(6,4) took 30 s instead of 44 s here. Where the kernel gives huge
//! pages only on request (`madvise`, the usual setting), glibc makes that
//! request for its large allocations when `GLIBC_TUNABLES` says
//! `glibc.malloc.hugetlb=1`, and it reads that once, at start: so the
//! commands that solve start themselves again with it set, once.
//! `MANCALA_HUGE_PAGES=0` turns this off.

/// Restarts this process with huge pages asked for, unless it already has
/// or may not; returns only when it does not restart.
pub(crate) fn ask() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;

        const TUNABLE: &str = "glibc.malloc.hugetlb=1";
        if std::env::var("MANCALA_HUGE_PAGES").is_ok_and(|value| value == "0") {
            return;
        }
        let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        if tunables.contains("glibc.malloc.hugetlb") {
            return;
        }
        let Ok(program) = std::env::current_exe() else {
            return;
        };
        let tunables = if tunables.is_empty() {
            TUNABLE.to_owned()
        } else {
            format!("{tunables}:{TUNABLE}")
        };
        // `exec` returns only if it failed; then go on without.
        let _ = std::process::Command::new(program)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", tunables)
            .exec();
    }
}
