//! [`RenewalKey`]: a renewal's identity as the database stores it.
//!
//! The Omnigraph names a renewal `${registrationId}-${index}`: 115 characters for a mainnet
//! name, stored as the primary key with the registration's own 113-character id beside it and
//! indexed again with the index for the listing by registration. The key holds the same two
//! facts in 64 raw bytes instead: the registration's [`RegistrationKey`] (60) and the index
//! (4, big-endian), so one registration's renewals are one key range, oldest first
//! ([`crate::indexed_key!`]).

use crate::registration_key::{REGISTRATION_KEY_BYTES, RegistrationKey};

/// Bytes of a key: the registration's key, then the index.
pub const RENEWAL_KEY_BYTES: usize = REGISTRATION_KEY_BYTES + crate::indexed_key::INDEX_BYTES;

crate::indexed_key!(
    /// A renewal's `(registration, index)` in [`RENEWAL_KEY_BYTES`] raw bytes.
    RenewalKey,
    InvalidRenewalId,
    parent: RegistrationKey,
    registration_id,
    bytes: RENEWAL_KEY_BYTES,
    what: "renewal"
);

#[cfg(test)]
mod tests {
    use super::*;

    const REGISTRATION: &str = "1-0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e-\
                                0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae-3";

    #[test]
    fn round_trips_the_omnigraph_id() {
        let id = format!("{REGISTRATION}-12");
        let key: RenewalKey = id.parse().expect("valid id");
        assert_eq!(key.as_bytes().len(), RENEWAL_KEY_BYTES);
        assert_eq!(key.to_string(), id);
        assert_eq!(key.index(), 12);
        assert_eq!(key.registration_id().index(), 3);
        assert_eq!(key.registration_id().to_string(), REGISTRATION);
        assert!(format!("{REGISTRATION}-01").parse::<RenewalKey>().is_err());
        assert!(REGISTRATION.parse::<RenewalKey>().is_err(), "a registration id is one part short");
    }

    #[test]
    fn orders_by_registration_then_index() {
        let registration: RegistrationKey = REGISTRATION.parse().expect("registration");
        let next = RegistrationKey::new(&registration.domain_id(), 4);
        let key = |r: &RegistrationKey, i| RenewalKey::new(r, i);
        assert!(key(&registration, 2) < key(&registration, 10), "numeric, not text, order");
        assert!(key(&registration, u32::MAX) < key(&next, 0));
        let (first, last) = RenewalKey::range_of(&registration);
        assert!(first <= key(&registration, 0) && key(&registration, 9) <= last);
    }
}
