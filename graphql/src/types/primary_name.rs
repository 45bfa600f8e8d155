//! `Account.reverseRecords`: an account's reverse records (ENSIP-19) as indexed, per chain,
//! without forward verification (`Account.resolve` verifies them).
//!
//! For coin type 60 (Ethereum) the primary name is the `name` record of `<addr>.addr.reverse`
//! on its resolver (ENSIP-3). For an EVM chain's coin type (`0x80000000 | chainId`) it is
//! the `name` that chain's L2 reverse registrar set (`NameForAddrChanged`), falling back to
//! the default reverse registrar's (coin type `0x80000000`) when the chain has none. The
//! registrars come from `reverse_registrars`; each name is one primary-key lookup.

use std::collections::HashMap;

use async_graphql::{Context, Enum, Error, Object, OneofObject, dataloader::DataLoader};
use entities::{
    resolver_record_key::ResolverRecordKey,
    reverse_registrar::{self, DEFAULT_COIN_TYPE, ETH_COIN_TYPE},
};
use sea_orm::{DatabaseConnection, EntityTrait};

use super::CanonicalName;
use crate::{
    error::{code, coded, internal},
    loaders::{PrimaryNameLoader, RecordLoader, load_row},
    scalars::{CoinType, InterpretedName},
};

/// ENSIP-11's EVM bit.
const EVM_BIT: i64 = 0x8000_0000;
/// Most coin types one `primaryNames` call may ask for.
const MAX_COIN_TYPES: usize = 32;

/// The chains of the ENS mainnet namespace, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum)]
pub enum ChainName {
    /// Arbitrum One (42161).
    ArbitrumOne,
    /// Base (8453).
    Base,
    /// Ethereum mainnet (1).
    Ethereum,
    /// Linea (59144).
    Linea,
    /// OP Mainnet (10).
    Optimism,
    /// Scroll (534352).
    Scroll,
}

impl ChainName {
    const ALL: [(Self, i64); 6] = [
        (Self::ArbitrumOne, 42_161),
        (Self::Base, 8_453),
        (Self::Ethereum, 1),
        (Self::Linea, 59_144),
        (Self::Optimism, 10),
        (Self::Scroll, 534_352),
    ];

    pub(crate) fn coin_type(self) -> i64 {
        match Self::ALL.iter().find(|(c, _)| *c == self).map_or(1, |(_, id)| *id) {
            1 => ETH_COIN_TYPE,
            chain => EVM_BIT | chain,
        }
    }

    pub(crate) fn of_coin_type(coin_type: i64) -> Option<Self> {
        Self::ALL.iter().find(|(c, _)| c.coin_type() == coin_type).map(|(c, _)| *c)
    }
}

/// Which primary name.
#[derive(Debug, OneofObject)]
pub enum PrimaryNameByInput {
    /// A chain of the mainnet namespace.
    ChainName(ChainName),
    /// An ENSIP-11 coin type (60, `0x80000000 | chainId`, or `0x80000000` for the default).
    CoinType(CoinType),
}

impl PrimaryNameByInput {
    /// The coin type meant.
    pub(crate) fn coin_type(&self) -> i64 {
        match self {
            Self::ChainName(chain) => chain.coin_type(),
            Self::CoinType(CoinType(coin)) => *coin,
        }
    }
}

/// Which primary names.
#[derive(Debug, OneofObject)]
pub enum PrimaryNamesWhereInput {
    /// Chains of the mainnet namespace.
    ChainNames(Vec<ChainName>),
    /// ENSIP-11 coin types.
    CoinTypes(Vec<CoinType>),
}

impl PrimaryNamesWhereInput {
    /// The coin types meant, in order.
    pub(crate) fn coin_types(&self) -> Vec<i64> {
        match self {
            Self::ChainNames(chains) => chains.iter().map(|c| c.coin_type()).collect(),
            Self::CoinTypes(coins) => coins.iter().map(|c| c.0).collect(),
        }
    }
}

/// One primary name.
#[derive(Debug)]
pub struct PrimaryNameRecord {
    coin_type: i64,
    name: Option<String>,
}

#[Object]
impl PrimaryNameRecord {
    /// The chain, when the coin type is one of the mainnet namespace's.
    async fn chain_name(&self) -> Option<ChainName> {
        ChainName::of_coin_type(self.coin_type)
    }

    /// The coin type asked for.
    async fn coin_type(&self) -> CoinType {
        CoinType(self.coin_type)
    }

