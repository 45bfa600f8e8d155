//! [`RegistrationKey`]: a registration's identity as the database stores it.
//!
//! The Omnigraph names a registration `${domainId}-${index}`: 113 characters for a mainnet
//! name. Stored as text, that id was the primary key, and the domain and the index were stored
//! again beside it and indexed together for the listing by domain, so every registration
//! carried its domain's identity three times. The key holds the same two facts in 60 raw
//! bytes instead: the domain's [`DomainKey`] (56) and the index (4, big-endian). Byte order is
//! (domain, index) order, so one domain's registrations are one key range, oldest first, and
//! the primary key alone serves the listing. GraphQL, the dump and the journal only ever see
//! the Omnigraph text ([`std::fmt::Display`] and [`std::str::FromStr`]; serde uses the text
//! too).

use crate::domain_key::{DOMAIN_KEY_BYTES, DomainKey};

/// Bytes of a key: the domain's key, then the index.
pub const REGISTRATION_KEY_BYTES: usize = DOMAIN_KEY_BYTES + crate::indexed_key::INDEX_BYTES;

crate::indexed_key!(
    /// A registration's `(domain, index)` in [`REGISTRATION_KEY_BYTES`] raw bytes.
    RegistrationKey,
    InvalidRegistrationId,
    parent: DomainKey,
    domain_id,
    bytes: REGISTRATION_KEY_BYTES,
    what: "registration"
);

#[cfg(test)]
mod tests {
    use super::*;

    const DOMAIN: &str = "1-0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e-\
                          0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae";

    #[test]
    fn round_trips_the_omnigraph_id() {
        let id = format!("{DOMAIN}-12");
        let key: RegistrationKey = id.parse().expect("valid id");
        assert_eq!(key.as_bytes().len(), REGISTRATION_KEY_BYTES);
        assert_eq!(key.to_string(), id);
        assert_eq!(key.index(), 12);
        assert_eq!(key.domain_id(), DOMAIN.parse::<DomainKey>().expect("domain"));
        let json = serde_json::to_string(&key).expect("serializes");
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<RegistrationKey>(&json).expect("deserializes"), key);
    }

    #[test]
    fn refuses_what_is_not_an_id() {
        for bad in [
            String::new(),
            DOMAIN.to_owned(),
            format!("{DOMAIN}-"),
            format!("{DOMAIN}-01"),
            format!("{DOMAIN}--1"),
            format!("{DOMAIN}-4294967296"),
            format!("{DOMAIN}-1x"),
            "1-0x00-0".to_owned(),
        ] {
            assert!(bad.parse::<RegistrationKey>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn orders_by_domain_then_index() {
        let domain: DomainKey = DOMAIN.parse().expect("domain");
        let other = domain.with_node(&[0xff; 32]);
        let (first, last) = RegistrationKey::range_of(&domain);
        let key = |d: &DomainKey, i| RegistrationKey::new(d, i);
        assert!(key(&domain, 2) < key(&domain, 10), "numeric, not text, order");
        assert!(key(&domain, u32::MAX) < key(&other, 0));
        assert!(first <= key(&domain, 0) && key(&domain, 7) <= last);
    }
}
