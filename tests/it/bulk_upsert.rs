//! The flush's bulk upserts on both engines: multi-row `VALUES` on SQLite, one array per
//! column on PostgreSQL. Rows read back exactly as written (NULLs, awkward text, bytes), a
//! conflict updates what it should and keeps what it should, a history row written twice is
//! refused with its whole flush, domains the store created are inserted and the others
//! updated, and on PostgreSQL a flush goes
//! through a connection of its own, never one of the pool's.

use std::time::Duration;

use ensemble::store::{
    StoreError,
    database::{DEFAULT_MAX_CONNECTIONS, WalBound, connect, writer_connection},
    tables::{CachedRows, CreatedRows},
    writer::{Changes, Checkpoint, read_checkpoint, write},
};
use entities::{
    domain::{self, DomainKey, RawAddress, RawHash},
    event, label,
    packed_words::PackedWords,
};
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, QueryOrder};

use crate::support::{self, Backend, TestDb};

/// Text that breaks naive quoting in either engine's literals.
const AWKWARD: [&str; 5] = ["a\"b\\c,{d} NULL", "", "NULL", "ü🦊 ' ; --", "\\x00ab"];

fn key(node: u8) -> DomainKey {
    DomainKey::new(1, &[0x11; 20], &[node; 32])
}

fn domain(node: u8, name: &str, parent: Option<u8>, owner: Option<u8>) -> domain::Model {
    domain::Model {
        id: key(node),
        seq: (1 << 32) + i64::from(node),
        chain_id: 1,
        label_hash: RawHash::new([node ^ 0xff; 32]),
        parent_seq: parent.map(|p| (1 << 32) + i64::from(p)),
        owner: owner.map(|o| RawAddress::new([o; 20])),
        registry_owner: None,
        token_owner: None,
        wrapped_owner: None,
        resolver: Some(RawAddress::new([0x22; 20])),
        ttl: node.is_multiple_of(2).then_some(i64::MAX),
        name: name.to_owned(),
        depth: 1 + i32::from(parent.is_some()),
        migrated: !node.is_multiple_of(2),
        registration_count: 0,
        registration_start: i64::MAX,
        registration_expiry: i64::MIN,
        created_block: 7,
        created_at: 1_700_000_000,
        link: Some(0),
    }
}

fn history(log_index: i32, domain_seq: Option<i64>) -> event::Model {
    event::Model {
        chain_id: 1,
        block_number: 9,
        log_index,
        seq: 0,
        timestamp: 1_700_000_000,
        tx_index: 3,
        contract: 1,
        selector: -2,
        topics: PackedWords::pack(&(0..=255).collect::<Vec<u8>>()),
        data: PackedWords::default(),
        domain_seq,
    }
}

fn checkpoint(block: u64) -> Checkpoint {
    Checkpoint {
        chain_id: ensemble::ChainId(1),
        block_number: block,
        block_hash: format!("0x{block:064x}"),
    }
}

async fn domains(db: &DatabaseConnection) -> Vec<domain::Model> {
    domain::Entity::find().order_by_asc(domain::Column::Id).all(db).await.expect("domains")
}

