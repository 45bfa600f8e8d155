//! Opening the database: SQLite (the embedded default, a file in WAL mode) or PostgreSQL, with
//! the migrations applied before anything reads or writes.

use std::time::Duration;

use migrations::{Migrator, MigratorTrait};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection};

use super::{StoreError, write_txn::WriteTxn};

/// Connections in the pool. SQLite serializes writers anyway; readers (GraphQL) share the rest.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;

/// SQLite page cache per pooled connection, KiB: with [`DEFAULT_MAX_CONNECTIONS`] connections,
/// at most 32 MiB in all, on top of the indexer's budget (`indexer.cache_mb`). The flush
/// writer has a connection of its own whose cache the budget pays for ([`writer_connection`]);
/// the pool serves the prefetch's lookups and the API, and pages it misses come from the
/// kernel's file cache. 16 MiB here cost 165 MB more peak RSS at 5M events for 3% more speed.
pub const SQLITE_CACHE_KIB: u64 = 4 * 1024;

/// Page size of new SQLite databases. A flush dirties pages all over the domain indexes (their
/// keys are hashes); each dirty page costs a WAL frame, and later a checkpoint copy, whatever
/// its size. With 16 KiB pages a flush writes fewer, fuller frames and the trees are shallower:
/// 20.2k -> 23.1k events/s at 1.5M events against 4 KiB, while 1 KiB pages halved the speed
/// and doubled the file, and 64 KiB was slower than 16 (BENCHMARKS.md). An existing database
/// keeps the page size it was created with.
pub const SQLITE_PAGE_BYTES: u32 = 16 * 1024;

/// WAL pages after which a commit checkpoints the WAL into the database file (SQLite's
/// default is 1000). A flush of a large backfill dirties a page of every hash-keyed B-tree for
/// nearly every row, mostly the same pages flush after flush; the commit writes each to the
/// WAL and the checkpoint copies each into the file. Checkpointing every few flushes instead
/// of every one copies a page rewritten in between once: at 5M events, 100,000 pages (1.6 GB)
/// instead of 10,000 cut the bytes written to disk from 53.8 to 38.3 GB and the commits from
/// 157 to 98 s (BENCHMARKS.md, the smaller-keys runs). The WAL's size is bounded by
/// [`bound_wal`].
pub const SQLITE_WAL_AUTOCHECKPOINT_PAGES: u32 = 100_000;

/// WAL bytes past which a flush's commit is followed by a checkpoint that empties the WAL
/// ([`bound_wal`]): the autocheckpoint's threshold in bytes. Every connection also cuts a
/// restarted WAL's file back to this length at the first commit after the restart
/// (`journal_size_limit`): whichever connection writes first, the file keeps the bound.
pub const SQLITE_WAL_BOUND_BYTES: u64 =
    SQLITE_WAL_AUTOCHECKPOINT_PAGES as u64 * SQLITE_PAGE_BYTES as u64;

/// How [`bound_wal`] empties a WAL that has outgrown [`SQLITE_WAL_BOUND_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalBound {
    /// `wal_checkpoint(RESTART)`: the next commit writes the WAL from its beginning again, over
    /// the file's blocks, which stay allocated at the bound. For the flushes written behind
    /// while a chain catches up, which fill the WAL again within seconds. Truncating instead
    /// gave the file's blocks back (on a filesystem mounted with `discard`, the device
    /// discarded them) and the next flushes allocated them again: at 5M events `begin` took
    /// 1–11 s of a backfill's flushes against 0.1–0.2 s, the commits 49 s against 40, and the
    /// run was 5–8% slower; the checkpoints themselves took 14–15 s against 22–26 s, and the
    /// process wrote 7–9 GB less to disk (BENCHMARKS.md, the WAL-restart runs).
    Reuse,
    /// `wal_checkpoint(TRUNCATE)`: the file is truncated, so a chain at its head, whose small
    /// flushes take long to fill it again, does not keep a WAL of the bound's size on disk.
    Truncate,
}

