//! [`BridgedDeployment`]: the L2 side of a bridged namespace on its own anvil, shaped like
//! Basenames: a plain ENS registry whose root holds `eth` and `<label>.eth` (a shadow of the
//! L1 tree), and a base registrar managing `<label>.eth`, with the deployer as its
//! controller. Names registered through it are `*.base.eth` on the L2; they join the
//! canonical namegraph while the L1 name has the bridge's resolver.

use alloy::{
    ens::namehash,
    primitives::{Address, B256, U256, keccak256},
    sol_types::SolValue,
};

use super::{
    DevnetError, Driver,
    contracts::{IBaseRegistrar, IRegistry},
    install,
};
use ensemble::{
    config::{BridgeConfig, ChainConfig, ContractConfig, NamegraphRole},
    ens::role::ContractRole,
};

/// Addresses of the L2 contracts.
#[derive(Clone, Debug)]
pub struct BridgedDeployment {
    /// The L2 registry (`ENSRegistry`).
    pub registry: Address,
    /// The base registrar over `name`.
    pub base_registrar: Address,
    /// The bridged name (`base.eth`).
    pub name: String,
    /// Deployer: owner of the root and `eth`, and the registrar's controller.
    pub deployer: Address,
}

impl BridgedDeployment {
    /// Deploys and wires the registry and registrar for `label.eth`; mines as it goes.
    pub async fn deploy(driver: &mut Driver, label: &str) -> Result<Self, DevnetError> {
        use alloy::providers::Provider;
        let dir = install::ensure_installed()?;
        let deployer = driver.accounts[0];
        let name = format!("{label}.eth");
        let mut deploy = async |name: &str, args: Vec<u8>| {
            let mut code = install::bytecode(&dir, "ethregistrar", name)?;
            code.extend(args);
            let nonce = driver
                .provider()
                .get_transaction_count(deployer)
                .await
                .map_err(DevnetError::rpc("eth_getTransactionCount"))?;
            driver.send(deployer, None, code, U256::ZERO, format!("deploy {name}")).await?;
            driver.mine().await?;
            Ok::<Address, DevnetError>(deployer.create(nonce))
        };
        let registry = deploy("ENSRegistry", vec![]).await?;
        let base_registrar =
            deploy("BaseRegistrarImplementation", (registry, namehash(&name)).abi_encode_params())
                .await?;
        let subnode = |node: B256, label: &str, owner: Address| IRegistry::setSubnodeOwnerCall {
            node,
            label: keccak256(label),
            owner,
        };
        driver.call_tx(deployer, registry, subnode(B256::ZERO, "eth", deployer), "eth").await?;
        driver.mine().await?;
        driver
            .call_tx(deployer, registry, subnode(namehash("eth"), label, base_registrar), "name")
            .await?;
        driver
            .call_tx(
                deployer,
                base_registrar,
                IBaseRegistrar::addControllerCall { controller: deployer },
                "controller",
            )
            .await?;
        driver.mine().await?;
        Ok(Self { registry, base_registrar, name, deployer })
    }

    /// Registers `labels` under the bridged name for `owner` (one block).
    pub async fn register(
        &self,
        driver: &mut Driver,
        labels: &[&str],
        owner: Address,
    ) -> Result<u64, DevnetError> {
        for label in labels {
            let call = IBaseRegistrar::registerCall {
                id: U256::from_be_bytes(keccak256(label).0),
                owner,
                duration: U256::from(365u64 * 86_400),
            };
            driver
                .call_tx(self.deployer, self.base_registrar, call, format!("register {label}"))
                .await?;
        }
        driver.mine().await
    }

    /// The chain configuration that indexes this deployment as bridged from `origin_chain`'s
    /// `origin_registry` while the name there has `resolver`.
    pub fn chain_config(
        &self,
        chain_id: u64,
        rpc_url: &str,
        bridge: BridgeConfig,
        extra: Vec<ContractConfig>,
    ) -> ChainConfig {
        let mut contracts = vec![
            ContractConfig::new(ContractRole::Registry, self.registry),
            ContractConfig::new(ContractRole::BaseRegistrar, self.base_registrar),
        ];
        contracts.extend(extra);
        ChainConfig {
            managed_name: self.name.clone(),
            namegraph: NamegraphRole::Bridged,
            bridge: Some(bridge),
            ..ChainConfig::local(
                chain_id.into(),
                &format!("bridged {}", self.name),
                rpc_url,
                contracts,
            )
        }
    }
}
