//! This chain's place in the heal log ([`super::heal_log`]): the labels it made known since
//! the last flush, which the flush appends to the log, and its mark, up to which it has applied
//! what the other chains and the label imports logged.

use entities::domain::RawHash;

use super::{EntityStore, StoreError, heal_log};

impl EntityStore {
    /// Records that this chain made `label_hash` known: the flush appends it to the heal
    /// log, from which the other chains rename their domains.
    pub fn log_heal(&mut self, label_hash: RawHash) {
        self.heals.push(label_hash);
    }

    /// The next entries of the heal log this chain has not applied (up to
    /// [`heal_log::READ_CHUNK`]); its own entries among them are already applied.
    pub async fn unapplied_heals(&mut self) -> Result<Vec<heal_log::Heal>, StoreError> {
        let mark = match self.heal_mark {
            Some(mark) => mark,
            None => {
                let mark = heal_log::mark(&self.db, self.chain_id).await?;
                self.heal_mark = Some(mark);
                mark
            }
        };
        heal_log::read_after(&self.db, mark).await
    }

    /// Moves this chain's mark in the heal log to `seq`; the next flush stores it with the
    /// names the applied entries changed.
    pub fn mark_heals_applied(&mut self, seq: i64) {
        if self.heal_mark.is_none_or(|mark| seq > mark) {
            self.heal_mark = Some(seq);
            self.heal_mark_moved = true;
        }
    }

    /// Whether the heal-log mark moved since the last flush stored it.
    pub fn heal_mark_moved(&self) -> bool {
        self.heal_mark_moved
    }
}
