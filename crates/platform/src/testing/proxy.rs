//! A TCP proxy a test can cut and restore: Postgres (or anything) "goes
//! away" for the service behind it, every connection broken at once and new
//! ones refused, as in a restart, without touching the real server.

// Test support: a proxy that cannot bind has nothing to report but a panic.
#![allow(clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

pub struct Proxy {
    pub port: u16,
    open: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port for the proxy");
        let port = listener.local_addr().expect("the bound address").port();
        let open = Arc::new(AtomicBool::new(true));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (accepting, tracked) = (open.clone(), links.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !accepting.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is refused at once
                }
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                tracked.lock().await.push(link);
            }
        });
        Proxy { port, open, links }
    }

    /// Breaks every connection and refuses new ones.
    pub async fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        for link in self.links.lock().await.drain(..) {
            link.abort();
        }
    }

    pub fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}
