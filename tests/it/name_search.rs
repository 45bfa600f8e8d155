//! The name search indexes names without their labelhashes' digits (each engine's search text
//! is the one `entities::search_text` defines), and still finds every name holding a text:
//! through the index for a text it answers for, by testing the names for hex digits and
//! brackets (which may lie inside a `[labelhash]`), on both engines, in the Omnigraph (both
//! plans) and the subgraph API. A database whose name search indexed the names themselves is
//! moved to the search texts by its migration, deferred index or not.

use ensemble::store::{
    database::{WalBound, connect, writer_connection},
    query_indexes,
    tables::{CachedRows, CreatedRows},
    writer::{Changes, Checkpoint, write},
};
use entities::domain::{self, DomainKey, RawAddress, RawHash};
use migrations::{Migrator, MigratorTrait};
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, IntoActiveModel, Statement};
use serde_json::json;

use crate::support::{self, Backend, TestDb};

/// Labelhashes holding texts that are also known labels (`cafe`, `999`) or pieces of them.
const H1: &str = "cafe999abc00000000000000000000000000000000000000000000000000000f";
const H2: &str = "1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef";

fn names() -> Vec<String> {
    vec![
        "eth".to_owned(),
        "alice.eth".to_owned(),
        format!("[{H1}].eth"),
        format!("bob.[{H1}].eth"),
        format!("[{H2}].[{H1}].eth"),
        "cafe.eth".to_owned(),
        "0xabc.eth".to_owned(),
        "999.eth".to_owned(),
    ]
}

/// Texts a search may be given: known text, hex digits (also found inside labelhashes),
/// brackets, and text reaching across a labelhash's bracket.
const TEXTS: &[&str] = &[
    "ali", "eth", "cafe", "999", "abc", "e99", "0000", "].e", "[ca", "b.[", "ob.", "fe.e", "0xa",
    "f].", ".[1", "bob.[c", "nothing",
];

fn row(n: u8, name: &str) -> domain::Model {
    domain::Model {
        id: DomainKey::new(1, &[0x11; 20], &[n; 32]),
        seq: (1 << 32) + i64::from(n),
        chain_id: 1,
        label_hash: RawHash::new([n; 32]),
        parent_seq: None,
        owner: Some(RawAddress::new([n; 20])),
        registry_owner: None,
        token_owner: None,
        wrapped_owner: None,
        resolver: None,
        ttl: None,
        name: name.to_owned(),
        depth: i32::try_from(name.split('.').count()).unwrap(),
        migrated: true,
        registration_count: 0,
        registration_start: i64::MAX,
        registration_expiry: i64::MIN,
        created_block: 1,
        created_at: 1_700_000_000,
        link: Some(0),
    }
}

fn rows() -> Vec<domain::Model> {
    names().iter().enumerate().map(|(i, name)| row(u8::try_from(i + 1).unwrap(), name)).collect()
}

/// The names holding `text`, sorted.
fn holding(text: &str) -> Vec<String> {
    let mut found: Vec<String> = names().into_iter().filter(|n| n.contains(text)).collect();
    found.sort();
    found
}

