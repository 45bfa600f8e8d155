//! [`EnsEvent`]: every ENS event the handlers understand, decoded and typed, with the
//! coordinates of the log that carried it ([`EventMeta`]).

use std::sync::Arc;

use alloy::primitives::{Address, B256, Bytes, LogData, U256};

use crate::ChainId;

/// Where an event came from. Ordering of events is `(block_number, log_index)`: the log index
/// is unique within a block, so it also orders transactions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventMeta {
    /// Chain id.
    pub chain_id: ChainId,
    /// Block number.
    pub block_number: u64,
    /// Block hash.
    pub block_hash: B256,
    /// Block timestamp, seconds.
    pub timestamp: u64,
    /// Transaction hash.
    pub tx_hash: B256,
    /// Index of the transaction in the block.
    pub tx_index: u64,
    /// Index of the log in the block.
    pub log_index: u64,
    /// Contract that emitted the log.
    pub address: Address,
    /// Sender of the transaction (it also names the label of an `addr.reverse` child
    /// claimed on the sender's behalf).
    pub tx_from: Address,
    /// Recipient of the transaction; none for a contract creation.
    pub tx_to: Option<Address>,
    /// The log as emitted (topics and data), kept for the event history. Shared by the
    /// events one log decodes into.
    pub log: Arc<LogData>,
}

/// Which registry emitted a registry event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegistrySource {
    /// The current registry (`ENSRegistryWithFallback` on mainnet).
    Current,
    /// The pre-2020 registry: its events are ignored for nodes already in the current one.
    Old,
    /// A 3DNS token, a registry of its own (`IndexContext::three_dns`).
    ThreeDns,
}

/// A decoded ENS event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnsEvent {
    /// Registry `NewOwner`: a subnode `label` of `parent` was (re)assigned.
    NewOwner {
        /// Emitting registry.
        source: RegistrySource,
        /// Parent node.
        parent: B256,
        /// labelhash of the new label.
        label: B256,
        /// New owner.
        owner: Address,
    },
    /// Registry `Transfer`.
    RegistryTransfer {
        /// Emitting registry.
        source: RegistrySource,
        /// Node.
        node: B256,
        /// New owner.
        owner: Address,
    },
    /// Registry `NewResolver`.
    NewResolver {
        /// Emitting registry.
        source: RegistrySource,
        /// Node.
        node: B256,
        /// New resolver (zero clears it).
        resolver: Address,
    },
    /// Registry `NewTTL`.
    NewTtl {
        /// Emitting registry.
        source: RegistrySource,
        /// Node.
        node: B256,
        /// TTL, seconds.
        ttl: u64,
    },
    /// Base registrar `NameRegistered`.
    NameRegistered {
        /// Token id (= labelhash).
        token_id: U256,
        /// Registrant.
        owner: Address,
        /// Expiry, seconds.
        expires: U256,
    },
    /// ENSIP-19 reverse registrar `NameForAddrChanged`: `addr`'s primary name for the coin
    /// type the registrar serves.
    NameForAddrChanged {
        /// The address.
        addr: Address,
        /// Its primary name (empty clears it).
        name: String,
    },
    /// 3DNS `RegistrationCreated`: `node` registered to `registrant` until `expiry`.
    ThreeDnsRegistered {
        /// Node.
        node: B256,
        /// The DNS-encoded name (every label in plaintext).
        fqdn: Bytes,
        /// Registrant.
        registrant: Address,
        /// Expiry, seconds.
        expiry: u64,
    },
    /// 3DNS `RegistrationExtended`.
    ThreeDnsExtended {
        /// Node.
        node: B256,
        /// New expiry, seconds.
        expiry: u64,
    },
    /// Base registrar `NameRenewed`.
    NameRenewed {
        /// Token id (= labelhash).
        token_id: U256,
        /// New expiry, seconds.
        expires: U256,
    },
    /// Base registrar ERC-721 `Transfer`.
    TokenTransfer {
        /// Previous owner (zero on mint).
        from: Address,
        /// New owner (zero on burn).
        to: Address,
        /// Token id (= labelhash).
        token_id: U256,
    },
    /// Any controller's `NameRegistered`: carries the plaintext label and the price.
    ControllerRegistered {
        /// Plaintext label as sent to the controller.
        name: String,
        /// labelhash the contract computed.
        label: B256,
        /// Registrant.
        owner: Address,
        /// Base cost (or total cost for the legacy controller).
        base_cost: Option<U256>,
        /// Premium, where the variant reports it.
        premium: Option<U256>,
        /// Expiry.
        expires: U256,
        /// Referrer, where the variant reports it.
        referrer: Option<B256>,
    },
    /// Any controller's `NameRenewed`.
    ControllerRenewed {
        /// Plaintext label.
        name: String,
        /// labelhash.
        label: B256,
        /// Cost, where the variant reports it.
        cost: Option<U256>,
        /// Referrer, where the variant reports it.
        referrer: Option<B256>,
    },
    /// Resolver `AddrChanged` (coin type 60).
    AddrChanged {
        /// Node.
        node: B256,
        /// New address.
        addr: Address,
    },
    /// Resolver `AddressChanged` (ENSIP-9 multicoin).
    AddressChanged {
        /// Node.
        node: B256,
        /// Coin type.
        coin_type: U256,
        /// Address bytes (empty clears the record).
        address: Bytes,
    },
    /// Resolver `TextChanged`, either form.
    TextChanged {
        /// Node.
        node: B256,
        /// Key.
        key: String,
        /// Value; for the legacy form the decoder reads it from the chain, and it stays
        /// `None` when the node cannot serve that historical state.
        value: Option<String>,
    },
    /// Resolver `ContenthashChanged`.
    ContenthashChanged {
        /// Node.
        node: B256,
        /// Raw contenthash.
        hash: Bytes,
    },
    /// Resolver `NameChanged` (reverse records).
    NameChanged {
        /// Node.
        node: B256,
        /// Name.
        name: String,
    },
    /// Resolver `PubkeyChanged`.
    PubkeyChanged {
        /// Node.
        node: B256,
        /// x.
        x: B256,
        /// y.
        y: B256,
    },
    /// Resolver `VersionChanged`: clears every record of the node on that resolver.
    VersionChanged {
        /// Node.
        node: B256,
        /// New version.
        version: u64,
    },
    /// NameWrapper `NameWrapped`.
    NameWrapped {
        /// Node.
        node: B256,
        /// DNS-encoded name.
        name: Bytes,
        /// Owner of the wrapped token.
        owner: Address,
        /// Fuses.
        fuses: u32,
        /// Expiry (0 = never).
        expiry: u64,
    },
    /// NameWrapper `NameUnwrapped`.
    NameUnwrapped {
        /// Node.
        node: B256,
        /// New registry owner.
        owner: Address,
    },
    /// NameWrapper `FusesSet`.
    FusesSet {
        /// Node.
        node: B256,
        /// Fuses.
        fuses: u32,
    },
    /// NameWrapper `ExpiryExtended`.
    ExpiryExtended {
        /// Node.
        node: B256,
        /// New expiry.
        expiry: u64,
    },
    /// NameWrapper `TransferSingle` / `TransferBatch`, one event per token.
    WrapperTransfer {
        /// Previous owner.
        from: Address,
        /// New owner.
        to: Address,
        /// Token id (= node).
        id: U256,
    },
}

