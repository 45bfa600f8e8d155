//! [`ContractRole`]: what a configured contract address is, which decides how its logs decode.

use serde::Deserialize;

/// The role of a configured contract. Resolver events are not a role: they are read from every
/// address on the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractRole {
    /// The current ENS registry.
    Registry,
    /// The pre-2020 registry, read only for nodes not yet in the current one.
    RegistryOld,
    /// The `.eth` base registrar.
    BaseRegistrar,
    /// A `.eth` registrar controller (any generation).
    Controller,
    /// The NameWrapper.
    NameWrapper,
    /// A reverse registrar that emits `NameForAddrChanged` (mainnet's standalone default
    /// reverse registrar, the ENSIP-19 L2 reverse registrars): primary names per coin type.
    ReverseRegistrar,
    /// A 3DNS token (Optimism, Base): a registry of its own (its `NewOwner` and `Transfer`)
    /// whose domains' ids name the token, with registrations (`RegistrationCreated`,
    /// `RegistrationExtended`). Its names are not in the canonical namegraph.
    ThreeDnsToken,
}

impl ContractRole {
    /// Stable name for metrics labels and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registry => "registry",
            Self::RegistryOld => "registry_old",
            Self::BaseRegistrar => "base_registrar",
            Self::Controller => "controller",
            Self::NameWrapper => "name_wrapper",
            Self::ReverseRegistrar => "reverse_registrar",
            Self::ThreeDnsToken => "three_dns_token",
        }
    }

    /// Whether the contract's events name domains whose ids need the chain's registry (a
    /// 3DNS token is its own registry).
    pub fn names_domains(self) -> bool {
        !matches!(self, Self::ReverseRegistrar | Self::ThreeDnsToken)
    }
}
