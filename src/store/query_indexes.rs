//! Query indexes deferred during a fresh database's first backfill.
//!
//! The API's listing indexes (domains by parent, owner or globally in every order, events by
//! domain, address and sender, name search on PostgreSQL, address lookups) cost a B-tree insert
//! per row written and nothing the indexer reads. On a fresh database, [`defer`] drops them,
//! records each exact `CREATE INDEX` statement in `deferred_indexes` and creates the narrower
//! [`STAND_INS`] that serve the indexer's own lookups meanwhile, in one transaction; [`build`]
//! recreates them once the chains have caught up, one index per transaction, forgets each as
//! it lands, and drops the stand-ins. So a crash leaves every index either present or
//! recorded, a restart resumes the build where it stopped, and an index that exists is never
//! dropped or rebuilt again (ENSNode rebuilds all of its indexes after every restart).
//!
//! Only indexes are deferred, never the name search: a missing index makes a query slower,
//! never wrong. While indexes are deferred, `/ready` answers 503 with the reason.

use entities::deferred_index;
use futures::StreamExt;
use sea_orm::{
    ConnectionTrait, DatabaseBackend, DatabaseConnection, EntityTrait, IntoActiveModel, QueryOrder,
    Statement, TransactionTrait, sea_query::OnConflict,
};

use super::StoreError;

/// Indexes that only the API reads, or that a narrower index stands in for during the backfill
/// ([`STAND_INS`]). The indexer's other lookups (primary keys, registrations and renewals by
/// domain) are never deferred.
pub const DEFERRABLE: &[&str] = &[
    "domains_label_hash",
    "domains_node",
    "domains_parent_name_seq",
    "domains_name_seq",
    "domains_depth_seq",
    "domains_start_seq",
    "domains_expiry_seq",
    "domains_parent_depth_seq",
    "domains_parent_start_seq",
    "domains_parent_expiry_seq",
    "domains_owner_name_seq",
    "domains_owner_depth_seq",
    "domains_owner_start_seq",
    "domains_owner_expiry_seq",
    "domains_registry_owner",
    "domains_token_owner",
    "domains_wrapped_owner",
    "domains_name_trgm",
    "events_domain",
    "events_address",
    "event_transactions_from",
    "resolver_addresses_address",
];

/// Indexes that serve the indexer's own lookups while the query indexes are deferred, and are
/// dropped once those are built. Both serve the heal cascade (`store::heal_index`).
///
/// The cascade finds a domain's children by `parent_seq`. `domains_parent_name_seq` answers
/// that too, but its key holds the name: most domains share one parent (`eth`), so each new
/// one landed at a random place among its siblings' names, and every flush rewrote pages all
/// over that index. Keyed by the parent alone, a new child sorts after its siblings (ties go
/// by rowid, which only grows): the inserts append.
///
/// The cascade also finds the domains a learned label renames by `label_hash`, and only a
/// domain whose leaf label is unknown can be renamed by its own label ([`UNKNOWN_LEAF`]). The
/// full `domains_label_hash` (the subgraph API's `labelhash` filter reads it) took every new
/// domain at a random place of a hash-keyed B-tree; the partial one takes only the domains
/// whose name begins with an unknown label. At 5M events PostgreSQL's domain writes took 13%
/// less time; SQLite's did not change measurably (BENCHMARKS.md).
pub const STAND_INS: &[(&str, &str)] = &[
    ("domains_parent_seq", "CREATE INDEX IF NOT EXISTS domains_parent_seq ON domains (parent_seq)"),
    (
        "domains_unknown_label_hash",
        "CREATE INDEX IF NOT EXISTS domains_unknown_label_hash ON domains (label_hash) \
         WHERE substr(name, 1, 1) = '['",
    ),
];

/// The condition on a domain row that its leaf label is unknown: its name begins with the
/// label's hash in brackets (a label that cannot be shown as itself is rendered the same way,
/// so the condition holds for a few known labels too, which a heal renders unchanged). The
/// heal cascade's lookup by label writes it so that [`STAND_INS`]' partial index serves it;
/// both engines use a partial index only for a query that states its condition as written.
pub const UNKNOWN_LEAF: &str = "substr(name, 1, 1) = '['";

