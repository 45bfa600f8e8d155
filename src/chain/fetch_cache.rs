//! [`FetchCache`]: an opt-in, bounded store of what a chain's fetcher read from its node, so
//! that indexing the chain again from scratch (after an upgrade, a schema change, a wiped
//! database, a new namegraph setting) reads its final blocks from disk instead of the node;
//! and [`CachedCalls`], the source whose `eth_call`s (legacy text values) it answers.
//!
//! What is kept: every fetched window wholly below finality, as the fetcher sent it to the
//! decoder (its logs, the headers of its blocks with logs and of its two ends, the senders of
//! its transactions). A window above finality is never kept, so a reorganization is never
//! answered from here.
//!
//! One SQLite file per chain, `<dir>/chain-<id>.sqlite`. A window is one row written in one
//! statement, so a crash loses at most the window being written. Windows are keyed by their
//! first block and never overlap: a fetch that begins inside a stored window ends where that
//! window ends, and one that begins before a stored window stops short of it, so a run walks
//! the stored windows whatever its own window size.
//!
//! Trust: each window carries a digest of what decides the logs asked for (the contracts
//! and their block ranges, whether resolver topics are read); windows of another digest are
//! deleted when the cache opens. On open, the newest window's last hash is compared with the
//! node's; when the node disagrees (a devnet started afresh, another chain behind the same
//! id), the windows it does not confirm are found by bisection and deleted: a block hash
//! commits to every block before it. Within a run, the fetcher's parent-hash check applies to
//! stored windows as to fetched ones.
//!
//! Bounds: `indexer.fetch_cache_mb`. When the next window would pass it, nothing more is
//! written (the earliest blocks, the ones every run from scratch reads first, stay); the log
//! says so once, and `ensemble_fetch_cache_windows_total{outcome="full"}` counts the windows
//! left out.

use std::{
    collections::{BTreeMap, HashMap},
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use alloy::{
    primitives::{Address, B256, Bytes, LogData, keccak256},
    rpc::types::{Filter, Log},
};
use futures::future::BoxFuture;
use sea_orm::sqlx::{
    self, Row,
    sqlite::{
        SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
    },
};

use super::source::{BlockParts, ChainSource, SharedSource};
use crate::{
    ChainId,
    config::ChainConfig,
    ens::decode::resolver_topics,
    rpc::{BlockInfo, RpcError, TxParties},
};

/// Version of the stored layout, part of every window's digest: a build that stores windows
/// differently never reads an older build's.
const FORMAT: &[u8] = b"ensemble-fetch-cache-1";

/// Why the cache could not be used. The fetcher then reads the node, as without a cache.
#[derive(Debug, thiserror::Error)]
pub enum FetchCacheError {
    /// The cache's directory could not be created.
    #[error("fetch cache directory {path}: {source}")]
    Directory {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The cache's database failed.
    #[error("fetch cache: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored window does not decode (a damaged file).
    #[error("fetch cache: stored window from block {from} is damaged")]
    Damaged {
        /// Its first block.
        from: u64,
    },
    /// The node could not be asked to confirm the stored windows.
    #[error("fetch cache: confirming the stored windows: {0}")]
    Rpc(#[from] RpcError),
}

/// Where a chain's fetch cache lives and how large it may grow.
#[derive(Clone, Debug)]
pub struct FetchCacheConfig {
    /// The cache's directory (shared by every chain: one file each).
    pub dir: PathBuf,
    /// Most bytes of windows stored per chain.
    pub max_bytes: u64,
}

impl FetchCacheConfig {
    /// The pool of `chain`'s cache file, connected on first use.
    pub fn pool(&self, chain: ChainId) -> Result<SqlitePool, FetchCacheError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| FetchCacheError::Directory {
            path: self.dir.display().to_string(),
            source,
        })?;
        let options = SqliteConnectOptions::new()
            .filename(file_of(&self.dir, chain))
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10));
        Ok(SqlitePoolOptions::new().max_connections(2).connect_lazy_with(options))
    }
}

