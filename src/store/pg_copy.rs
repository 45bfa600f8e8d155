//! PostgreSQL's bulk insert of new rows: `COPY … FROM STDIN (FORMAT binary)`.
//!
//! The rows a flush knows to be new (the event history, and the domains, registrations,
//! renewals and resolver records the store created) have no conflict to resolve. `COPY` takes
//! them as one stream of binary tuples: the server inserts them a page at a time instead of a
//! row at a time and parses no arrays, and Ensemble writes each value's bytes straight into
//! the stream instead of building an array of values per column ([`super::unnest_upsert`],
//! which the rows that may be stored keep). A key that is stored after all fails the copy,
//! and the flush with it, as a plain insert would.

use std::borrow::Borrow;

use sea_orm::{EntityTrait, IdenStatic, Iterable, ModelTrait, Value};

use super::{StoreError, write_txn::WriteTxn};

/// Bytes of tuples sent to the server at a time: the stream is built and sent in pieces of
/// about this size, so a large flush never holds its whole stream in memory.
const SEND_BYTES: usize = 4 << 20;

/// The binary format's signature, then its flags and header-extension length (both zero).
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// Inserts the rows of `chunks`, all new, into `E`'s table by one `COPY` in `txn`, which must
/// be PostgreSQL's.
pub(crate) async fn insert<E, R>(txn: &WriteTxn, chunks: &[&[R]]) -> Result<(), StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E> + Sync,
    R: Borrow<E::Model> + Sync,
{
    let Some(first) = chunks.iter().find_map(|chunk| chunk.first()) else { return Ok(()) };
    let table = E::default().table_name();
    let columns: Vec<E::Column> = E::Column::iter().collect();
    // A typed model column always yields the same variant, NULL or not: the first row's
    // values say whether every row's can be encoded.
    let mut scratch = Vec::new();
    if let Some(&column) = columns.iter().find(|&&c| !encode(&first.borrow().get(c), &mut scratch))
    {
        return Err(StoreError::UnsupportedColumn { table, column: column.as_str() });
    }
    let statement = format!(
        "COPY \"{table}\" ({}) FROM STDIN (FORMAT binary)",
        columns.iter().map(|c| format!("\"{}\"", c.as_str())).collect::<Vec<_>>().join(", ")
    );
    let pieces = Pieces::<E, R> { chunks, at: (0, 0), columns, started: false, done: false };
    // The server parses every tuple it is sent: a stream that does not hold well-formed
    // tuples of the table's columns fails the copy.
    txn.copy_in(&statement, pieces).await.map_err(StoreError::db("copy"))?;
    Ok(())
}

/// The binary stream of a copy's rows in pieces of about [`SEND_BYTES`], each built when the
/// one before it has been sent.
struct Pieces<'a, E: EntityTrait, R> {
    chunks: &'a [&'a [R]],
    /// The next row: its chunk and its place in it.
    at: (usize, usize),
    columns: Vec<E::Column>,
    started: bool,
    done: bool,
}

impl<E, R> Iterator for Pieces<'_, E, R>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E>,
    R: Borrow<E::Model>,
{
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        let mut piece = Vec::with_capacity(SEND_BYTES + (SEND_BYTES >> 4));
        if !self.started {
            piece.extend_from_slice(HEADER);
            self.started = true;
        }
        while piece.len() < SEND_BYTES {
            let (chunk, row) = self.at;
            let Some(rows) = self.chunks.get(chunk) else {
                // The trailer: a field count of -1.
                piece.extend_from_slice(&(-1i16).to_be_bytes());
                self.done = true;
                break;
            };
            let Some(row) = rows.get(row) else {
                self.at = (chunk + 1, 0);
                continue;
            };
            let row = row.borrow();
            piece.extend_from_slice(&(self.columns.len() as i16).to_be_bytes());
            for &column in &self.columns {
                encode(&row.get(column), &mut piece);
            }
            self.at.1 += 1;
        }
        Some(piece)
    }
}

/// Appends `value` as a field of the binary format: its length (-1 for NULL), then its bytes
/// in the type's binary form. `false` for a variant no entity column uses.
fn encode(value: &Value, out: &mut Vec<u8>) -> bool {
    fn field(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
        match bytes {
            Some(bytes) => {
                out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    match value {
        Value::Bool(v) => field(out, v.map(|v| [v as u8]).as_ref().map(|b| &b[..])),
        Value::SmallInt(v) => field(out, v.map(i16::to_be_bytes).as_ref().map(|b| &b[..])),
        Value::Int(v) => field(out, v.map(i32::to_be_bytes).as_ref().map(|b| &b[..])),
        Value::BigInt(v) => field(out, v.map(i64::to_be_bytes).as_ref().map(|b| &b[..])),
        Value::String(v) => field(out, v.as_deref().map(str::as_bytes)),
        Value::Bytes(v) => field(out, v.as_deref()),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_as_the_binary_format_says() {
        let mut out = Vec::new();
        assert!(encode(&Value::BigInt(Some(-2)), &mut out));
        assert!(encode(&Value::Int(None), &mut out));
        assert!(encode(&Value::SmallInt(Some(258)), &mut out));
        assert!(encode(&Value::Bool(Some(true)), &mut out));
        assert!(encode(&Value::String(Some("ab".into())), &mut out));
        assert!(encode(&Value::Bytes(Some(vec![7])), &mut out));
        let expected: Vec<u8> = [
            &[0, 0, 0, 8][..],
            &(-2i64).to_be_bytes(),
            &[0xff, 0xff, 0xff, 0xff],
            &[0, 0, 0, 2, 1, 2],
            &[0, 0, 0, 1, 1],
            &[0, 0, 0, 2, b'a', b'b'],
            &[0, 0, 0, 1, 7],
        ]
        .concat();
        assert_eq!(out, expected);
        assert!(!encode(&Value::Double(Some(1.0)), &mut out));
    }
}
