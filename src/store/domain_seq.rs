//! [`DomainSeqs`]: hands out the creation numbers (`domains.seq`) of new domains, one counter
//! per chain.
//!
//! A chain's numbers are its own range ([`domain::seq_range`]), so chains indexed side by side
//! never contend for a counter and each numbers its domains the same whatever the order in
//! which the chains run. A counter starts after the highest number of its chain in the
//! database, read once through the unique index `domains_seq`.
//! Numbers handed out for rows that are never committed (a failed flush, a rolled-back
//! window) are skipped, not reused: a gap is harmless, a reused number would not be.

use std::collections::HashMap;

use entities::domain;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};

use super::StoreError;
use crate::ChainId;

/// Next creation number per chain.
#[derive(Debug, Default)]
pub struct DomainSeqs {
    next: HashMap<ChainId, i64>,
}

impl DomainSeqs {
    /// The number of the next domain `chain_id` creates.
    pub async fn next(
        &mut self,
        db: &DatabaseConnection,
        chain_id: ChainId,
    ) -> Result<i64, StoreError> {
        let range =
            domain::seq_range(chain_id.get()).ok_or(StoreError::DomainSeqExhausted { chain_id })?;
        let next = match self.next.get(&chain_id) {
            Some(next) => *next,
            None => {
                let highest: Option<i64> = domain::Entity::find()
                    .select_only()
                    .column_as(domain::Column::Seq.max(), "seq")
                    .filter(domain::Column::Seq.between(*range.start(), *range.end()))
                    .into_tuple()
                    .one(db)
                    .await
                    .map_err(StoreError::db("highest domain number"))?
                    .flatten();
                highest.map_or(*range.start(), |h| h + 1)
            }
        };
        if !range.contains(&next) {
            return Err(StoreError::DomainSeqExhausted { chain_id });
        }
        // After the last number of the largest chain id, `next + 1` would overflow: store a
        // value outside every range instead, which the check above refuses next time.
        self.next.insert(chain_id, next.checked_add(1).unwrap_or(i64::MIN));
        Ok(next)
    }
}
