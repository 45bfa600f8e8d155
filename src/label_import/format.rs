//! The label file formats `ensemble labels import` reads, one entry at a time:
//!
//! - **text**: one label per line (`\n` or `\r\n`); empty lines are skipped;
//! - **CSV**: `labelhash,label` per line, the hash `0x` and 64 hex digits, the label the rest
//!   of the line (it may hold commas; a label in double quotes is unquoted, `""` being a
//!   quote); a first line `labelhash,label` is a header;
//! - **ENSRainbow** (`.ensrainbow`): a stream of length-delimited protobuf messages, a header
//!   (`format_identifier` "ensrainbow", the label set's id and version) and then
//!   `RainbowRecord { bytes labelhash = 1; string label = 2; }` records.
//!
//! Every label is checked against its hash where the file gives one, and must be UTF-8 and
//! at most [`MAX_LABEL_BYTES`] long. A bad entry is reported with its line (record) number
//! and skipped; only a stream that cannot be read on (an ENSRainbow length cut short) ends
//! the import.

use std::io::{BufRead, Read};

use alloy::primitives::B256;

use super::error::{BadEntry, Position};
use crate::ens::name::labelhash;

/// Longest label an import takes, in bytes: the longest name the API accepts, so every label
/// an import heals can be typed back. On chain a label may be longer still; such a label is
/// healed by the event that carries it, not by a file.
pub const MAX_LABEL_BYTES: usize = 32 * 1024;

/// Longest line of a text or CSV file held in memory: a label, its hash and a comma, quoted.
/// The rest of a longer line is read past, not kept.
const MAX_LINE_BYTES: usize = 2 * MAX_LABEL_BYTES + 80;

/// Longest ENSRainbow message read: a record is a hash and one label, far below this; a
/// larger length is a corrupt stream, not something to allocate.
const MAX_MESSAGE_BYTES: u64 = 64 * 1024;

/// The format of a label file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One label per line.
    Text,
    /// `labelhash,label` per line.
    Csv,
    /// ENSRainbow's length-delimited protobuf records.
    Ensrainbow,
}

impl Format {
    /// The format a file's name says: `.ensrainbow`, `.csv`, anything else is text.
    pub fn of_path(path: &std::path::Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some("ensrainbow") => Self::Ensrainbow,
            Some("csv") => Self::Csv,
            _ => Self::Text,
        }
    }
}

/// One entry of a label file: a label with its hash, or why it is skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Where it is.
    pub position: Position,
    /// The label and its hash, or why the entry is bad.
    pub label: Result<(B256, String), BadEntry>,
}

/// What stops reading: the file (I/O), or a stream that cannot be read past `Position`.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be read.
    Io(std::io::Error),
    /// The stream is corrupt at this position.
    Corrupt(Position, String),
}

impl From<std::io::Error> for ReadError {
    fn from(err: std::io::Error) -> Self {
        Self::Io(err)
    }
}

/// Reads entries from a label file.
#[derive(Debug)]
pub struct LabelReader<R> {
    input: R,
    format: Format,
    /// Lines or records read.
    count: u64,
    /// Bytes read.
    bytes: u64,
    line: Vec<u8>,
}

impl<R: BufRead> LabelReader<R> {
    /// A reader of `input` in `format`.
    pub fn new(input: R, format: Format) -> Self {
        Self { input, format, count: 0, bytes: 0, line: Vec::new() }
    }