/// A stored window, as the index of the cache holds it.
#[derive(Clone, Copy, Debug)]
struct Stored {
    to: u64,
    to_hash: B256,
    bytes: u64,
}

/// What the fetcher read for one window: its logs in chain order, the headers of its blocks
/// with logs and of its two ends, and the senders of its transactions.
#[derive(Debug, Default, PartialEq)]
pub struct Window {
    /// Logs in chain order.
    pub logs: Vec<Log>,
    /// Headers by number.
    pub blocks: HashMap<u64, BlockInfo>,
    /// Transactions with logs, by hash.
    pub transactions: HashMap<B256, TxParties>,
}

/// One chain's fetch cache, as its fetcher holds it.
#[derive(Debug)]
pub struct FetchCache {
    pool: SqlitePool,
    chain: ChainId,
    digest: B256,
    windows: BTreeMap<u64, Stored>,
    bytes: u64,
    max_bytes: u64,
    full: bool,
}

impl FetchCache {
    /// Opens `chain`'s cache in `pool`: creates its tables, deletes windows of another digest
    /// and those `source` does not confirm, and indexes the rest.
    pub async fn open(
        pool: SqlitePool,
        config: &FetchCacheConfig,
        chain: &ChainConfig,
        source: &dyn ChainSource,
    ) -> Result<Self, FetchCacheError> {
        create_tables(&pool).await?;
        let digest = digest(chain);
        sqlx::query("DELETE FROM windows WHERE digest <> ?")
            .bind(digest.as_slice())
            .execute(&pool)
            .await?;
        let rows = sqlx::query(
            "SELECT from_block, to_block, to_hash, length(data) FROM windows ORDER BY from_block",
        )
        .fetch_all(&pool)
        .await?;
        let mut windows = BTreeMap::new();
        for row in rows {
            let from = row.try_get::<i64, _>(0)? as u64;
            let hash: Vec<u8> = row.try_get(2)?;
            let to_hash =
                B256::try_from(hash.as_slice()).map_err(|_| FetchCacheError::Damaged { from })?;
            let stored = Stored {
                to: row.try_get::<i64, _>(1)? as u64,
                to_hash,
                bytes: row.try_get::<i64, _>(3)? as u64,
            };
            windows.insert(from, stored);
        }
        let mut cache = Self {
            pool,
            chain: chain.id,
            digest,
            bytes: windows.values().map(|w| w.bytes).sum(),
            windows,
            max_bytes: config.max_bytes,
            full: false,
        };
        cache.confirm(source).await?;
        cache.report_size();
        tracing::info!(target: "indexer::fetch_cache", chain = chain.id.get(), windows = cache.windows.len(), bytes = cache.bytes, last_block = cache.windows.values().next_back().map(|w| w.to), "Fetch cache opened");
        Ok(cache)
    }

