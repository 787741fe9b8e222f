//! Sockets nobody signed in for (watching a game, following an arena's
//! standings, a lobby before its `auth`), counted per client address and
//! in all, so that a flood of them cannot take the descriptors a move
//! needs. lila-ws is the model: a cap per address on connections, and a
//! process that keeps room for the work that matters.
//!
//! The count is the process's own, not the deployment's: what runs out is
//! this process's open-files table. At start the process raises its limit
//! to the hard limit ([`raise_open_files_limit`]); anonymous sockets may
//! then hold at most half of it (or `APP_LIMIT_ANON_SOCKETS`), the other
//! half being kept for signed-in players' sockets, Postgres, Redis and
//! the files the process opens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How many anonymous sockets may be open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct AnonymousSocketLimits {
    /// Anonymous sockets (watch, standings, a lobby before sign-in) one
    /// client address may hold in this process (0: no limit).
    #[arg(env = "APP_LIMIT_ANON_SOCKETS_PER_IP", default_value_t = 300)]
    pub per_address: u32,
    /// Anonymous sockets this process may hold in all. 0: half of the
    /// open-files limit.
    #[arg(env = "APP_LIMIT_ANON_SOCKETS", default_value_t = 0)]
    pub total: u32,
}

/// A client told to come back later waits about this long: long enough
/// for a flood's sockets to go, short enough for a watcher to retry.
pub const RETRY_AFTER_SECS: u64 = 10;

/// Why an anonymous socket was refused (the `/metrics` label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Its address holds its share.
    Address,
    /// The process holds all it keeps for anonymous sockets.
    Total,
}

impl Refused {
    pub fn reason(self) -> &'static str {
        match self {
            Refused::Address => "address",
            Refused::Total => "total",
        }
    }

    /// What the client is told.
    pub fn message(self) -> &'static str {
        match self {
            Refused::Address => {
                "too many sockets open from your address without signing in; close some or sign in"
            }
            Refused::Total => "the server holds all the watchers it can now; try again shortly",
        }
    }
}

#[derive(Default)]
struct Held {
    by_address: HashMap<String, u32>,
    total: u32,
}

/// The process's count of anonymous sockets. Cheap to clone (shared).
#[derive(Clone)]
pub struct AnonymousSockets {
    held: Arc<Mutex<Held>>,
    per_address: u32,
    total: u32,
}

impl AnonymousSockets {
    /// The count for a process whose open-files limit is `open_files`.
    pub fn new(limits: AnonymousSocketLimits, open_files: u64) -> AnonymousSockets {
        let half = u32::try_from(open_files / 2).unwrap_or(u32::MAX);
        AnonymousSockets {
            held: Arc::default(),
            per_address: limits.per_address,
            total: if limits.total > 0 { limits.total } else { half },
        }
    }

    /// A place for an anonymous socket from `address`, held until the pass
    /// is dropped (the socket closed, or its player signed in).
    pub fn enter(&self, address: &str) -> Result<AnonymousPass, Refused> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.total >= self.total {
            metrics::counter!("sockets_refused_total", "reason" => Refused::Total.reason())
                .increment(1);
            return Err(Refused::Total);
        }
        let mine = held.by_address.get(address).copied().unwrap_or(0);
        if self.per_address > 0 && mine >= self.per_address {
            metrics::counter!("sockets_refused_total", "reason" => Refused::Address.reason())
                .increment(1);
            return Err(Refused::Address);
        }
        held.by_address.insert(address.to_owned(), mine + 1);
        held.total += 1;
        metrics::gauge!("anonymous_sockets").set(f64::from(held.total));
        Ok(AnonymousPass {
            held: self.held.clone(),
            address: address.to_owned(),
        })
    }

    /// How many anonymous sockets are held now.
    pub fn held(&self) -> u32 {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// The most this process holds.
    pub fn total(&self) -> u32 {
        self.total
    }
}

/// An anonymous socket's place; given back on drop.
pub struct AnonymousPass {
    held: Arc<Mutex<Held>>,
    address: String,
}

impl Drop for AnonymousPass {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.by_address.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                held.by_address.remove(&self.address);
            }
        }
        held.total = held.total.saturating_sub(1);
        metrics::gauge!("anonymous_sockets").set(f64::from(held.total));
    }
}

/// Raises the process's open-files limit to its hard limit, once at
/// start (a soft limit of 1,024 is still common, and a socket server
/// meets it first); the limit now.
pub fn raise_open_files_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(error) => {
            tracing::warn!(%error, "raising the open-files limit");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockets(per_address: u32, total: u32) -> AnonymousSockets {
        AnonymousSockets::new(AnonymousSocketLimits { per_address, total }, 1 << 20)
    }

    #[test]
    fn an_address_holds_its_share_and_no_more() {
        let gate = sockets(2, 100);
        let first = gate.enter("203.0.113.7").unwrap();
        let _second = gate.enter("203.0.113.7").unwrap();
        assert_eq!(gate.enter("203.0.113.7").err(), Some(Refused::Address));
        assert!(
            gate.enter("198.51.100.1").is_ok(),
            "another address is not its"
        );
        drop(first);
        assert!(
            gate.enter("203.0.113.7").is_ok(),
            "a place given back is free"
        );
    }

    #[test]
    fn the_process_holds_its_total_over_every_address() {
        let gate = sockets(0, 3);
        let held: Vec<AnonymousPass> = (0..3)
            .map(|n| gate.enter(&format!("192.0.2.{n}")).unwrap())
            .collect();
        assert_eq!(gate.held(), 3);
        assert_eq!(gate.enter("192.0.2.200").err(), Some(Refused::Total));
        drop(held);
        assert_eq!(gate.held(), 0);
        assert!(gate.enter("192.0.2.200").is_ok());
    }

    #[test]
    fn the_total_defaults_to_half_the_open_files() {
        let limits = AnonymousSocketLimits {
            per_address: 300,
            total: 0,
        };
        assert_eq!(AnonymousSockets::new(limits, 20_000).total(), 10_000);
        let set = AnonymousSocketLimits {
            total: 500,
            ..limits
        };
        assert_eq!(AnonymousSockets::new(set, 20_000).total(), 500);
    }
}
