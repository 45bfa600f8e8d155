//! Validation of user-supplied names and addresses. A name is accepted when every label is
//! ENSIP-15 normalized or an encoded labelhash `[64 hex]`; that is exactly the form names are
//! materialized in, so a valid name is looked up by equality.

use async_graphql::Error;

use crate::error::{code, coded};

/// Longest name accepted, bytes. ENS bounds neither labels nor names; this is the longest a
/// request body (64 KiB) carries with room for the rest of a query, so any name the index
/// renders can be typed.
pub const MAX_NAME_BYTES: usize = 32 * 1024;
/// Most labels accepted (the Omnigraph's limit).
pub const MAX_NAME_DEPTH: usize = 16;

fn is_encoded_label_hash(label: &str) -> bool {
    label.len() == 66
        && label.starts_with('[')
        && label.ends_with(']')
        && label[1..65].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Checks an interpreted name.
pub fn validate_name(name: &str) -> Result<(), Error> {
    if name.len() > MAX_NAME_BYTES {
        return Err(coded(
            code::INVALID_NAME,
            format!("name is longer than {MAX_NAME_BYTES} bytes"),
        ));
    }
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() > MAX_NAME_DEPTH {
        return Err(coded(
            code::INVALID_NAME,
            format!("name has more than {MAX_NAME_DEPTH} labels"),
        ));
    }
    for label in labels {
        if label.is_empty() {
            return Err(coded(code::INVALID_NAME, "name has an empty label"));
        }
        if is_encoded_label_hash(label) {
            continue;
        }
        if ens_normalize::ens_normalize(label).ok().as_deref() != Some(label) {
            let shown: String = label.chars().take(64).collect();
            return Err(coded(
                code::INVALID_NAME,
                format!("label {shown:?} is not ENSIP-15 normalized"),
            ));
        }
    }
    Ok(())
}

/// The namehash of a validated interpreted name: an encoded label `[hex]` contributes its
/// labelhash as written, any other label the keccak256 of its text.
pub fn interpreted_namehash(name: &str) -> alloy::primitives::B256 {
    use alloy::primitives::{B256, keccak256};
    name.rsplit('.').fold(B256::ZERO, |node, label| {
        let hash = if is_encoded_label_hash(label) {
            label[1..65].parse::<B256>().unwrap_or_default()
        } else {
            keccak256(label)
        };
        keccak256([node.as_slice(), hash.as_slice()].concat())
    })
}

/// Parses and lowercases a `0x` address.
pub fn parse_address(text: &str) -> Result<String, Error> {
    text.parse::<alloy::primitives::Address>()
        .map(|a| format!("{a:#x}"))
        .map_err(|_| coded(code::INVALID_ARGUMENT, "not a 20-byte hex address"))
}

/// Parses and lowercases a `0x` 32-byte node.
pub fn parse_node(text: &str) -> Result<String, Error> {
    parse_node_hash(text).map(|n| format!("{n:#x}"))
}

/// A node given as 32 bytes of hex, as its bytes.
pub fn parse_node_hash(text: &str) -> Result<alloy::primitives::B256, Error> {
    text.parse().map_err(|_| coded(code::INVALID_ARGUMENT, "not a 32-byte hex node"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namehash_reads_encoded_labels_as_their_hash() {
        assert_eq!(interpreted_namehash("vitalik.eth"), alloy::ens::namehash("vitalik.eth"));
        let label = alloy::primitives::keccak256("Vitalik");
        let encoded = format!("[{}].eth", alloy::hex::encode(label));
        let eth = alloy::ens::namehash("eth");
        let want = alloy::primitives::keccak256([eth.as_slice(), label.as_slice()].concat());
        assert_eq!(interpreted_namehash(&encoded), want);
    }

    #[test]
    fn accepts_interpreted_names() {
        let long = format!("{}.eth", "a".repeat(MAX_NAME_BYTES - 4));
        for name in ["eth", "vitalik.eth", &format!("[{}].eth", "ab".repeat(32)), "🚀.eth", &long]
        {
            assert!(validate_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn rejects_the_rest_with_a_code() {
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        for name in ["", "Vitalik.eth", "a..eth", "[zz].eth", &"a.".repeat(17), &long] {
            let err = validate_name(name).unwrap_err();
            assert_eq!(
                err.extensions.as_ref().and_then(|e| e.get("code")).map(|v| v.to_string()),
                Some("\"INVALID_NAME\"".to_owned()),
                "{name:?}"
            );
        }
    }
}
