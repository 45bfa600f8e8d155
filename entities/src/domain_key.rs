//! [`DomainKey`]: a domain's identity as the database stores it.
//!
//! The Omnigraph names an ENSv1 domain `${chainId}-${registry}-${node}`: 110 characters of
//! decimal and hex. Stored as text, that id was the primary key, the parent reference and the
//! tie-breaker of every listing index, so each domain carried it about thirty times (the
//! domain rows and their indexes were over half of the database). The key holds the same
//! three facts in 56 raw bytes instead: the chain id (4 bytes, big-endian), the registry
//! address (20) and the node (32). Byte order is (chain, registry, node) order, so the domains
//! of one registry are one key range. GraphQL, the dump and the journal only ever see the
//! Omnigraph text ([`std::fmt::Display`] and [`std::str::FromStr`]; serde uses the text too,
//! so journal entries written before the key existed read back unchanged).

use std::{fmt, str::FromStr};

use sea_orm::entity::prelude::*;

/// Bytes of a key: chain id, registry address, node.
pub const DOMAIN_KEY_BYTES: usize = CHAIN_BYTES + ADDRESS_BYTES + NODE_BYTES;
const CHAIN_BYTES: usize = 4;
const ADDRESS_BYTES: usize = 20;
const NODE_BYTES: usize = 32;

/// A domain's `(chain, registry, node)` in [`DOMAIN_KEY_BYTES`] raw bytes.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, DeriveValueType)]
pub struct DomainKey(Vec<u8>);

/// A text that is not an Omnigraph domain id, or a chain id the key cannot hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidDomainId(pub String);

impl fmt::Display for InvalidDomainId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a domain id `${{chainId}}-${{registry}}-${{node}}`: {}", self.0)
    }
}

impl std::error::Error for InvalidDomainId {}

impl DomainKey {
    /// The key of `node` in `registry` on `chain_id`. Chain ids above `u32::MAX` are refused
    /// when the configuration is loaded, so they never reach here.
    pub fn new(chain_id: u64, registry: &[u8; ADDRESS_BYTES], node: &[u8; NODE_BYTES]) -> Self {
        let chain = u32::try_from(chain_id).expect("chain ids are checked to fit 32 bits");
        let mut bytes = Vec::with_capacity(DOMAIN_KEY_BYTES);
        bytes.extend_from_slice(&chain.to_be_bytes());
        bytes.extend_from_slice(registry);
        bytes.extend_from_slice(node);
        Self(bytes)
    }

    /// The key whose raw bytes are `bytes` (the first bytes of a key that embeds a domain's).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Self {
        Self(bytes.to_vec())
    }

    /// Whether `chain_id` fits a key.
    pub fn holds_chain(chain_id: u64) -> bool {
        u32::try_from(chain_id).is_ok()
    }

    /// The raw bytes, as stored.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The chain id.
    pub fn chain_id(&self) -> u64 {
        self.0
            .get(..CHAIN_BYTES)
            .map_or(0, |b| u64::from(u32::from_be_bytes(b.try_into().unwrap_or_default())))
    }

    /// The registry address, raw.
    pub fn registry(&self) -> &[u8] {
        self.0.get(CHAIN_BYTES..CHAIN_BYTES + ADDRESS_BYTES).unwrap_or_default()
    }

    /// The node, raw.
    pub fn node(&self) -> &[u8] {
        self.0.get(CHAIN_BYTES + ADDRESS_BYTES..).unwrap_or_default()
    }

    /// The node as lowercase `0x` hex.
    pub fn node_hex(&self) -> String {
        format!("0x{}", hex::encode(self.node()))
    }

    /// The key of another node in the same chain and registry.
    pub fn with_node(&self, node: &[u8; NODE_BYTES]) -> Self {
        let mut bytes = self.0.clone();
        bytes.truncate(CHAIN_BYTES + ADDRESS_BYTES);
        bytes.extend_from_slice(node);
        Self(bytes)
    }
}

/// Primary keys must convert from a `u64` (for auto-increment ids); a key never comes from one.
impl sea_orm::TryFromU64 for DomainKey {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("DomainKey"))
    }
}

impl fmt::Display for DomainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-0x{}-0x{}",
            self.chain_id(),
            hex::encode(self.registry()),
            hex::encode(self.node())
        )
    }
}

impl fmt::Debug for DomainKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `0x` + exactly `N` bytes of hex (either case).
fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.strip_prefix("0x")?;
    let mut out = [0; N];
    hex::decode_to_slice(digits, &mut out).ok()?;
    Some(out)
}

impl FromStr for DomainKey {
    type Err = InvalidDomainId;

    /// Parses `${chainId}-${registry}-${node}` (hex in either case).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidDomainId(text.chars().take(200).collect());
        let mut parts = text.split('-');
        let (Some(chain), Some(registry), Some(node), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid());
        };
        // Canonical decimal only: no sign, no leading zeros.
        if chain.is_empty()
            || !chain.bytes().all(|b| b.is_ascii_digit())
            || (chain.len() > 1 && chain.starts_with('0'))
        {
            return Err(invalid());
        }
        let chain: u64 = chain.parse().map_err(|_| invalid())?;
        if !Self::holds_chain(chain) {
            return Err(invalid());
        }
        let registry = hex_bytes::<ADDRESS_BYTES>(registry).ok_or_else(invalid)?;
        let node = hex_bytes::<NODE_BYTES>(node).ok_or_else(invalid)?;
        Ok(Self::new(chain, &registry, &node))
    }
}

impl serde::Serialize for DomainKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for DomainKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "1-0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e-\
                      0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae";

    #[test]
    fn round_trips_the_omnigraph_id() {
        let key: DomainKey = ID.parse().expect("valid id");
        assert_eq!(key.as_bytes().len(), DOMAIN_KEY_BYTES);
        assert_eq!(key.to_string(), ID);
        assert_eq!(key.chain_id(), 1);
        assert_eq!(key.node_hex(), ID.rsplit('-').next().expect("node"));
        let upper: DomainKey = ID.replace("0x93cd", "0x93CD").parse().expect("either case");
        assert_eq!(upper, key);
        let json = serde_json::to_string(&key).expect("serializes");
        assert_eq!(json, format!("\"{ID}\""));
        assert_eq!(serde_json::from_str::<DomainKey>(&json).expect("deserializes"), key);
    }

    #[test]
    fn refuses_what_is_not_an_id() {
        for bad in [
            "",
            "1",
            "1-0x00",
            "01-0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e-0x00",
            "-1-0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e-0x00",
            &format!("4294967296{}", &ID[1..]),
            &format!("{ID}-0"),
            &ID.replace("0x93", "93"),
            &ID.replace("0x93", "0xzz"),
        ] {
            assert!(bad.parse::<DomainKey>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn orders_by_chain_then_registry_then_node() {
        let key = |chain, registry: u8, node: u8| {
            DomainKey::new(chain, &[registry; ADDRESS_BYTES], &[node; NODE_BYTES])
        };
        assert!(key(1, 9, 9) < key(2, 0, 0));
        assert!(key(1, 1, 9) < key(1, 2, 0));
        assert!(key(1, 1, 1) < key(1, 1, 2));
        assert_eq!(key(1, 1, 1).with_node(&[2; NODE_BYTES]), key(1, 1, 2));
    }
}