/// The `CREATE INDEX` statement of `name`, if the index exists.
async fn definition<C: ConnectionTrait>(db: &C, name: &str) -> Result<Option<String>, StoreError> {
    let backend = db.get_database_backend();
    let (sql, column) = match backend {
        DatabaseBackend::Postgres => {
            ("SELECT indexdef AS def FROM pg_indexes WHERE indexname = $1", "def")
        }
        _ => ("SELECT sql AS def FROM sqlite_master WHERE type = 'index' AND name = ?", "def"),
    };
    let row = db
        .query_one_raw(Statement::from_sql_and_values(backend, sql, [name.into()]))
        .await
        .map_err(StoreError::db("read index definition"))?;
    row.map(|r| r.try_get::<String>("", column))
        .transpose()
        .map_err(StoreError::db("read index definition"))
}

/// Drops every deferrable index that exists and records its definition, in one transaction.
/// Returns how many were deferred.
pub async fn defer(db: &DatabaseConnection) -> Result<usize, StoreError> {
    let txn = db.begin().await.map_err(StoreError::db("begin"))?;
    let mut deferred = 0;
    for name in DEFERRABLE {
        let Some(definition) = definition(&txn, name).await? else { continue };
        let row = deferred_index::Model { name: (*name).to_owned(), definition };
        deferred_index::Entity::insert(row.into_active_model())
            .on_conflict(OnConflict::column(deferred_index::Column::Name).do_nothing().to_owned())
            .exec_without_returning(&txn)
            .await
            .map_err(StoreError::db("record deferred index"))?;
        txn.execute_unprepared(&format!("DROP INDEX {name}"))
            .await
            .map_err(StoreError::db("drop deferred index"))?;
        deferred += 1;
    }
    if deferred > 0 {
        for (_, create) in STAND_INS {
            txn.execute_unprepared(create)
                .await
                .map_err(StoreError::db("create stand-in index"))?;
        }
    }
    txn.commit().await.map_err(StoreError::db("commit"))?;
    metrics::gauge!("ensemble_query_indexes_deferred").set(pending(db).await?.len() as f64);
    Ok(deferred)
}

/// Names of the indexes still deferred.
pub async fn pending(db: &DatabaseConnection) -> Result<Vec<String>, StoreError> {
    Ok(deferred_index::Entity::find()
        .order_by_asc(deferred_index::Column::Name)
        .all(db)
        .await
        .map_err(StoreError::db("read deferred indexes"))?
        .into_iter()
        .map(|r| r.name)
        .collect())
}

/// `CREATE INDEX …` as `CREATE INDEX IF NOT EXISTS …`, so a build interrupted between creating
/// an index and forgetting it finishes without an error.
fn if_not_exists(definition: &str) -> String {
    for prefix in ["CREATE UNIQUE INDEX ", "CREATE INDEX "] {
        if let Some(rest) = definition.strip_prefix(prefix)
            && !rest.starts_with("IF NOT EXISTS")
        {
            return format!("{prefix}IF NOT EXISTS {rest}");
        }
    }
    definition.to_owned()
}

/// Indexes PostgreSQL builds at once: one per core of the machine this was measured on. Each
/// `CREATE INDEX` runs in one backend, and the trigram GIN index alone took 18 s of a 45 s
/// build at 5M events while the B-trees waited behind it. SQLite has one writer: one at a time.
pub const POSTGRES_BUILDS_AT_ONCE: usize = 2;

/// The table a `CREATE INDEX` statement indexes, without its schema: `domains` for both
/// `… ON domains (…)` and PostgreSQL's `… ON public.domains USING btree (…)`.
fn table_of(definition: &str) -> Option<&str> {
    let (_, rest) = definition.split_once(" ON ")?;
    let rest = rest.trim_start().strip_prefix("ONLY ").unwrap_or(rest.trim_start());
    let table = rest.split([' ', '(']).next()?;
    let table = table.rsplit('.').next()?.trim_matches('"');
    (!table.is_empty()).then_some(table)
}

