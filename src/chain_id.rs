//! [`ChainId`]: an EVM chain's id (EIP-155), as configured, logged and keyed. The database
//! stores it in signed 64-bit columns ([`ChainId::column`]).

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// An EVM chain id: 1 for Ethereum mainnet, 8453 for Base, 31337 for a local anvil.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct ChainId(pub u64);

impl ChainId {
    /// The id as a number.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The id as the database's `chain_id` columns hold it. The configuration refuses ids
    /// above `u32::MAX` (domain keys hold 32 bits of it), so the conversion is exact.
    pub const fn column(self) -> i64 {
        self.0 as i64
    }
}

impl From<u64> for ChainId {
    fn from(id: u64) -> Self {
        Self(id)
    }
}

impl fmt::Display for ChainId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for ChainId {
    type Err = std::num::ParseIntError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse().map(Self)
    }
}

impl From<ChainId> for sea_orm::Value {
    fn from(id: ChainId) -> Self {
        id.column().into()
    }
}
