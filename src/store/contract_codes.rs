//! [`ContractCodes`]: the numbers (`contracts.code`) by which events name the contract that
//! emitted them, one table per chain.
//!
//! A chain's codes are read from the database once, when the store first records one of its
//! events; a contract seen for the first time gets the next code, and its row is written
//! with the next flush, in the same transaction as the events that use it. So a failed flush
//! loses the new codes together with their events: the restarted store reads the committed
//! ones again and hands the same contracts the same codes.

use std::collections::hash_map::Entry;

// foldhash, as in the entity store: this is on the handler's path for every event.
use foldhash::HashMap;

use entities::contract;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::StoreError;

/// One chain's codes.
#[derive(Debug, Default)]
struct ChainCodes {
    by_address: HashMap<[u8; 20], i32>,
    next: i32,
}

/// Contract codes per chain, and the rows of the codes handed out since the last flush.
#[derive(Debug, Default)]
pub struct ContractCodes {
    chains: HashMap<i64, ChainCodes>,
    new: Vec<contract::Model>,
}

impl ContractCodes {
    /// The code of `address` on `chain_id`, handing out the next one if it has none yet.
    pub async fn code(
        &mut self,
        db: &DatabaseConnection,
        chain_id: i64,
        address: [u8; 20],
    ) -> Result<i32, StoreError> {
        let codes = match self.chains.entry(chain_id) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(slot) => {
                let rows = contract::Entity::find()
                    .filter(contract::Column::ChainId.eq(chain_id))
                    .all(db)
                    .await
                    .map_err(StoreError::db("load contract codes"))?;
                let mut codes = ChainCodes { next: 1, ..ChainCodes::default() };
                for row in rows {
                    codes.next = codes.next.max(row.code + 1);
                    if let Ok(address) = <[u8; 20]>::try_from(row.address.as_slice()) {
                        codes.by_address.insert(address, row.code);
                    }
                }
                slot.insert(codes)
            }
        };
        if let Some(code) = codes.by_address.get(&address) {
            return Ok(*code);
        }
        let code = codes.next;
        codes.next += 1;
        codes.by_address.insert(address, code);
        self.new.push(contract::Model { chain_id, code, address: address.to_vec() });
        Ok(code)
    }

    /// The rows of the codes handed out since the last call, for the next flush.
    pub fn take_new(&mut self) -> Vec<contract::Model> {
        std::mem::take(&mut self.new)
    }
}