/// Every search of [`TEXTS`] through the Omnigraph (both plans) and the subgraph API finds
/// exactly the names holding the text.
async fn every_search_finds_every_holder(db: &DatabaseConnection) {
    let indexed = graphql::build_schema(db.clone());
    let walked = graphql::build_schema_with(
        db.clone(),
        graphql::connection::Tuning {
            common_prefix_rows: 0,
            common_text_rows: 0,
            common_text_estimate: 0,
        },
    );
    let subgraph = graphql::subgraph::build_subgraph_schema(
        db.clone(),
        graphql::subgraph::SubgraphScope {
            chain_id: 1,
            registry: [0x11; 20],
            old_registry: None,
            registrar_name: "eth".to_owned(),
            common_set_rows: graphql::subgraph::schema::COMMON_SET_ROWS,
        },
    )
    .unwrap();
    let mut found = 0;
    for text in TEXTS {
        let want = holding(text);
        found += want.len();
        for schema in [&indexed, &walked] {
            for order in ["NAME", "DEPTH"] {
                let query = format!(
                    "{{ domains(where: {{name: {{contains: {text:?}}}}}, \
                     order: {{by: {order}}}, first: 50) {{ totalCount edges {{ node {{ id }} }} }} }}"
                );
                let response = schema.execute(query.as_str()).await;
                assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
                let data = response.data.into_json().unwrap();
                assert_eq!(data["domains"]["totalCount"], json!(want.len()), "{query}");
                assert_eq!(
                    data["domains"]["edges"].as_array().unwrap().len(),
                    want.len(),
                    "{query}"
                );
            }
        }
        let query =
            format!("{{ domains(first: 50, where: {{name_contains: {text:?}}}) {{ name }} }}");
        let response = subgraph.execute(query.as_str()).await;
        assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
        let data = response.data.into_json().unwrap();
        let mut got: Vec<String> = data["domains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect();
        got.sort();
        assert_eq!(got, want, "subgraph: {query}");
    }
    assert!(found > 20, "only {found} names expected in all");
}

async fn texts_inside_labelhashes_are_found(backend: Backend) {
    let test_db = TestDb::new(backend).await;
    let db = connect(&test_db.url).await.unwrap();
    let writer = writer_connection(&db, 1 << 20);
    let rows = rows();
    let changes = Changes {
        created: Some(CreatedRows { domains: vec![true; rows.len()], ..CreatedRows::default() }),
        tables: CachedRows { domains: rows.into(), ..CachedRows::default() },
        ..Changes::default()
    };
    let checkpoint =
        Checkpoint { chain_id: ensemble::ChainId(1), block_number: 1, block_hash: "0x01".into() };
    write(&writer, &changes, &checkpoint, None, WalBound::Truncate).await.unwrap();
    assert!(support::name_search_matches(&db).await, "the search holds every search text");
    // Each engine's search text is the one its definition gives.
    let sql = match backend {
        Backend::Postgres => {
            format!("SELECT name, {} AS text FROM domains", entities::search_text::postgres("name"))
        }
        Backend::Sqlite => "SELECT d.name AS name, s.name AS text FROM domains d \
                            JOIN domains_search_text s ON s.rid = d.rowid"
            .to_owned(),
    };
    let texts = db.query_all_raw(Statement::from_string(db.get_database_backend(), sql)).await;
    let texts = texts.unwrap();
    assert_eq!(texts.len(), names().len());
    for row in texts {
        let name: String = row.try_get("", "name").unwrap();
        let text: String = row.try_get("", "text").unwrap();
        assert_eq!(text, entities::search_text::of(&name), "{name}");
    }
    every_search_finds_every_holder(&db).await;
}

crate::support::on_both_engines!(texts_inside_labelhashes_are_found);

/// Migrations up to, but not including, the name search's move to search texts.
const BEFORE_SEARCH_TEXTS: u32 = 4;

/// The trigram index's definition and statistics target on PostgreSQL, if it exists.
async fn postgres_trigram_index(db: &DatabaseConnection) -> Option<(String, i64)> {
    let row = db
        .query_one_raw(Statement::from_string(
            sea_orm::DatabaseBackend::Postgres,
            "SELECT i.indexdef AS def, a.attstattarget::bigint AS target FROM pg_indexes i \
             JOIN pg_attribute a ON a.attrelid = 'domains_name_trgm'::regclass AND a.attnum = 1 \
             WHERE i.indexname = 'domains_name_trgm'",
        ))
        .await
        .ok()??;
    Some((row.try_get("", "def").unwrap(), row.try_get("", "target").unwrap()))
}

async fn a_search_of_names_moves_to_search_texts(backend: Backend) {
    // A database whose rows were indexed by the name search as it was.
    let test_db = TestDb::new(backend).await;
    let db = sea_orm::Database::connect(&test_db.url).await.unwrap();
    Migrator::up(&db, Some(BEFORE_SEARCH_TEXTS)).await.unwrap();
    domain::Entity::insert_many(rows().into_iter().map(IntoActiveModel::into_active_model))
        .exec_without_returning(&db)
        .await
        .unwrap();
    if backend == Backend::Sqlite {
        db.execute_unprepared("INSERT INTO domains_name_fts(domains_name_fts) VALUES ('rebuild')")
            .await
            .unwrap();
    }
    Migrator::up(&db, None).await.unwrap();
    assert!(support::name_search_matches(&db).await, "the search holds every search text");
    every_search_finds_every_holder(&db).await;
    if backend == Backend::Postgres {
        let (definition, target) = postgres_trigram_index(&db).await.expect("built again");
        assert!(definition.contains("regexp_replace(name"), "{definition}");
        assert_eq!(target, 1000, "the expression's statistics target");
        let analyzed = db
            .query_one_raw(Statement::from_string(
                sea_orm::DatabaseBackend::Postgres,
                "SELECT 1 AS x FROM pg_stats WHERE tablename = 'domains_name_trgm'",
            ))
            .await
            .unwrap();
        assert!(analyzed.is_some(), "the expression has statistics");
        // The API's condition is served by it.
        let condition = entities::search_text::postgres("domains.name");
        let txn = sea_orm::TransactionTrait::begin(&db).await.unwrap();
        txn.execute_unprepared("SET LOCAL enable_seqscan = off").await.unwrap();
        let plan = txn
            .query_all_raw(Statement::from_string(
                sea_orm::DatabaseBackend::Postgres,
                format!("EXPLAIN SELECT seq FROM domains WHERE {condition} LIKE '%ali%'"),
            ))
            .await
            .unwrap();
        let plan: Vec<String> =
            plan.iter().map(|r| r.try_get::<String>("", "QUERY PLAN").unwrap()).collect();
        assert!(plan.iter().any(|l| l.contains("domains_name_trgm")), "{plan:#?}");
        txn.rollback().await.unwrap();
    }

    // A database in its first backfill, its query indexes set aside: the trigram index is
    // built over the search texts when the others are.
    let deferring = TestDb::new(backend).await;
    let db = sea_orm::Database::connect(&deferring.url).await.unwrap();
    Migrator::up(&db, Some(BEFORE_SEARCH_TEXTS)).await.unwrap();
    assert!(query_indexes::defer(&db).await.unwrap() > 0);
    Migrator::up(&db, None).await.unwrap();
    domain::Entity::insert_many(rows().into_iter().map(IntoActiveModel::into_active_model))
        .exec_without_returning(&db)
        .await
        .unwrap();
    if backend == Backend::Sqlite {
        ensemble::store::name_search::index(&db, &[], 0).await.unwrap();
    }
    query_indexes::build(&db).await.unwrap();
    assert!(query_indexes::pending(&db).await.unwrap().is_empty());
    if backend == Backend::Postgres {
        let (definition, target) = postgres_trigram_index(&db).await.expect("built");
        assert!(definition.contains("regexp_replace(name"), "{definition}");
        assert_eq!(target, 1000, "the expression's statistics target");
    }
    assert!(support::name_search_matches(&db).await, "the search holds every search text");
    every_search_finds_every_holder(&db).await;
}

crate::support::on_both_engines!(a_search_of_names_moves_to_search_texts);