/// Empties an SQLite WAL that has outgrown [`SQLITE_WAL_BOUND_BYTES`] as `mode` says, after a
/// commit on the connection `db` writes through; elsewhere nothing.
///
/// The autocheckpoint alone does not bound the WAL. It is passive: it copies only the frames
/// no reader's snapshot still needs, and SQLite starts writing the WAL from its beginning
/// again only once a checkpoint has copied every frame while no reader uses them. The
/// prefetch and the API read all the time, so that moment rarely came: the WAL grew to
/// 9.5–14.7 GB in a 5M-event backfill whose database is 2 GB, and past the threshold every
/// commit ran another passive checkpoint, copying again the pages rewritten since the last.
/// `RESTART` and `TRUNCATE` wait (up to the busy timeout) for the readers of older snapshots
/// to finish and copy what is left; then the next commit starts the WAL from its beginning,
/// and `TRUNCATE` also empties the file. If the wait runs out, the WAL stays as it is until
/// the next commit tries again. It runs after a flush has committed, so an error here is
/// logged and fails nothing: the rows are stored, and a failed flush would only have its
/// chain restart from the checkpoint it just wrote.
pub async fn bound_wal(db: &DatabaseConnection, mode: WalBound) {
    if let Err(err) = bound_wal_at(db, SQLITE_WAL_BOUND_BYTES, mode).await {
        tracing::warn!(target: "store", error = %err, "Write-ahead log not bounded; the next commit tries again");
    }
}

/// [`bound_wal`] with the bound `limit`, in bytes.
async fn bound_wal_at(
    db: &DatabaseConnection,
    limit: u64,
    mode: WalBound,
) -> Result<(), StoreError> {
    if db.get_database_backend() != sea_orm::DatabaseBackend::Sqlite {
        return Ok(());
    }
    let options = db.get_sqlite_connection_pool().connect_options();
    let mut wal = options.get_filename().as_os_str().to_owned();
    wal.push("-wal");
    // No WAL file (an in-memory database, or nothing written yet): nothing to bound.
    let Ok(meta) = std::fs::metadata(&wal) else { return Ok(()) };
    // A reused WAL file is cut back to `limit` at the first commit after a restart
    // (`journal_size_limit`), and stays that long while the WAL written into it is shorter:
    // only a file longer than that holds more than the bound.
    let within = match mode {
        WalBound::Reuse => meta.len() <= limit,
        WalBound::Truncate => meta.len() < limit,
    };
    if within {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let pragma = match mode {
        WalBound::Reuse => "PRAGMA wal_checkpoint(RESTART)",
        WalBound::Truncate => "PRAGMA wal_checkpoint(TRUNCATE)",
    };
    db.execute_unprepared(pragma).await.map_err(StoreError::db("checkpoint the WAL"))?;
    super::writer::record_table_time("wal_checkpoint", started);
    Ok(())
}

/// Begins a transaction that will write ([`WriteTxn`]). On SQLite it takes the write lock at
/// `BEGIN` (`BEGIN IMMEDIATE`): a transaction that reads first and writes later would
/// otherwise fail with `SQLITE_BUSY_SNAPSHOT` whenever another connection committed in
/// between (the status writer does, every second), and no busy timeout helps with that.
/// Elsewhere a plain `BEGIN`.
pub async fn begin_write(db: &DatabaseConnection) -> Result<WriteTxn, StoreError> {
    WriteTxn::begin(db).await.map_err(StoreError::db("begin"))
}

/// Opens `url` and applies pending migrations.
///
/// On SQLite the migrator runs no transaction, so each of a migration's statements would go to
/// whichever pooled connection is free; it runs on a pool of one connection of its own
/// instead, so every statement sees the schema the previous one left (a fresh database's
/// migrations failed now and then with "index domains_node already exists" under a loaded
/// test suite).
pub async fn connect(url: &str) -> Result<DatabaseConnection, StoreError> {
    let db = connect_without_migrating(url).await?;
    known_migrations(&db).await?;
    if db.get_database_backend() == sea_orm::DatabaseBackend::Sqlite {
        let options = (*db.get_sqlite_connection_pool().connect_options()).clone();
        let pool = sea_orm::sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options)
            .await
            .map_err(|e| {
                StoreError::db("connect")(sea_orm::DbErr::Conn(sea_orm::RuntimeErr::SqlxError(
                    e.into(),
                )))
            })?;
        let migrator = sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(pool);
        Migrator::up(&migrator, None).await.map_err(StoreError::db("migrate"))?;
        migrator.close().await.map_err(StoreError::db("migrate"))?;
    } else {
        Migrator::up(&db, None).await.map_err(StoreError::db("migrate"))?;
    }
    Ok(db)
}