    /// Deletes the stored windows `source`'s chain does not have, newest first: agreement is
    /// monotone (a block hash commits to every block before it), so the first window the node
    /// disagrees with is found by bisection.
    async fn confirm(&mut self, source: &dyn ChainSource) -> Result<(), FetchCacheError> {
        let ends: Vec<(u64, u64, B256)> =
            self.windows.iter().map(|(from, w)| (*from, w.to, w.to_hash)).collect();
        let Some(&(_, to, hash)) = ends.last() else { return Ok(()) };
        let head = source.block_number().await?;
        if node_has(source, head, to, hash).await? {
            return Ok(());
        }
        // The first window the node disagrees with lies in [low, high]; `high` disagrees.
        let (mut low, mut high) = (0, ends.len() - 1);
        while low < high {
            let mid = (low + high) / 2;
            if node_has(source, head, ends[mid].1, ends[mid].2).await? {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let first = ends[low].0;
        tracing::warn!(target: "indexer::fetch_cache", chain = self.chain.get(), from_block = first, "The node's chain differs from the fetch cache's; deleting the windows it does not confirm");
        sqlx::query("DELETE FROM windows WHERE from_block >= ?")
            .bind(first as i64)
            .execute(&self.pool)
            .await?;
        self.windows.retain(|from, _| *from < first);
        self.bytes = self.windows.values().map(|w| w.bytes).sum();
        Ok(())
    }

    /// The last block of the stored window that begins at `from`, when it ends at or before
    /// `limit`.
    pub fn stored_at(&self, from: u64, limit: u64) -> Option<u64> {
        self.windows.get(&from).map(|w| w.to).filter(|to| *to <= limit)
    }

    /// `to`, brought back so that `[from, to]` overlaps no stored window: a fetch that begins
    /// inside one ends with it, one that begins before one stops short of it.
    pub fn fit(&self, from: u64, to: u64) -> u64 {
        if let Some((_, w)) = self.windows.range(..=from).next_back()
            && w.to >= from
        {
            return to.min(w.to);
        }
        match self.windows.range(from + 1..).next() {
            Some((start, _)) => to.min(start - 1),
            None => to,
        }
    }

    /// The stored window that begins at `from`.
    pub async fn read(&self, from: u64) -> Result<Window, FetchCacheError> {
        let row = sqlx::query("SELECT data FROM windows WHERE from_block = ?")
            .bind(from as i64)
            .fetch_one(&self.pool)
            .await?;
        let data: Vec<u8> = row.try_get(0)?;
        let window = decode_window(&data).ok_or(FetchCacheError::Damaged { from })?;
        metrics::counter!("ensemble_fetch_cache_windows_total", "chain" => self.chain.to_string(), "outcome" => "hit")
            .increment(1);
        Ok(window)
    }

    /// Stores the final window `[from, to]` unless it overlaps a stored one or would pass the
    /// cache's bound.
    pub async fn store(
        &mut self,
        from: u64,
        to: u64,
        to_hash: B256,
        window: &Window,
    ) -> Result<(), FetchCacheError> {
        if self.full || self.fit(from, to) != to || self.windows.contains_key(&from) {
            return Ok(());
        }
        let data = encode_window(window);
        let chain = self.chain.to_string();
        if self.bytes + data.len() as u64 > self.max_bytes {
            self.full = true;
            metrics::counter!("ensemble_fetch_cache_windows_total", "chain" => chain, "outcome" => "full")
                .increment(1);
            tracing::warn!(target: "indexer::fetch_cache", chain = self.chain.get(), bytes = self.bytes, max_bytes = self.max_bytes, from_block = from, "Fetch cache is full; later windows are read from the node only");
            return Ok(());
        }
        sqlx::query(
            "INSERT OR IGNORE INTO windows (from_block, to_block, to_hash, digest, data) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(from as i64)
        .bind(to as i64)
        .bind(to_hash.as_slice())
        .bind(self.digest.as_slice())
        .bind(&data)
        .execute(&self.pool)
        .await?;
        let bytes = data.len() as u64;
        self.windows.insert(from, Stored { to, to_hash, bytes });
        self.bytes += bytes;
        metrics::counter!("ensemble_fetch_cache_windows_total", "chain" => chain, "outcome" => "stored")
            .increment(1);
        self.report_size();
        Ok(())
    }

    fn report_size(&self) {
        metrics::gauge!("ensemble_fetch_cache_bytes", "chain" => self.chain.to_string())
            .set(self.bytes as f64);
    }
}

async fn create_tables(pool: &SqlitePool) -> Result<(), FetchCacheError> {
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS windows (from_block INTEGER PRIMARY KEY, \
         to_block INTEGER NOT NULL, to_hash BLOB NOT NULL, digest BLOB NOT NULL, data BLOB NOT NULL)",
    )
    .execute(pool)
    .await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS calls (key BLOB PRIMARY KEY, value BLOB NOT NULL)")
        .execute(pool)
        .await?;
    Ok(())
}

/// Whether `source`, whose head is `head`, has block `number` with `hash`. A block above the
/// head is not asked for: a node retries a missing block as if it were about to arrive.
async fn node_has(
    source: &dyn ChainSource,
    head: u64,
    number: u64,
    hash: B256,
) -> Result<bool, RpcError> {
    if number > head {
        return Ok(false);
    }
    match source.block(number).await {
        Ok(block) => Ok(block.hash == hash),
        Err(RpcError::MissingBlock(_)) => Ok(false),
        Err(err) => Err(err),
    }
}

/// The digest of what decides the logs the fetcher asks `chain` for.
fn digest(chain: &ChainConfig) -> B256 {
    let mut bytes = FORMAT.to_vec();
    bytes.extend(chain.id.get().to_be_bytes());
    let mut contracts: Vec<(Address, u64, u64)> = chain
        .contracts
        .iter()
        .map(|c| (c.address, c.start_block.unwrap_or(0), c.end_block.unwrap_or(u64::MAX)))
        .collect();
    contracts.sort_unstable();
    contracts.dedup();
    for (address, start, end) in contracts {
        bytes.extend(address.as_slice());
        bytes.extend(start.to_be_bytes());
        bytes.extend(end.to_be_bytes());
    }
    bytes.push(u8::from(chain.index_resolvers));
    if chain.index_resolvers {
        for topic in resolver_topics() {
            bytes.extend(topic.as_slice());
        }
    }
    keccak256(bytes)
}

/// A window's bytes: counts and fixed-width fields, big-endian, with a presence byte before
/// each optional field.
fn encode_window(window: &Window) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + window.logs.len() * 256);
    put_u64(&mut out, window.logs.len() as u64);
    for log in &window.logs {
        out.extend(log.address().as_slice());
        let topics = log.topics();
        out.push(topics.len() as u8);
        for topic in topics {
            out.extend(topic.as_slice());
        }
        let data = &log.data().data;
        put_u64(&mut out, data.len() as u64);
        out.extend(data.iter());
        put_opt(&mut out, log.block_hash, |o, h| o.extend(h.as_slice()));
        put_opt(&mut out, log.block_number, put_u64);
        put_opt(&mut out, log.block_timestamp, put_u64);
        put_opt(&mut out, log.transaction_hash, |o, h| o.extend(h.as_slice()));
        put_opt(&mut out, log.transaction_index, put_u64);
        put_opt(&mut out, log.log_index, put_u64);
    }
    let mut blocks: Vec<&BlockInfo> = window.blocks.values().collect();
    blocks.sort_unstable_by_key(|b| b.number);
    put_u64(&mut out, blocks.len() as u64);
    for block in blocks {
        put_u64(&mut out, block.number);
        out.extend(block.hash.as_slice());
        out.extend(block.parent_hash.as_slice());
        put_u64(&mut out, block.timestamp);
    }
    let mut transactions: Vec<&TxParties> = window.transactions.values().collect();
    transactions.sort_unstable_by_key(|t| t.hash);
    put_u64(&mut out, transactions.len() as u64);
    for tx in transactions {
        out.extend(tx.hash.as_slice());
        out.extend(tx.from.as_slice());
        put_opt(&mut out, tx.to, |o, a| o.extend(a.as_slice()));
    }
    out
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend(value.to_be_bytes());
}

