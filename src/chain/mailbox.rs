//! [`MailboxGauge`]: mailbox depth of one actor as a Prometheus gauge. actix does not expose
//! queue lengths, so senders count a message in before `send` and the receiving actor counts
//! it out when it starts handling it.

use metrics::Gauge;

/// Depth gauge of one actor's mailbox, labelled `chain` and `actor`.
#[derive(Clone, Debug)]
pub struct MailboxGauge {
    depth: Gauge,
    chain: String,
    actor: &'static str,
}

impl MailboxGauge {
    /// The gauge of `actor` on `chain`, also publishing its capacity.
    pub fn new(chain: u64, actor: &'static str, capacity: usize) -> Self {
        let chain = chain.to_string();
        metrics::gauge!("ensemble_mailbox_capacity", "chain" => chain.clone(), "actor" => actor)
            .set(capacity as f64);
        let depth =
            metrics::gauge!("ensemble_mailbox_depth", "chain" => chain.clone(), "actor" => actor);
        depth.set(0.0);
        Self { depth, chain, actor }
    }

    /// A message is about to be sent.
    pub fn enqueued(&self) {
        self.depth.increment(1.0);
    }

    /// The actor took a message out (or a send failed).
    pub fn dequeued(&self) {
        self.depth.decrement(1.0);
        metrics::counter!("ensemble_actor_messages_total", "chain" => self.chain.clone(), "actor" => self.actor)
            .increment(1);
    }
}
