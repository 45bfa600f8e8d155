//! One record of a selection ([`Record`]): the resolver call that reads it, the decoding of
//! the answer, and the one normal form both the index and a live call give a value, so that
//! the two agree byte for byte: unset is `None` (an empty string or byte string, an EVM coin
//! type's zero address, a zero public key, an ABI of content type 0, a zero implementer).

use alloy::{
    primitives::{Address, B256, FixedBytes, U256},
    sol_types::SolCall,
};
use graphql::resolution::{
    AbiRecord, AddressRecord, InterfaceRecord, PubkeyRecord, RecordError, RecordsSelection,
    ResolvedRecords, TextRecord, error_code,
};

use super::abi::IResolverRecords;

/// SLIP-44's ETH coin type.
pub const ETH_COIN_TYPE: u64 = 60;
/// ENSIP-11's EVM bit.
pub const EVM_BIT: u64 = 0x8000_0000;

/// Whether `coin_type` names an EVM chain (ETH, ENSIP-11's chains, or the default).
pub fn is_evm_coin(coin_type: u64) -> bool {
    coin_type == ETH_COIN_TYPE || (coin_type & EVM_BIT != 0 && coin_type <= 0xffff_ffff)
}

/// One record asked for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Record {
    /// An address by coin type.
    Address(u64),
    /// A text by key.
    Text(String),
    /// The contenthash.
    Contenthash,
    /// The `name` record.
    Name,
    /// The public key.
    Pubkey,
    /// The ABI, for a content type mask.
    Abi(u64),
    /// An interface implementer.
    Interface([u8; 4]),
}

/// A record's value, in normal form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// An address's bytes, or a contenthash.
    Bytes(Vec<u8>),
    /// A text, or a name.
    Text(String),
    /// A public key.
    Pubkey(B256, B256),
    /// An ABI: its content type and data.
    Abi(u64, Vec<u8>),
    /// An interface implementer.
    Implementer(Address),
}

/// A record's outcome: its value (`None` when unset) or why it could not be read.
pub type Outcome = Result<Option<Value>, RecordError>;

/// Normal form of an address record.
pub fn address_value(coin_type: u64, bytes: &[u8]) -> Option<Value> {
    let unset = bytes.is_empty() || (is_evm_coin(coin_type) && bytes == [0u8; 20]);
    (!unset).then(|| Value::Bytes(bytes.to_vec()))
}

/// Normal form of a text or name record.
pub fn text_value(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| Value::Text(text.to_owned()))
}

/// Normal form of a contenthash.
pub fn bytes_value(bytes: &[u8]) -> Option<Value> {
    (!bytes.is_empty()).then(|| Value::Bytes(bytes.to_vec()))
}

/// Normal form of a public key.
pub fn pubkey_value(x: B256, y: B256) -> Option<Value> {
    (!(x.is_zero() && y.is_zero())).then_some(Value::Pubkey(x, y))
}

impl Record {
    /// The records of `selection`, in the order they are answered.
    pub fn all(selection: &RecordsSelection) -> Vec<Self> {
        let mut out: Vec<Self> = selection.addresses.iter().map(|c| Self::Address(*c)).collect();
        out.extend(selection.texts.iter().cloned().map(Self::Text));
        if selection.contenthash {
            out.push(Self::Contenthash);
        }
        if selection.name {
            out.push(Self::Name);
        }
        if selection.pubkey {
            out.push(Self::Pubkey);
        }
        if let Some(mask) = selection.abi {
            out.push(Self::Abi(mask));
        }
        out.extend(selection.interfaces.iter().map(|i| Self::Interface(*i)));
        out
    }

    /// How the record is named in errors and traces.
    pub fn label(&self) -> String {
        match self {
            Self::Address(coin) => format!("addresses[{coin}]"),
            Self::Text(key) => format!("texts[{}]", key.chars().take(64).collect::<String>()),
            Self::Contenthash => "contenthash".into(),
            Self::Name => "name".into(),
            Self::Pubkey => "pubkey".into(),
            Self::Abi(mask) => format!("abi[{mask}]"),
            Self::Interface(id) => format!("interfaces[0x{}]", hex::encode(id)),
        }
    }

    /// The resolver call that reads the record of `node`. ETH goes through `addr(bytes32)`,
    /// which every resolver generation answers; other coins through ENSIP-9's
    /// `addr(bytes32,uint256)`.
    pub fn calldata(&self, node: B256) -> Vec<u8> {
        use IResolverRecords as R;
        match self {
            Self::Address(ETH_COIN_TYPE) => R::addr_0Call { node }.abi_encode(),
            Self::Address(coin) => R::addr_1Call { node, coinType: U256::from(*coin) }.abi_encode(),
            Self::Text(key) => R::textCall { node, key: key.clone() }.abi_encode(),
            Self::Contenthash => R::contenthashCall { node }.abi_encode(),
            Self::Name => R::nameCall { node }.abi_encode(),
            Self::Pubkey => R::pubkeyCall { node }.abi_encode(),
            Self::Abi(mask) => R::ABICall { node, contentTypes: U256::from(*mask) }.abi_encode(),
            Self::Interface(id) => {
                R::interfaceImplementerCall { node, interfaceID: FixedBytes(*id) }.abi_encode()
            }
        }
    }