    /// Bytes read so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// The next entry, `None` at the end of the file.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, ReadError> {
        match self.format {
            Format::Text | Format::Csv => self.next_line(),
            Format::Ensrainbow => self.next_record(),
        }
    }

    fn next_line(&mut self) -> Result<Option<Entry>, ReadError> {
        loop {
            self.line.clear();
            let read = self
                .input
                .by_ref()
                .take(MAX_LINE_BYTES as u64)
                .read_until(b'\n', &mut self.line)?;
            if read == 0 {
                return Ok(None);
            }
            self.bytes += read as u64;
            self.count += 1;
            if read == MAX_LINE_BYTES && self.line.last() != Some(&b'\n') {
                let (rest, newline) = self.skip_line()?;
                self.bytes += rest;
                let length = read + rest as usize - usize::from(newline);
                let position = Position::Line(self.count);
                return Ok(Some(Entry { position, label: Err(BadEntry::Overlong(length)) }));
            }
            let mut line = self.line.as_slice();
            line = line.strip_suffix(b"\n").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            let position = Position::Line(self.count);
            let label = match self.format {
                Format::Csv => {
                    if self.count == 1 && line.eq_ignore_ascii_case(b"labelhash,label") {
                        continue;
                    }
                    csv_entry(line)
                }
                _ if line.is_empty() => continue,
                _ => checked_label(line).map(|label| (labelhash(&label), label)),
            };
            return Ok(Some(Entry { position, label }));
        }
    }

    /// Reads past the rest of an overlong line, through its newline, keeping none of it.
    /// Returns the bytes read and whether they ended in a newline.
    fn skip_line(&mut self) -> Result<(u64, bool), ReadError> {
        let mut skipped = 0;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok((skipped, false));
            }
            let (used, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            self.input.consume(used);
            skipped += used as u64;
            if done {
                return Ok((skipped, true));
            }
        }
    }

    fn next_record(&mut self) -> Result<Option<Entry>, ReadError> {
        loop {
            let position = Position::Record(self.count + 1);
            let Some(len) = self.frame_length(position)? else { return Ok(None) };
            if len > MAX_MESSAGE_BYTES {
                return Err(ReadError::Corrupt(
                    position,
                    format!("a message of {len} bytes (records are under {MAX_MESSAGE_BYTES})"),
                ));
            }
            let mut message = vec![0; len as usize];
            self.input.read_exact(&mut message).map_err(|err| match err.kind() {
                std::io::ErrorKind::UnexpectedEof => ReadError::Corrupt(
                    position,
                    format!("the file ends inside a message of {len} bytes"),
                ),
                _ => ReadError::Io(err),
            })?;
            self.bytes += len;
            let fields = match protobuf_fields(&message) {
                Some(fields) => fields,
                None if self.count == 0 => {
                    return Err(ReadError::Corrupt(position, "not an ENSRainbow stream".into()));
                }
                None => {
                    self.count += 1;
                    return Ok(Some(Entry {
                        position,
                        label: Err(BadEntry::IncompleteRecord("protobuf fields")),
                    }));
                }
            };
            // The header names the format; a record's field 1 is its 32-byte hash.
            let record_like = fields.iter().any(|(n, value)| *n == 1 && value.len() == 32);
            if !record_like && fields.iter().any(|(_, value)| *value == b"ensrainbow") {
                continue;
            }
            self.count += 1;
            return Ok(Some(Entry { position, label: record_entry(&fields) }));
        }
    }

    /// A message's length prefix, `None` at a clean end of the stream.
    fn frame_length(&mut self, position: Position) -> Result<Option<u64>, ReadError> {
        let mut value = 0u64;
        for i in 0..10 {
            let mut byte = [0u8];
            if self.input.read(&mut byte)? == 0 {
                if i == 0 {
                    return Ok(None);
                }
                return Err(ReadError::Corrupt(position, "the file ends inside a length".into()));
            }
            self.bytes += 1;
            value |= u64::from(byte[0] & 0x7f) << (7 * i);
            if byte[0] & 0x80 == 0 {
                return Ok(Some(value));
            }
        }
        Err(ReadError::Corrupt(position, "a length of more than ten bytes".into()))
    }
}

/// A label's bytes as a label: UTF-8, not over [`MAX_LABEL_BYTES`].
fn checked_label(bytes: &[u8]) -> Result<String, BadEntry> {
    if bytes.len() > MAX_LABEL_BYTES {
        return Err(BadEntry::Overlong(bytes.len()));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| BadEntry::NotUtf8)
}

/// A label checked against the hash the file gives for it.
fn hashed_label(hash: B256, bytes: &[u8]) -> Result<(B256, String), BadEntry> {
    let label = checked_label(bytes)?;
    let actual = labelhash(&label);
    if actual != hash {
        return Err(BadEntry::WrongHash { given: hash.to_string(), actual: actual.to_string() });
    }
    Ok((hash, label))
}

