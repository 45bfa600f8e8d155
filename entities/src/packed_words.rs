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
//!   follow as they are (log data need not be whole words). Only the last header may be one.
//!
//! The encoding is canonical: [`PackedWords::pack`] keeps the smaller of the two trims (the
//! leading one on a tie), so equal logs store equal bytes.

use std::fmt;

use sea_orm::entity::prelude::*;

/// Size of an ABI word.
pub const WORD: usize = 32;
/// Header flag: the kept bytes start the word.
const TRAILING: u8 = 0x40;
/// Header flag: a final partial word.
const PARTIAL: u8 = 0x80;

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
        let mut out = Vec::with_capacity(bytes.len() / 2 + 4);
        let mut words = bytes.chunks_exact(WORD);
        for word in words.by_ref() {
            push_word(&mut out, word);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            out.push(PARTIAL | rest.len() as u8);
            out.extend_from_slice(rest);
        }
        Self(out)
    }

    /// Packs whole words (a log's topics), as [`Self::pack`] packs their concatenation.
    pub fn pack_words<'a>(words: impl IntoIterator<Item = &'a [u8; WORD]>) -> Self {
        let mut out = Vec::with_capacity(2 * WORD);
        for word in words {
            push_word(&mut out, word);
        }
        Self(out)
    }

    /// The bytes that were packed.
    pub fn unpack(&self) -> Result<Vec<u8>, MalformedPacking> {
        let packed = &self.0;
        let mut out = Vec::with_capacity(packed.len() * 2);
        let mut at = 0;
        while let Some(&header) = packed.get(at) {
            let malformed = |reason| MalformedPacking { offset: at, reason };
            let kept = usize::from(header & 0x3f);
            let valid = match header & 0xc0 {
                0 => kept <= WORD,
                TRAILING => (1..WORD).contains(&kept),
                PARTIAL => kept < WORD,
                _ => false,
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

/// Appends one whole word's header and kept bytes.
fn push_word(out: &mut Vec<u8>, word: &[u8]) {
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
    /// The unpacked bytes as hex (what the log held), or the stored bytes if malformed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unpack() {
            Ok(bytes) => write!(f, "0x{}", hex::encode(bytes)),
            Err(_) => write!(f, "malformed(0x{})", hex::encode(&self.0)),
        }
    }
}

impl serde::Serialize for PackedWords {
    /// As the `0x` hex of the unpacked bytes: what the log held.
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
        assert_eq!(PackedWords::pack_words(&words), PackedWords::pack(&topics));
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
        let cases: [(&[u8], usize, &str); 6] = [
            (&[33], 0, "invalid header"),
            (&[2, 1], 0, "truncated"),
            (&[TRAILING, 1], 0, "invalid header"),
            (&[0xc1, 1], 0, "invalid header"),
            (&[PARTIAL | 1, 9, 0], 0, "a partial word before the end"),
            (&[0, PARTIAL | 32], 1, "invalid header"),
        ];
        for (stored, offset, reason) in cases {
            let err = PackedWords::from_stored(stored.to_vec()).unpack().expect_err(reason);
            assert_eq!(err, MalformedPacking { offset, reason }, "{stored:?}");
        }
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
