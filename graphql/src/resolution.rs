//! The resolution port: what the API asks of the service's resolver ([`Resolution`]) and the
//! answers it renders, in GraphQL (`Domain.resolve`, `Account.resolve`) and in the REST API.
//! The service implements the port; the API only validates input and renders.
//!
//! Answers carry how they were reached ([`Answered`]): from the index or by live calls, at
//! which block of which chain, and why a live call was needed; with `trace`, every step.

use futures::future::BoxFuture;
use serde::Serialize;

/// Most coin types one request may ask for.
pub const MAX_COIN_TYPES: usize = 32;
/// Most text keys one request may ask for.
pub const MAX_TEXT_KEYS: usize = 64;
/// Most interface ids one request may ask for.
pub const MAX_INTERFACES: usize = 16;
/// Longest text key accepted, bytes.
pub const MAX_TEXT_KEY_BYTES: usize = 256;

/// Which records to resolve.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordsSelection {
    /// Coin types (ENSIP-9 / ENSIP-11; 60 is ETH).
    pub addresses: Vec<u64>,
    /// Text keys.
    pub texts: Vec<String>,
    /// The contenthash (ENSIP-7).
    pub contenthash: bool,
    /// The `name` record (reverse records are names).
    pub name: bool,
    /// The SECP256k1 public key.
    pub pubkey: bool,
    /// The ABI, for a content type mask.
    pub abi: Option<u64>,
    /// ERC-165 interface implementers, by 4-byte interface id.
    pub interfaces: Vec<[u8; 4]>,
}

impl RecordsSelection {
    /// Checks the selection's size, so one request's live calls stay bounded.
    pub fn check(&self) -> Result<(), ResolutionError> {
        let too_many = |what: &str, max: usize| {
            ResolutionError::new(
                error_code::TOO_MANY_RECORDS,
                format!("ask for at most {max} {what} at once"),
            )
        };
        if self.addresses.len() > MAX_COIN_TYPES {
            return Err(too_many("coin types", MAX_COIN_TYPES));
        }
        if self.texts.len() > MAX_TEXT_KEYS {
            return Err(too_many("text keys", MAX_TEXT_KEYS));
        }
        if self.interfaces.len() > MAX_INTERFACES {
            return Err(too_many("interfaces", MAX_INTERFACES));
        }
        if let Some(key) = self.texts.iter().find(|k| k.len() > MAX_TEXT_KEY_BYTES) {
            let shown: String = key.chars().take(32).collect();
            return Err(ResolutionError::new(
                error_code::INVALID_ARGUMENT,
                format!("text key {shown:?}… is longer than {MAX_TEXT_KEY_BYTES} bytes"),
            ));
        }
        Ok(())
    }
}

/// How a resolution may be answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolveOptions {
    /// Answer from the index where it knows the answer exactly (else by live calls).
    pub accelerate: bool,
    /// Return every step taken.
    pub trace: bool,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        Self { accelerate: true, trace: false }
    }
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, async_graphql::Enum)]
#[serde(rename_all = "lowercase")]
#[graphql(name = "ResolutionSource")]
pub enum Source {
    /// The indexed records.
    Index,
    /// Calls to the resolvers (and CCIP-Read gateways) through the chain's RPC endpoint.
    Live,
}

/// A block of a chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
pub struct BlockRef {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// Block number.
    pub number: u64,
    /// Block hash, `0x` hex.
    pub hash: String,
}

/// How an answer was reached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
pub struct Answered {
    /// Whether the answer came from the index or from live calls.
    pub source: Source,
    /// Whether acceleration (answering from the index) was asked for.
    pub acceleration_requested: bool,
    /// The block the answer holds for (of the chain where the walk began).
    pub block: BlockRef,
    /// Why the index could not answer, when acceleration was asked for and the answer is live.
    pub live_because: Option<String>,
}

/// The resolver a name resolved through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
pub struct ResolverUsed {
    /// Chain of the resolver.
    pub chain_id: u64,
    /// Its address, lowercase `0x` hex.
    pub address: String,
    /// The name it is set on: the resolved name itself, or an ancestor when it is an ENSIP-10
    /// extended (wildcard) resolver.
    pub found_at: String,
    /// Whether it implements ENSIP-10 `resolve(bytes,bytes)`; unknown when the answer came
    /// from the index.
    pub extended: Option<bool>,
}

/// An address record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
#[graphql(name = "ResolvedAddressRecord")]
pub struct AddressRecord {
    /// The coin type.
    pub coin_type: u64,
    /// The address's bytes, `0x` hex; null when unset (an EVM coin type's zero address is
    /// unset).
    pub address: Option<String>,
}

/// A text record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[graphql(name = "ResolvedTextRecord")]
pub struct TextRecord {
    /// The key.
    pub key: String,
    /// The value; null when unset (empty).
    pub value: Option<String>,
}

/// A public key record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[graphql(name = "ResolvedPubkeyRecord")]
pub struct PubkeyRecord {
    /// X coordinate, `0x` hex.
    pub x: String,
    /// Y coordinate, `0x` hex.
    pub y: String,
}

/// An ABI record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
#[graphql(name = "ResolvedAbiRecord")]
pub struct AbiRecord {
    /// The content type found.
    pub content_type: u64,
    /// The data, `0x` hex.
    pub data: String,
}