fn put_opt<T>(out: &mut Vec<u8>, value: Option<T>, put: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        Some(value) => {
            out.push(1);
            put(out, value);
        }
        None => out.push(0),
    }
}

/// The window [`encode_window`] wrote; `None` when the bytes are not one.
fn decode_window(bytes: &[u8]) -> Option<Window> {
    let mut r = Reader(bytes);
    let mut window = Window::default();
    let logs = r.u64()?;
    window.logs.reserve(logs.min(bytes.len() as u64) as usize);
    for _ in 0..logs {
        let address = Address::from_slice(r.take(20)?);
        let count = r.take(1)?[0];
        let topics = (0..count).map(|_| r.b256()).collect::<Option<Vec<_>>>()?;
        let len = usize::try_from(r.u64()?).ok()?;
        let data = Bytes::copy_from_slice(r.take(len)?);
        let inner = alloy::primitives::Log { address, data: LogData::new(topics, data)? };
        window.logs.push(Log {
            inner,
            block_hash: r.opt(Reader::b256)?,
            block_number: r.opt(Reader::u64)?,
            block_timestamp: r.opt(Reader::u64)?,
            transaction_hash: r.opt(Reader::b256)?,
            transaction_index: r.opt(Reader::u64)?,
            log_index: r.opt(Reader::u64)?,
            removed: false,
        });
    }
    for _ in 0..r.u64()? {
        let block = BlockInfo {
            number: r.u64()?,
            hash: r.b256()?,
            parent_hash: r.b256()?,
            timestamp: r.u64()?,
        };
        window.blocks.insert(block.number, block);
    }
    for _ in 0..r.u64()? {
        let hash = r.b256()?;
        let from = Address::from_slice(r.take(20)?);
        let to = r.opt(|r| r.take(20).map(Address::from_slice))?;
        window.transactions.insert(hash, TxParties { hash, from, to });
    }
    r.0.is_empty().then_some(window)
}