/// Recreates every deferred index, each in its own transaction with forgetting it. Returns
/// how many were built. On PostgreSQL [`POSTGRES_BUILDS_AT_ONCE`] build side by side, the
/// slowest kind (GIN) first so that it never runs alone at the end, then the rest of the
/// `domains` indexes, then the other tables'.
///
/// PostgreSQL then needs an `ANALYZE domains` ([`analyze_domains`]): 5 s at 5M events, as
/// long as a quarter of the builds. It cannot run beside a build on `domains` (their locks
/// conflict) but can beside the other tables' builds, so it starts as soon as the last
/// `domains` index is built and runs while the event indexes build, on a connection of its
/// own: for those seconds three backends share the cores, which keeps both busy to the end.
///
/// One record (the first) outlives its index until the work that follows the builds is done:
/// PostgreSQL's ANALYZE and the stand-ins' drop. `/ready` answers 200 only once no record is
/// left, so it never reports a database whose planner has no statistics yet, and a crash
/// before that work leaves a record behind: the next start runs `build` again, which finds
/// the index built and finishes the rest.
pub async fn build(db: &DatabaseConnection) -> Result<usize, StoreError> {
    let rows = deferred_index::Entity::find()
        .order_by_asc(deferred_index::Column::Name)
        .all(db)
        .await
        .map_err(StoreError::db("read deferred indexes"))?;
    // Each row with whether it indexes `domains`.
    let mut rows: Vec<(bool, deferred_index::Model)> =
        rows.into_iter().map(|row| (table_of(&row.definition) == Some("domains"), row)).collect();
    rows.sort_by_key(|(on_domains, row)| (!row.definition.contains("USING gin"), !on_domains));
    let total = rows.len();
    let Some(kept) = rows.first().map(|(_, row)| row.name.clone()) else { return Ok(0) };
    let postgres = db.get_database_backend() == DatabaseBackend::Postgres;
    let at_once = if postgres { POSTGRES_BUILDS_AT_ONCE } else { 1 };
    let on_domains = rows.iter().filter(|(on_domains, _)| *on_domains).count();
    let (domains_left, mut domains_built) = tokio::sync::watch::channel(on_domains);
    let left = std::sync::atomic::AtomicUsize::new(total);
    let builds = async {
        let mut builds =
            futures::stream::iter(rows.into_iter().enumerate().map(|(i, (on_domains, row))| {
                let domains_left = &domains_left;
                let left = &left;
                async move {
                    build_one(db, row, i > 0, left).await?;
                    if on_domains {
                        domains_left.send_modify(|n| *n -= 1);
                    }
                    Ok::<_, StoreError>(())
                }
            }))
            .buffer_unordered(at_once);
        while let Some(built) = builds.next().await {
            built?;
        }
        Ok(())
    };
    let analyze = async {
        if !postgres {
            return Ok(());
        }
        // The sender outlives this future (a failed build ends both at once), so the wait
        // ends only when no `domains` index is left to build.
        let _ = domains_built.wait_for(|n| *n == 0).await;
        analyze_domains(db).await
    };
    futures::future::try_join(builds, analyze).await?;
    // Every deferred index exists now, so the stand-ins have nothing left to stand in for.
    for (name, _) in STAND_INS {
        db.execute_unprepared(&format!("DROP INDEX IF EXISTS {name}"))
            .await
            .map_err(StoreError::db("drop stand-in index"))?;
    }
    deferred_index::Entity::delete_by_id(kept)
        .exec(db)
        .await
        .map_err(StoreError::db("forget deferred index"))?;
    Ok(total)
}

/// Gives PostgreSQL's planner the statistics of `domains` once its indexes exist.
async fn analyze_domains(db: &DatabaseConnection) -> Result<(), StoreError> {
    let started = std::time::Instant::now();
    // The name search's expression gets the finer sample `domains.name` has: a `contains`
    // search is planned by the estimate of how many names hold the text. An index's
    // statistics target goes with it when it is dropped to be deferred, so it is set here.
    db.execute_unprepared(
        "ALTER INDEX IF EXISTS domains_name_trgm ALTER COLUMN 1 SET STATISTICS 1000",
    )
    .await
    .map_err(StoreError::db("set the name search's statistics target"))?;
    // PostgreSQL keeps statistics of an expression (the name indexes' key) only from an
    // ANALYZE run after its index exists, and after a backfill nothing would trigger one:
    // without them the planner guesses the key's selectivity.
    db.execute_unprepared("ANALYZE domains")
        .await
        .map_err(StoreError::db("analyze after index build"))?;
    tracing::info!(target: "store::indexes", secs = started.elapsed().as_secs_f64(), "Analyzed domains");
    Ok(())
}

