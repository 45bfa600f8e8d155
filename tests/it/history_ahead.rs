//! The event history written ahead of the checkpoint while a chain catches up: a SQLite
//! backfill writes it in parts of its own, and history past the checkpoint (what a crash between a
//! part and its flush leaves) is deleted before a pipeline writes, so the run that follows
//! records every block once and ends with the same database as a clean run.

use ensemble::{
    config::IndexerConfig,
    store::{EntityStore, writer::upsert},
};
use ensemble_devkit::bench::{
    generate::generate,
    run::{RunOptions, Source, run},
};
use entities::{event, event_block, event_transaction};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use crate::support::{Backend, TestDb};

/// Small flushes, so that parts are written between them.
fn indexer() -> IndexerConfig {
    IndexerConfig {
        cache_mb: 512,
        flush_rows: 2_000,
        mailbox_capacity: 8,
        defer_query_indexes: true,
        fetch_cache_dir: String::new(),
        fetch_cache_mb: 0,
    }
}

async fn index(corpus: &std::path::Path, url: &str) -> ensemble_devkit::bench::run::RunReport {
    let options = RunOptions {
        corpus: corpus.to_owned(),
        database_url: url.to_owned(),
        source: Source::Local,
        indexer: indexer(),
        window: 50,
        rpc_url: None,
    };
    run(&options, |_| {}).await.expect("bench run")
}

/// The history rows of the first `blocks` blocks of `chain`.
async fn first_blocks(
    db: &DatabaseConnection,
    chain: i64,
    blocks: u64,
) -> (Vec<event::Model>, Vec<event_block::Model>, Vec<event_transaction::Model>) {
    let block_rows = event_block::Entity::find()
        .filter(event_block::Column::ChainId.eq(chain))
        .order_by_asc(event_block::Column::BlockNumber)
        .limit(blocks)
        .all(db)
        .await
        .expect("blocks");
    let last = block_rows.last().expect("the corpus has events").block_number;
    let events = event::Entity::find()
        .filter(event::Column::ChainId.eq(chain))
        .filter(event::Column::BlockNumber.lte(last))
        .all(db)
        .await
        .expect("events");
    let transactions = event_transaction::Entity::find()
        .filter(event_transaction::Column::ChainId.eq(chain))
        .filter(event_transaction::Column::BlockNumber.lte(last))
        .all(db)
        .await
        .expect("transactions");
    (events, block_rows, transactions)
}

crate::support::on_both_engines!(history_past_the_checkpoint_is_recorded_once);

/// A backfill on SQLite writes parts ahead of its flushes. A database holding the history of
/// the first blocks and no checkpoint (a crash after parts committed, before the first flush
/// did) indexes to exactly the clean run's database, on either engine: without the clearing,
/// the first part or flush fails on the rows already there.
async fn history_past_the_checkpoint_is_recorded_once(backend: Backend) {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus.bin");
    let made = generate(&corpus, 4_000, 11).expect("generate");
    let chain = made.header.chain_id as i64;

    let clean = TestDb::new(backend).await;
    let report = index(&corpus, &clean.url).await;
    // SQLite writes parts ahead of its flushes; PostgreSQL keeps the history in them.
    assert_eq!(
        report.flush_tables.contains_key("history_commit"),
        backend == Backend::Sqlite,
        "parts written ahead: {:?}",
        report.flush_tables.keys()
    );
    let clean_db = ensemble::store::database::connect(&clean.url).await.expect("connect");
    let expected = ensemble::dump::dump(&clean_db).await.expect("dump");

    // What the crash left: the first blocks' history, no checkpoint.
    let crashed = TestDb::new(backend).await;
    let crashed_db = ensemble::store::database::connect(&crashed.url).await.expect("connect");
    let (events, blocks, transactions) = first_blocks(&clean_db, chain, 40).await;
    let left = blocks.len() as u64;
    let write = |e: ensemble::store::StoreError| panic!("write the history left: {e}");
    upsert::<event::Entity, _>(&crashed_db, &events).await.unwrap_or_else(write);
    upsert::<event_block::Entity, _>(&crashed_db, &blocks).await.unwrap_or_else(write);
    upsert::<event_transaction::Entity, _>(&crashed_db, &transactions).await.unwrap_or_else(write);

    index(&corpus, &crashed.url).await;
    let actual = ensemble::dump::dump(&crashed_db).await.expect("dump");
    assert!(actual == expected, "the run after the crash differs from a clean run");

    // The clearing itself: past a checkpoint moved back by hand, and only once per store.
    let mut store = EntityStore::new(crashed_db.clone(), made.header.chain_id.into(), 1 << 20);
    let (_, first, _) = first_blocks(&crashed_db, chain, 100).await;
    let past = first.last().expect("blocks").block_number;
    entities::checkpoint::Entity::update_many()
        .col_expr(entities::checkpoint::Column::BlockNumber, sea_orm::sea_query::Expr::value(past))
        .filter(entities::checkpoint::Column::ChainId.eq(chain))
        .exec(&crashed_db)
        .await
        .expect("move the checkpoint back");
    let count_blocks = |after: bool| {
        let db = crashed_db.clone();
        async move {
            let column = event_block::Column::BlockNumber;
            let filter = if after { column.gt(past) } else { column.lte(past) };
            event_block::Entity::find()
                .filter(event_block::Column::ChainId.eq(chain))
                .filter(filter)
                .count(&db)
                .await
                .expect("count")
        }
    };
    let (before, ahead) = (count_blocks(false).await, count_blocks(true).await);
    assert!(before == 100 && ahead > left, "{before} blocks up to {past}, {ahead} after");
    assert_eq!(store.clear_history_ahead().await.expect("clear"), ahead);
    assert_eq!(count_blocks(true).await, 0);
    assert_eq!(count_blocks(false).await, before, "history up to the checkpoint stays");
    let events_after = event::Entity::find()
        .filter(event::Column::ChainId.eq(chain))
        .filter(event::Column::BlockNumber.gt(past))
        .count(&crashed_db)
        .await
        .expect("count");
    assert_eq!(events_after, 0);
    assert_eq!(store.clear_history_ahead().await.expect("clear"), 0, "once per store");
}