impl EnsEvent {
    /// Stable event name for metrics labels and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NewOwner { .. } => "NewOwner",
            Self::RegistryTransfer { .. } => "Transfer",
            Self::NewResolver { .. } => "NewResolver",
            Self::NewTtl { .. } => "NewTTL",
            Self::NameRegistered { .. } => "NameRegistered",
            Self::NameRenewed { .. } => "NameRenewed",
            Self::NameForAddrChanged { .. } => "NameForAddrChanged",
            Self::ThreeDnsRegistered { .. } => "RegistrationCreated",
            Self::ThreeDnsExtended { .. } => "RegistrationExtended",
            Self::TokenTransfer { .. } => "TokenTransfer",
            Self::ControllerRegistered { .. } => "ControllerNameRegistered",
            Self::ControllerRenewed { .. } => "ControllerNameRenewed",
            Self::AddrChanged { .. } => "AddrChanged",
            Self::AddressChanged { .. } => "AddressChanged",
            Self::TextChanged { .. } => "TextChanged",
            Self::ContenthashChanged { .. } => "ContenthashChanged",
            Self::NameChanged { .. } => "NameChanged",
            Self::PubkeyChanged { .. } => "PubkeyChanged",
            Self::VersionChanged { .. } => "VersionChanged",
            Self::NameWrapped { .. } => "NameWrapped",
            Self::NameUnwrapped { .. } => "NameUnwrapped",
            Self::FusesSet { .. } => "FusesSet",
            Self::ExpiryExtended { .. } => "ExpiryExtended",
            Self::WrapperTransfer { .. } => "WrapperTransfer",
        }
    }
}

/// An event with its coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedEvent {
    /// Where it came from.
    pub meta: EventMeta,
    /// What it says.
    pub event: EnsEvent,
}