/// On SQLite, moves the write-ahead log into the database file and truncates it: a backfill
/// grows the log to its largest size and it keeps that size on disk (hundreds of MB beside a
/// much smaller database) until it is truncated. Done at a graceful shutdown, when nothing
/// writes; a failure is logged and changes nothing (the log is replayed on the next open).
pub async fn truncate_wal(db: &DatabaseConnection) {
    if db.get_database_backend() != sea_orm::DatabaseBackend::Sqlite {
        return;
    }
    use sea_orm::ConnectionTrait;
    if let Err(err) = db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)").await {
        tracing::warn!(target: "store", error = %err, "Write-ahead log not truncated");
    }
}

/// Opens `url` for a tool that reads or writes rows but does not own the schema (`dump`,
/// `labels import`): nothing is migrated, and a database whose schema is behind this build
/// (or was never created) is an error that says to run `ensemble migrate`.
pub async fn connect_current(url: &str) -> Result<DatabaseConnection, StoreError> {
    let db = connect_without_migrating(url).await?;
    let applied = known_migrations(&db).await?;
    let pending =
        Migrator::migrations().iter().filter(|m| !applied.iter().any(|a| a == m.name())).count();
    if pending > 0 {
        return Err(StoreError::SchemaBehind { pending });
    }
    Ok(db)
}

/// The migrations applied to `db`, all of them known to this build; an unknown one is
/// [`StoreError::SchemaUnknown`] (the migrator would only say that its file is missing).
async fn known_migrations(db: &DatabaseConnection) -> Result<Vec<String>, StoreError> {
    use sea_orm::{ConnectionTrait, Statement};
    // Read the migration table directly: the migrator's own look-ups create it first.
    let applied: Vec<String> = match db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT version FROM seaql_migrations ORDER BY version",
        ))
        .await
    {
        Ok(rows) => rows.iter().filter_map(|r| r.try_get::<String>("", "version").ok()).collect(),
        // No migration table: nothing was ever migrated.
        Err(_) => Vec::new(),
    };
    let known: Vec<String> = Migrator::migrations().iter().map(|m| m.name().to_owned()).collect();
    if let Some(version) = applied.iter().find(|a| !known.contains(a)) {
        return Err(StoreError::SchemaUnknown { version: version.clone() });
    }
    Ok(applied)
}

/// Opens `url` as it is: for API-only processes, which never change the schema (several may
/// start at once against one PostgreSQL; the indexers or `ensemble migrate` own migrations).
pub async fn connect_without_migrating(url: &str) -> Result<DatabaseConnection, StoreError> {
    let is_sqlite = url.starts_with("sqlite:");
    if !is_sqlite && !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
        return Err(StoreError::UnsupportedUrl(url.to_owned()));
    }
    if !is_sqlite {
        check_reachable(url).await?;
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
        // busy_timeout covers reader/writer contention. Each pooled connection gets
        // SQLITE_CACHE_KIB of page cache (its doc says why so little); the flush writer's own
        // connection takes its cache from the budget and every other setting from here
        // (`writer_connection`). The file is not memory-mapped: mapped pages count
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
                .page_size(SQLITE_PAGE_BYTES)
                .pragma("cache_size", format!("-{SQLITE_CACHE_KIB}"))
                .pragma("wal_autocheckpoint", SQLITE_WAL_AUTOCHECKPOINT_PAGES.to_string())
                .pragma("journal_size_limit", SQLITE_WAL_BOUND_BYTES.to_string())
                .pragma("temp_store", "file")
        });
    } else {
        // Every API query is value-dependent (a prefix range, an owner, a cursor): a generic
        // plan cached after a few executions cannot see the values and picks scans that a
        // custom plan avoids. Planning each execution costs well under a millisecond.
        // JIT compilation is off: it starts on a plan's estimated cost, and for the listings
        // whose estimate is high it cost more than the query (1.2 s of a 4.2 s `or` over an
        // owner of 47k names at 1M domains) and never paid back on these short statements.
        opts.map_sqlx_postgres_opts(|o| {
            o.options([("plan_cache_mode", "force_custom_plan"), ("jit", "off")])
        });
        opts.map_sqlx_postgres_pool_opts(with_nodelay);
    }
    Database::connect(opts).await.map_err(StoreError::db("connect"))
}

