//! Names and labels: labelhash, child nodes, ENSIP-15 interpretation of labels, DNS-encoded
//! names, and the Omnigraph id formats. Pure functions only.

use alloy::primitives::{Address, B256, keccak256};
use entities::{domain_key::DomainKey, resolver_record_key::ResolverRecordKey};

use crate::ChainId;

/// keccak256 of a label.
pub fn labelhash(label: &str) -> B256 {
    keccak256(label.as_bytes())
}

/// The node of `label_hash` under `parent`, as the registry computes it.
pub fn child_node(parent: B256, label_hash: B256) -> B256 {
    let mut buf = [0u8; 64];
    buf[..32].copy_from_slice(parent.as_slice());
    buf[32..].copy_from_slice(label_hash.as_slice());
    keccak256(buf)
}

/// `[hex]`: how an unknown or unnormalized label is written in an interpreted name.
pub fn encoded_label_hash(label_hash: B256) -> String {
    format!("[{}]", hex::encode(label_hash))
}

/// Whether a literal label is ENSIP-15 normalized and safe to render as itself. Length is no
/// criterion: ENS puts no bound on a label, so neither does its rendering (a name's bytes are
/// bounded by what a transaction can carry, and the entity cache accounts for them).
pub fn is_normalized_label(label: &str) -> bool {
    if label.is_empty() || label.contains(['.', '[', ']', '\0']) {
        return false;
    }
    ens_normalize::ens_normalize(label).is_ok_and(|n| n == label)
}

/// The interpreted form of a literal label: itself when normalized, else `[labelhash]`.
pub fn interpret_label(label: &str) -> String {
    if is_normalized_label(label) { label.to_owned() } else { encoded_label_hash(labelhash(label)) }
}

/// Decodes a DNS wire-format name (as the NameWrapper emits it) into its literal labels, leaf
/// first. Returns `None` for malformed input; labels that are not UTF-8 are `None` entries.
pub fn decode_dns_name(bytes: &[u8]) -> Option<Vec<Option<String>>> {
    let mut labels = Vec::new();
    let mut pos = 0;
    loop {
        let len = *bytes.get(pos)? as usize;
        pos += 1;
        if len == 0 {
            return Some(labels);
        }
        let raw = bytes.get(pos..pos + len)?;
        labels.push(String::from_utf8(raw.to_vec()).ok());
        pos += len;
    }
}

/// Lowercase `0x` hex of an address.
pub fn hex_address(address: Address) -> String {
    format!("{address:#x}")
}

/// Lowercase `0x` hex of a 32-byte value.
pub fn hex_b256(value: B256) -> String {
    format!("{value:#x}")
}

/// The key of the Omnigraph ENSv1 domain id `${chainId}-${registry}-${node}`.
pub fn domain_id(chain_id: ChainId, registry: Address, node: B256) -> DomainKey {
    DomainKey::new(chain_id.get(), &registry.0.0, &node.0)
}

/// The key of the Omnigraph resolver records id `${chainId}-${resolver}-${node}`.
pub fn resolver_record_id(chain_id: ChainId, resolver: Address, node: B256) -> ResolverRecordKey {
    ResolverRecordKey::new(chain_id.get(), &resolver.0.0, &node.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namehash_agrees_with_alloy() {
        for name in ["eth", "vitalik.eth", "a.b.c.eth"] {
            let node = name.rsplit('.').fold(B256::ZERO, |node, l| child_node(node, labelhash(l)));
            assert_eq!(node, alloy::ens::namehash(name), "{name}");
        }
    }

    #[test]
    fn interprets_labels() {
        let cases = [
            ("vitalik", true),
            ("Vitalik", false),
            ("", false),
            ("a.b", false),
            ("[abc]", false),
            ("nul\0byte", false),
            ("🚀", true),
        ];
        for (label, normalized) in cases {
            assert_eq!(is_normalized_label(label), normalized, "{label:?}");
            let interpreted = interpret_label(label);
            if normalized {
                assert_eq!(interpreted, label);
            } else {
                assert_eq!(interpreted, encoded_label_hash(labelhash(label)));
            }
        }
        // Long labels render as themselves, however long.
        let long = "a".repeat(10_000);
        assert_eq!(interpret_label(&long), long);
    }

    #[test]
    fn decodes_dns_names() {
        assert_eq!(
            decode_dns_name(b"\x07vitalik\x03eth\x00"),
            Some(vec![Some("vitalik".into()), Some("eth".into())])
        );
        assert_eq!(decode_dns_name(b"\x07vita"), None);
        assert_eq!(decode_dns_name(b"\x02\xff\xfe\x00"), Some(vec![None]));
    }

    #[test]
    fn ids_are_lowercase_hex() {
        let id = domain_id(crate::ChainId(1), Address::repeat_byte(0xAB), B256::repeat_byte(0xCD))
            .to_string();
        assert_eq!(id, format!("1-0x{}-0x{}", "ab".repeat(20), "cd".repeat(32)));
    }
}
