//! The fields of each subgraph event type, decoded from the log the history stored (its
//! topics after the selector, and its data), as the subgraph's mappings read them.

use alloy::primitives::U256;
use async_graphql::Value;

/// A decoded field: a scalar, or a reference the schema shows as an entity.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// A scalar value.
    Value(Value),
    /// An account, by lowercase address.
    Account(String),
    /// A domain, by node.
    Domain(Vec<u8>),
    /// A resolver, by `<address>-<node>`.
    Resolver(String),
    /// No value (or a log too short for it: the field shows null).
    Null,
}

/// One stored log, unpacked.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// Topics after topic0, 32 bytes each.
    pub topics: Vec<u8>,
    /// The data.
    pub data: Vec<u8>,
    /// Position among the events of one log (the n-th id of a batch transfer).
    pub seq: i64,
    /// The contract that emitted it.
    pub contract: Vec<u8>,
}

/// `(field, GraphQL type, nullable)` of the fields of `event_type` beyond those of its family.
pub fn specific_fields(event_type: &str) -> &'static [(&'static str, &'static str, bool)] {
    match event_type {
        "Transfer" | "WrappedTransfer" | "NameUnwrapped" => &[("owner", "Account", false)],
        "NewOwner" => &[("parentDomain", "Domain", false), ("owner", "Account", false)],
        "NewResolver" => &[("resolver", "Resolver", false)],
        "NewTTL" => &[("ttl", "BigInt", false)],
        "NameWrapped" => &[
            ("name", "String", true),
            ("fuses", "Int", false),
            ("owner", "Account", false),
            ("expiryDate", "BigInt", false),
        ],
        "FusesSet" => &[("fuses", "Int", false)],
        "ExpiryExtended" | "NameRenewed" => &[("expiryDate", "BigInt", false)],
        "NameRegistered" => &[("registrant", "Account", false), ("expiryDate", "BigInt", false)],
        "NameTransferred" => &[("newOwner", "Account", false)],
        "AddrChanged" => &[("addr", "Account", false)],
        "MulticoinAddrChanged" => &[("coinType", "BigInt", false), ("addr", "Bytes", false)],
        "NameChanged" => &[("name", "String", false)],
        "AbiChanged" => &[("contentType", "BigInt", false)],
        "PubkeyChanged" => &[("x", "Bytes", false), ("y", "Bytes", false)],
        "TextChanged" => &[("key", "String", false), ("value", "String", true)],
        "ContenthashChanged" => &[("hash", "Bytes", false)],
        "InterfaceChanged" => &[("interfaceID", "Bytes", false), ("implementer", "Bytes", false)],
        "AuthorisationChanged" => &[
            ("owner", "Bytes", false),
            ("target", "Bytes", false),
            ("isAuthorized", "Boolean", false),
        ],
        "VersionChanged" => &[("version", "BigInt", false)],
        _ => &[],
    }
}

fn word(bytes: &[u8], index: usize) -> Option<&[u8]> {
    bytes.get(index * 32..index * 32 + 32)
}

fn address(word: Option<&[u8]>) -> Decoded {
    word.and_then(|w| w.get(12..))
        .map_or(Decoded::Null, |a| Decoded::Account(alloy::hex::encode_prefixed(a)))
}

fn number(word: Option<&[u8]>) -> Decoded {
    word.map_or(Decoded::Null, |w| {
        Decoded::Value(Value::String(U256::from_be_slice(w).to_string()))
    })
}

fn small(word: Option<&[u8]>) -> Decoded {
    word.map_or(Decoded::Null, |w| {
        let n = U256::from_be_slice(w);
        Decoded::Value(Value::from(u32::try_from(n).map(i64::from).unwrap_or(i64::MAX)))
    })
}

fn hex(bytes: Option<&[u8]>) -> Decoded {
    bytes.map_or(Decoded::Null, |b| Decoded::Value(Value::String(alloy::hex::encode_prefixed(b))))
}

/// The ABI `bytes`/`string` whose offset is in data word `index`.
fn dynamic(data: &[u8], index: usize) -> Option<&[u8]> {
    let offset = usize::try_from(U256::from_be_slice(word(data, index)?)).ok()?;
    let len_word = data.get(offset..offset.checked_add(32)?)?;
    let len = usize::try_from(U256::from_be_slice(len_word)).ok()?;
    let start = offset.checked_add(32)?;
    data.get(start..start.checked_add(len)?)
}

fn text(bytes: Option<&[u8]>) -> Decoded {
    bytes
        .and_then(|b| std::str::from_utf8(b).ok())
        .map_or(Decoded::Null, |s| Decoded::Value(Value::String(s.to_owned())))
}

/// A DNS-encoded name as dotted text; `None` for a malformed one or a label holding a dot,
/// as the subgraph leaves such a name out.
pub fn dns_name(bytes: &[u8]) -> Option<String> {
    let mut labels = Vec::new();
    let mut at = 0;
    loop {
        let len = usize::from(*bytes.get(at)?);
        if len == 0 {
            break;
        }
        let label = std::str::from_utf8(bytes.get(at + 1..at + 1 + len)?).ok()?;
        if label.contains('.') || label.contains('\0') {
            return None;
        }
        labels.push(label);
        at += 1 + len;
    }
    Some(labels.join("."))
}

/// The node (first topic) of a record event.
pub fn node_topic(log: &Log) -> Option<&[u8]> {
    word(&log.topics, 0)
}

/// `<address>-<node>` of a resolver.
pub fn resolver_id(address: &[u8], node: &[u8]) -> String {
    format!("{}-{}", alloy::hex::encode_prefixed(address), alloy::hex::encode_prefixed(node))
}