/// An interface implementer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[graphql(name = "ResolvedInterfaceRecord")]
pub struct InterfaceRecord {
    /// The interface id, `0x` and 8 hex digits.
    pub id: String,
    /// The implementer, lowercase `0x` hex; null when none.
    pub implementer: Option<String>,
}

/// A record that could not be resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[graphql(name = "ResolvedRecordError")]
pub struct RecordError {
    /// Which record (`addresses[60]`, `texts[avatar]`, `contenthash`, …).
    pub record: String,
    /// Stable code ([`error_code`]).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

/// The records of a name, in the order asked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
pub struct ResolvedRecords {
    /// Address records, one per coin type asked.
    pub addresses: Vec<AddressRecord>,
    /// Text records, one per key asked.
    pub texts: Vec<TextRecord>,
    /// The contenthash, `0x` hex; null when unset or not asked.
    pub contenthash: Option<String>,
    /// The `name` record; null when unset or not asked.
    pub name: Option<String>,
    /// The public key; null when unset or not asked.
    pub pubkey: Option<PubkeyRecord>,
    /// The ABI; null when none of the content types asked is set.
    pub abi: Option<AbiRecord>,
    /// Interface implementers, one per id asked.
    pub interfaces: Vec<InterfaceRecord>,
    /// Records whose call failed (their values above are null).
    pub errors: Vec<RecordError>,
}

/// One step of a resolution, for `trace`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
pub struct TraceStep {
    /// What was done (`index.walk`, `call.resolver`, `ccip.gateway`, …).
    pub step: String,
    /// Its details.
    pub detail: String,
}

/// A forward resolution.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
pub struct ForwardResolution {
    /// The name resolved.
    pub name: String,
    /// The resolver used; null when the name has none (its records are then all null).
    pub resolver: Option<ResolverUsed>,
    /// The records asked for.
    pub records: ResolvedRecords,
    /// How the answer was reached.
    pub answered: Answered,
    /// The steps taken, when asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TraceStep>,
}

/// One primary name (ENSIP-19).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, async_graphql::SimpleObject)]
#[serde(rename_all = "camelCase")]
#[graphql(name = "VerifiedPrimaryName")]
pub struct PrimaryName {
    /// The coin type asked for.
    pub coin_type: u64,
    /// The EVM chain of the coin type (1 for 60); null for the default coin type and
    /// non-EVM coins.
    pub chain_id: Option<u64>,
    /// The verified primary name; null when none is set, the one set is not normalized, or
    /// its forward address for the coin type is not the account.
    pub name: Option<String>,
    /// Why a name set in the reverse record is not the primary name, when one was set.
    pub rejected: Option<String>,
    /// How the answer was reached.
    pub answered: Answered,
    /// The steps taken, when asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<TraceStep>,
}

/// Why a resolution failed as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ResolutionError {
    /// Stable code ([`error_code`]).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

impl ResolutionError {
    /// An error with `code`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// Stable codes of resolution errors, whole or per record.
pub mod error_code {
    /// The name is not ENSIP-15 normalized (or is empty, too long or too deep).
    pub const INVALID_NAME: &str = "INVALID_NAME";
    /// An argument is malformed (an address, a coin type, a key).
    pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";
    /// More records were asked for than one request may resolve.
    pub const TOO_MANY_RECORDS: &str = "TOO_MANY_RECORDS";
    /// The chain a resolution needs is not configured, or has no RPC endpoint for a live call.
    pub const CHAIN_UNAVAILABLE: &str = "CHAIN_UNAVAILABLE";
    /// The chain is not indexed yet (no checkpoint).
    pub const NOT_INDEXED: &str = "NOT_INDEXED";
    /// The resolver reverted (with anything but a CCIP-Read request).
    pub const RESOLVER_REVERTED: &str = "RESOLVER_REVERTED";
    /// The resolver answered with data that does not decode as the record's type.
    pub const RESOLVER_BAD_RESPONSE: &str = "RESOLVER_BAD_RESPONSE";
    /// A CCIP-Read gateway failed: unreachable, slow, too large, an error status, or data
    /// the callback rejected.
    pub const GATEWAY_FAILED: &str = "GATEWAY_FAILED";
    /// A CCIP-Read request named another contract than the one called, or asked for more
    /// lookups than allowed.
    pub const CCIP_READ_REFUSED: &str = "CCIP_READ_REFUSED";
    /// The chain's RPC endpoint failed.
    pub const RPC_FAILED: &str = "RPC_FAILED";
    /// The resolution took longer than allowed.
    pub const TIMEOUT: &str = "TIMEOUT";
    /// The database failed.
    pub const INTERNAL: &str = "INTERNAL";
}

/// The service's resolver, as the API sees it.
pub trait Resolution: Send + Sync + std::fmt::Debug {
    /// Resolves `selection` for `name` (interpreted: normalized labels or `[labelhash]`).
    fn forward<'a>(
        &'a self,
        name: &'a str,
        selection: &'a RecordsSelection,
        options: ResolveOptions,
    ) -> BoxFuture<'a, Result<ForwardResolution, ResolutionError>>;

    /// The primary names of `address` for `coin_types`, in the order asked.
    fn primary_names<'a>(
        &'a self,
        address: [u8; 20],
        coin_types: &'a [u64],
        options: ResolveOptions,
    ) -> BoxFuture<'a, Result<Vec<PrimaryName>, ResolutionError>>;
}