async fn rows_round_trip_and_conflicts_update_what_they_should(backend: Backend) {
    let test_db = TestDb::new(backend).await;
    let db = connect(&test_db.url).await.expect("connect");
    let writer = writer_connection(&db, 1 << 20);

    let labels: Vec<label::Model> = AWKWARD
        .iter()
        .enumerate()
        .map(|(i, text)| label::Model {
            label_hash: label::RawHash::new([i as u8; label::RawHash::BYTES]),
            label: (i != 2).then(|| (*text).to_owned()),
            normalized: i != 2 && i % 2 == 0,
        })
        .collect();
    let first: Vec<domain::Model> = AWKWARD
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let node = i as u8 + 1;
            domain(node, text, (node > 1).then_some(1), (!node.is_multiple_of(3)).then_some(0x33))
        })
        .collect();
    let events = vec![history(0, None), history(1, Some((1 << 32) + 5)), history(2, Some(0))];
    let changes = Changes {
        tables: CachedRows {
            domains: first.clone().into(),
            labels: labels.clone().into(),
            ..CachedRows::default()
        },
        events: events.clone().into(),
        ..Changes::default()
    };
    write(&writer, &changes, &checkpoint(9), None, WalBound::Truncate).await.expect("first flush");

    assert_eq!(domains(&db).await, first, "{backend:?}: domains read back as written");
    // None of them was marked renamed: every inserted row is searchable all the same.
    assert!(support::name_search_matches(&db).await, "{backend:?}: inserted names searchable");
    let mut stored_labels = label::Entity::find().all(&db).await.expect("labels");
    stored_labels.sort_by(|a, b| a.label_hash.cmp(&b.label_hash));
    assert_eq!(stored_labels, labels, "{backend:?}: labels read back as written");
    let stored_events =
        event::Entity::find().order_by_asc(event::Column::LogIndex).all(&db).await.expect("events");
    assert_eq!(stored_events, events, "{backend:?}: events read back as written");

    // Second flush: every domain changes its owner (some to NULL) and its name, but only
    // domain 2 is marked renamed; the others keep their stored name and depth.
    let mut second = first.clone();
    for d in &mut second {
        d.owner = if d.owner.is_some() { None } else { Some(RawAddress::new([0x44; 20])) };
        d.ttl = None;
        d.name = format!("renamed {}", d.name);
        d.depth += 10;
        d.registration_count = 1;
    }
    let renamed = [key(2)].into_iter().collect();
    let changes = Changes {
        tables: CachedRows { domains: second.clone().into(), ..CachedRows::default() },
        renamed_domains: renamed,
        ..Changes::default()
    };
    write(&writer, &changes, &checkpoint(10), None, WalBound::Truncate)
        .await
        .expect("second flush");

    let expected: Vec<domain::Model> = first
        .iter()
        .zip(&second)
        .map(|(before, after)| {
            if after.id == key(2) {
                after.clone()
            } else {
                domain::Model { name: before.name.clone(), depth: before.depth, ..after.clone() }
            }
        })
        .collect();
    assert_eq!(domains(&db).await, expected, "{backend:?}: conflicts update all but kept columns");
    assert!(support::name_search_matches(&db).await, "{backend:?}: the rename is searchable");
    if backend == Backend::Sqlite {
        let found: Vec<String> = renamed_search(&db).await;
        assert_eq!(found, [format!("renamed {}", AWKWARD[1])], "only domain 2 was renamed");
        // The check tells: a name changed behind the flush's back leaves the search stale.
        db.execute_unprepared("UPDATE domains SET name = 'behind its back' WHERE seq = 4294967297")
            .await
            .expect("rename directly");
        assert!(!support::name_search_matches(&db).await, "a stale name search is detected");
        db.execute_unprepared(&format!(
            "UPDATE domains SET name = '{}' WHERE seq = 4294967297",
            expected[0].name.replace('\'', "''")
        ))
        .await
        .expect("rename back");
        assert!(support::name_search_matches(&db).await, "the search matches again");
    }

    // The history is append-only: writing an event row again fails the whole flush, which
    // commits nothing, not even its other rows or its checkpoint.
    let again = Changes {
        tables: CachedRows {
            domains: vec![domain(9, "nine", None, None)].into(),
            ..CachedRows::default()
        },
        events: vec![history(1, None)].into(),
        ..Changes::default()
    };
    assert!(
        write(&writer, &again, &checkpoint(11), None, WalBound::Truncate).await.is_err(),
        "{backend:?}: a history row written twice is refused"
    );
    assert_eq!(domains(&db).await, expected, "{backend:?}: the refused flush left nothing");
    let stored =
        read_checkpoint(&db, ensemble::ChainId(1)).await.expect("checkpoint").expect("one");
    assert_eq!(stored.block_number, 10, "{backend:?}: the checkpoint did not move");
}

crate::support::on_both_engines!(rows_round_trip_and_conflicts_update_what_they_should);

