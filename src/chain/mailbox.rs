//! [`MailboxGauge`]: mailbox depth of one actor as a Prometheus gauge. actix does not expose
//! queue lengths, so senders count a message in before `send` and the receiving actor counts
//! it out when it starts handling it.

use std::time::Instant;

use metrics::{Counter, Gauge, Histogram};

use crate::ChainId;

/// Depth gauge of one actor's mailbox, labelled `chain` and `actor`, with the counters of
/// what goes in (sent by `from`) and out.
#[derive(Clone, Debug)]
pub struct MailboxGauge {
    depth: Gauge,
    received: Counter,
    sent: Counter,
    wait: Histogram,
}

impl MailboxGauge {
    /// The gauge of `actor`'s mailbox on `chain`, fed by `from`; publishes the capacity.
    pub fn new(chain: ChainId, actor: &'static str, from: &'static str, capacity: usize) -> Self {
        let chain = chain.to_string();
        metrics::gauge!("ensemble_mailbox_capacity", "chain" => chain.clone(), "actor" => actor)
            .set(capacity as f64);
        let depth =
            metrics::gauge!("ensemble_mailbox_depth", "chain" => chain.clone(), "actor" => actor);
        depth.set(0.0);
        Self {
            depth,
            received: metrics::counter!("ensemble_actor_messages_received_total", "chain" => chain.clone(), "actor" => actor),
            sent: metrics::counter!("ensemble_actor_messages_sent_total", "chain" => chain.clone(), "actor" => from),
            wait: metrics::histogram!("ensemble_mailbox_wait_seconds", "chain" => chain, "actor" => actor),
        }
    }

    /// A message is about to be sent; returns when, for the wait-time measurement.
    pub fn enqueued(&self) -> Instant {
        self.depth.increment(1.0);
        self.sent.increment(1);
        Instant::now()
    }

    /// A send failed: the message never reached the mailbox.
    pub fn undo(&self) {
        self.depth.decrement(1.0);
    }

    /// The actor took out a message enqueued at `at`.
    pub fn dequeued(&self, at: Instant) {
        self.depth.decrement(1.0);
        self.received.increment(1);
        self.wait.record(at.elapsed().as_secs_f64());
    }
}