    /// The primary name; null when none is set, or the one set is not a normalized name.
    async fn name(&self) -> Option<CanonicalName> {
        let name = self.name.as_ref()?;
        crate::name::validate_name(name)
            .ok()
            .map(|()| CanonicalName { interpreted: InterpretedName(name.clone()) })
    }
}

/// The reverse records of an account, as indexed.
#[derive(Debug)]
pub struct ReverseRecords {
    /// Lowercase `0x` address.
    pub account: String,
}

#[Object]
impl ReverseRecords {
    /// The primary name for one chain or coin type.
    async fn primary_name(
        &self,
        ctx: &Context<'_>,
        by: PrimaryNameByInput,
    ) -> Result<PrimaryNameRecord, Error> {
        let coin_type = by.coin_type();
        let registrars = registrars(ctx).await?;
        let name = primary_name(ctx, &registrars, &self.account, coin_type).await?;
        Ok(PrimaryNameRecord { coin_type, name })
    }

    /// The primary names for several chains or coin types, in the order asked.
    async fn primary_names(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: PrimaryNamesWhereInput,
    ) -> Result<Vec<PrimaryNameRecord>, Error> {
        let coin_types = filter.coin_types();
        if coin_types.len() > MAX_COIN_TYPES {
            return Err(coded(
                code::INVALID_ARGUMENT,
                format!("ask for at most {MAX_COIN_TYPES} coin types at once"),
            ));
        }
        let registrars = registrars(ctx).await?;
        let names = futures::future::try_join_all(
            coin_types.iter().map(|coin| primary_name(ctx, &registrars, &self.account, *coin)),
        )
        .await?;
        Ok(coin_types
            .into_iter()
            .zip(names)
            .map(|(coin_type, name)| PrimaryNameRecord { coin_type, name })
            .collect())
    }
}

/// The reverse registrars by coin type (a handful of rows).
async fn registrars(ctx: &Context<'_>) -> Result<HashMap<i64, reverse_registrar::Model>, Error> {
    let db = ctx.data::<DatabaseConnection>()?;
    Ok(reverse_registrar::Entity::find()
        .all(db)
        .await
        .map_err(internal)?
        .into_iter()
        .map(|r| (r.coin_type, r))
        .collect())
}

/// The name `coin_type`'s registrar set for `account`, if any.
async fn registrar_name(
    ctx: &Context<'_>,
    registrars: &HashMap<i64, reverse_registrar::Model>,
    account: &str,
    coin_type: i64,
) -> Result<Option<String>, Error> {
    let Some(registrar) = registrars.get(&coin_type) else { return Ok(None) };
    let label = if coin_type == DEFAULT_COIN_TYPE {
        "default".to_owned()
    } else {
        format!("{coin_type:x}")
    };
    let node =
        alloy::ens::namehash(&format!("{}.{label}.reverse", account.trim_start_matches("0x")));
    let (Ok(chain), Ok(address)) =
        (u64::try_from(registrar.chain_id), <[u8; 20]>::try_from(registrar.address.as_bytes()))
    else {
        return Ok(None);
    };
    let key = ResolverRecordKey::new(chain, &address, &node.0);
    let record = load_row(ctx.data::<DataLoader<RecordLoader>>()?, key).await?;
    Ok(record.and_then(|r| r.name).filter(|n| !n.is_empty()))
}

/// ENSIP-19 primary name of `account` for `coin_type`.
async fn primary_name(
    ctx: &Context<'_>,
    registrars: &HashMap<i64, reverse_registrar::Model>,
    account: &str,
    coin_type: i64,
) -> Result<Option<String>, Error> {
    if coin_type == ETH_COIN_TYPE {
        // `addr.reverse` of the namespace's root chain, whatever its id (recorded with the
        // namespace); mainnet when no namespace was recorded.
        let root = registrars
            .get(&ETH_COIN_TYPE)
            .or_else(|| registrars.get(&DEFAULT_COIN_TYPE))
            .map_or(1, |r| r.chain_id);
        let loader = ctx.data::<DataLoader<PrimaryNameLoader>>()?;
        return loader
            .load_one((root, account.to_owned()))
            .await
            .map_err(crate::loaders::loader_error);
    }
    if let Some(name) = registrar_name(ctx, registrars, account, coin_type).await? {
        return Ok(Some(name));
    }
    // An EVM chain without a name of its own falls back to the default registrar's.
    if coin_type & EVM_BIT != 0 && coin_type != DEFAULT_COIN_TYPE {
        return registrar_name(ctx, registrars, account, DEFAULT_COIN_TYPE).await;
    }
    Ok(None)
}
