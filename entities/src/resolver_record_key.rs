//! [`ResolverRecordKey`]: the identity of the records one resolver holds for one node, as the
//! database stores it.
//!
//! The Omnigraph names them `${chainId}-${resolver}-${node}`. Stored as text, that id was the
//! primary key of `resolver_records` (and, on SQLite, a second time in the key's own index),
//! every address and text record repeated it, and the chain, resolver and node were stored
//! again as columns of their own: about 300 bytes per record set at 5M events. The key holds
//! the three facts in 56 raw bytes instead, in (chain, resolver, node) order, so one
//! resolver's record sets are one key range and the columns are read from the key.

/// Bytes of a key: chain id, resolver address, node.
pub const RESOLVER_RECORD_KEY_BYTES: usize = crate::contract_node_key::CONTRACT_NODE_KEY_BYTES;

crate::contract_node_key!(
    /// The records of `(chain, resolver, node)` in [`RESOLVER_RECORD_KEY_BYTES`] raw bytes.
    ResolverRecordKey,
    InvalidResolverRecordsId,
    contract: resolver,
    what: "resolver records"
);

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "8453-0xc6d566a56a1aff6508b41f6c90ff131615583bcd-\
                      0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae";

    #[test]
    fn round_trips_the_omnigraph_id() {
        let key: ResolverRecordKey = ID.parse().expect("valid id");
        assert_eq!(key.as_bytes().len(), RESOLVER_RECORD_KEY_BYTES);
        assert_eq!(key.to_string(), ID);
        assert_eq!(key.chain_id(), 8453);
        assert_eq!(hex::encode(key.resolver()), "c6d566a56a1aff6508b41f6c90ff131615583bcd");
        assert_eq!(key.node_hex(), ID.rsplit('-').next().expect("node"));
        let json = serde_json::to_string(&key).expect("serializes");
        assert_eq!(json, format!("\"{ID}\""));
        assert_eq!(serde_json::from_str::<ResolverRecordKey>(&json).expect("deserializes"), key);
        let error = "1-0x00-0x00".parse::<ResolverRecordKey>().expect_err("short");
        assert!(error.to_string().contains("${resolver}"), "{error}");
    }

    #[test]
    fn one_resolvers_records_are_one_range() {
        let key: ResolverRecordKey = ID.parse().expect("valid id");
        let resolver: [u8; 20] = key.resolver().try_into().expect("20 bytes");
        let (first, last) = ResolverRecordKey::range_of(8453, &resolver);
        assert!(first <= key && key <= last);
        let next_resolver = {
            let mut r = resolver;
            r[19] += 1;
            r
        };
        assert!(last < ResolverRecordKey::new(8453, &next_resolver, &[0; 32]));
        assert!(last < ResolverRecordKey::new(8454, &resolver, &[0; 32]));
    }
}
