//! The fast path changes nothing: a generated corpus indexed by `bench run` (prefetch, cache,
//! big batches) gives the same database and the same GraphQL answers as the slow, obvious
//! path (no cache: every read is a query; one block per batch; a flush after every batch),
//! and as the real fetcher reading the corpus from a JSON-RPC endpoint into PostgreSQL.

use ensemble::config::IndexerConfig;
use ensemble_devkit::bench::{
    generate::generate,
    run::{RunOptions, Source, run},
};

use crate::support::{Backend, TestDb};

async fn index(
    corpus: &std::path::Path,
    backend: Backend,
    source: Source,
    indexer: IndexerConfig,
    window: u64,
) -> (TestDb, String, Vec<String>) {
    let db = TestDb::new(backend).await;
    let options = RunOptions {
        corpus: corpus.to_owned(),
        database_url: db.url.clone(),
        source,
        indexer,
        window,
        rpc_url: None,
    };
    let report = run(&options, |_| {}).await.expect("bench run");
    assert!(report.events > 0 && report.seconds > 0.0);
    assert!(report.flushes.count > 0);
    let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
    let dump = ensemble::dump::dump(&conn).await.expect("dump");
    let answers = answers(conn).await;
    (db, dump, answers)
}

/// The answers to queries users run, over names and accounts the corpus certainly has.
async fn answers(conn: sea_orm::DatabaseConnection) -> Vec<String> {
    let schema = graphql::build_schema(conn);
    let first = schema
        .execute(
            "{ domains(first: 20, where: {name: {starts_with: \"a\"}}, order: {by: NAME, dir: ASC}) \
             { totalCount edges { node { canonical { name { interpreted } } owner { address } } } } }",
        )
        .await;
    assert!(first.errors.is_empty(), "{:?}", first.errors);
    let json = serde_json::to_value(&first.data).expect("json");
    let names: Vec<String> = json["domains"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter_map(|e| e["node"]["canonical"]["name"]["interpreted"].as_str().map(str::to_owned))
        .collect();
    assert!(!names.is_empty(), "the corpus has names starting with a");
    let mut out = vec![json.to_string()];
    for name in names.iter().take(8) {
        let query = format!(
            "{{ domain(by: {{name: \"{name}\"}}) {{ id canonical {{ name {{ interpreted }} }} label {{ interpreted }} \
             owner {{ address domains(first: 5) {{ totalCount edges {{ node {{ id }} }} }} }} \
             registration {{ expiry start }} registrations(first: 5) {{ totalCount }} \
             resolver {{ assigned {{ id records(first: 5) {{ edges {{ node {{ id }} }} }} }} }} \
             subdomains(first: 5) {{ totalCount edges {{ node {{ id }} }} }} \
             events(first: 10) {{ totalCount edges {{ node {{ id topics data }} }} }} }} }}"
        );
        let response = schema.execute(query.as_str()).await;
        assert!(response.errors.is_empty(), "{name}: {:?}", response.errors);
        out.push(serde_json::to_value(&response.data).expect("json").to_string());
    }
    out
}

#[actix_rt::test]
async fn fast_path_slow_path_and_rpc_build_the_same_namegraph() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus.bin");
    let made = generate(&corpus, 6_000, 5).expect("generate");
    assert!(made.header.logs >= 6_000);

    // Small flushes over small windows, so several flushes are written behind while later
    // batches are applied.
    let fast = IndexerConfig {
        cache_mb: 512,
        flush_rows: 1_500,
        mailbox_capacity: 8,
        defer_query_indexes: true,
        fetch_cache_dir: String::new(),
        fetch_cache_mb: 0,
    };
    let (fast_db, fast_dump, fast_answers) =
        index(&corpus, Backend::Sqlite, Source::Local, fast.clone(), 100).await;
    // The obvious path: nothing cached, so every read is a query against what was committed;
    // one block per batch and a commit after each.
    let slow = IndexerConfig {
        cache_mb: 0,
        flush_rows: 1,
        mailbox_capacity: 1,
        defer_query_indexes: false,
        fetch_cache_dir: String::new(),
        fetch_cache_mb: 0,
    };
    let (_b, slow_dump, slow_answers) =
        index(&corpus, Backend::Sqlite, Source::Local, slow, 1).await;
    let (rpc_db, rpc_dump, rpc_answers) =
        index(&corpus, Backend::Postgres, Source::Rpc, fast, 500).await;

    assert!(fast_dump.lines().count() > 6_000, "the dump holds the namegraph and the events");
    assert!(
        fast_dump == slow_dump,
        "fast and slow paths differ: {}",
        first_difference(&fast_dump, &slow_dump)
    );
    assert!(
        fast_dump == rpc_dump,
        "local SQLite and JSON-RPC PostgreSQL runs differ: {}",
        first_difference(&fast_dump, &rpc_dump)
    );
    assert_eq!(fast_answers, slow_answers);
    assert_eq!(fast_answers, rpc_answers);

    // The dump reads each table a page at a time, after the last page's key: pages of two
    // rows, which split every table and most blocks' events, dump the same on either engine.
    for (db, expected) in [(&fast_db, &fast_dump), (&rpc_db, &rpc_dump)] {
        let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
        for page_rows in [2, 999] {
            let mut paged = Vec::new();
            ensemble::dump::dump_to(&conn, &mut paged, page_rows).await.expect("dump");
            let paged = String::from_utf8(paged).expect("utf-8");
            assert!(
                &paged == expected,
                "{} pages of {page_rows} rows differ: {}",
                db.url,
                first_difference(&paged, expected)
            );
        }
    }
}

