//! Opening the database: SQLite (the embedded default, a file in WAL mode) or PostgreSQL, with
//! the migrations applied before anything reads or writes.

use std::time::Duration;

use migrations::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, SqliteTransactionMode,
    TransactionOptions, TransactionTrait,
};

use super::StoreError;

/// Connections in the pool. SQLite serializes writers anyway; readers (GraphQL) share the rest.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;

/// SQLite page cache per connection, KiB: with [`DEFAULT_MAX_CONNECTIONS`] connections, at
/// most 128 MiB in all, on top of the entity cache budget (`indexer.cache_mb`).
pub const SQLITE_CACHE_KIB: u64 = 16 * 1024;

/// Begins a transaction that will write. On SQLite it takes the write lock at `BEGIN`
/// (`BEGIN IMMEDIATE`): a transaction that reads first and writes later would otherwise fail
/// with `SQLITE_BUSY_SNAPSHOT` whenever another connection committed in between (the status
/// writer does, every second), and no busy timeout helps with that. Elsewhere a plain `BEGIN`.
pub async fn begin_write(db: &DatabaseConnection) -> Result<DatabaseTransaction, StoreError> {
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    db.begin_with_options(options).await.map_err(StoreError::db("begin"))
}

/// Opens `url` and applies pending migrations.
pub async fn connect(url: &str) -> Result<DatabaseConnection, StoreError> {
    let db = connect_without_migrating(url).await?;
    Migrator::up(&db, None).await.map_err(StoreError::db("migrate"))?;
    Ok(db)
}

/// Opens `url` as it is: for API-only processes, which never change the schema (several may
/// start at once against one PostgreSQL; the indexers or `ensemble migrate` own migrations).
pub async fn connect_without_migrating(url: &str) -> Result<DatabaseConnection, StoreError> {
    let is_sqlite = url.starts_with("sqlite:");
    if !is_sqlite && !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
        return Err(StoreError::UnsupportedUrl(url.to_owned()));
    }
    let mut opts = ConnectOptions::new(url.to_owned());
    opts.max_connections(DEFAULT_MAX_CONNECTIONS)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(Duration::from_secs(30))
        .sqlx_logging(false);
    if is_sqlite {
        // WAL lets the API read while the indexer writes. FULL sync makes every committed
        // flush durable: the WAL is synced at each commit, so a power loss cannot take back a
        // checkpoint the indexer reported (NORMAL could lose the last commits). A commit is a
        // whole flush of thousands of rows, so the sync is one fsync per flush.
        // busy_timeout covers reader/writer contention. The default page cache
        // (2 MiB) makes every index page of a large database a read syscall: each connection
        // gets SQLITE_CACHE_KIB of cache. The file is not memory-mapped: mapped pages count
        // in the process's resident set (a backfill's RSS grew with the database), while
        // reads outside the page cache are served by the kernel's file cache anyway.
        // Temporary storage (the sorter of a `CREATE INDEX`, large `ORDER BY`s) is a file,
        // not memory: building a deferred index over millions of rows sorted them all in the
        // heap and added gigabytes to the peak RSS at 5M events (BENCHMARKS.md); as files
        // they spill past the page cache into the kernel's file cache instead.
        opts.map_sqlx_sqlite_opts(|o| {
            o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(30))
                .create_if_missing(true)
                .pragma("cache_size", format!("-{SQLITE_CACHE_KIB}"))
                .pragma("temp_store", "file")
        });
    } else {
        // Every API query is value-dependent (a prefix range, an owner, a cursor): a generic
        // plan cached after a few executions cannot see the values and picks scans that a
        // custom plan avoids. Planning each execution costs well under a millisecond.
        opts.map_sqlx_postgres_opts(|o| o.options([("plan_cache_mode", "force_custom_plan")]));
        // sqlx leaves Nagle's algorithm on: see `tcp_nodelay`.
        opts.map_sqlx_postgres_pool_opts(|o| {
            o.after_connect(|_, _| {
                Box::pin(async {
                    super::tcp_nodelay::set_on_all_tcp_sockets();
                    Ok(())
                })
            })
        });
    }
    Database::connect(opts).await.map_err(StoreError::db("connect"))
}
