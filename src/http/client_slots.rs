//! [`ClientSlots`]: how many connections and requests each client (peer IP address) holds,
//! shared by every HTTP worker.
//!
//! A connection takes a slot when it is accepted ([`ClientSlots::connect`], called from the
//! server's `on_connect`) and gives it back when the connection is dropped. The slot is kept
//! in the connection's data; a connection that arrived while its client already held
//! `per_client` others is marked, and the request limits answer it 429 and close it. Requests
//! take a slot of their own while they run ([`ClientSlots::request`]), so a client cannot hold
//! more than `per_client` requests in flight over a few long-lived connections either.

use std::{net::IpAddr, sync::Arc};

use dashmap::DashMap;

/// Counts per client.
#[derive(Debug, Default)]
struct Counts {
    connections: DashMap<IpAddr, usize>,
    requests: DashMap<IpAddr, usize>,
}

/// Per-client connection and request counts, and the cap they are held to (0: no cap).
#[derive(Clone, Debug)]
pub struct ClientSlots {
    counts: Arc<Counts>,
    per_client: usize,
}

/// One slot of `ip` in `map`, released on drop.
#[derive(Debug)]
pub struct Slot {
    counts: Arc<Counts>,
    ip: IpAddr,
    requests: bool,
    /// The client held more than its share when this slot was taken.
    pub over: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let map = if self.requests { &self.counts.requests } else { &self.counts.connections };
        // Remove the entry at zero, so the map holds only clients that are connected.
        map.remove_if_mut(&self.ip, |_, n| {
            *n = n.saturating_sub(1);
            *n == 0
        });
    }
}

impl ClientSlots {
    /// Slots for at most `per_client` connections and requests per client (0: unlimited).
    pub fn new(per_client: usize) -> Self {
        Self { counts: Arc::default(), per_client }
    }

    fn take(&self, ip: IpAddr, requests: bool) -> Slot {
        let map = if requests { &self.counts.requests } else { &self.counts.connections };
        let mut n = map.entry(ip).or_insert(0);
        *n += 1;
        let over = self.per_client > 0 && *n > self.per_client;
        Slot { counts: self.counts.clone(), ip, requests, over }
    }

    /// A connection from `ip` was accepted.
    pub fn connect(&self, ip: IpAddr) -> Slot {
        self.take(ip, false)
    }

    /// A request from `ip` started.
    pub fn request(&self, ip: IpAddr) -> Slot {
        self.take(ip, true)
    }

    /// Connections open now (all clients).
    #[cfg(test)]
    fn connections(&self) -> usize {
        self.counts.connections.iter().map(|e| *e.value()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_counted_per_client_and_given_back() {
        let slots = ClientSlots::new(2);
        let (a, b) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let first = slots.connect(a);
        let second = slots.connect(a);
        let third = slots.connect(a);
        assert!(!first.over && !second.over && third.over);
        assert!(!slots.connect(b).over, "another client has its own share");
        drop(third);
        drop(second);
        assert!(!slots.connect(a).over);
        drop(first);
        assert_eq!(slots.connections(), 0, "every slot was given back");
        assert!(!slots.request(a).over, "requests are counted apart from connections");
    }
}
