//! [`PackedWords`]: a log's topics or data as the event history stores them, each 32-byte
//! ABI word without its zero padding.
//!
//! Why: ABI encoding pads every value to 32 bytes. An address is 12 zero bytes and 20 of
//! address, an amount or a timestamp is mostly leading zeros, an offset or a string length
//! is one byte in 32, and a short string sits at the front of a word of trailing zeros. On a
//! mainnet-shaped corpus the topics and data of an event average 114 bytes, of which the
//! packed form keeps 67; the history is the largest table, so that is the largest saving
//! left in a row. Hashes, which are incompressible, cost one byte more.
//!
//! The format, word by word, each word a header byte and then its kept bytes:
//! - `n` in `0..=32`: the word's last `n` bytes follow; the others are leading zeros;
//! - `0x40 | n`, `n` in `1..=31`: the word's first `n` bytes follow; the others are
//!   trailing zeros;
//! - `0x80 | n`, `n` in `0..=31`: the input ended with a partial word of `n` bytes, which
//!   follow as they are (log data need not be whole words). Only the last header may be one;
//! - `0xc0 | k`, `k` in `0..=2`, nothing follows: the word is one the event's domain holds
//!   ([`SubjectWords`]): its node (0), its label hash (1) or its parent's node (2).
//!
//! Why the last: most domain events repeat what their domain row already holds. `NewOwner`
//! carries the parent's node and the label hash, registrar events the label hash as the token
//! id, `NewResolver` and the NameWrapper's events the node: 32 random bytes each, a third of
//! the history's payload on a mainnet-shaped corpus. A domain's node, label hash and parent
//! never change, so a word the store finds equal to one of them is written as a reference, and
//! read back from the domain (the event's `domain_seq`) exactly as the log held it.
//!
//! The encoding is canonical: [`PackedWords::pack`] keeps the smaller of the two trims (the
//! leading one on a tie), and [`PackedWords::pack_with`] refers to every non-zero word its
//! subject holds, so equal logs of one domain store equal bytes.

use std::fmt;

use sea_orm::entity::prelude::*;

/// Size of an ABI word.
pub const WORD: usize = 32;
/// Header flag: the kept bytes start the word.
const TRAILING: u8 = 0x40;
/// Header flag: a final partial word.
const PARTIAL: u8 = 0x80;
/// Header flag: a word of the event's domain; the low bits say which ([`SubjectWords`]).
const DERIVED: u8 = 0xc0;
/// Low bits of a [`DERIVED`] header: the domain's node, label hash, parent's node.
const NODE: u8 = 0;
const LABEL_HASH: u8 = 1;
const PARENT_NODE: u8 = 2;

/// The words of the domain an event is about, which its log may repeat.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubjectWords {
    /// The domain's node.
    pub node: [u8; WORD],
    /// Its label hash.
    pub label_hash: [u8; WORD],
    /// Its parent's node; `None` when unknown to the reader (a top-level domain's parent is
    /// the root, which has no domain row).
    pub parent_node: Option<[u8; WORD]>,
}

impl SubjectWords {
    /// The word a [`DERIVED`] header's low bits name.
    fn word(&self, which: u8) -> Option<&[u8; WORD]> {
        match which {
            NODE => Some(&self.node),
            LABEL_HASH => Some(&self.label_hash),
            PARENT_NODE => self.parent_node.as_ref(),
            _ => None,
        }
    }

    /// Which of the subject's words `word` is, if any (never for a zero word, which packs as
    /// small without a reference).
    fn which(&self, word: &[u8]) -> Option<u8> {
        if word.iter().all(|b| *b == 0) {
            return None;
        }
        [NODE, LABEL_HASH, PARENT_NODE]
            .into_iter()
            .find(|which| self.word(*which).is_some_and(|w| w.as_slice() == word))
    }
}

