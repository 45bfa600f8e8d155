//! [`contract_node_key!`]: key types for rows named by a node under one contract on one chain,
//! whose Omnigraph id is `${chainId}-${contract}-${node}` (a domain in a registry, the records
//! a resolver holds for a node).
//!
//! Such an id is 110 characters of decimal and hex. The key holds the same three facts in 56
//! raw bytes: the chain id (4 bytes, big-endian), the contract address (20) and the node (32).
//! Byte order is (chain, contract, node) order, so one contract's rows are one key range.
//! GraphQL, the dump and the journal only ever see the Omnigraph text
//! ([`std::fmt::Display`] and [`std::str::FromStr`]; serde uses the text too, so journal
//! entries written while the id was text read back unchanged).

/// Bytes of a key: chain id, contract address, node.
pub const CONTRACT_NODE_KEY_BYTES: usize = CHAIN_BYTES + ADDRESS_BYTES + NODE_BYTES;
/// Bytes of the chain id at the start of a key.
pub const CHAIN_BYTES: usize = 4;
/// Bytes of the contract address after the chain id.
pub const ADDRESS_BYTES: usize = 20;
/// Bytes of the node at the end of a key.
pub const NODE_BYTES: usize = 32;

/// `0x` + exactly `N` bytes of hex (either case).
#[doc(hidden)]
pub fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.strip_prefix("0x")?;
    let mut out = [0; N];
    hex::decode_to_slice(digits, &mut out).ok()?;
    Some(out)
}

/// Defines `$name`, the key of `${chainId}-${contract}-${node}` (see the module docs), whose
/// contract is read with `$contract()`, and `$error`, the error of a text that is not such an
/// id (`$what` names the id in its message).
#[macro_export]
macro_rules! contract_node_key {
    (
        $(#[$meta:meta])*
        $name:ident, $error:ident, contract: $contract:ident, what: $what:literal
    ) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name([u8; $crate::contract_node_key::CONTRACT_NODE_KEY_BYTES]);

        $crate::inline_bytes!($name, $crate::contract_node_key::CONTRACT_NODE_KEY_BYTES);

        #[doc = concat!("A text that is not an Omnigraph ", $what, " id, or a chain id the key \
                         cannot hold.")]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $error(pub String);

        impl std::fmt::Display for $error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    concat!(
                        "not a ", $what, " id `${{chainId}}-${{", stringify!($contract),
                        "}}-${{node}}`: {}"
                    ),
                    self.0
                )
            }
        }

        impl std::error::Error for $error {}

        impl $name {
            /// The key of `node` under `contract` on `chain_id`. Chain ids above `u32::MAX` are
            /// refused when the configuration is loaded, so they never reach here.
            pub fn new(
                chain_id: u64,
                contract: &[u8; $crate::contract_node_key::ADDRESS_BYTES],
                node: &[u8; $crate::contract_node_key::NODE_BYTES],
            ) -> Self {
                use $crate::contract_node_key::{ADDRESS_BYTES, CHAIN_BYTES};
                let chain = u32::try_from(chain_id).expect("chain ids are checked to fit 32 bits");
                let mut bytes = [0; $crate::contract_node_key::CONTRACT_NODE_KEY_BYTES];
                bytes[..CHAIN_BYTES].copy_from_slice(&chain.to_be_bytes());
                bytes[CHAIN_BYTES..CHAIN_BYTES + ADDRESS_BYTES].copy_from_slice(contract);
                bytes[CHAIN_BYTES + ADDRESS_BYTES..].copy_from_slice(node);
                Self(bytes)
            }

            /// The key whose raw bytes are `bytes`, if it has a key's length (the first bytes
            /// of a key that embeds one, or a stored value).
            pub fn from_slice(bytes: &[u8]) -> Option<Self> {
                bytes.try_into().ok().map(Self)
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
                    .get(..$crate::contract_node_key::CHAIN_BYTES)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, |b| u64::from(u32::from_be_bytes(b)))
            }

            /// The contract address, raw.
            pub fn $contract(&self) -> &[u8] {
                use $crate::contract_node_key::{ADDRESS_BYTES, CHAIN_BYTES};
                self.0.get(CHAIN_BYTES..CHAIN_BYTES + ADDRESS_BYTES).unwrap_or_default()
            }

            /// The node, raw.
            pub fn node(&self) -> &[u8] {
                use $crate::contract_node_key::{ADDRESS_BYTES, CHAIN_BYTES};
                self.0.get(CHAIN_BYTES + ADDRESS_BYTES..).unwrap_or_default()
            }

            /// The node as lowercase `0x` hex.
            pub fn node_hex(&self) -> String {
                format!("0x{}", hex::encode(self.node()))
            }

            /// The key of another node under the same chain and contract.
            pub fn with_node(&self, node: &[u8; $crate::contract_node_key::NODE_BYTES]) -> Self {
                use $crate::contract_node_key::{ADDRESS_BYTES, CHAIN_BYTES};
                let mut bytes = self.0;
                bytes[CHAIN_BYTES + ADDRESS_BYTES..].copy_from_slice(node);
                Self(bytes)
            }

            /// The first and last keys under `contract` on `chain_id`: its rows' key range.
            pub fn range_of(
                chain_id: u64,
                contract: &[u8; $crate::contract_node_key::ADDRESS_BYTES],
            ) -> (Self, Self) {
                use $crate::contract_node_key::NODE_BYTES;
                (
                    Self::new(chain_id, contract, &[0; NODE_BYTES]),
                    Self::new(chain_id, contract, &[0xff; NODE_BYTES]),
                )
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "{}-0x{}-0x{}",
                    self.chain_id(),
                    hex::encode(self.$contract()),
                    hex::encode(self.node())
                )
            }
        }

        impl std::str::FromStr for $name {
            type Err = $error;

            /// Parses `${chainId}-${contract}-${node}` (hex in either case).
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                use $crate::contract_node_key::{ADDRESS_BYTES, NODE_BYTES, hex_bytes};
                let invalid = || $error(text.chars().take(200).collect());
                let mut parts = text.split('-');
                let (Some(chain), Some(contract), Some(node), None) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    return Err(invalid());
                };
                let chain =
                    $crate::text_form::canonical_decimal(chain).ok_or_else(invalid)?;
                if !Self::holds_chain(chain) {
                    return Err(invalid());
                }
                let contract = hex_bytes::<ADDRESS_BYTES>(contract).ok_or_else(invalid)?;
                let node = hex_bytes::<NODE_BYTES>(node).ok_or_else(invalid)?;
                Ok(Self::new(chain, &contract, &node))
            }
        }

        $crate::text_form!($name);
    };
}