/// Reads what [`encode_window`] wrote, failing on short input.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_be_bytes(b.try_into().unwrap_or_default()))
    }

    fn b256(&mut self) -> Option<B256> {
        self.take(32).map(B256::from_slice)
    }

    /// An optional field: `Some(None)` when absent, `None` when the input is short or bad.
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.take(1)?[0] {
            0 => Some(None),
            1 => read(self).map(Some),
            _ => None,
        }
    }
}

/// A chain source whose `eth_call`s at a block hash are answered from the fetch cache when
/// they were asked before (the answer of a call at a given block never changes); everything
/// else goes to the wrapped source.
#[derive(Debug)]
pub struct CachedCalls {
    inner: SharedSource,
    pool: SqlitePool,
}

impl CachedCalls {
    /// `inner`, with its calls kept in `pool` (a chain's fetch cache).
    pub fn wrap(inner: SharedSource, pool: SqlitePool) -> SharedSource {
        Arc::new(Self { inner, pool })
    }

    async fn call(&self, to: Address, data: Bytes, hash: B256) -> Result<Bytes, RpcError> {
        let mut key = Vec::with_capacity(52 + data.len());
        key.extend(hash.as_slice());
        key.extend(to.as_slice());
        key.extend(data.iter());
        let key = keccak256(key);
        let cached = sqlx::query("SELECT value FROM calls WHERE key = ?")
            .bind(key.as_slice())
            .fetch_optional(&self.pool)
            .await;
        match cached {
            Ok(Some(row)) => {
                if let Ok(value) = row.try_get::<Vec<u8>, _>(0) {
                    return Ok(Bytes::from(value));
                }
            }
            Ok(None) => {}
            // The cache is an optimization: a failure is the node's turn to answer.
            Err(err) => {
                tracing::debug!(target: "indexer::fetch_cache", error = %err, "Call cache unreadable")
            }
        }
        let value = self.inner.call_at(to, data, hash).await?;
        let stored = sqlx::query("INSERT OR IGNORE INTO calls (key, value) VALUES (?, ?)")
            .bind(key.as_slice())
            .bind(value.as_ref())
            .execute(&self.pool)
            .await;
        if let Err(err) = stored {
            tracing::debug!(target: "indexer::fetch_cache", error = %err, "Call not cached");
        }
        Ok(value)
    }
}

impl ChainSource for CachedCalls {
    fn chain_id(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        self.inner.chain_id()
    }