/// Stored bytes that are not a packing [`PackedWords::pack`] could have written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedPacking {
    /// Offset of the header that could not be read.
    pub offset: usize,
    /// What is wrong there.
    pub reason: &'static str,
}

impl fmt::Display for MalformedPacking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed packed log words at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for MalformedPacking {}

/// Topics or log data, packed word by word (see the module docs). Stored as a blob.
#[derive(Clone, Default, PartialEq, Eq, Hash, DeriveValueType)]
pub struct PackedWords(Vec<u8>);

impl PackedWords {
    /// Packs `bytes`, a sequence of ABI words and possibly a final partial one.
    pub fn pack(bytes: &[u8]) -> Self {
        Self::pack_with(bytes, None)
    }

    /// Packs `bytes` as [`Self::pack`] does, writing each whole word that `subject` holds as a
    /// reference to it.
    pub fn pack_with(bytes: &[u8], subject: Option<&SubjectWords>) -> Self {
        let mut out = Vec::with_capacity(bytes.len() / 2 + 4);
        let mut words = bytes.chunks_exact(WORD);
        for word in words.by_ref() {
            push_word(&mut out, word, subject);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            out.push(PARTIAL | rest.len() as u8);
            out.extend_from_slice(rest);
        }
        Self(out)
    }

    /// Packs whole words (a log's topics), as [`Self::pack_with`] packs their concatenation.
    pub fn pack_words<'a>(
        words: impl IntoIterator<Item = &'a [u8; WORD]>,
        subject: Option<&SubjectWords>,
    ) -> Self {
        let mut out = Vec::with_capacity(2 * WORD);
        for word in words {
            push_word(&mut out, word, subject);
        }
        Self(out)
    }

    /// Whether reading these words back needs the event's domain, and whether its parent too:
    /// `(domain, parent)`. A malformed packing needs neither ([`Self::unpack_with`] reports
    /// it).
    pub fn needs_subject(&self) -> (bool, bool) {
        let mut needs = (false, false);
        let mut at = 0;
        while let Some(&header) = self.0.get(at) {
            if header & 0xc0 == DERIVED {
                needs.0 = true;
                needs.1 |= header & 0x3f == PARENT_NODE;
                at += 1;
            } else {
                at += 1 + usize::from(header & 0x3f);
            }
        }
        needs
    }

    /// The bytes that were packed, when no word refers to the event's domain.
    pub fn unpack(&self) -> Result<Vec<u8>, MalformedPacking> {
        self.unpack_with(None)
    }

    /// The bytes that were packed, the words that refer to the event's domain read from
    /// `subject`.
    pub fn unpack_with(&self, subject: Option<&SubjectWords>) -> Result<Vec<u8>, MalformedPacking> {
        let packed = &self.0;
        let mut out = Vec::with_capacity(packed.len() * 2);
        let mut at = 0;
        while let Some(&header) = packed.get(at) {
            let malformed = |reason| MalformedPacking { offset: at, reason };
            let kept = usize::from(header & 0x3f);
            if header & 0xc0 == DERIVED {
                if kept > usize::from(PARENT_NODE) {
                    return Err(malformed("invalid header"));
                }
                let subject = subject
                    .ok_or_else(|| malformed("a word of the event's domain, read without it"))?;
                let word = subject
                    .word(header & 0x3f)
                    .ok_or_else(|| malformed("a parent's node the domain does not know"))?;
                out.extend_from_slice(word);
                at += 1;
                continue;
            }
            let valid = match header & 0xc0 {
                0 => kept <= WORD,
                TRAILING => (1..WORD).contains(&kept),
                _ => kept < WORD,
            };
            if !valid {
                return Err(malformed("invalid header"));
            }
            let body = packed.get(at + 1..at + 1 + kept).ok_or_else(|| malformed("truncated"))?;
            match header & 0xc0 {
                0 => {
                    out.resize(out.len() + WORD - kept, 0);
                    out.extend_from_slice(body);
                }
                TRAILING => {
                    out.extend_from_slice(body);
                    out.resize(out.len() + WORD - kept, 0);
                }
                _ => {
                    if at + 1 + kept != packed.len() {
                        return Err(malformed("a partial word before the end"));
                    }
                    out.extend_from_slice(body);
                }
            }
            at += 1 + kept;
        }
        Ok(out)
    }

    /// Bytes allocated for the packed bytes (their capacity), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.0.capacity()
    }

    /// The packed bytes, as stored.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Stored bytes, taken as they are; [`Self::unpack`] checks them.
    pub fn from_stored(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }
}

