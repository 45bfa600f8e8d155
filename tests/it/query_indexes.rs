//! Deferred query indexes: a fresh database indexes without the API's listing indexes and
//! builds them, with their exact definitions, once the chain has caught up; `/ready` waits
//! for them; a restart neither defers nor rebuilds anything.

use std::time::{Duration, Instant};

use ensemble::{
    Service,
    store::query_indexes::{DEFERRABLE, STAND_INS, build, defer, pending},
};
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, Statement};

use crate::support::{self, Backend, TestDb};

/// (name, definition) of every deferrable index present.
async fn present(db: &DatabaseConnection) -> Vec<(String, String)> {
    indexes(db).await.into_iter().filter(|(name, _)| DEFERRABLE.contains(&name.as_str())).collect()
}

/// Names of the backfill's stand-in indexes present.
async fn stand_ins(db: &DatabaseConnection) -> Vec<String> {
    indexes(db)
        .await
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| STAND_INS.iter().any(|(stand_in, _)| stand_in == name))
        .collect()
}

/// (name, definition) of every index present.
async fn indexes(db: &DatabaseConnection) -> Vec<(String, String)> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => {
            "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname"
        }
        _ => {
            "SELECT name, sql AS def FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
        }
    };
    db.query_all_raw(Statement::from_string(backend, sql))
        .await
        .expect("catalog")
        .into_iter()
        .map(|r| {
            (r.try_get::<String>("", "name").expect("name"), r.try_get("", "def").expect("def"))
        })
        .collect()
}

async fn defer_and_build_restore_the_same_indexes(backend: Backend) {
    let db = TestDb::new(backend).await;
    let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
    let before = present(&conn).await;
    assert!(before.len() >= 16, "the schema has the deferrable indexes: {before:?}");
    assert!(stand_ins(&conn).await.is_empty(), "no stand-in outside a backfill");

    assert_eq!(defer(&conn).await.expect("defer"), before.len());
    assert!(present(&conn).await.is_empty(), "deferred indexes are dropped");
    let mut expected: Vec<String> = STAND_INS.iter().map(|(name, _)| (*name).to_owned()).collect();
    expected.sort();
    assert_eq!(stand_ins(&conn).await, expected, "the stand-ins serve the backfill");
    let mut names: Vec<String> = before.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    assert_eq!(pending(&conn).await.expect("pending"), names);
    // Deferring again finds nothing left to drop and keeps the recorded definitions.
    assert_eq!(defer(&conn).await.expect("defer again"), 0);
    assert_eq!(pending(&conn).await.expect("pending").len(), before.len());

    assert_eq!(build(&conn).await.expect("build"), before.len());
    let after = present(&conn).await;
    assert_eq!(after, before, "rebuilt indexes have their original definitions");
    assert!(stand_ins(&conn).await.is_empty(), "the stand-ins go once the indexes are built");
    assert!(pending(&conn).await.expect("pending").is_empty());
    assert_eq!(build(&conn).await.expect("build again"), 0, "nothing is built twice");
}

#[actix_rt::test]
async fn defer_and_build_restore_the_same_indexes_sqlite() {
    defer_and_build_restore_the_same_indexes(Backend::Sqlite).await;
}

#[actix_rt::test]
async fn defer_and_build_restore_the_same_indexes_postgres() {
    defer_and_build_restore_the_same_indexes(Backend::Postgres).await;
}

/// While the indexes are deferred, the heal cascade's lookup of the domains a learned label
/// renames (`store::heal_index::labelled_query`) is served by the partial stand-in for
/// `domains_label_hash`, which holds only the domains whose leaf label is unknown.
async fn the_heal_lookup_by_label_reads_the_partial_stand_in(backend: Backend) {
    use ensemble::store::heal_index::labelled_query;
    use entities::domain::RawHash;
    use sea_orm::{QueryTrait, TransactionTrait};

    let db = TestDb::new(backend).await;
    let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
    defer(&conn).await.expect("defer");
    let engine = conn.get_database_backend();
    let lookup = labelled_query(1, &[RawHash::new([7; 32]), RawHash::new([8; 32])]).build(engine);
    let txn = conn.begin().await.expect("begin");
    if backend == Backend::Postgres {
        // An empty table is cheapest to scan; the question is whether the index can serve.
        txn.execute_unprepared("SET LOCAL enable_seqscan = off").await.expect("set");
    }
    let explain = if backend == Backend::Postgres { "EXPLAIN" } else { "EXPLAIN QUERY PLAN" };
    let plan: Vec<String> = txn
        .query_all_raw(Statement::from_sql_and_values(
            engine,
            format!("{explain} {}", lookup.sql),
            lookup.values.map(|v| v.0).unwrap_or_default(),
        ))
        .await
        .expect("explain")
        .iter()
        .map(|row| {
            let column = if backend == Backend::Postgres { "QUERY PLAN" } else { "detail" };
            row.try_get::<String>("", column).expect("plan line")
        })
        .collect();
    txn.rollback().await.expect("rollback");
    assert!(
        plan.iter().any(|line| line.contains("domains_unknown_label_hash")),
        "the stand-in serves the lookup: {plan:?}"
    );
}

crate::support::on_both_engines!(the_heal_lookup_by_label_reads_the_partial_stand_in);