/// The value of `field` of an `event_type` event.
pub fn decode(event_type: &str, field: &str, log: &Log) -> Decoded {
    let (t, d) = (&log.topics, &log.data);
    match (event_type, field) {
        ("Transfer" | "NameUnwrapped", "owner") => address(word(d, 0)),
        ("NewOwner", "parentDomain") => {
            word(t, 0).map_or(Decoded::Null, |node| Decoded::Domain(node.to_vec()))
        }
        ("NewOwner", "owner") => address(word(d, 0)),
        ("NewResolver", "resolver") => match (word(t, 0), word(d, 0).and_then(|w| w.get(12..))) {
            (Some(node), Some(resolver)) if resolver.iter().any(|b| *b != 0) => {
                Decoded::Resolver(resolver_id(resolver, node))
            }
            (Some(_), Some(_)) => Decoded::Resolver(super::sql::ZERO_ADDRESS.to_owned()),
            _ => Decoded::Null,
        },
        ("NewTTL", "ttl") => number(word(d, 0)),
        // TransferSingle and TransferBatch both name the recipient in their third topic.
        ("WrappedTransfer", "owner") => address(word(t, 2)),
        ("NameWrapped", "name") => dynamic(d, 0)
            .and_then(dns_name)
            .map_or(Decoded::Null, |n| Decoded::Value(Value::String(n))),
        ("NameWrapped", "owner") => address(word(d, 1)),
        ("NameWrapped", "fuses") => small(word(d, 2)),
        ("NameWrapped", "expiryDate") => number(word(d, 3)),
        ("FusesSet", "fuses") => small(word(d, 0)),
        ("ExpiryExtended" | "NameRenewed", "expiryDate") => number(word(d, 0)),
        ("NameRegistered", "registrant") => address(word(t, 1)),
        ("NameRegistered", "expiryDate") => number(word(d, 0)),
        ("NameTransferred", "newOwner") => address(word(t, 1)),
        ("AddrChanged", "addr") => address(word(d, 0)),
        ("MulticoinAddrChanged", "coinType") => number(word(d, 0)),
        ("MulticoinAddrChanged", "addr") => hex(dynamic(d, 1)),
        ("NameChanged", "name") => text(dynamic(d, 0)),
        ("AbiChanged", "contentType") => number(word(t, 1)),
        ("PubkeyChanged", "x") => hex(word(d, 0)),
        ("PubkeyChanged", "y") => hex(word(d, 1)),
        ("TextChanged", "key") => text(dynamic(d, 0)),
        // The older form carries no value.
        ("TextChanged", "value") if d.len() > 64 => text(dynamic(d, 1)),
        ("ContenthashChanged", "hash") => hex(dynamic(d, 0)),
        ("InterfaceChanged", "interfaceID") => hex(word(t, 1).and_then(|w| w.get(..4))),
        ("InterfaceChanged", "implementer") => hex(word(d, 0).and_then(|w| w.get(12..))),
        ("AuthorisationChanged", "owner") => hex(word(t, 1).and_then(|w| w.get(12..))),
        ("AuthorisationChanged", "target") => hex(word(t, 2).and_then(|w| w.get(12..))),
        ("AuthorisationChanged", "isAuthorized") => word(d, 0)
            .map_or(Decoded::Null, |w| Decoded::Value(Value::Boolean(w.iter().any(|b| *b != 0)))),
        ("VersionChanged", "version") => number(word(d, 0)),
        (_, "resolver") => node_topic(log)
            .map_or(Decoded::Null, |node| Decoded::Resolver(resolver_id(&log.contract, node))),
        _ => Decoded::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(words: &[U256]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_be_bytes::<32>()).collect()
    }

    #[test]
    fn reads_dynamic_values_and_addresses() {
        // TextChanged(node, indexedKey, key, value) data: offsets 0x40 and 0x80, then each string.
        let mut data = words(&[U256::from(0x40), U256::from(0x80), U256::from(6)]);
        data.extend(b"avatar");
        data.resize(0x80, 0);
        data.extend(words(&[U256::from(3)]));
        data.extend(b"xyz");
        data.resize(0xc0, 0);
        let log = Log { data, ..Log::default() };
        assert_eq!(decode("TextChanged", "key", &log), Decoded::Value(Value::from("avatar")));
        assert_eq!(decode("TextChanged", "value", &log), Decoded::Value(Value::from("xyz")));
        let owner = Log { data: words(&[U256::from(0xabcdu64)]), ..Log::default() };
        assert_eq!(
            decode("Transfer", "owner", &owner),
            Decoded::Account(format!("0x{}abcd", "0".repeat(36)))
        );
    }

    #[test]
    fn truncated_logs_give_null_not_a_panic() {
        let log = Log { data: vec![0; 40], topics: vec![1; 10], ..Log::default() };
        for (event_type, _, _, _, _) in super::super::model::EVENT_TYPES {
            for (field, _, _) in specific_fields(event_type) {
                let _ = decode(event_type, field, &log);
            }
        }
        let short = Log { data: vec![0; 10], ..Log::default() };
        assert_eq!(decode("NameChanged", "name", &short), Decoded::Null);
        assert_eq!(decode("Transfer", "owner", &short), Decoded::Null);
    }

    #[test]
    fn dns_names_decode_and_refuse_dots() {
        assert_eq!(dns_name(b"\x03foo\x03eth\x00").as_deref(), Some("foo.eth"));
        assert_eq!(dns_name(b"\x03f.o\x03eth\x00"), None);
        assert_eq!(dns_name(b"\x05foo"), None);
    }
}
