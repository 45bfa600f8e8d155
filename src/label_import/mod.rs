//! `ensemble labels import <file>`: heals labels from a label file (text, CSV or ENSRainbow,
//! see [`format`](mod@format)).
//!
//! Entries are read, checked and written in batches, one transaction each: the labels not
//! known yet are stored, and each one that renders as itself (normalized) goes into the heal
//! log ([`crate::ens::heal`]), from which every chain renames its own domains with it
//! before its next batch (a running indexer within a block time, a stopped one when it
//! starts). Renaming is the chains' work because each holds its own domains in its cache. A
//! label known already is skipped, so an import can be run again, or resumed after a
//! failure, without writing anything twice.

pub mod error;
pub mod format;

use std::{collections::HashMap, io::BufReader, path::Path};

use alloy::primitives::B256;
use sea_orm::DatabaseConnection;

pub use error::{BadEntry, ImportError, Position};
pub use format::Format;
use format::{LabelReader, ReadError};

use crate::store::StoreError;

/// Entries per transaction.
pub const BATCH: usize = 10_000;

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Good entries read (duplicates included).
    pub entries: u64,
    /// Labels stored that were not known before.
    pub learned: u64,
    /// Of those, the ones some name held as `[hash]` until now (their row existed, unknown).
    pub healed: u64,
    /// Entries whose label was known already.
    pub known: u64,
    /// Entries skipped as bad (each reported as it was read).
    pub bad: u64,
}

/// Imports the labels of `path`, read as `format`. `on_bad` hears of every bad entry as it
/// is read, `on_progress` of the bytes read after every batch.
pub async fn import(
    db: &DatabaseConnection,
    path: &Path,
    format: Format,
    mut on_bad: impl FnMut(Position, &BadEntry),
    mut on_progress: impl FnMut(u64),
) -> Result<ImportReport, ImportError> {
    let io = |source| ImportError::Io { path: path.display().to_string(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = LabelReader::new(BufReader::with_capacity(1 << 20, file), format);
    let mut report = ImportReport::default();
    let mut batch: HashMap<B256, String> = HashMap::with_capacity(BATCH);
    loop {
        let entry = match reader.next_entry() {
            Ok(entry) => entry,
            Err(ReadError::Io(source)) => return Err(io(source)),
            Err(ReadError::Corrupt(position, reason)) => {
                return Err(ImportError::Corrupt {
                    path: path.display().to_string(),
                    position,
                    reason,
                });
            }
        };
        let done = entry.is_none();
        match entry.map(|e| (e.position, e.label)) {
            Some((_, Ok((hash, label)))) => {
                report.entries += 1;
                if batch.insert(hash, label).is_some() {
                    report.known += 1;
                }
            }
            Some((position, Err(bad))) => {
                report.bad += 1;
                on_bad(position, &bad);
            }
            None => {}
        }
        if batch.len() >= BATCH || (done && !batch.is_empty()) {
            write_batch(db, std::mem::take(&mut batch), &mut report).await?;
            on_progress(reader.bytes_read());
        }
        if done {
            return Ok(report);
        }
    }
}

/// Stores the labels of `batch` not known yet and logs the normalized ones, in one
/// transaction ([`crate::ens::heal::import`]).
async fn write_batch(
    db: &DatabaseConnection,
    batch: HashMap<B256, String>,
    report: &mut ImportReport,
) -> Result<(), ImportError> {
    let txn = crate::store::database::begin_write(db).await?;
    let imported = crate::ens::heal::import(&txn, &batch).await?;
    txn.commit().await.map_err(StoreError::db("commit label import"))?;
    report.learned += imported.learned;
    report.healed += imported.healed;
    report.known += imported.known;
    Ok(())
}