fn csv_entry(line: &[u8]) -> Result<(B256, String), BadEntry> {
    let comma = line.iter().position(|b| *b == b',').ok_or(BadEntry::NotCsv)?;
    let (hash, label) = (&line[..comma], &line[comma + 1..]);
    let hash_text = String::from_utf8_lossy(hash).trim().to_owned();
    let hash = parse_hash(&hash_text).ok_or(BadEntry::MalformedHash(hash_text))?;
    let label = match label.strip_prefix(b"\"").and_then(|l| l.strip_suffix(b"\"")) {
        Some(quoted) => unquote(quoted),
        None => label.to_vec(),
    };
    hashed_label(hash, &label)
}

/// A quoted CSV field's content with `""` read as `"`.
fn unquote(quoted: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(quoted.len());
    let mut bytes = quoted.iter().peekable();
    while let Some(&b) = bytes.next() {
        out.push(b);
        if b == b'"' && bytes.peek() == Some(&&b'"') {
            bytes.next();
        }
    }
    out
}

fn parse_hash(text: &str) -> Option<B256> {
    let hex_digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))?;
    if hex_digits.len() != 64 {
        return None;
    }
    hex_digits.parse::<B256>().ok()
}

/// The length-delimited fields of a protobuf message, by field number (other wire types are
/// read past); `None` when the bytes are not a message.
fn protobuf_fields(mut bytes: &[u8]) -> Option<Vec<(u64, &[u8])>> {
    fn varint(bytes: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for i in 0..10 {
            let (&byte, rest) = bytes.split_first()?;
            *bytes = rest;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut fields = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        match key & 7 {
            0 => {
                varint(&mut bytes)?;
            }
            1 => bytes = bytes.get(8..)?,
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).ok()?;
                let value = bytes.get(..len)?;
                bytes = &bytes[len..];
                fields.push((key >> 3, value));
            }
            5 => bytes = bytes.get(4..)?,
            _ => return None,
        }
    }
    Some(fields)
}

