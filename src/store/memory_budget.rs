//! [`MemoryBudget`]: how a chain's memory budget (`indexer.cache_mb`) is shared among the
//! four things that grow with the data, so that together they stay within it:
//!
//! - the rows written behind: the dirty set the handlers fill and the flush in flight;
//! - the entity read cache (moka), by bytes ([`super::cache`]);
//! - the filters of the keys stored ([`super::key_filter`]), a sixty-fourth;
//! - on SQLite, the page cache of the connection flushes are written through.
//!
//! What the budget does not cover is fixed or small: the binary, thread stacks, the pooled
//! connections' page caches (`database::SQLITE_CACHE_KIB` each), the batches queued in the
//! mailboxes and the allocator's own slack.
//!
//! The shares follow what each buys (BENCHMARKS.md, the memory-budget, budget-split and read-cache
//! runs, which cached a committed flush's rows too; now the cache holds only rows read from the
//! database, `store::table`). The read cache saves the prefetch's queries. On SQLite an eighth of
//! the budget cost the prefetch 4–10% more keys than three eighths did at 5M events, read from a
//! database that is local and mostly in the kernel's file cache. It ran as fast at a 512 MiB
//! budget, within the machine's drift at 256 MiB (where a few percent is not ruled out), and peaked
//! 70–180 MB lower, which kept the process within the budget plus 256 MB (flushes ended at 200,000
//! rows then). PostgreSQL's prefetch crosses a socket to another process for each read, so there it
//! keeps half: at 5M events an eighth asked the server for 17% more keys at a 256 MiB budget and
//! 31% more at 512; it peaked 100–235 MB lower, but was no faster at 256 MiB (within the machine's
//! drift) and 3% slower on average at 512, where its prefetch waited 5–10 s longer. The rows
//! written behind take the rest: a flush ends at `indexer.flush_rows` or at its share's half,
//! whichever comes first. The writer's page cache saves index reads on every upsert, but the
//! kernel's file cache serves most of them: at 256 MiB and 1.5M events, 32 MiB of it ran within the
//! machine's drift of 64 or 96, and at 5M events 96 MiB of it was no faster than 32.

use sea_orm::DatabaseBackend;

/// One chain's memory budget, split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// The flush writer's SQLite page cache, bytes (0 on PostgreSQL, whose server caches).
    pub page_cache: u64,
    /// The entity read cache, bytes.
    pub read_cache: u64,
    /// The filters of the keys stored, bytes.
    pub key_filter: u64,
    /// The rows written behind, bytes: the dirty set and the flush in flight together.
    pub write_behind: u64,
}

impl MemoryBudget {
    /// Splits `total` bytes for a chain written to `backend`: on SQLite 1/8 page cache, 1/8
    /// read cache and 3/4 rows written behind; on PostgreSQL half read cache, half rows. The
    /// key filters' 1/64 comes out of the rows' share.
    pub fn split(total: u64, backend: DatabaseBackend) -> Self {
        let eighths = |n: u64| total / 8 * n;
        let key_filter = total / 64;
        match backend {
            DatabaseBackend::Sqlite => Self {
                page_cache: eighths(1),
                read_cache: eighths(1),
                key_filter,
                write_behind: total - eighths(2) - key_filter,
            },
            _ => Self {
                page_cache: 0,
                read_cache: eighths(4),
                key_filter,
                write_behind: total - eighths(4) - key_filter,
            },
        }
    }

    /// Dirty bytes at which a flush begins: half the write-behind share, because the dirty
    /// set fills again while the flush before it is written, and both are held until that
    /// flush commits. At least one byte, so a zero budget flushes after every batch.
    pub fn flush_bytes(&self) -> usize {
        usize::try_from(self.write_behind / 2).unwrap_or(usize::MAX).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_budget() {
        for total in [0, 1, 7, 8, 256 << 20, 512 << 20, (1 << 40) + 3] {
            for backend in [DatabaseBackend::Sqlite, DatabaseBackend::Postgres] {
                let b = MemoryBudget::split(total, backend);
                assert_eq!(
                    b.page_cache + b.read_cache + b.key_filter + b.write_behind,
                    total,
                    "{b:?}"
                );
                assert!(b.flush_bytes() >= 1);
            }
        }
        let sqlite = MemoryBudget::split(256 << 20, DatabaseBackend::Sqlite);
        assert_eq!((sqlite.page_cache, sqlite.read_cache), (32 << 20, 32 << 20));
        assert_eq!(sqlite.key_filter, 4 << 20);
        assert_eq!(sqlite.flush_bytes(), 94 << 20);
        let postgres = MemoryBudget::split(256 << 20, DatabaseBackend::Postgres);
        assert_eq!((postgres.page_cache, postgres.read_cache), (0, 128 << 20));
        assert_eq!(postgres.flush_bytes(), 62 << 20);
    }
}
