//! A Redis Cluster of the test's own, from the installed `redis-server`:
//! primaries on free ports, in a scratch directory, joined with
//! `redis-cli --cluster create`, each of which a test can kill and start
//! again. Test code: a node that will not start is a failed test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::free_port;

/// A running cluster of primaries without replicas.
pub struct RedisCluster {
    ports: Vec<u16>,
    children: Vec<Option<Child>>,
    dir: PathBuf,
}

impl RedisCluster {
    /// Starts `primaries` nodes and makes them one cluster, its 16,384 slots
    /// split between them. A primary that goes down takes only its own
    /// slots with it (`cluster-require-full-coverage no`).
    pub fn start(primaries: usize) -> RedisCluster {
        let dir =
            std::env::temp_dir().join(format!("mancala-cluster-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let ports: Vec<u16> = (0..primaries).map(|_| free_port()).collect();
        let mut cluster = RedisCluster {
            children: ports.iter().map(|_| None).collect(),
            ports,
            dir,
        };
        for node in 0..primaries {
            cluster.start_node(node);
        }
        let nodes: Vec<String> = cluster
            .ports
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect();
        let created = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&nodes)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .status()
            .expect("redis-cli on the PATH");
        assert!(created.success(), "redis-cli --cluster create failed");
        cluster.wait_until_ok();
        cluster
    }

    fn start_node(&mut self, node: usize) {
        let port = self.ports[node];
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
            .args(["--cluster-node-timeout", "2000"])
            .args(["--cluster-require-full-coverage", "no"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server on the PATH");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.children[node] = Some(child);
    }

    fn cli(&self, node: usize, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .args(["-p", &self.ports[node].to_string()])
            .args(args)
            .output()
            .expect("redis-cli on the PATH");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Waits until every running node says the cluster is up and agrees
    /// on who holds each slot.
    pub fn wait_until_ok(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = (0..self.ports.len())
                .filter(|&node| self.children[node].is_some())
                .all(|node| {
                    self.cli(node, &["cluster", "info"])
                        .contains("cluster_state:ok")
                });
            if ok {
                return;
            }
            assert!(Instant::now() < deadline, "the cluster never came up");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `REDIS_URL` for the services: every node, comma separated.
    pub fn url(&self) -> String {
        self.ports
            .iter()
            .map(|port| format!("redis://127.0.0.1:{port}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The node that holds `slot`.
    pub fn owner(&self, slot: u16) -> usize {
        let running = (0..self.ports.len())
            .find(|&node| self.children[node].is_some())
            .expect("a node running");
        for line in self.cli(running, &["cluster", "nodes"]).lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some(address) = fields.get(1) else {
                continue;
            };
            let holds = fields.iter().skip(8).any(|range| {
                let (low, high) = range.split_once('-').unwrap_or((range, range));
                match (low.parse::<u16>(), high.parse::<u16>()) {
                    (Ok(low), Ok(high)) => (low..=high).contains(&slot),
                    _ => false,
                }
            });
            if holds {
                let port: u16 = address
                    .split(['@', ':'])
                    .nth(1)
                    .and_then(|port| port.parse().ok())
                    .expect("a node address");
                return self
                    .ports
                    .iter()
                    .position(|&p| p == port)
                    .expect("one of ours");
            }
        }
        panic!("nobody holds slot {slot}");
    }

    /// What node `node` answers (redis-cli, which does not follow moves:
    /// ask the key's owner).
    pub fn ask(&self, node: usize, args: &[&str]) -> String {
        self.cli(node, args).trim().to_owned()
    }

    /// The sharded channels node `node` has subscribers on.
    pub fn shard_channels(&self, node: usize) -> Vec<String> {
        self.cli(node, &["pubsub", "shardchannels"])
            .lines()
            .map(str::to_owned)
            .filter(|line| !line.is_empty())
            .collect()
    }

    /// Kills node `node`'s process: its slots are down until it is back.
    pub fn kill(&mut self, node: usize) {
        if let Some(mut child) = self.children[node].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts node `node` again, empty (no persistence) but with its
    /// cluster configuration, so it takes its slots back.
    pub fn restart(&mut self, node: usize) {
        self.kill(node);
        self.start_node(node);
        self.wait_until_ok();
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in 0..self.children.len() {
            self.kill(node);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