fn record_entry(fields: &[(u64, &[u8])]) -> Result<(B256, String), BadEntry> {
    let field = |n: u64| fields.iter().rev().find(|(number, _)| *number == n).map(|(_, v)| *v);
    let hash = field(1).ok_or(BadEntry::IncompleteRecord("label hash"))?;
    let label = field(2).ok_or(BadEntry::IncompleteRecord("label"))?;
    let hash: [u8; 32] =
        hash.try_into().map_err(|_| BadEntry::MalformedHash(format!("0x{}", hex::encode(hash))))?;
    hashed_label(B256::from(hash), label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8], format: Format) -> Result<Vec<Entry>, String> {
        let mut reader = LabelReader::new(bytes, format);
        let mut out = Vec::new();
        loop {
            match reader.next_entry() {
                Ok(Some(entry)) => out.push(entry),
                Ok(None) => return Ok(out),
                Err(ReadError::Corrupt(position, reason)) => {
                    return Err(format!("{position}: {reason}"));
                }
                Err(ReadError::Io(err)) => return Err(err.to_string()),
            }
        }
    }

    fn good(position: Position, label: &str) -> Entry {
        Entry { position, label: Ok((labelhash(label), label.to_owned())) }
    }

    /// A length-delimited message of the given length-delimited fields.
    fn message(fields: &[(u64, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (number, value) in fields {
            body.push(((number << 3) | 2) as u8);
            push_varint(&mut body, value.len() as u64);
            body.extend_from_slice(value);
        }
        let mut out = Vec::new();
        push_varint(&mut out, body.len() as u64);
        out.extend(body);
        out
    }

    fn push_varint(out: &mut Vec<u8>, mut value: u64) {
        while value >= 0x80 {
            out.push((value as u8) | 0x80);
            value >>= 7;
        }
        out.push(value as u8);
    }

    #[test]
    fn text_lines_are_labels_and_bad_lines_say_why() {
        let long = "y".repeat(MAX_LABEL_BYTES + 1);
        let file = [
            b"vitalik\r\n".as_slice(),
            b"\n",
            b"caf\xe9\n",
            long.as_bytes(),
            b"\n",
            "🚀".as_bytes(),
        ]
        .concat();
        let entries = read_all(&file, Format::Text).unwrap();
        assert_eq!(
            entries,
            vec![
                good(Position::Line(1), "vitalik"),
                Entry { position: Position::Line(3), label: Err(BadEntry::NotUtf8) },
                Entry {
                    position: Position::Line(4),
                    label: Err(BadEntry::Overlong(MAX_LABEL_BYTES + 1))
                },
                good(Position::Line(5), "🚀"),
            ]
        );
    }

    #[test]
    fn a_line_too_long_to_hold_is_read_past() {
        let huge = "z".repeat(5 * MAX_LINE_BYTES + 3);
        let file = format!("{huge}\nvitalik\n{huge}");
        let entries = read_all(file.as_bytes(), Format::Text).unwrap();
        let overlong = |line| Entry {
            position: Position::Line(line),
            label: Err(BadEntry::Overlong(huge.len())),
        };
        assert_eq!(entries, vec![overlong(1), good(Position::Line(2), "vitalik"), overlong(3)]);
    }

    #[test]
    fn csv_lines_are_checked_against_their_hash() {
        let nick = labelhash("nick");
        let file = format!(
            "labelhash,label\n{nick},nick\n{},nick\n0x12,short\nno comma\n{},\"a,\"\"b\"\n",
            labelhash("other"),
            labelhash("a,\"b"),
        );
        let entries = read_all(file.as_bytes(), Format::Csv).unwrap();
        assert_eq!(entries[0], good(Position::Line(2), "nick"));
        assert_eq!(
            entries[1].label,
            Err(BadEntry::WrongHash {
                given: labelhash("other").to_string(),
                actual: nick.to_string()
            })
        );
        assert_eq!(entries[1].position, Position::Line(3));
        assert_eq!(entries[2].label, Err(BadEntry::MalformedHash("0x12".into())));
        assert_eq!(entries[3].label, Err(BadEntry::NotCsv));
        assert_eq!(entries[4], good(Position::Line(6), "a,\"b"));
        assert_eq!(entries.len(), 5);
    }

    #[test]
    fn ensrainbow_records_follow_the_header() {
        let header = message(&[(1, b"ensrainbow"), (3, b"test-set")]);
        let vitalik = labelhash("vitalik");
        let file = [
            header,
            message(&[(1, vitalik.as_slice()), (2, b"vitalik")]),
            message(&[(1, labelhash("x").as_slice()), (2, b"y")]),
            message(&[(1, vitalik.as_slice())]),
            message(&[(1, &[1, 2, 3]), (2, b"z")]),
            message(&[(1, labelhash("é").as_slice()), (2, "é".as_bytes())]),
            message(&[(1, labelhash("ensrainbow").as_slice()), (2, b"ensrainbow")]),
        ]
        .concat();
        let entries = read_all(&file, Format::Ensrainbow).unwrap();
        assert_eq!(entries.len(), 6);
        assert_eq!(entries[0], good(Position::Record(1), "vitalik"));
        assert_eq!(entries[5], good(Position::Record(6), "ensrainbow"));
        assert!(matches!(entries[1].label, Err(BadEntry::WrongHash { .. })));
        assert_eq!(entries[2].label, Err(BadEntry::IncompleteRecord("label")));
        assert_eq!(entries[3].label, Err(BadEntry::MalformedHash("0x010203".into())));
        assert_eq!(entries[4], good(Position::Record(5), "é"));
    }

    #[test]
    fn a_cut_ensrainbow_stream_is_an_error_at_its_record() {
        let mut file = message(&[(1, labelhash("a").as_slice()), (2, b"a")]);
        let second = message(&[(1, labelhash("b").as_slice()), (2, b"b")]);
        file.extend_from_slice(&second[..10]);
        assert_eq!(
            read_all(&file, Format::Ensrainbow).unwrap_err(),
            format!("record 2: the file ends inside a message of {} bytes", second.len() - 1)
        );
        assert!(read_all(&[0xff; 12], Format::Ensrainbow).unwrap_err().contains("record 1"));
    }
}