/// Appends one whole word's header and kept bytes, or a reference to the subject's word.
fn push_word(out: &mut Vec<u8>, word: &[u8], subject: Option<&SubjectWords>) {
    if let Some(which) = subject.and_then(|s| s.which(word)) {
        out.push(DERIVED | which);
        return;
    }
    let leading = word.iter().take_while(|b| **b == 0).count();
    let trailing = word.iter().rev().take_while(|b| **b == 0).count();
    if leading >= trailing {
        out.push((WORD - leading) as u8);
        out.extend_from_slice(&word[leading..]);
    } else {
        out.push(TRAILING | (WORD - trailing) as u8);
        out.extend_from_slice(&word[..WORD - trailing]);
    }
}

impl fmt::Debug for PackedWords {
    /// The unpacked bytes as hex (what the log held), or the stored bytes if they cannot be
    /// unpacked alone (malformed, or referring to the event's domain).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unpack() {
            Ok(bytes) => write!(f, "0x{}", hex::encode(bytes)),
            Err(_) => write!(f, "packed(0x{})", hex::encode(&self.0)),
        }
    }
}

impl serde::Serialize for PackedWords {
    /// As the `0x` hex of the unpacked bytes: what the log held. Words that refer to the
    /// event's domain cannot be shown without it, so such a packing is an error here; the
    /// dump and GraphQL unpack events with their domain.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let bytes = self.unpack().map_err(serde::ser::Error::custom)?;
        serializer.collect_str(&format_args!("0x{}", hex::encode(bytes)))
    }
}

