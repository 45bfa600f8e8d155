//! Memory accounting against the real heap: this test binary counts every byte the global
//! allocator hands out, so the estimates the store budgets with ([`RowSize`], the cache's
//! weigher) can be checked against what the rows and their bookkeeping really hold.
//! A binary of its own: the counting allocator must not slow the other tests down, and a
//! live-bytes reading must not see allocations of tests running beside it (the tests here
//! run one at a time, under a lock).

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
};

use ensemble::store::{EntityStore, HistoryRows, cache::EntityCache, database, row_size::RowSize};
use entities::{
    domain::{self, DomainKey, RawAddress, RawHash},
    event, event_block, event_transaction,
    packed_words::PackedWords,
};

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time: live bytes are process-wide.
static SERIAL: Mutex<()> = Mutex::new(());

fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// A domain row as the mainnet corpus has them: a second-level name with an owner and a
/// resolver.
fn domain(i: u32) -> domain::Model {
    let mut node = [0u8; 32];
    node[..4].copy_from_slice(&i.to_be_bytes());
    domain::Model {
        id: DomainKey::new(1, &[0x11; 20], &node),
        seq: (1 << 32) + i64::from(i),
        chain_id: 1,
        label_hash: RawHash::new([7; 32]),
        parent_seq: Some(1 << 32),
        owner: Some(RawAddress::new([1; 20])),
        registry_owner: Some(RawAddress::new([1; 20])),
        token_owner: None,
        wrapped_owner: None,
        resolver: Some(RawAddress::new([2; 20])),
        ttl: None,
        name: format!("name{i:07}.eth"),
        depth: 2,
        migrated: true,
        registration_count: 1,
        registration_start: 1_600_000_000,
        registration_expiry: 1_700_000_000,
        created_block: 9_000_000,
        created_at: 1_600_000_000,
        link: Some(0),
    }
}

#[test]
fn entity_cache_holds_about_its_budget() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let budget: u64 = 32 << 20;
    let before = live();
    let cache: EntityCache<domain::Model, DomainKey> = EntityCache::new("domain", budget);
    let row_bytes = domain(0).row_bytes();
    // Twice what fits, so the cache is full and evicting.
    let rows = 2 * budget as usize / row_bytes;
    for i in 0..rows as u32 {
        let row = domain(i);
        cache.insert(row.id.clone(), Some(row));
    }
    cache.settle();
    let held = live() - before;
    let ratio = held as f64 / budget as f64;
    eprintln!("cache of {budget} bytes holds {held} bytes ({ratio:.2}), {} rows", cache.len());
    assert!((0.9..=1.1).contains(&ratio), "a {budget}-byte cache holds {held} bytes");
    drop(cache);
}

/// The history rows of event `i`: three events to a transaction, two transactions to a
/// block, each event with three topics and two data words, as registrar events have.
fn history(i: u32) -> HistoryRows {
    let block = i64::from(i / 6);
    let tx = i / 3;
    let word = |b: u8| {
        let mut w = [0u8; 32];
        w[12..].fill(b);
        w
    };
    HistoryRows {
        event: event::Model {
            chain_id: 1,
            block_number: block,
            log_index: (i % 6) as i32,
            seq: 0,
            timestamp: 1_600_000_000 + block * 12,
            tx_index: (tx % 2) as i32,
            contract: 0,
            selector: 3,
            topics: PackedWords::default(),
            data: PackedWords::default(),
            domain_seq: None,
        },
        log: std::sync::Arc::new(alloy::primitives::LogData::new_unchecked(
            [[7; 32], [9; 32], word(1), word(2)].map(alloy::primitives::B256::from).to_vec(),
            [word(3), word(4)].concat().into(),
        )),
        subject: Some(domain(i).id),
        subject_parent: None,
        address: [0x57; 20],
        block: event_block::Model { chain_id: 1, block_number: block, hash: vec![5; 32] },
        transaction: event_transaction::Model {
            chain_id: 1,
            block_number: block,
            tx_index: (tx % 2) as i32,
            hash: tx.to_be_bytes().repeat(8),
            to_address: Some(vec![0x57; 20]),
            tx_from: vec![1; 20],
            timestamp: 1_600_000_000 + block * 12,
        },
    }
}

#[test]
fn dirty_bytes_are_what_the_dirty_rows_hold() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    runtime.block_on(dirty_rows_measured());
}

async fn dirty_rows_measured() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("memory.db").display());
    let db = database::connect(&url).await.expect("connect");
    // No cache: what stays allocated is the dirty set alone.
    let mut store = EntityStore::new(db, ensemble::ChainId(1), 0);
    // The store's first reads load the chain's contract codes and domain numbers.
    store.record_event(history(0)).await.expect("record");
    let before = live();
    let rows = 100_000u32;
    for i in 1..=rows {
        store.create_domain(domain(i));
        store.record_event(history(i)).await.expect("record");
    }
    let held = live() as f64 - before as f64;
    let counted = store.dirty_bytes() as f64;
    eprintln!("dirty rows hold {held} bytes, counted {counted} ({:.2})", held / counted);
    assert!((0.9..=1.1).contains(&(held / counted)), "held {held}, counted {counted}");
    // The flush shares the rows with the writer: beginning it copies nothing.
    let pending = store.begin_flush();
    let in_flight = live() as f64 - before as f64;
    eprintln!("with the flush begun: {in_flight} bytes ({:.2})", in_flight / counted);
    assert!(in_flight <= held, "beginning the flush grew the heap: {held} -> {in_flight}");
    assert_eq!(store.dirty_bytes(), 0, "nothing is dirty once the flush has begun");
    drop(pending);
    store.complete_flush();
    let committed = live() as f64 - before as f64;
    assert!(committed < held / 20.0, "a completed flush leaves {committed} bytes behind");
}

#[test]
fn histogram_samples_do_not_pile_up_unscraped() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let handle = ensemble::metrics::install();
    let before = live();
    // An indexer nobody scrapes: events keep coming, each with its handler-time sample
    // (16.5 bytes each while pending, measured). Kept until a scrape, 1.5M samples would hold
    // about 25 MB; the upkeep folds them into the summary every interval, and what it
    // releases is reclaimed as recording goes on.
    let (rounds, per_round) = (6, 250_000);
    let mut held = Vec::new();
    for _ in 0..rounds {
        for _ in 0..per_round {
            metrics::histogram!("ensemble_handler_seconds", "chain" => "77", "event" => "Test")
                .record(1e-6);
        }
        held.push(live().saturating_sub(before));
        std::thread::sleep(ensemble::metrics::UPKEEP_INTERVAL * 3 / 2);
    }
    eprintln!("bytes held after each round of {per_round} samples: {held:?}");
    let last = held.last().copied().unwrap_or_default();
    assert!(last < 10 << 20, "{} unscraped samples hold {last} bytes", rounds * per_round);
    // Folded, not lost: the summary counts every sample.
    let page = handle.render();
    let count = format!(
        "ensemble_handler_seconds_count{{chain=\"77\",event=\"Test\"}} {}",
        rounds * per_round
    );
    assert!(page.contains(&count), "{page}");
}
