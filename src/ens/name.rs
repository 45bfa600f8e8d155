//! Names and labels: labelhash, child nodes, ENSIP-15 interpretation of labels, DNS-encoded
//! names, and the Omnigraph id formats. Pure functions only.

use std::sync::LazyLock;

use alloy::primitives::{Address, B256, keccak256};
use ens_normalize_rs::EnsNameNormalizer;

/// Longest label (in bytes) that is rendered as itself. Longer labels are valid on chain but
/// are rendered as `[labelhash]`: no name column should carry a megabyte of spam.
pub const MAX_RENDERED_LABEL_BYTES: usize = 255;

/// The normalizer's code point tables are immutable and expensive to build, so one instance is
/// shared; it holds no mutable state.
static NORMALIZER: LazyLock<EnsNameNormalizer> = LazyLock::new(EnsNameNormalizer::default);

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

/// Whether a literal label is ENSIP-15 normalized and safe to render as itself.
pub fn is_normalized_label(label: &str) -> bool {
    if label.is_empty()
        || label.len() > MAX_RENDERED_LABEL_BYTES
        || label.contains(['.', '[', ']', '\0'])
    {
        return false;
    }
    NORMALIZER.normalize(label).is_ok_and(|n| n == label)
}

/// The interpreted form of a literal label: itself when normalized, else `[labelhash]`.
pub fn interpret_label(label: &str) -> String {
    if is_normalized_label(label) { label.to_owned() } else { encoded_label_hash(labelhash(label)) }
}

/// Parses `[64 hex]` back into a labelhash.
pub fn parse_encoded_label_hash(label: &str) -> Option<B256> {
    let hex = label.strip_prefix('[')?.strip_suffix(']')?;
    if hex.len() != 64 {
        return None;
    }
    hex.parse::<B256>().ok()
}

/// Why a name given by a user is not an interpreted name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Empty name or an empty label.
    #[error("name has an empty label")]
    EmptyLabel,
    /// Longer than [`MAX_NAME_BYTES`].
    #[error("name is longer than {MAX_NAME_BYTES} bytes")]
    TooLong,
    /// More labels than [`MAX_NAME_DEPTH`].
    #[error("name has more than {MAX_NAME_DEPTH} labels")]
    TooDeep,
    /// A label that is neither normalized nor an encoded labelhash.
    #[error("label {0:?} is not ENSIP-15 normalized")]
    NotNormalized(String),
}

/// Longest name accepted as input, bytes.
pub const MAX_NAME_BYTES: usize = 4096;
/// Deepest name accepted as input, labels (the Omnigraph's limit).
pub const MAX_NAME_DEPTH: usize = 16;

/// Validates an interpreted name (every label normalized or `[labelhash]`) and returns its
/// labelhashes, leaf first.
pub fn parse_interpreted_name(name: &str) -> Result<Vec<B256>, NameError> {
    if name.len() > MAX_NAME_BYTES {
        return Err(NameError::TooLong);
    }
    if name.is_empty() {
        return Err(NameError::EmptyLabel);
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() > MAX_NAME_DEPTH {
        return Err(NameError::TooDeep);
    }
    labels
        .into_iter()
        .map(|label| {
            if label.is_empty() {
                Err(NameError::EmptyLabel)
            } else if let Some(hash) = parse_encoded_label_hash(label) {
                Ok(hash)
            } else if is_normalized_label(label) {
                Ok(labelhash(label))
            } else {
                Err(NameError::NotNormalized(label.chars().take(64).collect()))
            }
        })
        .collect()
}

/// namehash of an interpreted name (labels may be `[labelhash]`).
pub fn interpreted_namehash(name: &str) -> Result<B256, NameError> {
    Ok(parse_interpreted_name(name)?.into_iter().rev().fold(B256::ZERO, child_node))
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

/// The Omnigraph ENSv1 domain id `${chainId}-${registry}-${node}`.
pub fn domain_id(chain_id: u64, registry: Address, node: B256) -> String {
    format!("{chain_id}-{registry:#x}-{node:#x}")
}

/// The Omnigraph resolver records id `${chainId}-${resolver}-${node}`.
pub fn resolver_record_id(chain_id: u64, resolver: Address, node: B256) -> String {
    format!("{chain_id}-{resolver:#x}-{node:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namehash_agrees_with_alloy() {
        for name in ["eth", "vitalik.eth", "a.b.c.eth"] {
            assert_eq!(interpreted_namehash(name).unwrap(), alloy::ens::namehash(name), "{name}");
        }
    }

    #[test]
    fn encoded_labels_round_trip_into_the_namehash() {
        let hidden = format!("{}.eth", encoded_label_hash(labelhash("vitalik")));
        assert_eq!(interpreted_namehash(&hidden).unwrap(), alloy::ens::namehash("vitalik.eth"));
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
        let long = "a".repeat(MAX_RENDERED_LABEL_BYTES + 1);
        assert!(interpret_label(&long).starts_with('['));
    }

    #[test]
    fn rejects_bad_input_names() {
        assert_eq!(parse_interpreted_name(""), Err(NameError::EmptyLabel));
        assert_eq!(parse_interpreted_name("a..eth"), Err(NameError::EmptyLabel));
        assert!(matches!(parse_interpreted_name("Vitalik.eth"), Err(NameError::NotNormalized(_))));
        assert_eq!(parse_interpreted_name("a.a.a."), Err(NameError::EmptyLabel));
        assert_eq!(parse_interpreted_name(&["a"; 17].join(".")), Err(NameError::TooDeep));
        assert_eq!(parse_interpreted_name(&"a".repeat(5000)), Err(NameError::TooLong));
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
        let id = domain_id(1, Address::repeat_byte(0xAB), B256::repeat_byte(0xCD));
        assert_eq!(id, format!("1-0x{}-0x{}", "ab".repeat(20), "cd".repeat(32)));
    }
}
