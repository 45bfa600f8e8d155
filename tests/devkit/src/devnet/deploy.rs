//! [`Deployment`]: the ENS contracts deployed on a fresh anvil, in a fixed order from
//! `accounts[0]`, so their addresses are the same on every run (`config/devnet.toml` lists
//! them).

use alloy::{
    ens::namehash,
    primitives::{Address, B256, I256, U256, keccak256},
    sol_types::SolValue,
};

use super::{
    DevnetError, Driver,
    contracts::{IBaseRegistrar, IRegistry},
    install,
};
use ensemble::{
    config::{ChainConfig, ContractConfig},
    ens::role::ContractRole,
};

/// Minimum age of a registration commitment, seconds (the controller's constructor argument).
pub const MIN_COMMITMENT_AGE: u64 = 60;
/// ETH price the dummy oracle reports (USD with 8 decimals): 2 000 USD.
pub const ETH_PRICE_USD_8DEC: i64 = 200_000_000_000;

/// Addresses of the deployed contracts.
#[derive(Clone, Copy, Debug)]
pub struct Deployment {
    /// The pre-fallback registry (`ENSRegistry`), playing mainnet's old registry.
    pub registry_old: Address,
    /// `ENSRegistryWithFallback` over the old one.
    pub registry: Address,
    /// `PublicResolver` of `@ensdomains/resolver` 0.3.1.
    pub resolver: Address,
    /// `PublicResolver` of `@ensdomains/ethregistrar` 2.0.5.
    pub legacy_resolver: Address,
    /// `.eth` `BaseRegistrarImplementation`.
    pub base_registrar: Address,
    /// `ETHRegistrarController` (2020).
    pub controller: Address,
    /// `ReverseRegistrar` owning `addr.reverse`.
    pub reverse_registrar: Address,
    /// Deployer and owner of the root.
    pub deployer: Address,
}

impl Deployment {
    /// Deploys and wires everything; mines as it goes.
    pub async fn deploy(driver: &mut Driver) -> Result<Self, DevnetError> {
        let dir = install::ensure_installed()?;
        let deployer = driver.accounts[0];
        let deploy = async |driver: &mut Driver, package: &str, name: &str, args: Vec<u8>| {
            let mut code = install::bytecode(&dir, package, name)?;
            code.extend(args);
            let nonce = driver.provider().get_transaction_count(deployer).await.ok();
            driver.send(deployer, None, code, U256::ZERO, format!("deploy {name}")).await?;
            driver.mine().await?;
            let nonce = nonce.ok_or_else(|| DevnetError::Anvil("no nonce".into()))?;
            Ok::<Address, DevnetError>(deployer.create(nonce))
        };
        use alloy::providers::Provider;
        let registry_old = deploy(driver, "ethregistrar", "ENSRegistry", vec![]).await?;
        let registry =
            deploy(driver, "ethregistrar", "ENSRegistryWithFallback", registry_old.abi_encode())
                .await?;
        let resolver = deploy(driver, "resolver", "PublicResolver", registry.abi_encode()).await?;
        let legacy_resolver =
            deploy(driver, "ethregistrar", "PublicResolver", registry.abi_encode()).await?;
        let base_registrar = deploy(
            driver,
            "ethregistrar",
            "BaseRegistrarImplementation",
            (registry, namehash("eth")).abi_encode_params(),
        )
        .await?;
        let oracle = deploy(
            driver,
            "ethregistrar",
            "DummyOracle",
            I256::try_from(ETH_PRICE_USD_8DEC).unwrap_or_default().abi_encode(),
        )
        .await?;
        // Rent in attodollars per second by label length (1, 2, 3, 4, 5+ characters).
        let rent: Vec<U256> = [0u64, 0, 20_294_266_869_609, 5_073_566_717_402, 158_548_959_918]
            .into_iter()
            .map(U256::from)
            .collect();
        let prices =
            deploy(driver, "ethregistrar", "StablePriceOracle", (oracle, rent).abi_encode_params())
                .await?;
        let controller = deploy(
            driver,
            "ethregistrar",
            "ETHRegistrarController",
            (base_registrar, prices, U256::from(MIN_COMMITMENT_AGE), U256::from(86_400u64))
                .abi_encode_params(),
        )
        .await?;
        let reverse_registrar = deploy(
            driver,
            "resolver",
            "ReverseRegistrar",
            (registry, resolver).abi_encode_params(),
        )
        .await?;

        let eth = keccak256("eth");
        driver
            .call_tx(
                deployer,
                registry,
                IRegistry::setSubnodeOwnerCall {
                    node: B256::ZERO,
                    label: eth,
                    owner: base_registrar,
                },
                "eth TLD",
            )
            .await?;
        driver
            .call_tx(
                deployer,
                base_registrar,
                IBaseRegistrar::addControllerCall { controller },
                "add controller",
            )
            .await?;
        driver
            .call_tx(
                deployer,
                registry,
                IRegistry::setSubnodeOwnerCall {
                    node: B256::ZERO,
                    label: keccak256("reverse"),
                    owner: deployer,
                },
                "reverse TLD",
            )
            .await?;
        driver.mine().await?;
        driver
            .call_tx(
                deployer,
                registry,
                IRegistry::setSubnodeOwnerCall {
                    node: namehash("reverse"),
                    label: keccak256("addr"),
                    owner: reverse_registrar,
                },
                "addr.reverse",
            )
            .await?;
        driver.mine().await?;
        Ok(Self {
            registry_old,
            registry,
            resolver,
            legacy_resolver,
            base_registrar,
            controller,
            reverse_registrar,
            deployer,
        })
    }

