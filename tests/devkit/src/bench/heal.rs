//! [`run`]: what healing labels costs on an indexed database. One label is imported and
//! applied on its own (one heal: the import's transaction, the chain's lookup, the renames
//! and their flush), then the rest of the label file in bulk, each timed. Renames go through
//! a chain's real store and heal log, as the indexer applies them before its next batch.

use std::{path::Path, time::Instant};

use sea_orm::{DatabaseConnection, EntityTrait, PaginatorTrait};

use super::BenchError;
use ensemble::{
    ens::heal::{apply_log, apply_log_chunk},
    label_import::{self, Format},
    store::{Checkpoint, EntityStore, writer::read_checkpoint},
};

/// Bytes of the chain's memory budget during the bench.
const BUDGET: u64 = 256 << 20;

/// Dirty rows at which the bench flushes renames (the `indexer.flush_rows` its figures were
/// measured with).
const FLUSH_ROWS: usize = 200_000;

/// One timed step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HealStep {
    /// Labels in the file part imported.
    pub labels: u64,
    /// Labels stored that were unknown.
    pub learned: u64,
    /// Seconds the import took.
    pub import_secs: f64,
    /// Labels whose heal renamed some of the chain's domains.
    pub applied: usize,
    /// Domains renamed.
    pub renamed: usize,
    /// Seconds the chain took to apply the log and flush the renames.
    pub apply_secs: f64,
}

/// The whole bench.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HealReport {
    /// Domains in the database.
    pub domains: u64,
    /// The first label, alone.
    pub one: HealStep,
    /// The rest.
    pub bulk: HealStep,
}

/// Heals the labels of `labels` (one per line) in `db`, for chain `chain_id`, whose
/// checkpoint must exist (an indexed database).
pub async fn run(
    db: &DatabaseConnection,
    labels: &Path,
    chain_id: u64,
) -> Result<HealReport, BenchError> {
    let checkpoint = read_checkpoint(db, chain_id.into())
        .await?
        .ok_or_else(|| BenchError::Run(format!("chain {chain_id} is not indexed here")))?;
    let domains = entities::domain::Entity::find()
        .count(db)
        .await
        .map_err(ensemble::store::StoreError::db("count"))?;
    // Bytes, not text: a label file may hold lines that are not UTF-8 (the import skips them).
    let bytes = std::fs::read(labels)
        .map_err(|e| BenchError::Run(format!("reading {}: {e}", labels.display())))?;
    let split = bytes.iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1);
    let (first, rest) = bytes.split_at(split);
    let dir = tempfile::tempdir().map_err(|e| BenchError::Run(e.to_string()))?;
    let part = |name: &str, body: &[u8]| -> Result<std::path::PathBuf, BenchError> {
        let path = dir.path().join(name);
        std::fs::write(&path, body).map_err(|e| BenchError::Run(e.to_string()))?;
        Ok(path)
    };
    let mut store = EntityStore::new(db.clone(), chain_id.into(), BUDGET);
    // Whatever the log held before is applied first, untimed.
    apply_log(&mut store).await.map_err(|e| BenchError::Run(e.to_string()))?;
    store.flush(&checkpoint, None).await?;
    let one = step(db, &mut store, &checkpoint, &part("one.txt", first)?).await?;
    let bulk = step(db, &mut store, &checkpoint, &part("rest.txt", rest)?).await?;
    Ok(HealReport { domains, one, bulk })
}

async fn step(
    db: &DatabaseConnection,
    store: &mut EntityStore,
    checkpoint: &Checkpoint,
    file: &Path,
) -> Result<HealStep, BenchError> {
    let started = Instant::now();
    let imported = label_import::import(db, file, Format::Text, |_, _| {}, |_| {})
        .await
        .map_err(|e| BenchError::Run(e.to_string()))?;
    let import_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    // Chunk by chunk, flushing at the indexer's default row count, as a chain does.
    let (mut applied, mut renamed) = (0, 0);
    loop {
        let (labels, more) =
            apply_log_chunk(store).await.map_err(|e| BenchError::Run(e.to_string()))?;
        applied += labels;
        if !more || store.dirty_rows() >= FLUSH_ROWS {
            renamed += store.renamed_domains();
            store.flush(checkpoint, None).await?;
        }
        if !more {
            break;
        }
    }
    Ok(HealStep {
        labels: imported.entries,
        learned: imported.learned,
        import_secs,
        applied,
        renamed,
        apply_secs: started.elapsed().as_secs_f64(),
    })
}
