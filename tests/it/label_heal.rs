//! Labels heal across chains and from imports: a label one chain learns from an event, or
//! that `ensemble labels import` loads, renames the domains of every chain that holds it as
//! `[hash]`, through the heal log, on both engines. Bad entries of a label file are reported
//! with their line numbers and skipped.

use alloy::{ens::namehash, sol_types::SolEvent};
use ensemble::{
    ens::{
        abi::Registry,
        heal::apply_log,
        name::{encoded_label_hash, labelhash},
    },
    label_import::{self, BadEntry, Format, Position},
};
use entities::{label_heal, label_heal_mark};
use sea_orm::{EntityTrait, PaginatorTrait};

use crate::{
    handlers::{ALICE, Bed, REGISTRY},
    support::{Backend, TestDb},
};

fn hash(label: &str) -> String {
    encoded_label_hash(labelhash(label))
}

/// `child` under `parent` in the bed's registry.
async fn subname(bed: &mut Bed, parent: &str, child: &str) {
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: namehash(parent), label: labelhash(child), owner: ALICE }
            .encode_log_data(),
    )
    .await;
}

async fn name(bed: &Bed, node_name: &str) -> String {
    bed.domain(node_name).await.name
}

async fn heal_crosses_chains_and_imports(backend: Backend) {
    let db = TestDb::new(backend).await;
    // An L2 with alice.eth and pay.alice.eth, neither label known there.
    let mut l2 = Bed::chain(&db.url, 8453, 1 << 20).await;
    assert_eq!(apply_log(&mut l2.store).await.unwrap(), 0);
    l2.register("alice", ALICE, false).await;
    subname(&mut l2, "alice.eth", "pay").await;
    l2.flush().await;
    assert_eq!(name(&l2, "alice.eth").await, format!("{}.eth", hash("alice")));

    // Mainnet registers alice.eth through its controller, which names the label.
    let mut l1 = Bed::chain(&db.url, 1, 1 << 20).await;
    assert_eq!(apply_log(&mut l1.store).await.unwrap(), 0);
    l1.register("alice", ALICE, true).await;
    l1.flush().await;
    assert_eq!(name(&l1, "alice.eth").await, "alice.eth");
    // Mainnet's own entry is not applied again there.
    assert_eq!(apply_log(&mut l1.store).await.unwrap(), 0);
    l1.flush().await;

    // The L2 renames its domains with it before its next batch, its cached rows included.
    assert_eq!(apply_log(&mut l2.store).await.unwrap(), 1);
    let cached = l2.store.domain(&l2.ctx.domain_id(namehash("pay.alice.eth"))).await.unwrap();
    assert_eq!(cached.unwrap().name, format!("{}.alice.eth", hash("pay")));
    l2.flush().await;
    assert_eq!(name(&l2, "alice.eth").await, "alice.eth");
    assert_eq!(name(&l2, "pay.alice.eth").await, format!("{}.alice.eth", hash("pay")));
    // Every chain has passed the entry: the log is pruned.
    assert_eq!(label_heal::Entity::find().count(&l2.conn).await.unwrap(), 0);

    // An import heals `pay` and reports its bad lines; good lines after them still count.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("labels.csv");
    let mut csv = format!("labelhash,label\n{},alice\n", labelhash("alice"));
    csv.push_str(&format!("{},pay\n", labelhash("nope")));
    csv.push_str("not a hash,pay\n");
    csv.push_str(&format!("{},pay\n", labelhash("pay")));
    csv.push_str(&format!("{},unused\n", labelhash("unused")));
    std::fs::write(&file, csv).unwrap();
    let mut bad = Vec::new();
    let report = label_import::import(
        &l1.conn,
        &file,
        Format::of_path(&file),
        |position, entry| bad.push((position, entry.clone())),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert_eq!(bad[0].0, Position::Line(3));
    assert!(matches!(bad[0].1, BadEntry::WrongHash { .. }));
    assert_eq!(
        (bad[1].0, bad[1].1.clone()),
        (Position::Line(4), BadEntry::MalformedHash("not a hash".into()))
    );
    assert_eq!(
        (report.entries, report.learned, report.healed, report.known, report.bad),
        (3, 2, 1, 1, 2)
    );

    // Each chain applies the import: the L2 renames pay.alice.eth, mainnet has no such name.
    assert_eq!(apply_log(&mut l1.store).await.unwrap(), 0);
    assert_eq!(apply_log(&mut l2.store).await.unwrap(), 1);
    l1.flush().await;
    l2.flush().await;
    assert_eq!(name(&l2, "pay.alice.eth").await, "pay.alice.eth");
    assert_eq!(label_heal::Entity::find().count(&l2.conn).await.unwrap(), 0);

    // A label imported before a chain holds it is read from the table when the name is made.
    subname(&mut l1, "alice.eth", "unused").await;
    l1.flush().await;
    assert_eq!(name(&l1, "unused.alice.eth").await, "unused.alice.eth");

    // Importing again changes nothing.
    let again =
        label_import::import(&l1.conn, &file, Format::Csv, |_, _| {}, |_| {}).await.unwrap();
    assert_eq!((again.learned, again.known, again.bad), (0, 3, 2));
    assert_eq!(label_heal::Entity::find().count(&l1.conn).await.unwrap(), 0);
    let marks = label_heal_mark::Entity::find().all(&l1.conn).await.unwrap();
    assert_eq!(marks.len(), 2, "{marks:?}");
}

crate::support::on_both_engines!(heal_crosses_chains_and_imports);

/// A chain alone in the database logs none of the labels it learns: no other chain would read
/// them. Once a second chain has registered its mark, the first chain's labels are logged for
/// it, and reach its domains.
async fn a_chain_alone_logs_no_heals(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut l1 = Bed::chain(&db.url, 1, 1 << 20).await;
    assert_eq!(apply_log(&mut l1.store).await.unwrap(), 0);
    l1.register("alice", ALICE, true).await;
    l1.flush().await;
    assert_eq!(name(&l1, "alice.eth").await, "alice.eth");
    assert_eq!(label_heal::Entity::find().count(&l1.conn).await.unwrap(), 0);

    // An L2 registers its mark, then holds bob.eth with its label unknown.
    let mut l2 = Bed::chain(&db.url, 8453, 1 << 20).await;
    assert_eq!(apply_log(&mut l2.store).await.unwrap(), 0);
    l2.register("bob", ALICE, false).await;
    l2.flush().await;
    assert_eq!(name(&l2, "bob.eth").await, format!("{}.eth", hash("bob")));

    // Mainnet learns `bob`: logged now, for the L2.
    l1.register("bob", ALICE, true).await;
    l1.flush().await;
    let logged = label_heal::Entity::find().all(&l1.conn).await.unwrap();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert_eq!(logged[0].origin_chain, 1);
    assert_eq!(apply_log(&mut l2.store).await.unwrap(), 1);
    l2.flush().await;
    assert_eq!(name(&l2, "bob.eth").await, "bob.eth");
}

crate::support::on_both_engines!(a_chain_alone_logs_no_heals);

/// A chain that read a label as unknown and has not flushed it yet, while an import stores
/// it known, still renames its names: it wrote no `[hash]` over the label, and the import's
/// entry reaches it.
#[actix_rt::test]
async fn an_import_racing_an_unflushed_unknown_label_still_heals() {
    let db = TestDb::new(Backend::Sqlite).await;
    let mut chain = Bed::chain(&db.url, 1, 1 << 20).await;
    assert_eq!(apply_log(&mut chain.store).await.unwrap(), 0);
    chain.register("racer", ALICE, false).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("labels.txt");
    std::fs::write(&file, "racer\n").unwrap();
    let report =
        label_import::import(&chain.conn, &file, Format::Text, |_, _| {}, |_| {}).await.unwrap();
    assert_eq!((report.learned, report.healed), (1, 0), "the chain's row is not flushed yet");
    chain.flush().await;
    let stored =
        entities::label::Entity::find_by_id(entities::label::RawHash::new(labelhash("racer").0))
            .one(&chain.conn)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(stored.label.as_deref(), Some("racer"), "the flush did not unlearn it");
    assert_eq!(apply_log(&mut chain.store).await.unwrap(), 1);
    chain.flush().await;
    assert_eq!(name(&chain, "racer.eth").await, "racer.eth");
}

/// Names of the domains of `db` whose name contains `part`.
async fn names_containing(db: &sea_orm::DatabaseConnection, part: &str) -> Vec<String> {
    use sea_orm::{ColumnTrait, QueryFilter};
    entities::domain::Entity::find()
        .filter(entities::domain::Column::Name.contains(part))
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect()
}

/// End to end: the devnet's subnames carry labels no event spells out (`sub0`, `deep`). An
/// import while the service follows the head renames them with the chain's next block.
/// With `padding` labels between the two and a small `flush_rows`, the chain applies the
/// log in several chunks and flushes renames between them.
async fn an_import_heals_a_running_indexer(
    backend: Backend,
    chain_id: u64,
    padding: usize,
    flush_rows: usize,
) {
    let options =
        ensemble_devkit::devnet::scenario::ScenarioOptions { eth_names: 24, per_block: 200 };
    let (anvil, mut driver, scenario) = crate::support::devnet(chain_id, options).await;
    let db = TestDb::new(backend).await;
    let chain = scenario.deployment.chain_config(anvil.chain_id, &anvil.url);
    let mut config = crate::support::config(&db.url, chain);
    config.indexer.flush_rows = flush_rows;
    let service = ensemble::Service::start(&config).await.unwrap();
    crate::support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let sub0 = hash("sub0");
    let unhealed = names_containing(&service.db, &sub0).await;
    assert!(unhealed.len() >= 20, "the scenario's sub0 names render as [hash]: {unhealed:?}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("labels.txt");
    let mut labels = b"sub0\n".to_vec();
    for i in 0..padding {
        labels.extend_from_slice(format!("padding{i}\n").as_bytes());
    }
    labels.extend_from_slice(b"deep\n\xff\n");
    std::fs::write(&file, labels).unwrap();
    let mut bad = Vec::new();
    let report = label_import::import(
        &service.db,
        &file,
        Format::Text,
        |position, entry| bad.push((position, entry.clone())),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!(bad, vec![(Position::Line(padding as u64 + 3), BadEntry::NotUtf8)]);
    assert_eq!((report.learned, report.healed), (2 + padding as u64, 2));

    driver.mine().await.unwrap();
    crate::support::wait_for_block(&service.db, chain_id, scenario.last_block + 1).await;
    assert!(names_containing(&service.db, &sub0).await.is_empty());
    assert!(names_containing(&service.db, &hash("deep")).await.is_empty());
    let healed = names_containing(&service.db, "sub0.").await;
    assert_eq!(healed.len(), unhealed.len(), "{healed:?}");
    assert!(names_containing(&service.db, "deep.sub0.").await.len() >= 10);
    assert!(
        crate::support::name_search_matches(&service.db).await,
        "the name search learned the healed names and forgot the old ones"
    );
    // GraphQL finds a healed name by its plaintext.
    let schema = graphql::build_schema(service.db.clone());
    let name = healed.iter().find(|n| n.starts_with("sub0.")).unwrap();
    let query = format!(
        "{{ domain(by: {{name: \"{name}\"}}) {{ canonical {{ name {{ interpreted }} }} }} }}"
    );
    let answer = schema.execute(query.as_str()).await;
    assert!(answer.errors.is_empty(), "{:?}", answer.errors);
    assert_eq!(
        answer.data.into_json().unwrap()["domain"]["canonical"]["name"]["interpreted"],
        serde_json::json!(name)
    );
    service.stop().await;
}

#[actix_rt::test]
async fn an_import_heals_a_running_indexer_on_sqlite() {
    an_import_heals_a_running_indexer(Backend::Sqlite, 31_481, 0, 200_000).await;
}

#[actix_rt::test]
async fn a_large_import_is_applied_in_chunks_flushed_between() {
    let padding = 2 * ensemble::store::heal_log::READ_CHUNK as usize + 5;
    an_import_heals_a_running_indexer(Backend::Sqlite, 31_483, padding, 8).await;
}

#[actix_rt::test]
async fn an_import_heals_a_running_indexer_on_postgres() {
    an_import_heals_a_running_indexer(Backend::Postgres, 31_482, 0, 200_000).await;
}
