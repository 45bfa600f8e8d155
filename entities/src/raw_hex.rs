//! [`RawAddress`] and [`RawHash`]: addresses and 32-byte hashes as the database stores them.
//!
//! A domain row carried its label hash and three addresses (effective owner, registry owner,
//! resolver) as `0x` hex text: 66 and 42 characters where the values are 32 and 20 bytes, in
//! the row and again in every index over them (the four owner listings among them). At
//! mainnet scale the domain rows outgrow any page cache, so every flush rewrites most of
//! their pages and the bytes per row are what a flush costs. These types store the raw bytes
//! and show the same lowercase `0x` hex everywhere else: GraphQL, the dump, and serde (so
//! journal entries written while the columns were text read back unchanged).

use std::{fmt, str::FromStr};

/// A text that is not `0x` followed by the hex of exactly the expected number of bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidHex {
    /// Bytes the value must have.
    pub bytes: usize,
    /// The text refused (at most 100 characters of it).
    pub text: String,
}

impl fmt::Display for InvalidHex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not 0x and {} bytes of hex: {}", self.bytes, self.text)
    }
}

impl std::error::Error for InvalidHex {}

/// Declares a fixed-width raw byte value: stored as a blob, shown as lowercase `0x` hex.
/// Held inline ([`crate::inline_bytes!`]): a domain row carries a label hash and up to five
/// addresses, and as byte vectors each copy of a row allocated each of them.
macro_rules! raw_hex {
    ($(#[$doc:meta])* $name:ident, $bytes:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name([u8; $bytes]);

        impl $name {
            /// Bytes of the value.
            pub const BYTES: usize = $bytes;

            /// The value of these bytes.
            pub fn new(bytes: [u8; $bytes]) -> Self {
                Self(bytes)
            }

            /// The value of `bytes`, if it has exactly [`Self::BYTES`].
            pub fn from_slice(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(Self)
            }

            /// The raw bytes, as stored.
            pub fn as_bytes(&self) -> &[u8] {
                &self.0
            }
        }

        $crate::inline_bytes!($name, $bytes);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "0x{}", hex::encode(&self.0))
            }
        }

        impl FromStr for $name {
            type Err = InvalidHex;

            /// Parses `0x` and the hex of exactly [`Self::BYTES`] bytes, in either case.
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let mut out = [0; $bytes];
                text.strip_prefix("0x")
                    .and_then(|digits| hex::decode_to_slice(digits, &mut out).ok())
                    .map(|()| Self::new(out))
                    .ok_or_else(|| InvalidHex {
                        bytes: $bytes,
                        text: text.chars().take(100).collect(),
                    })
            }
        }

        $crate::text_form!($name);
    };
}

raw_hex!(
    /// A 20-byte address.
    RawAddress,
    20
);

raw_hex!(
    /// A 32-byte hash: a label hash or a node.
    RawHash,
    32
);

#[cfg(test)]
mod tests {
    use super::*;

    const ADDRESS: &str = "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e";

    #[test]
    fn shows_and_reads_lowercase_hex() {
        let address: RawAddress = ADDRESS.parse().expect("valid");
        assert_eq!(address.as_bytes().len(), RawAddress::BYTES);
        assert_eq!(address.to_string(), ADDRESS);
        let upper: RawAddress = ADDRESS.replace("c2e", "C2E").parse().expect("either case");
        assert_eq!(upper, address);
        let json = serde_json::to_string(&address).expect("serializes");
        assert_eq!(json, format!("\"{ADDRESS}\""));
        assert_eq!(serde_json::from_str::<RawAddress>(&json).expect("deserializes"), address);
        let hash = RawHash::new([0xab; 32]);
        assert_eq!(hash.to_string(), format!("0x{}", "ab".repeat(32)));
        assert_eq!(RawHash::from_slice(hash.as_bytes()), Some(hash));
    }

    #[test]
    fn refuses_the_wrong_width_or_no_prefix() {
        for bad in ["", "0x", &ADDRESS[2..], &ADDRESS[..40], &format!("{ADDRESS}00"), "0xzz"] {
            let err = bad.parse::<RawAddress>().expect_err(bad);
            assert_eq!(err.bytes, 20);
        }
        assert!(ADDRESS.parse::<RawHash>().is_err());
        assert_eq!(RawAddress::from_slice(&[0; 32]), None);
        assert!(serde_json::from_str::<RawHash>("\"0x12\"").is_err());
    }
}
