//! The schema's history as the tools see it: a new database is migrated to this build's
//! schema; a tool that does not migrate refuses a database that is behind; a database migrated
//! by a build this one does not know is refused with what to do, on both engines, and is left
//! as it was. A migration that adds query indexes during a first backfill sets them aside with
//! the others. PostgreSQL's name indexes are on the key the API's queries write.

use ensemble::store::{StoreError, database};
use migrations::{Migrator, MigratorTrait};
use sea_orm::{ConnectionTrait, Statement};

use crate::support::{Backend, TestDb};

async fn schema_history(backend: Backend) {
    let db = TestDb::new(backend).await;
    // Nothing migrated yet: a reading tool says to migrate.
    let behind = database::connect_current(&db.url).await.unwrap_err();
    let all = Migrator::migrations().len();
    assert!(matches!(behind, StoreError::SchemaBehind { pending } if pending == all), "{behind}");
    let conn = database::connect(&db.url).await.unwrap();
    database::connect_current(&db.url).await.unwrap();
    // Another build's migration on record: both ways in refuse it and say which.
    let version = "m20991231_000001_from_elsewhere";
    conn.execute_raw(Statement::from_string(
        conn.get_database_backend(),
        format!("INSERT INTO seaql_migrations (version, applied_at) VALUES ('{version}', 0)"),
    ))
    .await
    .unwrap();
    for refused in [
        database::connect(&db.url).await.unwrap_err(),
        database::connect_current(&db.url).await.unwrap_err(),
    ] {
        match &refused {
            StoreError::SchemaUnknown { version: got } => assert_eq!(got, version),
            other => panic!("{other}"),
        }
        assert!(refused.to_string().contains("new database"), "{refused}");
    }
    let tables = conn
        .query_all_raw(Statement::from_string(
            conn.get_database_backend(),
            "SELECT count(*) AS n FROM domains",
        ))
        .await
        .unwrap();
    assert_eq!(tables.len(), 1, "the schema is untouched");
}

crate::support::on_both_engines!(schema_history);

/// Whether the index `name` exists.
async fn index_exists(conn: &sea_orm::DatabaseConnection, name: &str) -> bool {
    let sql = match conn.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            format!("SELECT 1 AS x FROM pg_indexes WHERE indexname = '{name}'")
        }
        _ => format!("SELECT 1 AS x FROM sqlite_master WHERE type = 'index' AND name = '{name}'"),
    };
    conn.query_one_raw(Statement::from_string(conn.get_database_backend(), sql))
        .await
        .unwrap()
        .is_some()
}

/// A migration that adds query indexes to a database still in its first backfill (its query
/// indexes set aside) sets the new ones aside too, and they are built with the others.
async fn new_indexes_join_a_deferred_backfill(backend: Backend) {
    const OWNER_INDEXES: [&str; 3] =
        ["domains_registry_owner", "domains_token_owner", "domains_wrapped_owner"];
    let db = TestDb::new(backend).await;
    let conn = sea_orm::Database::connect(&db.url).await.unwrap();
    Migrator::up(&conn, Some(1)).await.unwrap();
    let deferred = ensemble::store::query_indexes::defer(&conn).await.unwrap();
    assert!(deferred > 0);
    Migrator::up(&conn, None).await.unwrap();
    let pending = ensemble::store::query_indexes::pending(&conn).await.unwrap();
    for name in OWNER_INDEXES {
        assert!(pending.iter().any(|p| p == name), "{name} set aside: {pending:?}");
        assert!(!index_exists(&conn, name).await, "{name} not built yet");
    }
    ensemble::store::query_indexes::build(&conn).await.unwrap();
    assert!(ensemble::store::query_indexes::pending(&conn).await.unwrap().is_empty());
    for name in OWNER_INDEXES {
        assert!(index_exists(&conn, name).await, "{name} built");
    }
    // On a database that is not deferring, the migration builds them at once.
    let fresh = TestDb::new(backend).await;
    let conn = database::connect(&fresh.url).await.unwrap();
    for name in OWNER_INDEXES {
        assert!(index_exists(&conn, name).await, "{name} built by the migration");
    }
}

crate::support::on_both_engines!(new_indexes_join_a_deferred_backfill);

/// PostgreSQL's name indexes are on exactly the key expression the API's queries write, so
/// the planner can use them (a mismatch would make every name listing sort the table).
#[actix_rt::test]
async fn postgres_name_indexes_are_on_the_api_key() {
    let db = TestDb::new(Backend::Postgres).await;
    let conn = database::connect(&db.url).await.unwrap();
    let key = graphql::name_key::KEY_SQL.replace("domains.", "");
    for (index, leading) in [
        ("domains_name_seq", ""),
        ("domains_owner_name_seq", "owner, "),
        ("domains_parent_name_seq", "parent_seq, "),
    ] {
        let row = conn
            .query_one_raw(Statement::from_string(
                conn.get_database_backend(),
                format!("SELECT indexdef FROM pg_indexes WHERE indexname = '{index}'"),
            ))
            .await
            .unwrap()
            .expect("the index exists");
        let definition: String = row.try_get("", "indexdef").unwrap();
        assert!(definition.ends_with(&format!("({leading}{key}, seq)")), "{definition}");
    }
}