/// Helper threads SQLite's sorter may use for a `CREATE INDEX` (`PRAGMA threads`): one per
/// core. SQLite has one writer, so its deferred indexes are built one at a time, and without
/// helpers the sort of each ran on one core while the other idled: at 5M events the build
/// took 11.7–13.3 s without them and, in all runs but one, 9.0–10.2 s with two
/// (BENCHMARKS.md).
fn sort_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Builds one deferred index and, with `forget`, forgets it, in one transaction.
async fn build_one(
    db: &DatabaseConnection,
    row: deferred_index::Model,
    forget: bool,
    left: &std::sync::atomic::AtomicUsize,
) -> Result<(), StoreError> {
    let started = std::time::Instant::now();
    let txn = db.begin().await.map_err(StoreError::db("begin"))?;
    let sqlite = db.get_database_backend() == DatabaseBackend::Sqlite;
    if sqlite {
        txn.execute_unprepared(&format!("PRAGMA threads = {}", sort_threads()))
            .await
            .map_err(StoreError::db("set the sorter's threads"))?;
    }
    let created = txn.execute_unprepared(&if_not_exists(&row.definition)).await;
    if sqlite {
        // The pooled connection goes back to serving the API, whose sorts stay on its own
        // thread; reset before the error is returned, too.
        txn.execute_unprepared("PRAGMA threads = 0")
            .await
            .map_err(StoreError::db("reset the sorter's threads"))?;
    }
    created.map_err(StoreError::db("build deferred index"))?;
    if forget {
        deferred_index::Entity::delete_by_id(row.name.clone())
            .exec(&txn)
            .await
            .map_err(StoreError::db("forget deferred index"))?;
    }
    txn.commit().await.map_err(StoreError::db("commit"))?;
    let left = left.fetch_sub(1, std::sync::atomic::Ordering::Relaxed) - 1;
    metrics::gauge!("ensemble_query_indexes_deferred").set(left as f64);
    tracing::info!(target: "store::indexes", index = %row.name, secs = started.elapsed().as_secs_f64(), "Built query index");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_stand_in_indexes_the_rows_the_heal_lookup_asks_for() {
        let (_, create) = STAND_INS
            .iter()
            .find(|(name, _)| *name == "domains_unknown_label_hash")
            .expect("the label stand-in");
        assert!(create.ends_with(&format!("WHERE {UNKNOWN_LEAF}")), "{create}");
        assert!(DEFERRABLE.contains(&"domains_label_hash"));
    }

    #[test]
    fn definitions_become_idempotent() {
        assert_eq!(
            if_not_exists("CREATE INDEX events_node ON events (chain_id, node)"),
            "CREATE INDEX IF NOT EXISTS events_node ON events (chain_id, node)"
        );
        assert_eq!(
            if_not_exists("CREATE INDEX IF NOT EXISTS x ON t (a)"),
            "CREATE INDEX IF NOT EXISTS x ON t (a)"
        );
    }

    #[test]
    fn the_indexed_table_is_read_from_either_engines_definition() {
        assert_eq!(
            table_of("CREATE INDEX domains_node ON domains (substr(id, 25))"),
            Some("domains")
        );
        assert_eq!(
            table_of(
                "CREATE INDEX domains_name_trgm ON public.domains USING gin (name gin_trgm_ops)"
            ),
            Some("domains")
        );
        assert_eq!(
            table_of("CREATE UNIQUE INDEX x ON ONLY \"public\".\"events\" USING btree (seq)"),
            Some("events")
        );
        assert_eq!(
            table_of("CREATE INDEX IF NOT EXISTS x ON event_transactions(tx_from)"),
            Some("event_transactions")
        );
        assert_eq!(table_of("CREATE INDEX x"), None);
    }
}
