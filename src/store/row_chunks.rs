//! [`RowChunks`]: an append-only list of rows kept in chunks of bounded length, for the
//! event history a flush collects (events, their blocks and transactions).
//!
//! A flush collects up to hundreds of thousands of history rows. In one vector, every growth
//! copied all the rows so far: grown by an eighth at a time (so that the capacity the byte
//! accounting counts stays close to the rows held), the copies and reallocations were 4% of
//! the pipeline thread's time at 5M events (BENCHMARKS.md). In chunks, a row is
//! moved once, and the capacity held beyond the rows is at most one chunk's.

use super::writer::UPSERT_ROWS;

/// Rows per chunk once a list has outgrown its first chunk: a whole number of the writer's
/// statements, so chunking adds no statement shape.
pub const CHUNK_ROWS: usize = 32 * UPSERT_ROWS;

/// Rows in order of their appending, in chunks. The first chunk grows as a vector does, so a
/// list of a few rows (a flush at the chain's head) holds a few rows' room; every later chunk
/// is allocated with room for [`CHUNK_ROWS`] and never grows.
#[derive(Debug, Clone, PartialEq)]
pub struct RowChunks<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for RowChunks<T> {
    fn default() -> Self {
        Self { chunks: Vec::new(), len: 0 }
    }
}

impl<T> From<Vec<T>> for RowChunks<T> {
    fn from(rows: Vec<T>) -> Self {
        let len = rows.len();
        let chunks = if rows.is_empty() { Vec::new() } else { vec![rows] };
        Self { chunks, len }
    }
}

impl<T> RowChunks<T> {
    /// Appends `row`.
    pub fn push(&mut self, row: T) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < chunk.capacity() || chunk.len() < CHUNK_ROWS => {
                chunk.push(row)
            }
            Some(_) => {
                let mut chunk = Vec::with_capacity(CHUNK_ROWS);
                chunk.push(row);
                self.chunks.push(chunk);
            }
            None => self.chunks.push(vec![row]),
        }
        self.len += 1;
    }

    /// The last row appended.
    pub fn last(&self) -> Option<&T> {
        self.chunks.last().and_then(|chunk| chunk.last())
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows, chunk by chunk, in order.
    pub fn chunks(&self) -> impl Iterator<Item = &[T]> {
        self.chunks.iter().map(Vec::as_slice)
    }

    /// The rows in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Bytes the chunks' slots take, by their capacity (the rows' own heap is not counted).
    pub fn slot_bytes(&self) -> usize {
        self.chunks.iter().map(|chunk| chunk.capacity() * size_of::<T>()).sum::<usize>()
            + self.chunks.capacity() * size_of::<Vec<T>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_come_back_in_order_in_bounded_chunks() {
        let mut rows = RowChunks::default();
        assert!(rows.is_empty() && rows.last().is_none());
        let total = 3 * CHUNK_ROWS + 17;
        for i in 0..total {
            rows.push(i);
        }
        assert_eq!(rows.len(), total);
        assert_eq!(rows.last(), Some(&(total - 1)));
        assert!(rows.iter().copied().eq(0..total));
        let lengths: Vec<usize> = rows.chunks().map(<[usize]>::len).collect();
        assert_eq!(lengths, [CHUNK_ROWS, CHUNK_ROWS, CHUNK_ROWS, 17]);
        assert!(lengths.iter().all(|len| len % UPSERT_ROWS == 0 || *len == 17));
        // The room held beyond the rows is the last chunk's, plus the first chunk's slack.
        let held = rows.slot_bytes() / size_of::<usize>();
        assert!(held - total < CHUNK_ROWS + 8, "{held} slots for {total} rows");
    }

    #[test]
    fn a_few_rows_hold_a_few_rows_room() {
        let mut rows = RowChunks::default();
        for i in 0..3u64 {
            rows.push(i);
        }
        assert!(rows.slot_bytes() < 16 * size_of::<u64>() + 64);
        let from_vec = RowChunks::from(vec![1u64, 2, 3]);
        assert_eq!(from_vec.len(), 3);
        assert_eq!(from_vec.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
    }
}