    /// Decodes what the resolver returned for the record.
    pub fn decode(&self, data: &[u8]) -> Outcome {
        use IResolverRecords as R;
        let bad = |err: alloy::sol_types::Error| RecordError {
            record: self.label(),
            code: error_code::RESOLVER_BAD_RESPONSE,
            message: format!("the resolver's answer does not decode: {err}"),
        };
        // An empty answer is an unset record: resolvers that relay another chain's answer
        // (bridges) return nothing where that chain has no resolver.
        if data.is_empty() {
            return Ok(None);
        }
        Ok(match self {
            Self::Address(ETH_COIN_TYPE) => {
                let address = R::addr_0Call::abi_decode_returns(data).map_err(bad)?;
                address_value(ETH_COIN_TYPE, address.as_slice())
            }
            Self::Address(coin) => {
                address_value(*coin, &R::addr_1Call::abi_decode_returns(data).map_err(bad)?)
            }
            Self::Text(_) => text_value(&R::textCall::abi_decode_returns(data).map_err(bad)?),
            Self::Contenthash => {
                bytes_value(&R::contenthashCall::abi_decode_returns(data).map_err(bad)?)
            }
            Self::Name => text_value(&R::nameCall::abi_decode_returns(data).map_err(bad)?),
            Self::Pubkey => {
                let key = R::pubkeyCall::abi_decode_returns(data).map_err(bad)?;
                pubkey_value(key.x, key.y)
            }
            Self::Abi(_) => {
                let abi = R::ABICall::abi_decode_returns(data).map_err(bad)?;
                let content_type = u64::try_from(abi._0).unwrap_or(u64::MAX);
                (content_type != 0).then(|| Value::Abi(content_type, abi._1.to_vec()))
            }
            Self::Interface(_) => {
                let implementer =
                    R::interfaceImplementerCall::abi_decode_returns(data).map_err(bad)?;
                (!implementer.is_zero()).then_some(Value::Implementer(implementer))
            }
        })
    }
}

fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// The answer for `records` from their outcomes (same order), with every record present.
pub fn assemble(records: &[Record], outcomes: Vec<Outcome>) -> ResolvedRecords {
    let mut out = ResolvedRecords::default();
    for (record, outcome) in records.iter().zip(outcomes) {
        let value = match outcome {
            Ok(value) => value,
            Err(error) => {
                out.errors.push(error);
                None
            }
        };
        match (record, value) {
            (Record::Address(coin), value) => out.addresses.push(AddressRecord {
                coin_type: *coin,
                address: match value {
                    Some(Value::Bytes(b)) => Some(hex0x(&b)),
                    _ => None,
                },
            }),
            (Record::Text(key), value) => out.texts.push(TextRecord {
                key: key.clone(),
                value: match value {
                    Some(Value::Text(t)) => Some(t),
                    _ => None,
                },
            }),
            (Record::Contenthash, Some(Value::Bytes(b))) => out.contenthash = Some(hex0x(&b)),
            (Record::Name, Some(Value::Text(t))) => out.name = Some(t),
            (Record::Pubkey, Some(Value::Pubkey(x, y))) => {
                out.pubkey = Some(PubkeyRecord { x: format!("{x:#x}"), y: format!("{y:#x}") })
            }
            (Record::Abi(_), Some(Value::Abi(content_type, data))) => {
                out.abi = Some(AbiRecord { content_type, data: hex0x(&data) })
            }
            (Record::Interface(id), value) => out.interfaces.push(InterfaceRecord {
                id: hex0x(id),
                implementer: match value {
                    Some(Value::Implementer(a)) => Some(format!("{a:#x}")),
                    _ => None,
                },
            }),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_values_have_one_form() {
        assert_eq!(address_value(60, &[0; 20]), None);
        assert_eq!(address_value(EVM_BIT | 10, &[0; 20]), None);
        assert_eq!(address_value(0, &[]), None);
        assert_eq!(address_value(0, &[0; 20]), Some(Value::Bytes(vec![0; 20])));
        assert_eq!(text_value(""), None);
        assert_eq!(pubkey_value(B256::ZERO, B256::ZERO), None);
    }

    #[test]
    fn decodes_what_it_encodes() {
        let node = B256::repeat_byte(1);
        let record = Record::Text("url".into());
        assert_eq!(&record.calldata(node)[..4], &IResolverRecords::textCall::SELECTOR);
        let answer = IResolverRecords::textCall::abi_encode_returns(&"https://x".to_owned());
        assert_eq!(record.decode(&answer).unwrap(), Some(Value::Text("https://x".into())));
        let error = record.decode(&[1, 2, 3]).unwrap_err();
        assert_eq!(error.code, error_code::RESOLVER_BAD_RESPONSE);
    }
}
