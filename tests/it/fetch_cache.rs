//! The fetch cache: a chain indexed through JSON-RPC with a cache directory keeps its final
//! windows there; indexing it again from scratch (another database, another engine, another
//! window size) reads them from the cache and asks the node for no logs and no blocks, with
//! the same database as a result. A cache of another chain behind the same id is not trusted:
//! its windows are dropped and the chain is read from the node.

use std::collections::BTreeMap;

use ensemble::config::IndexerConfig;
use ensemble_devkit::bench::{
    generate::generate,
    rpc_server::serve_on,
    run::{RunOptions, Source, run},
};

use crate::support::{Backend, TestDb};

fn indexer(cache: &std::path::Path, mb: u64) -> IndexerConfig {
    IndexerConfig {
        cache_mb: 64,
        flush_rows: 1_000,
        mailbox_capacity: 4,
        defer_query_indexes: true,
        fetch_cache_dir: cache.display().to_string(),
        fetch_cache_mb: mb,
    }
}

/// Indexes `corpus` from `url` into a fresh database of `backend`: the database's dump and
/// the requests the run made, by method (counters of this process: compare differences).
async fn index(
    corpus: &std::path::Path,
    url: String,
    backend: Backend,
    indexer: IndexerConfig,
    window: u64,
) -> (TestDb, String, BTreeMap<String, u64>) {
    let db = TestDb::new(backend).await;
    let options = RunOptions {
        corpus: corpus.to_owned(),
        database_url: db.url.clone(),
        source: Source::Rpc,
        indexer,
        window,
        rpc_url: Some(url),
    };
    let report = run(&options, |_| {}).await.expect("bench run");
    let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
    let dump = ensemble::dump::dump(&conn).await.expect("dump");
    (db, dump, report.rpc_requests)
}

fn grew(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>, method: &str) -> u64 {
    after.get(method).copied().unwrap_or(0) - before.get(method).copied().unwrap_or(0)
}

/// Windows stored in the cache file of chain 1 under `dir`.
async fn stored_windows(dir: &std::path::Path) -> i64 {
    let file = ensemble::chain::fetch_cache::file_of(dir, ensemble::ChainId(1));
    let url = format!("sqlite://{}?mode=ro", file.display());
    let pool = sea_orm::sqlx::SqlitePool::connect(&url).await.expect("open the cache");
    let (n,): (i64,) = sea_orm::sqlx::query_as("SELECT count(*) FROM windows")
        .fetch_one(&pool)
        .await
        .expect("count");
    pool.close().await;
    n
}

/// Windows read from a fetch cache in this process (`ensemble_fetch_cache_windows_total`).
fn cache_hits() -> i64 {
    let page = ensemble::metrics::install().render();
    page.lines()
        .filter(|l| {
            l.starts_with("ensemble_fetch_cache_windows_total{") && l.contains("outcome=\"hit\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as i64
}

#[actix_rt::test]
async fn a_warm_cache_reindexes_without_asking_the_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (corpus, other) = (dir.path().join("corpus.bin"), dir.path().join("other.bin"));
    let made = generate(&corpus, 3_000, 11).expect("generate");
    let made_other = generate(&other, 2_000, 12).expect("generate");
    assert_eq!(made.header.chain_id, made_other.header.chain_id);
    let cache = dir.path().join("cache");
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = serve_on(&corpus, any).await.expect("serve the corpus");

    // Cold: everything from the node, every window stored.
    let (_cold, cold_dump, cold) =
        index(&corpus, server.url(), Backend::Sqlite, indexer(&cache, 64), 200).await;
    assert!(grew(&BTreeMap::new(), &cold, "eth_getLogs") > 0);
    let windows = stored_windows(&cache).await;
    assert!(windows >= 2, "the corpus spans several windows ({windows} stored)");

    // Warm, into PostgreSQL with another window size: the stored windows are read instead of
    // the node's logs and blocks, and the database is the same.
    let (_warm, warm_dump, warm) =
        index(&corpus, server.url(), Backend::Postgres, indexer(&cache, 64), 500).await;
    assert_eq!(grew(&cold, &warm, "eth_getLogs"), 0, "logs were read from the node: {warm:?}");
    // Every window came from the cache, with its headers and senders.
    assert_eq!(cache_hits(), windows, "windows read from the cache");
    assert!(warm_dump == cold_dump, "the warm run's database differs from the cold run's");
    assert_eq!(stored_windows(&cache).await, windows, "the warm run stored nothing new");
    server.stop().await;

    // Another chain under the same id: the node does not confirm the stored windows, so they
    // are dropped; the chain is read from the node and indexed as without a cache.
    let server = serve_on(&other, any).await.expect("serve the other corpus");
    let (_stale, stale_dump, stale) =
        index(&other, server.url(), Backend::Sqlite, indexer(&cache, 64), 200).await;
    assert!(grew(&warm, &stale, "eth_getLogs") > 0, "the other chain was read from the node");
    assert!(stored_windows(&cache).await > 0, "the other chain's windows were stored instead");
    let (_plain, plain_dump, _) = index(
        &other,
        server.url(),
        Backend::Sqlite,
        IndexerConfig { fetch_cache_dir: String::new(), ..indexer(&cache, 64) },
        200,
    )
    .await;
    assert!(stale_dump == plain_dump, "a stale cache changed what was indexed");
    server.stop().await;
}

#[actix_rt::test]
async fn a_cache_stops_growing_at_its_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus.bin");
    generate(&corpus, 1_500, 13).expect("generate");
    let cache = dir.path().join("cache");
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = serve_on(&corpus, any).await.expect("serve the corpus");
    // A bound of 0 MiB: nothing fits, the run indexes from the node as without a cache.
    let (_db, _, _) = index(&corpus, server.url(), Backend::Sqlite, indexer(&cache, 0), 200).await;
    assert_eq!(stored_windows(&cache).await, 0);
    server.stop().await;
}
