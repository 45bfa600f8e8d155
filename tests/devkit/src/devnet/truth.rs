//! Ground truth: what the chain itself answers about a name, through `eth_call`.

use alloy::primitives::{Address, B256, Bytes, U256};

use super::{
    DevnetError, Driver, ScenarioName,
    contracts::{IBaseRegistrar, IRegistry, IResolver},
    deploy::Deployment,
};

/// Text keys the scenario sets.
pub const TEXT_KEYS: [&str; 2] = ["url", "avatar"];

/// What the chain says about one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truth {
    /// Effective owner: the registrar token owner for `.eth` 2LDs, else the registry owner.
    pub owner: Address,
    /// Owner of the node in the registry.
    pub registry_owner: Address,
    /// Holder of the registrar token, for `.eth` 2LDs: the registration's registrant.
    pub registrant: Option<Address>,
    /// Resolver in the registry.
    pub resolver: Address,
    /// ETH address record (zero when unset).
    pub addr: Address,
    /// BTC (coin type 0) record bytes.
    pub btc: Bytes,
    /// Text records for [`TEXT_KEYS`] (empty when unset).
    pub texts: Vec<(String, String)>,
    /// Contenthash bytes.
    pub contenthash: Bytes,
    /// Registrar expiry for `.eth` 2LDs.
    pub expiry: Option<U256>,
}

impl Truth {
    /// Asks the chain about `name`.
    pub async fn read(
        driver: &Driver,
        d: &Deployment,
        name: &ScenarioName,
    ) -> Result<Self, DevnetError> {
        let node = name.node();
        let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await?;
        let registry_owner = driver.read(d.registry, IRegistry::ownerCall { node }).await?;
        let (owner, expiry) = match name.eth_label() {
            Some(label) => {
                let token = U256::from_be_bytes(label.0);
                let owner = driver
                    .read(d.base_registrar, IBaseRegistrar::ownerOfCall { tokenId: token })
                    .await?;
                let expiry = driver
                    .read(d.base_registrar, IBaseRegistrar::nameExpiresCall { id: token })
                    .await?;
                (owner, Some(expiry))
            }
            None => (registry_owner, None),
        };
        let mut truth = Self {
            owner,
            registry_owner,
            registrant: expiry.is_some().then_some(owner),
            resolver,
            addr: Address::ZERO,
            btc: Bytes::new(),
            texts: TEXT_KEYS.iter().map(|k| ((*k).to_owned(), String::new())).collect(),
            contenthash: Bytes::new(),
            expiry,
        };
        if resolver.is_zero() {
            return Ok(truth);
        }
        truth.addr = driver.read(resolver, IResolver::addr_0Call { node }).await?;
        truth.btc =
            driver.read(resolver, IResolver::addr_1Call { node, coinType: U256::ZERO }).await?;
        for (key, value) in &mut truth.texts {
            *value = driver.read(resolver, IResolver::textCall { node, key: key.clone() }).await?;
        }
        truth.contenthash = driver.read(resolver, IResolver::contenthashCall { node }).await?;
        Ok(truth)
    }
}

/// The `name` record of `node` on its resolver (a primary name for a reverse node).
pub async fn name_record(
    driver: &Driver,
    d: &Deployment,
    node: B256,
) -> Result<(Address, String), DevnetError> {
    let resolver = driver.read(d.registry, IRegistry::resolverCall { node }).await?;
    let name = driver.read(resolver, IResolver::nameCall { node }).await?;
    Ok((resolver, name))
}