    fn block_number(&self) -> BoxFuture<'_, Result<u64, RpcError>> {
        self.inner.block_number()
    }

    fn finalized_block(&self) -> BoxFuture<'_, Result<Option<u64>, RpcError>> {
        self.inner.finalized_block()
    }

    fn logs<'a>(&'a self, filter: &'a Filter) -> BoxFuture<'a, Result<Vec<Log>, RpcError>> {
        self.inner.logs(filter)
    }

    fn block(&self, number: u64) -> BoxFuture<'_, Result<BlockInfo, RpcError>> {
        self.inner.block(number)
    }

    fn blocks<'a>(
        &'a self,
        numbers: &'a [(u64, bool)],
    ) -> BoxFuture<'a, Result<Vec<BlockParts>, RpcError>> {
        self.inner.blocks(numbers)
    }

    fn call_at(
        &self,
        to: Address,
        data: Bytes,
        hash: B256,
    ) -> BoxFuture<'_, Result<Bytes, RpcError>> {
        Box::pin(self.call(to, data, hash))
    }
}

/// The path of `chain`'s cache file under `dir`.
pub fn file_of(dir: &Path, chain: ChainId) -> PathBuf {
    dir.join(format!("chain-{chain}.sqlite"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> Window {
        let log = |n: u64, i: u64, topics: usize, data: &[u8]| Log {
            inner: alloy::primitives::Log {
                address: Address::repeat_byte(n as u8),
                data: LogData::new(
                    (0..topics).map(|t| B256::repeat_byte(t as u8 + 1)).collect(),
                    Bytes::copy_from_slice(data),
                )
                .unwrap(),
            },
            block_hash: Some(B256::repeat_byte(0xb0 + n as u8)),
            block_number: Some(n),
            block_timestamp: (i == 0).then_some(1_700_000_000 + n),
            transaction_hash: Some(B256::repeat_byte(0x70 + i as u8)),
            transaction_index: Some(i),
            log_index: Some(i),
            removed: false,
        };
        let logs = vec![log(7, 0, 4, b"abc"), log(7, 1, 0, b""), log(9, 2, 2, &[0; 300])];
        let blocks = [5, 7, 9, 12]
            .map(|n| BlockInfo {
                number: n,
                hash: B256::repeat_byte(0xb0 + n as u8),
                parent_hash: B256::repeat_byte(0xaf + n as u8),
                timestamp: 1_700_000_000 + n,
            })
            .into_iter()
            .map(|b| (b.number, b))
            .collect();
        let transactions = [(0, Some(Address::repeat_byte(2))), (1, None), (2, None)]
            .map(|(i, to)| TxParties {
                hash: B256::repeat_byte(0x70 + i),
                from: Address::repeat_byte(1),
                to,
            })
            .into_iter()
            .map(|t| (t.hash, t))
            .collect();
        Window { logs, blocks, transactions }
    }

    #[tokio::test]
    async fn fetches_end_where_stored_windows_begin_or_end() {
        let pool = SqlitePoolOptions::new().connect_lazy("sqlite::memory:").unwrap();
        let stored = |to: u64| Stored { to, to_hash: B256::ZERO, bytes: 1 };
        let cache = FetchCache {
            pool,
            chain: ChainId(1),
            digest: B256::ZERO,
            windows: [(10, stored(19)), (20, stored(29)), (40, stored(49))].into(),
            bytes: 3,
            max_bytes: 100,
            full: false,
        };
        assert_eq!(cache.stored_at(20, 100), Some(29));
        assert_eq!(cache.stored_at(20, 28), None, "beyond the limit (the head, the end block)");
        assert_eq!(cache.stored_at(21, 100), None, "only where a window begins");
        assert_eq!(cache.fit(0, 100), 9, "stops short of the first stored window");
        assert_eq!(cache.fit(25, 100), 29, "begins inside one: ends with it");
        assert_eq!(cache.fit(30, 100), 39);
        assert_eq!(cache.fit(30, 35), 35);
        assert_eq!(cache.fit(50, 100), 100, "past every stored window");
    }

    #[test]
    fn a_window_reads_back_as_it_was_stored() {
        let window = window();
        let bytes = encode_window(&window);
        assert_eq!(decode_window(&bytes), Some(window));
        // Short, long or altered input is refused, not misread.
        assert_eq!(decode_window(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode_window(&[bytes.as_slice(), &[0]].concat()), None);
        assert_eq!(decode_window(&[]), None);
    }
}