    /// Registers `.eth` names through the controller, commit and reveal (waits out the
    /// commitment age on the chain's clock), so the controller's events carry the labels.
    pub async fn register_names(
        &self,
        driver: &mut Driver,
        labels: &[&str],
        owner: Address,
    ) -> Result<u64, DevnetError> {
        use super::contracts::IController;
        let secret = |label: &str| keccak256(format!("secret {label}"));
        for label in labels {
            let commitment = driver
                .read(
                    self.controller,
                    IController::makeCommitmentWithConfigCall {
                        name: (*label).to_owned(),
                        owner,
                        secret: secret(label),
                        resolver: Address::ZERO,
                        addr: Address::ZERO,
                    },
                )
                .await?;
            driver
                .call_tx(
                    self.deployer,
                    self.controller,
                    IController::commitCall { commitment },
                    "commit",
                )
                .await?;
        }
        driver.mine().await?;
        driver.increase_time(MIN_COMMITMENT_AGE + 1).await?;
        for label in labels {
            let call = IController::registerWithConfigCall {
                name: (*label).to_owned(),
                owner,
                duration: U256::from(365u64 * 86_400),
                secret: secret(label),
                resolver: Address::ZERO,
                addr: Address::ZERO,
            };
            driver
                .send(
                    self.deployer,
                    Some(self.controller),
                    alloy::sol_types::SolCall::abi_encode(&call),
                    U256::from(10u128.pow(18)),
                    format!("register {label}"),
                )
                .await?;
        }
        driver.mine().await
    }

    /// The chain configuration that indexes this deployment.
    pub fn chain_config(&self, chain_id: u64, rpc_url: &str) -> ChainConfig {
        let contract = ContractConfig::new;
        let contracts = vec![
            contract(ContractRole::RegistryOld, self.registry_old),
            contract(ContractRole::Registry, self.registry),
            contract(ContractRole::BaseRegistrar, self.base_registrar),
            contract(ContractRole::Controller, self.controller),
        ];
        ChainConfig {
            static_resolvers: vec![self.resolver, self.legacy_resolver],
            ..ChainConfig::local(chain_id.into(), "devnet", rpc_url, contracts)
        }
    }
}
