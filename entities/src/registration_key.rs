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
//! too, so journal entries written before the key existed read back unchanged).

use std::{fmt, str::FromStr};

use sea_orm::entity::prelude::*;

use crate::domain_key::{DOMAIN_KEY_BYTES, DomainKey};

/// Bytes of a key: the domain's key, then the index.
pub const REGISTRATION_KEY_BYTES: usize = DOMAIN_KEY_BYTES + INDEX_BYTES;
const INDEX_BYTES: usize = 4;

/// A registration's `(domain, index)` in [`REGISTRATION_KEY_BYTES`] raw bytes.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, DeriveValueType)]
pub struct RegistrationKey(Vec<u8>);

/// A text that is not an Omnigraph registration id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidRegistrationId(pub String);

impl fmt::Display for InvalidRegistrationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a registration id `${{domainId}}-${{index}}`: {}", self.0)
    }
}

impl std::error::Error for InvalidRegistrationId {}

impl RegistrationKey {
    /// The key of `domain`'s registration number `index`.
    pub fn new(domain: &DomainKey, index: u32) -> Self {
        let mut bytes = Vec::with_capacity(REGISTRATION_KEY_BYTES);
        bytes.extend_from_slice(domain.as_bytes());
        bytes.extend_from_slice(&index.to_be_bytes());
        Self(bytes)
    }

    /// The raw bytes, as stored.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The registered domain.
    pub fn domain_id(&self) -> DomainKey {
        let domain = self.0.get(..DOMAIN_KEY_BYTES).unwrap_or_default();
        DomainKey::from_bytes(domain)
    }

    /// The 0-based index within the domain.
    pub fn index(&self) -> u32 {
        self.0.get(DOMAIN_KEY_BYTES..).and_then(|b| b.try_into().ok()).map_or(0, u32::from_be_bytes)
    }

    /// The first and last keys `domain`'s registrations can have: its key range.
    pub fn range_of(domain: &DomainKey) -> (Self, Self) {
        (Self::new(domain, 0), Self::new(domain, u32::MAX))
    }
}

/// Primary keys must convert from a `u64` (for auto-increment ids); a key never comes from one.
impl sea_orm::TryFromU64 for RegistrationKey {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("RegistrationKey"))
    }
}

impl fmt::Display for RegistrationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.domain_id(), self.index())
    }
}

impl fmt::Debug for RegistrationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for RegistrationKey {
    type Err = InvalidRegistrationId;

    /// Parses `${domainId}-${index}`, the index in canonical decimal.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidRegistrationId(text.chars().take(200).collect());
        let (domain, index) = text.rsplit_once('-').ok_or_else(invalid)?;
        if index.is_empty()
            || !index.bytes().all(|b| b.is_ascii_digit())
            || (index.len() > 1 && index.starts_with('0'))
        {
            return Err(invalid());
        }
        let index: u32 = index.parse().map_err(|_| invalid())?;
        let domain: DomainKey = domain.parse().map_err(|_| invalid())?;
        Ok(Self::new(&domain, index))
    }
}

impl serde::Serialize for RegistrationKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RegistrationKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

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