#[actix_rt::test]
async fn a_run_reads_an_endpoint_serving_its_corpus_and_refuses_another_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus.bin");
    let longer = dir.path().join("longer.bin");
    let made = generate(&corpus, 1_500, 7).expect("generate");
    let other = generate(&longer, 3_000, 7).expect("generate");
    assert_ne!(made.header.last_block, other.header.last_block);
    // As `ensemble bench serve` runs it, on a port of its own.
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = ensemble_devkit::bench::rpc_server::serve_on(&corpus, addr)
        .await
        .expect("serve the corpus");
    let indexer = IndexerConfig {
        cache_mb: 64,
        flush_rows: 1_000,
        mailbox_capacity: 4,
        defer_query_indexes: true,
        fetch_cache_dir: String::new(),
        fetch_cache_mb: 0,
    };
    let options = |corpus: &std::path::Path, db: &TestDb, rpc_url: Option<String>| RunOptions {
        corpus: corpus.to_owned(),
        database_url: db.url.clone(),
        source: Source::Rpc,
        indexer: indexer.clone(),
        window: 200,
        rpc_url,
    };

    let served = TestDb::new(Backend::Sqlite).await;
    let report =
        run(&options(&corpus, &served, Some(server.url())), |_| {}).await.expect("bench run");
    assert_eq!(report.events, made.header.logs);
    let (_local, local_dump, _) =
        index(&corpus, Backend::Sqlite, Source::Local, indexer.clone(), 200).await;
    let conn = ensemble::store::database::connect(&served.url).await.expect("connect");
    let served_dump = ensemble::dump::dump(&conn).await.expect("dump");
    assert!(
        served_dump == local_dump,
        "the served run and the local run differ: {}",
        first_difference(&served_dump, &local_dump)
    );

    // The endpoint serves another corpus's chain: refused before anything is indexed.
    let wrong = TestDb::new(Backend::Sqlite).await;
    let err = run(&options(&longer, &wrong, Some(server.url())), |_| {})
        .await
        .expect_err("another chain");
    assert!(err.to_string().contains("not this corpus's last block"), "{err}");
    server.stop().await;
}

/// The first line where two dumps differ.
fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .find(|(x, y)| x != y)
        .map_or_else(|| "one is a prefix of the other".to_owned(), |(x, y)| format!("\n{x}\n{y}"))
}
