//! [`DomainKey`]: a domain's identity as the database stores it.
//!
//! The Omnigraph names an ENSv1 domain `${chainId}-${registry}-${node}`: 110 characters of
//! decimal and hex. Stored as text, that id was the primary key, the parent reference and the
//! tie-breaker of every listing index, so each domain carried it about thirty times (the
//! domain rows and their indexes were over half of the database). The key holds the same
//! three facts in 56 raw bytes instead: the chain id (4 bytes, big-endian), the registry
//! address (20) and the node (32). Byte order is (chain, registry, node) order, so the domains
//! of one registry are one key range. GraphQL, the dump and the journal only ever see the
//! Omnigraph text ([`std::fmt::Display`] and [`std::str::FromStr`]; serde uses the text too).
//! The key type is shared with resolver records ([`crate::contract_node_key!`]).

/// Bytes of a key: chain id, registry address, node.
pub const DOMAIN_KEY_BYTES: usize = crate::contract_node_key::CONTRACT_NODE_KEY_BYTES;

crate::contract_node_key!(
    /// A domain's `(chain, registry, node)` in [`DOMAIN_KEY_BYTES`] raw bytes.
    DomainKey,
    InvalidDomainId,
    contract: registry,
    what: "domain"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract_node_key::{ADDRESS_BYTES, NODE_BYTES};

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