impl<'de> serde::Deserialize<'de> for PackedWords {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let bytes = text
            .strip_prefix("0x")
            .and_then(|digits| hex::decode(digits).ok())
            .ok_or_else(|| serde::de::Error::custom(format!("not 0x hex: {text:.100}")))?;
        Ok(Self::pack(&bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(f: impl Fn(usize) -> u8) -> Vec<u8> {
        (0..WORD).map(f).collect()
    }

    #[test]
    fn round_trips_every_kind_of_word() {
        let address = word(|i| if i < 12 { 0 } else { i as u8 });
        let hash = word(|i| i as u8 + 1);
        let zero = word(|_| 0);
        let string = word(|i| if i < 5 { b"alice"[i] } else { 0 });
        let small = word(|i| if i == 31 { 0x40 } else { 0 });
        let cases: Vec<Vec<u8>> = vec![
            vec![],
            address.clone(),
            [hash.clone(), zero.clone(), string.clone(), small.clone()].concat(),
            [address.clone(), vec![0xde, 0xad, 0xbe, 0xef]].concat(),
            vec![0; 7],
            [zero.clone(), zero.clone()].concat(),
        ];
        let topics = [hash.clone(), address.clone()].concat();
        let words =
            [<[u8; WORD]>::try_from(&hash[..]).unwrap(), address.clone().try_into().unwrap()];
        assert_eq!(PackedWords::pack_words(&words, None), PackedWords::pack(&topics));
        for bytes in cases {
            let packed = PackedWords::pack(&bytes);
            assert_eq!(packed.unpack().expect("packed by pack"), bytes, "{packed:?}");
        }
        assert_eq!(PackedWords::pack(&address).as_bytes().len(), 21);
        assert_eq!(PackedWords::pack(&hash).as_bytes().len(), 33);
        assert_eq!(PackedWords::pack(&zero).as_bytes(), [0]);
        assert_eq!(
            PackedWords::pack(&string).as_bytes(),
            [TRAILING | 5, b'a', b'l', b'i', b'c', b'e']
        );
        assert_eq!(PackedWords::pack(&small).as_bytes(), [1, 0x40]);
        assert_eq!(PackedWords::pack(&[]).as_bytes(), [0_u8; 0]);
    }

    #[test]
    fn refuses_what_pack_never_writes() {
        let cases: [(&[u8], usize, &str); 7] = [
            (&[33], 0, "invalid header"),
            (&[2, 1], 0, "truncated"),
            (&[TRAILING, 1], 0, "invalid header"),
            (&[0xc3], 0, "invalid header"),
            (&[0, 0xc1], 1, "a word of the event's domain, read without it"),
            (&[PARTIAL | 1, 9, 0], 0, "a partial word before the end"),
            (&[0, PARTIAL | 32], 1, "invalid header"),
        ];
        for (stored, offset, reason) in cases {
            let err = PackedWords::from_stored(stored.to_vec()).unpack().expect_err(reason);
            assert_eq!(err, MalformedPacking { offset, reason }, "{stored:?}");
        }
    }

    #[test]
    fn refers_to_the_words_its_domain_holds() {
        let subject = SubjectWords {
            node: [0x11; WORD],
            label_hash: [0x22; WORD],
            parent_node: Some([0x33; WORD]),
        };
        let address = word(|i| if i < 12 { 0 } else { 0xaa });
        // `NewOwner(parent, label)` topics, then data with the node, an address and a zero
        // word (which packs small on its own, never as a reference).
        let topics = [[0x33; WORD], [0x22; WORD]];
        let data = [vec![0x11; WORD], address, vec![0; WORD], vec![0xde, 0xad]].concat();
        let packed_topics = PackedWords::pack_words(&topics, Some(&subject));
        assert_eq!(packed_topics.as_bytes(), [DERIVED | PARENT_NODE, DERIVED | LABEL_HASH]);
        let packed_data = PackedWords::pack_with(&data, Some(&subject));
        assert_eq!(packed_data.as_bytes()[0], DERIVED | NODE);
        assert_eq!(packed_data.as_bytes().len(), 1 + 21 + 1 + 3);
        assert_eq!(packed_topics.needs_subject(), (true, true));
        assert_eq!(packed_data.needs_subject(), (true, false));
        assert_eq!(PackedWords::pack(&data).needs_subject(), (false, false));
        assert_eq!(
            packed_topics.unpack_with(Some(&subject)).expect("with its domain"),
            topics.concat()
        );
        assert_eq!(packed_data.unpack_with(Some(&subject)).expect("with its domain"), data);
        let err = packed_topics.unpack().expect_err("alone");
        assert_eq!(err.reason, "a word of the event's domain, read without it");
        let orphan = SubjectWords { parent_node: None, ..subject };
        let err = packed_topics.unpack_with(Some(&orphan)).expect_err("no parent");
        assert_eq!(err.reason, "a parent's node the domain does not know");
        assert!(serde_json::to_string(&packed_topics).is_err(), "cannot be shown alone");
        // Without a subject, the same words pack as before.
        assert_eq!(PackedWords::pack_with(&data, None), PackedWords::pack(&data));
    }

    #[test]
    fn serializes_as_the_unpacked_hex() {
        let packed = PackedWords::pack(&[0xde, 0xad]);
        let json = serde_json::to_string(&packed).expect("serializes");
        assert_eq!(json, "\"0xdead\"");
        assert_eq!(serde_json::from_str::<PackedWords>(&json).expect("deserializes"), packed);
        assert!(serde_json::from_str::<PackedWords>("\"dead\"").is_err());
    }
}