/// How long the first connection to a PostgreSQL server may take.
pub const FIRST_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens one connection to the PostgreSQL server of `url` and closes it, so that a server
/// that is down, unknown or refusing is reported at once with its host and the reason. (A
/// pool retries silently until its acquire timeout, then only says it timed out.)
async fn check_reachable(url: &str) -> Result<(), StoreError> {
    use sea_orm::sqlx::{ConnectOptions as _, Connection as _, postgres::PgConnectOptions};
    let target = reqwest::Url::parse(url).map_or_else(
        |_| "the configured server".to_owned(),
        |u| {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}{port}{}", u.host_str().unwrap_or("localhost"), u.path())
        },
    );
    let unreachable = |reason: String| StoreError::Unreachable {
        target: target.clone(),
        reason: crate::redaction::redact(&reason).into_owned(),
    };
    let options: PgConnectOptions = url.parse().map_err(|e| unreachable(format!("{e}")))?;
    match tokio::time::timeout(FIRST_CONNECT_TIMEOUT, options.connect()).await {
        Ok(Ok(conn)) => {
            let _ = conn.close().await;
            Ok(())
        }
        Ok(Err(err)) => Err(unreachable(err.to_string())),
        Err(_) => Err(unreachable(format!("no answer within {FIRST_CONNECT_TIMEOUT:?}"))),
    }
}

/// A PostgreSQL pool whose new connections get `TCP_NODELAY`: sqlx leaves Nagle's algorithm
/// on (see `tcp_nodelay`). Every PostgreSQL pool Ensemble opens is built through this.
fn with_nodelay(
    options: sea_orm::sqlx::postgres::PgPoolOptions,
) -> sea_orm::sqlx::postgres::PgPoolOptions {
    options.after_connect(|_, _| {
        Box::pin(async {
            super::tcp_nodelay::set_on_all_tcp_sockets();
            Ok(())
        })
    })
}

/// The connection of a pipeline's fetch thread (its fetcher's checkpoint and journal reads,
/// its decoder's RPC cache): a pool of one connection of its own, for the reason
/// [`writer_connection`] gives. The fetch thread's runtime stops with its pipeline, and a
/// connection it had opened in `db`'s shared pool failed the next reader after a reorg
/// restarted the pipeline. On SQLite it has the pooled connections' page cache.
pub fn fetch_connection(db: &DatabaseConnection) -> DatabaseConnection {
    writer_connection(db, SQLITE_CACHE_KIB << 10)
}

/// The connection a chain's flushes are written through: a pool of one connection of its
/// own, connected on first use with `db`'s settings. Flushes run on the handler's writer
/// thread, whose runtime stops with the handler; a connection opened there is bound to that
/// runtime, so had it come from `db`'s shared pool, the pool would hand it out dead once the
/// chain stopped ("A Tokio 1.x context was found, but it is being shutdown": seen when the
/// bench built its indexes after a PostgreSQL run).
///
/// On SQLite the connection also gets a page cache of `page_cache_bytes`: an upsert reads the
/// index pages it changes, and a pooled connection's cache holds a small part of the domain
/// indexes of a large backfill (64 MiB instead of 16: 16.0k -> 17.8k events/s at 5M). On
/// PostgreSQL the server owns the cache and `page_cache_bytes` is unused.
pub fn writer_connection(db: &DatabaseConnection, page_cache_bytes: u64) -> DatabaseConnection {
    use sea_orm::sqlx::{postgres::PgPoolOptions, sqlite::SqlitePoolOptions};
    if db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        let options = (*db.get_postgres_connection_pool().connect_options()).clone();
        let writer = with_nodelay(PgPoolOptions::new())
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_lazy_with(options);
        return sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(writer);
    }
    let pool = db.get_sqlite_connection_pool();
    let options = (*pool.connect_options())
        .clone()
        .pragma("cache_size", format!("-{}", (page_cache_bytes >> 10).max(1)));
    let writer = SqlitePoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(30))
        .connect_lazy_with(options);
    sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(writer)
}