/// The pooled connection that built an index (with the sorter's helper threads) goes back to
/// the API without them, after a failed build too.
#[actix_rt::test]
async fn an_sqlite_build_leaves_its_connection_without_sorter_threads() {
    let db = TestDb::new(Backend::Sqlite).await;
    ensemble::store::database::connect(&db.url).await.expect("migrate");
    // One connection, so the pragma read afterwards is that of the connection that built.
    let mut options = sea_orm::ConnectOptions::new(db.url.clone());
    options.max_connections(1).min_connections(1).sqlx_logging(false);
    let conn = sea_orm::Database::connect(options).await.expect("connect");
    assert_eq!(support::sqlite_pragma(&conn, "threads").await, 0, "SQLite's default");

    let deferred = defer(&conn).await.expect("defer");
    assert_eq!(build(&conn).await.expect("build"), deferred);
    assert_eq!(support::sqlite_pragma(&conn, "threads").await, 0, "reset after a build");

    conn.execute_unprepared(
        "INSERT INTO deferred_indexes (name, definition) \
         VALUES ('broken', 'CREATE INDEX broken ON no_such_table (a)')",
    )
    .await
    .expect("record a broken definition");
    let err = build(&conn).await.expect_err("an index on a missing table fails");
    assert!(err.to_string().contains("build deferred index"), "{err}");
    assert_eq!(support::sqlite_pragma(&conn, "threads").await, 0, "reset after a failed build");
    assert_eq!(pending(&conn).await.expect("pending"), vec!["broken".to_owned()]);
}

async fn ready(client: &reqwest::Client, base: &str) -> (u16, String) {
    let response = client.get(format!("{base}/ready")).send().await.expect("ready answers");
    (response.status().as_u16(), response.text().await.expect("body"))
}

#[actix_rt::test]
async fn a_fresh_database_builds_its_indexes_once_caught_up_and_a_restart_keeps_them() {
    let (anvil, _driver, scenario) = support::devnet(31_473, ScenarioOptions::default()).await;
    let db = TestDb::new(Backend::Sqlite).await;
    let chain = scenario.deployment.chain_config(anvil.chain_id, &anvil.url);
    let config = support::config(&db.url, chain);
    let service = Service::start(&config).await.expect("service starts");
    let base = format!("http://{}", service.http_addr);
    let client = crate::support::http_client();
    // Start defers them before any chain runs; the builder looks only once a second.
    let early = pending(&service.db).await.expect("pending");
    assert!(early.len() >= 16, "a fresh database defers its query indexes: {early:?}");
    let (status, body) = ready(&client, &base).await;
    assert_eq!(status, 503, "not ready while indexes are deferred: {body}");
    support::wait_for_block(&service.db, anvil.chain_id, scenario.last_block).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = ready(&client, &base).await;
        if status == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "never ready: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pending(&service.db).await.expect("pending").is_empty());
    let built = present(&service.db).await;
    assert!(built.len() >= 16, "every deferrable index exists once ready: {built:?}");
    service.stop().await;

    // A restart on an indexed database defers nothing and rebuilds nothing.
    let service = Service::start(&config).await.expect("service restarts");
    assert!(pending(&service.db).await.expect("pending").is_empty());
    assert_eq!(present(&service.db).await, built);
    service.stop().await;
}

/// Names of the `domains` indexes keyed by an expression, and of those whose expression
/// PostgreSQL holds statistics of.
async fn expression_statistics(db: &DatabaseConnection) -> (Vec<String>, Vec<String>) {
    let names = |sql: &str| {
        let sql = sql.to_owned();
        async move {
            db.query_all_raw(Statement::from_string(DatabaseBackend::Postgres, sql))
                .await
                .expect("catalog")
                .into_iter()
                .map(|r| r.try_get::<String>("", "name").expect("name"))
                .collect::<Vec<String>>()
        }
    };
    let expressions = names(
        "SELECT c.relname::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE i.indrelid = 'domains'::regclass AND i.indexprs IS NOT NULL ORDER BY 1",
    )
    .await;
    let analyzed = names(
        "SELECT DISTINCT s.tablename::text AS name FROM pg_stats s \
         JOIN pg_class c ON c.relname = s.tablename JOIN pg_index i ON i.indexrelid = c.oid \
         WHERE i.indrelid = 'domains'::regclass ORDER BY 1",
    )
    .await;
    (expressions, analyzed)
}

/// PostgreSQL analyzes `domains` beside the other tables' builds: only once every `domains`
/// index exists, so that the planner has the statistics of each index's expression.
#[actix_rt::test]
async fn a_postgres_build_analyzes_domains_after_its_expression_indexes() {
    let db = TestDb::new(Backend::Postgres).await;
    let conn = ensemble::store::database::connect(&db.url).await.expect("connect");
    assert!(defer(&conn).await.expect("defer") >= 16);
    conn.execute_unprepared(
        "INSERT INTO domains (id, chain_id, label_hash, name, depth, registration_count, \
         created_block, created_at, seq, parent_seq, owner) \
         SELECT decode(lpad(to_hex(g), 64, '0'), 'hex'), 1, decode(md5(g::text), 'hex'), \
         'name' || g || '.eth', 2, 0, 1, 1, g, 1, decode(lpad(to_hex(g % 7), 40, '0'), 'hex') \
         FROM generate_series(1, 3000) g",
    )
    .await
    .expect("domains");
    assert!(build(&conn).await.expect("build") >= 16);
    let (expressions, analyzed) = expression_statistics(&conn).await;
    for name in ["domains_name_seq", "domains_node", "domains_name_trgm"] {
        assert!(expressions.contains(&name.to_owned()), "{name} is keyed by an expression");
    }
    assert_eq!(analyzed, expressions, "statistics of every index expression");
    let row = conn
        .query_one_raw(Statement::from_string(
            DatabaseBackend::Postgres,
            "SELECT count(*) AS n FROM pg_stats WHERE tablename = 'domains' AND attname = 'name'",
        ))
        .await
        .expect("statistics")
        .expect("a row");
    assert_eq!(row.try_get::<i64>("", "n").expect("n"), 1, "the names' statistics");
}