/// A flush told which domains the store created inserts those and updates the others without
/// asking the database which it holds. A row taken for created that is stored fails the
/// flush on both engines; on SQLite, which then only updates, so does a row taken for stored
/// that is not (PostgreSQL upserts the stored rows, so it writes that one whole).
async fn domains_the_store_created_are_inserted_and_the_others_updated(backend: Backend) {
    let test_db = TestDb::new(backend).await;
    let db = connect(&test_db.url).await.expect("connect");
    let writer = writer_connection(&db, 1 << 20);
    let flush = |rows: Vec<domain::Model>, created: Vec<bool>, renamed: &[u8]| Changes {
        tables: CachedRows { domains: rows.into(), ..CachedRows::default() },
        renamed_domains: renamed.iter().map(|n| key(*n)).collect(),
        created: Some(CreatedRows { domains: created, ..CreatedRows::default() }),
        ..Changes::default()
    };

    let first: Vec<domain::Model> =
        (1..=4).map(|n| domain(n, &format!("name{n}.eth"), None, Some(n))).collect();
    write(
        &writer,
        &flush(first.clone(), vec![true; 4], &[]),
        &checkpoint(1),
        None,
        WalBound::Truncate,
    )
    .await
    .expect("first flush");
    assert_eq!(domains(&db).await, first, "{backend:?}: created rows inserted");
    assert!(support::name_search_matches(&db).await, "{backend:?}: their names searchable");

    // Domains 1 and 2 change (2 renamed, 1 renamed behind the flush's back, which keeps its
    // stored name), and domain 5 is created.
    let mut second = vec![first[0].clone(), first[1].clone(), domain(5, "five.eth", Some(1), None)];
    for d in &mut second[..2] {
        d.owner = None;
        d.name = format!("re{}", d.name);
    }
    write(
        &writer,
        &flush(second.clone(), vec![false, false, true], &[2]),
        &checkpoint(2),
        None,
        WalBound::Truncate,
    )
    .await
    .expect("second flush");
    let mut expected = first.clone();
    expected[0] = domain::Model { name: first[0].name.clone(), ..second[0].clone() };
    expected[1] = second[1].clone();
    expected.push(second[2].clone());
    assert_eq!(domains(&db).await, expected, "{backend:?}: stored rows updated, new one inserted");
    assert!(support::name_search_matches(&db).await, "{backend:?}: names searchable");

    // Domain 3 taken for created: it is stored, and the flush commits nothing.
    let mut third = first[2].clone();
    third.owner = None;
    let refused = write(
        &writer,
        &flush(vec![third, domain(6, "six.eth", None, None)], vec![true, true], &[]),
        &checkpoint(3),
        None,
        WalBound::Truncate,
    )
    .await;
    assert!(refused.is_err(), "{backend:?}: a stored row taken for created is refused");
    assert_eq!(domains(&db).await, expected, "{backend:?}: the refused flush left nothing");

    // Domain 7 taken for stored: it is not.
    let missing = write(
        &writer,
        &flush(vec![domain(7, "seven.eth", None, None)], vec![false], &[]),
        &checkpoint(4),
        None,
        WalBound::Truncate,
    )
    .await;
    let stored =
        read_checkpoint(&db, ensemble::ChainId(1)).await.expect("checkpoint").expect("one");
    if backend == Backend::Sqlite {
        assert!(
            matches!(missing, Err(StoreError::StoredRowsMissing { expected: 1, updated: 0, .. })),
            "an update that misses a row fails the flush: {missing:?}"
        );
        assert_eq!(domains(&db).await, expected, "the failed flush left nothing");
        assert_eq!(stored.block_number, 2, "the checkpoint did not move");
    } else {
        missing.expect("PostgreSQL upserts the rows taken for stored");
        expected.push(domain(7, "seven.eth", None, None));
        assert_eq!(domains(&db).await, expected, "the row is written whole");
        assert_eq!(stored.block_number, 4);
    }
}

crate::support::on_both_engines!(domains_the_store_created_are_inserted_and_the_others_updated);

/// Names that hold each trigram of "renamed", as SQLite's name search finds them (a search
/// that keeps which names hold a trigram, not where, matches trigrams, not phrases).
async fn renamed_search(db: &DatabaseConnection) -> Vec<String> {
    let rows = db
        .query_all_raw(sea_orm::Statement::from_string(
            sea_orm::DatabaseBackend::Sqlite,
            "SELECT name FROM domains WHERE rowid IN \
             (SELECT rowid FROM domains_name_fts WHERE domains_name_fts MATCH '\"ren\" \"ena\" \"nam\" \"ame\" \"med\"')",
        ))
        .await
        .expect("search");
    rows.iter().map(|r| r.try_get::<String>("", "name").expect("name")).collect()
}

/// A flush runs on the handler's writer thread, whose runtime stops with the handler. If the
/// flush borrowed a connection from the shared pool, that connection could be opened on the
/// writer's runtime and handed out dead after it stopped. So the writer has a pool of its own:
/// it writes while every one of the pool's connections is held elsewhere, and after its
/// thread stops every one of them still answers.
#[actix_rt::test]
async fn postgres_flushes_never_borrow_the_pools_connections() {
    let test_db = TestDb::new(Backend::Postgres).await;
    let db = connect(&test_db.url).await.expect("connect");
    let pool = db.get_postgres_connection_pool();
    let mut held = Vec::new();
    for _ in 0..DEFAULT_MAX_CONNECTIONS {
        held.push(pool.acquire().await.expect("a pool connection"));
    }

    let writer = writer_connection(&db, 0);
    let arbiter = actix::Arbiter::new();
    let (tx, rx) = tokio::sync::oneshot::channel();
    arbiter.spawn(async move {
        let changes = Changes {
            tables: CachedRows {
                domains: vec![domain(1, "one", None, None)].into(),
                ..CachedRows::default()
            },
            ..Changes::default()
        };
        let written = tokio::time::timeout(
            Duration::from_secs(20),
            write(&writer, &changes, &checkpoint(1), None, WalBound::Truncate),
        )
        .await;
        let _ = tx.send(matches!(written, Ok(Ok(()))));
    });
    assert!(rx.await.expect("the writer thread answers"), "written with the pool exhausted");
    arbiter.stop();
    arbiter.join().expect("writer thread stops");
    drop(held);

    let mut queries = Vec::new();
    for _ in 0..DEFAULT_MAX_CONNECTIONS {
        queries.push(async {
            let mut conn = pool.acquire().await.expect("acquire");
            sea_orm::sqlx::query("SELECT pg_sleep(0.05)").execute(&mut *conn).await
        });
    }
    for answer in futures::future::join_all(queries).await {
        answer.expect("every pool connection answers after the writer's thread stopped");
    }
    assert_eq!(domains(&db).await.len(), 1, "the flush committed");
}