#[cfg(test)]
mod tests {
    use sea_orm::TransactionTrait;

    use super::*;

    fn wal_bytes(dir: &std::path::Path) -> u64 {
        std::fs::metadata(dir.join("wal.sqlite-wal")).map_or(0, |m| m.len())
    }

    /// A WAL past its bound is emptied once the reader of an older snapshot has finished,
    /// and one within its bound is left alone.
    #[tokio::test]
    async fn a_wal_past_its_bound_is_emptied_after_its_readers() {
        let (dir, db, writer) = wal_database().await;
        let grown = fill(&writer, dir.path()).await;
        assert!(grown > 500_000, "the WAL holds the rows: {grown} bytes");

        for mode in [WalBound::Reuse, WalBound::Truncate] {
            bound_wal_at(&writer, grown + 1, mode).await.unwrap();
        }
        assert_eq!(wal_bytes(dir.path()), grown, "within its bound, the WAL is left alone");

        // A reader holds a snapshot from before the next write while the WAL is bounded.
        let reader = db.begin().await.unwrap();
        reader.execute_unprepared("SELECT count(*) FROM t").await.unwrap();
        let twice = fill(&writer, dir.path()).await;
        assert!(twice > grown, "the WAL grew: {twice} bytes");
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            reader.commit().await.unwrap();
        });
        let started = std::time::Instant::now();
        bound_wal_at(&writer, 1, WalBound::Truncate).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(250), "waited for the reader");
        release.await.unwrap();
        assert_eq!(wal_bytes(dir.path()), 0, "the WAL is emptied");
        assert_eq!(rows(&writer).await, 1000, "nothing is lost");
    }

    /// Restarted, a WAL past its bound keeps its file: the next writes go over it from its
    /// beginning, once the reader of an older snapshot has finished, instead of growing it.
    #[tokio::test]
    async fn a_restarted_wal_is_written_again_from_its_beginning() {
        let (dir, db, writer) = wal_database().await;
        fill(&writer, dir.path()).await;
        let reader = db.begin().await.unwrap();
        reader.execute_unprepared("SELECT count(*) FROM t").await.unwrap();
        let grown = fill(&writer, dir.path()).await;
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            reader.commit().await.unwrap();
        });
        let started = std::time::Instant::now();
        bound_wal_at(&writer, grown - 1, WalBound::Reuse).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(250), "waited for the reader");
        release.await.unwrap();
        assert_eq!(wal_bytes(dir.path()), grown, "the file is kept");
        // Without the restart this write would append to the WAL, past its length.
        assert_eq!(fill(&writer, dir.path()).await, grown, "written over from the beginning");
        assert_eq!(rows(&writer).await, 1500, "nothing is lost");
    }

    /// A new database in a temporary directory, its pool, and a flush writer's connection to
    /// it, with an empty table `t`.
    async fn wal_database() -> (tempfile::TempDir, DatabaseConnection, DatabaseConnection) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("wal.sqlite").display());
        let db = connect_without_migrating(&url).await.unwrap();
        let writer = writer_connection(&db, 1 << 20);
        writer.execute_unprepared("CREATE TABLE t (v BLOB)").await.unwrap();
        (dir, db, writer)
    }

    /// Writes 500 rows of 1,000 random bytes through `writer`; returns the WAL's length.
    async fn fill(writer: &DatabaseConnection, dir: &std::path::Path) -> u64 {
        let fill = "INSERT INTO t SELECT randomblob(1000) FROM \
                    (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) \
                    SELECT i FROM n)";
        writer.execute_unprepared(fill).await.unwrap();
        wal_bytes(dir)
    }

    /// Rows in `t`.
    async fn rows(writer: &DatabaseConnection) -> i64 {
        let row = writer
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DatabaseBackend::Sqlite,
                "SELECT count(*) AS n FROM t",
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get::<i64>("", "n").unwrap()
    }
}
