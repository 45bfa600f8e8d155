//! SQLite storage settings: a new database file gets 16 KiB pages and a WAL that checkpoints
//! every 100 000 pages; the flush writer is a connection of its own, with the page cache the
//! indexer's budget gives it, over the same file the pooled connections read, and every
//! connection keeps a restarted WAL's file at the bound; the linked SQLite is built with the
//! repository's flags.

use ensemble::store::database::{
    SQLITE_CACHE_KIB, SQLITE_PAGE_BYTES, SQLITE_WAL_AUTOCHECKPOINT_PAGES, SQLITE_WAL_BOUND_BYTES,
    connect, writer_connection,
};
use sea_orm::{ConnectionTrait, Statement};

use crate::support::{Backend, TestDb, sqlite_pragma as pragma};

#[actix_rt::test]
async fn a_new_database_has_large_pages_and_a_writer_of_its_own() {
    let test_db = TestDb::new(Backend::Sqlite).await;
    let db = connect(&test_db.url).await.expect("connect");
    assert_eq!(pragma(&db, "page_size").await, i64::from(SQLITE_PAGE_BYTES));
    assert_eq!(pragma(&db, "wal_autocheckpoint").await, i64::from(SQLITE_WAL_AUTOCHECKPOINT_PAGES));
    // A negative cache_size is KiB.
    assert_eq!(pragma(&db, "cache_size").await, -(SQLITE_CACHE_KIB as i64));

    let writer = writer_connection(&db, 48 << 20);
    assert_eq!(pragma(&writer, "cache_size").await, -(48 << 10), "the budget's page cache");
    for (conn, which) in [(&writer, "writer"), (&db, "pool")] {
        assert_eq!(
            pragma(conn, "journal_size_limit").await,
            SQLITE_WAL_BOUND_BYTES as i64,
            "the {which} cuts a restarted WAL's file back to the bound"
        );
    }
    assert_eq!(
        pragma(&db, "cache_size").await,
        -(SQLITE_CACHE_KIB as i64),
        "the pool's is unchanged"
    );
    assert_eq!(pragma(&writer, "page_size").await, i64::from(SQLITE_PAGE_BYTES));

    // The writer writes the same file the pool reads.
    writer
        .execute_unprepared(
            "INSERT INTO deferred_indexes (name, definition) VALUES ('probe', 'CREATE INDEX probe ON labels (label)')",
        )
        .await
        .expect("write through the writer");
    let seen = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT definition FROM deferred_indexes WHERE name = 'probe'",
        ))
        .await
        .expect("read through the pool")
        .expect("the row is there");
    assert_eq!(
        seen.try_get_by_index::<String>(0).expect("definition"),
        "CREATE INDEX probe ON labels (label)"
    );
}

/// The SQLite the binary links is built with the repository's flags (`.cargo/config.toml`):
/// each connection keeps a page cache of its own, and allocations keep no statistics. A build
/// without those flags would still work, with the writer and the readers contending for one
/// shared cache.
#[actix_rt::test]
async fn sqlite_is_built_with_private_page_caches_and_no_allocation_statistics() {
    let test_db = TestDb::new(Backend::Sqlite).await;
    let db = connect(&test_db.url).await.expect("connect");
    let options: Vec<String> = db
        .query_all_raw(Statement::from_string(db.get_database_backend(), "PRAGMA compile_options"))
        .await
        .expect("compile options")
        .iter()
        .map(|row| row.try_get_by_index::<String>(0).expect("option"))
        .collect();
    assert!(options.iter().any(|o| o == "THREADSAFE=1"), "the options are listed: {options:?}");
    assert!(
        !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
        "one page cache per connection: {options:?}"
    );
    assert!(options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"), "no statistics: {options:?}");
}
