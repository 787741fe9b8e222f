//! The server's resident memory and CPU time, read from `/proc` (Linux), so
//! a load report says what the load cost.

use serde::Serialize;

/// Clock ticks per second in `/proc/<pid>/stat`: 100 on every Linux this
/// runs on (`getconf CLK_TCK`).
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a set of processes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    pub rss_bytes: u64,
    pub cpu_seconds: f64,
}

/// Sums the readings of `pids`; processes that are gone count as nothing.
pub fn read(pids: &[u32]) -> Reading {
    let mut total = Reading::default();
    for pid in pids {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            let kib = status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.split_whitespace().next())
                .and_then(|value| value.parse::<u64>().ok())
                .unwrap_or(0);
            total.rss_bytes += kib * 1024;
        }
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The command name may hold spaces; fields count from after it.
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            let ticks = |index: usize| {
                fields
                    .get(index)
                    .and_then(|value| value.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            // utime and stime are fields 14 and 15 of stat(5), 12 and 13
            // after the name.
            total.cpu_seconds += (ticks(11) + ticks(12)) / TICKS_PER_SECOND;
        }
    }
    total
}

/// What the servers used over a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ServerUsage {
    pub pids: Vec<u32>,
    pub rss_start_mb: f64,
    pub rss_peak_mb: f64,
    pub rss_end_mb: f64,
    /// CPU time over wall time (over the window, once one is opened): 1.0
    /// is one core busy.
    pub cpu_cores: f64,
}

/// Follows `pids` through a run: a reading at the start, one per sample,
/// and the usage at the end.
pub struct Sampler {
    pids: Vec<u32>,
    start: Reading,
    peak_rss: u64,
    started: std::time::Instant,
    /// Where CPU is counted from once the warm-up is over: a run's sign-ins
    /// and first queue entries are not what a move costs.
    window: Option<(Reading, std::time::Instant)>,
}

impl Sampler {
    pub fn start(pids: Vec<u32>) -> Sampler {
        let start = read(&pids);
        Sampler {
            pids,
            start,
            peak_rss: start.rss_bytes,
            started: std::time::Instant::now(),
            window: None,
        }
    }

    /// CPU is counted from now on (memory still from the start).
    pub fn open_window(&mut self) {
        self.window = Some((self.sample(), std::time::Instant::now()));
    }

    /// The current reading, remembered for the peak.
    pub fn sample(&mut self) -> Reading {
        let now = read(&self.pids);
        self.peak_rss = self.peak_rss.max(now.rss_bytes);
        now
    }

    pub fn usage(&mut self) -> ServerUsage {
        let end = self.sample();
        let mb = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        let (from, since) = self.window.unwrap_or((self.start, self.started));
        let wall = since.elapsed().as_secs_f64().max(1e-9);
        ServerUsage {
            pids: self.pids.clone(),
            rss_start_mb: mb(self.start.rss_bytes),
            rss_peak_mb: mb(self.peak_rss),
            rss_end_mb: mb(end.rss_bytes),
            cpu_cores: (end.cpu_seconds - from.cpu_seconds) / wall,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_and_cpu_time() {
        let me = std::process::id();
        let mut spin = 0u64;
        for i in 0..5_000_000u64 {
            spin = spin.wrapping_add(i * i);
        }
        assert!(spin > 0);
        let reading = read(&[me]);
        assert!(reading.rss_bytes > 1024 * 1024, "{reading:?}");
        assert!(reading.cpu_seconds >= 0.0);
        assert_eq!(read(&[u32::MAX]).rss_bytes, 0, "a process that is gone");
    }
}
