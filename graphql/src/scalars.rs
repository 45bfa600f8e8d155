//! The Omnigraph's scalars, so that clients written against ENSNode (which declare variables
//! as `$name: InterpretedName!`, `$address: Address!`, ...) work unchanged. Each is a newtype
//! over its JSON form: hex and decimal values are strings, chain ids and coin types numbers.
//! Inputs are checked where they are used (for instance names by [`crate::name`]), so an
//! invalid value gets an error with a code rather than a generic parse failure.

use serde::{Deserialize, Serialize};

macro_rules! string_scalar {
    ($name:ident, $gql:literal, $desc:literal) => {
        #[doc = $desc]
        #[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        async_graphql::scalar!($name, $gql, $desc);

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }
    };
}

macro_rules! int_scalar {
    ($name:ident, $gql:literal, $desc:literal) => {
        #[doc = $desc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub i64);

        async_graphql::scalar!($name, $gql, $desc);
    };
}

string_scalar!(Address, "Address", "A 20-byte EVM address, lowercase `0x` hex.");
string_scalar!(Node, "Node", "A 32-byte namehash, `0x` hex.");
string_scalar!(Hex, "Hex", "Bytes, `0x` hex.");
string_scalar!(BigInt, "BigInt", "An unsigned integer of up to 256 bits, as a decimal string.");
string_scalar!(
    InterpretedName,
    "InterpretedName",
    "A name whose every label is ENSIP-15 normalized or an encoded labelhash `[hex]`."
);
string_scalar!(
    InterpretedLabel,
    "InterpretedLabel",
    "A normalized label, or an encoded labelhash `[hex]`."
);
string_scalar!(DomainId, "DomainId", "`${chainId}-${registry}-${node}`.");
string_scalar!(
    RegistryId,
    "RegistryId",
    "`${chainId}-${address}`, or `${chainId}-${address}-${node}` for a virtual registry."
);
string_scalar!(ResolverId, "ResolverId", "`${chainId}-${address}`.");
string_scalar!(ResolverRecordsId, "ResolverRecordsId", "`${chainId}-${resolver}-${node}`.");
string_scalar!(RegistrationId, "RegistrationId", "`${domainId}-${index}`.");
string_scalar!(RenewalId, "RenewalId", "`${registrationId}-${index}`.");
int_scalar!(ChainId, "ChainId", "An EIP-155 chain id.");
int_scalar!(CoinType, "CoinType", "An ENSIP-9 / ENSIP-11 coin type.");
