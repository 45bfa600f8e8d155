//! [`ResolvableName`]: a name as resolution takes it. Every label is ENSIP-15 normalized or
//! an encoded labelhash `[64 hex]` (the form the index renders unknown labels in); anything
//! else is refused with `INVALID_NAME`, so a name is resolved only as the user would see it.

use alloy::primitives::B256;
use graphql::resolution::{ResolutionError, error_code};

use crate::ens::name::{child_node, labelhash};

/// Longest name resolved, bytes: what a request carries with room to spare (ENS bounds no
/// label; the index holds names of any length, and a label over 255 bytes is resolved by its
/// hash).
pub const MAX_NAME_BYTES: usize = 32 * 1024;
/// Most labels a resolved name may have: each is one step of the resolver walk.
pub const MAX_NAME_DEPTH: usize = 64;
/// DNS wire format holds at most this many bytes per label; a longer label is passed as its
/// encoded labelhash, as the Universal Resolver's name coder does.
const MAX_DNS_LABEL_BYTES: usize = 255;

/// One label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// As written: normalized text, or `[hash]`.
    pub text: String,
    /// Its labelhash.
    pub hash: B256,
}

/// A validated name; labels leaf first, as in the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvableName {
    text: String,
    labels: Vec<Label>,
}

fn encoded_hash(label: &str) -> Option<B256> {
    let hex = label.strip_prefix('[')?.strip_suffix(']')?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    hex.parse().ok()
}

fn invalid(message: impl Into<String>) -> ResolutionError {
    ResolutionError::new(error_code::INVALID_NAME, message)
}

impl ResolvableName {
    /// Validates `text`. The empty name is the root.
    pub fn parse(text: &str) -> Result<Self, ResolutionError> {
        if text.len() > MAX_NAME_BYTES {
            return Err(invalid(format!("name is longer than {MAX_NAME_BYTES} bytes")));
        }
        if text.is_empty() {
            return Ok(Self { text: String::new(), labels: Vec::new() });
        }
        let parts: Vec<&str> = text.split('.').collect();
        if parts.len() > MAX_NAME_DEPTH {
            return Err(invalid(format!("name has more than {MAX_NAME_DEPTH} labels")));
        }
        let mut labels = Vec::with_capacity(parts.len());
        for part in parts {
            if part.is_empty() {
                return Err(invalid("name has an empty label"));
            }
            let hash = match encoded_hash(part) {
                Some(hash) => hash,
                None if ens_normalize::ens_normalize(part).ok().as_deref() == Some(part) => {
                    labelhash(part)
                }
                None => {
                    let shown: String = part.chars().take(64).collect();
                    let hint = ens_normalize::ens_normalize(part)
                        .map(|n| {
                            format!(" (normalized: {:?})", n.chars().take(64).collect::<String>())
                        })
                        .unwrap_or_default();
                    return Err(invalid(format!(
                        "label {shown:?} is not ENSIP-15 normalized{hint}"
                    )));
                }
            };
            labels.push(Label { text: part.to_owned(), hash });
        }
        Ok(Self { text: text.to_owned(), labels })
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Number of labels.
    pub fn depth(&self) -> usize {
        self.labels.len()
    }

    /// The namehash of the suffix that drops the first `skip` labels (0: the name itself).
    pub fn node_of_suffix(&self, skip: usize) -> B256 {
        self.labels[skip.min(self.labels.len())..]
            .iter()
            .rev()
            .fold(B256::ZERO, |node, label| child_node(node, label.hash))
    }

    /// The namehashes of every suffix, the name itself first and the root last.
    pub fn suffix_nodes(&self) -> Vec<B256> {
        let mut nodes = vec![B256::ZERO; self.labels.len() + 1];
        for i in (0..self.labels.len()).rev() {
            nodes[i] = child_node(nodes[i + 1], self.labels[i].hash);
        }
        nodes
    }

    /// The suffix that drops the first `skip` labels, as text.
    pub fn suffix(&self, skip: usize) -> String {
        self.labels[skip.min(self.labels.len())..]
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The name in DNS wire format, as ENSIP-10's `resolve(bytes,bytes)` takes it. A label
    /// longer than DNS allows goes as its encoded labelhash.
    pub fn dns_encoded(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 2);
        for label in &self.labels {
            let hashed;
            let text = if label.text.len() > MAX_DNS_LABEL_BYTES {
                hashed = format!("[{}]", hex::encode(label.hash));
                hashed.as_str()
            } else {
                label.text.as_str()
            };
            // Both forms are at most 255 bytes here.
            out.push(u8::try_from(text.len()).unwrap_or(u8::MAX));
            out.extend_from_slice(text.as_bytes());
        }
        out.push(0);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_suffixes_and_encodes() {
        let name = ResolvableName::parse("a.vitalik.eth").unwrap();
        let nodes = name.suffix_nodes();
        assert_eq!(nodes[0], alloy::ens::namehash("a.vitalik.eth"));
        assert_eq!(nodes[1], alloy::ens::namehash("vitalik.eth"));
        assert_eq!(nodes[3], B256::ZERO);
        assert_eq!(name.node_of_suffix(2), alloy::ens::namehash("eth"));
        assert_eq!(name.suffix(1), "vitalik.eth");
        assert_eq!(name.dns_encoded(), b"\x01a\x07vitalik\x03eth\x00".to_vec());
        let hashed = format!("[{}].eth", hex::encode(labelhash("Vitalik")));
        let name = ResolvableName::parse(&hashed).unwrap();
        assert_eq!(
            name.node_of_suffix(0),
            child_node(alloy::ens::namehash("eth"), labelhash("Vitalik"))
        );
    }

    #[test]
    fn refuses_unnormalized_and_oversized_names() {
        for bad in ["Vitalik.eth", "a..eth", ".eth", "[zz].eth", &"a.".repeat(MAX_NAME_DEPTH + 1)] {
            let err = ResolvableName::parse(bad).unwrap_err();
            assert_eq!(err.code, error_code::INVALID_NAME, "{bad:?}");
        }
        let long = format!("{}.eth", "a".repeat(MAX_NAME_BYTES));
        assert_eq!(ResolvableName::parse(&long).unwrap_err().code, error_code::INVALID_NAME);
        let err = ResolvableName::parse("Vitalik.eth").unwrap_err();
        assert!(err.message.contains("\"vitalik\""), "{}", err.message);
    }

    #[test]
    fn long_labels_go_hashed_in_dns_form() {
        let label = "a".repeat(300);
        let name = ResolvableName::parse(&format!("{label}.eth")).unwrap();
        let encoded = name.dns_encoded();
        assert_eq!(encoded[0], 66);
        assert_eq!(&encoded[1..67], format!("[{}]", hex::encode(labelhash(&label))).as_bytes());
    }
}
