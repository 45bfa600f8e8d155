//! A deterministic text dump of the indexed state: every row of every entity table, sorted by
//! primary key, one JSON object per line. Two databases that index the same chain to the same
//! block produce byte-identical dumps, whatever the engine and however often the indexer was
//! interrupted. Checkpoint times and the RPC cache are left out: they describe the run, not
//! the chain. So are labels no domain carries and the heal log: a label is knowledge about a
//! hash that an import or an orphaned block may leave without any name using it, and what
//! the namegraph shows of labels is in the names and the labels of its domains.
//!
//! Each table is read a page of rows at a time, in key order, each page after the last one's
//! key, and written out before the next is read; an event page reads the blocks,
//! transactions and domains it shows along with it. Memory stays within a few pages
//! whatever the database holds.

use std::{collections::HashMap, io::Write};

use alloy::hex::encode_prefixed as hex;
use entities::{
    checkpoint, contract, domain, event, event_block, event_selector, event_transaction, label,
    packed_words::SubjectWords, registration, renewal, resolver_address, resolver_record,
    resolver_text,
};
use sea_orm::{
    ColumnTrait, DatabaseConnection, EntityTrait, Iterable, ModelTrait, PrimaryKeyToColumn,
    QueryFilter, QueryOrder, QuerySelect, Value,
    sea_query::{Expr, ExprTrait, Query},
};
use serde_json::json;

use crate::store::StoreError;

/// Rows per page of a table.
pub const PAGE_ROWS: usize = 10_000;

/// A dump that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// Reading the database failed, or it holds a row that does not read back.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the dump failed.
    #[error("writing the dump: {0}")]
    Write(#[from] std::io::Error),
}

/// Dumps the database into a string.
pub async fn dump(db: &DatabaseConnection) -> Result<String, DumpError> {
    let mut out = Vec::new();
    dump_to(db, &mut out, PAGE_ROWS).await?;
    String::from_utf8(out)
        .map_err(|e| DumpError::Write(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Dumps the database into `out`, reading `page_rows` rows of a table at a time.
pub async fn dump_to(
    db: &DatabaseConnection,
    out: &mut impl Write,
    page_rows: usize,
) -> Result<(), DumpError> {
    let mut out = Lines(out);
    Pages::<domain::Entity>::new(page_rows)
        .write(db, &mut out, "domains", |d| {
            json!([
                d.id,
                d.chain_id,
                d.registry_hex(),
                d.node_hex(),
                d.label_hash,
                d.parent_seq,
                d.owner,
                d.registry_owner,
                d.resolver,
                d.ttl,
                d.name,
                d.depth,
                d.migrated,
                d.registration_id(),
                d.registration_count,
                d.registration_start,
                d.registration_expiry,
                d.created_block,
                d.created_at,
                d.seq,
                d.link,
                d.token_owner,
                d.wrapped_owner
            ])
        })
        .await?;
    // Only the labels a domain carries.
    let carried = Expr::exists(
        Query::select()
            .expr(Expr::val(1))
            .from(domain::Entity)
            .and_where(
                Expr::col((domain::Entity, domain::Column::LabelHash))
                    .equals((label::Entity, label::Column::LabelHash)),
            )
            .to_owned(),
    );
    Pages::<label::Entity>::new(page_rows)
        .filter(carried)
        .write(db, &mut out, "labels", |l| json!([l.label_hash, l.label, l.interpreted()]))
        .await?;
    Pages::<registration::Entity>::new(page_rows)
        .write(db, &mut out, "registrations", |r| {
            json!([
                r.id,
                r.domain_id(),
                r.index(),
                r.kind,
                r.registrar_chain_id,
                r.registrar,
                r.registrant,
                r.start,
                r.expiry,
                r.grace_period,
                r.base_cost,
                r.premium,
                r.referrer,
                r.fuses,
                r.wrapped,
                r.renewal_count,
                r.block_number
            ])
        })
        .await?;
    Pages::<renewal::Entity>::new(page_rows)
        .write(db, &mut out, "renewals", |r| {
            json!([
                r.id,
                r.registration_id(),
                r.index(),
                r.duration,
                r.expiry,
                r.base_cost,
                r.premium,
                r.referrer,
                r.block_number,
                r.timestamp
            ])
        })
        .await?;
    Pages::<resolver_record::Entity>::new(page_rows)
        .write(db, &mut out, "resolver_records", |r| {
            json!([
                r.id,
                r.chain_id(),
                r.resolver(),
                r.node(),
                r.name,
                r.contenthash,
                r.pubkey_x,
                r.pubkey_y,
                r.version
            ])
        })
        .await?;
    Pages::<resolver_address::Entity>::new(page_rows)
        .write(db, &mut out, "resolver_addresses", |a| json!([a.record_id, a.coin_type, a.address]))
        .await?;
    Pages::<resolver_text::Entity>::new(page_rows)
        .write(db, &mut out, "resolver_texts", |t| json!([t.record_id, t.key_hash, t.key, t.value]))
        .await?;
    // Events are stored compactly (bytes, a selector code, block and transaction facts in their
    // own tables); the dump shows each event whole, in hex, so it reads the same whatever the
    // storage layout. Events show their contract's address: codes depend on the order chains
    // were indexed in, addresses do not. Contracts are few (one row per emitting contract).
    let contracts: HashMap<(i64, i32), Vec<u8>> = contract::Entity::find()
        .all(db)
        .await
        .map_err(StoreError::db("dump"))?
        .into_iter()
        .map(|c| ((c.chain_id, c.code), c.address))
        .collect();
    let mut pages = Pages::<event::Entity>::new(page_rows);
    while let Some(page) = pages.next(db).await? {
        let facts = EventFacts::of(db, &page).await?;
        for e in page {
            let tx = facts.transactions.get(&(e.chain_id, e.block_number, e.tx_index));
            let malformed = |source| StoreError::MalformedEvent {
                chain_id: e.chain_id,
                block_number: e.block_number,
                log_index: e.log_index,
                source,
            };
            let subject = e.domain_seq.and_then(|seq| facts.subject(seq));
            let topics = e.topics.unpack_with(subject.as_ref()).map_err(malformed)?;
            let data = e.data.unpack_with(subject.as_ref()).map_err(malformed)?;
            out.line(
                "events",
                json!({
                    "chain_id": e.chain_id,
                    "block_number": e.block_number,
                    "log_index": e.log_index,
                    "seq": e.seq,
                    "timestamp": e.timestamp,
                    "block_hash": facts.blocks.get(&(e.chain_id, e.block_number)).map(hex),
                    "tx_hash": tx.map(|t| hex(&t.hash)),
                    "tx_index": e.tx_index,
                    "tx_from": tx.map(|t| hex(&t.tx_from)),
                    "tx_to": tx.and_then(|t| t.to_address.as_ref()).map(hex),
                    "address": contracts.get(&(e.chain_id, e.contract)).map(hex),
                    "selector": event_selector::selector(e.selector).map(hex),
                    "topics": topics.chunks(32).map(hex).collect::<Vec<_>>().join(","),
                    "data": hex(&data),
                    "domain_seq": e.domain_seq,
                }),
            )?;
        }
    }
    Pages::<checkpoint::Entity>::new(page_rows)
        .write(db, &mut out, "checkpoints", |c| json!([c.chain_id, c.block_number, c.block_hash]))
        .await?;
    out.0.flush()?;
    Ok(())
}

/// The dump's lines: one JSON object per row.
struct Lines<'w, W: Write>(&'w mut W);

impl<W: Write> Lines<'_, W> {
    fn line(&mut self, table: &str, row: serde_json::Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut *self.0, &json!({ "table": table, "row": row }))?;
        self.0.write_all(b"\n")
    }
}

/// A table's rows in primary-key order, a page at a time: each page is the rows after the
/// last page's last key, so a page costs the same wherever it starts.
struct Pages<E: EntityTrait> {
    key: Vec<E::Column>,
    filter: Option<Expr>,
    after: Option<Vec<Value>>,
    rows: usize,
    done: bool,
}

impl<E> Pages<E>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E> + Sync,
{
    fn new(rows: usize) -> Self {
        let key = E::PrimaryKey::iter().map(|k| k.into_column()).collect();
        Self { key, filter: None, after: None, rows: rows.max(1), done: false }
    }

    /// Only the rows `condition` holds for.
    fn filter(mut self, condition: Expr) -> Self {
        self.filter = Some(condition);
        self
    }

    /// Writes every row as a line of `table`, as `render` shows it.
    async fn write<W: Write>(
        mut self,
        db: &DatabaseConnection,
        out: &mut Lines<'_, W>,
        table: &str,
        render: impl Fn(E::Model) -> serde_json::Value,
    ) -> Result<(), DumpError> {
        while let Some(page) = self.next(db).await? {
            for row in page {
                out.line(table, render(row))?;
            }
        }
        Ok(())
    }

    /// The next page, or `None` after the last.
    async fn next(&mut self, db: &DatabaseConnection) -> Result<Option<Vec<E::Model>>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let mut query = E::find();
        if let Some(condition) = &self.filter {
            query = query.filter(condition.clone());
        }
        if let Some(after) = self.after.take() {
            let key = self.key.iter().map(|c| Expr::col((E::default(), *c)));
            query =
                query.filter(Expr::tuple(key).gt(Expr::tuple(after.into_iter().map(Expr::val))));
        }
        for column in &self.key {
            query = query.order_by_asc(*column);
        }
        let page = query.limit(self.rows as u64).all(db).await.map_err(StoreError::db("dump"))?;
        self.done = page.len() < self.rows;
        self.after = page.last().map(|row| self.key.iter().map(|c| row.get(*c)).collect());
        Ok((!page.is_empty()).then_some(page))
    }
}

/// What a page of events shows besides its own rows: the hashes of its blocks, its
/// transactions, and the words of the domains it names and of their parents.
struct EventFacts {
    blocks: HashMap<(i64, i64), Vec<u8>>,
    transactions: HashMap<(i64, i64, i32), event_transaction::Model>,
    /// Domains by number: their words and their parent's number.
    domains: HashMap<i64, (SubjectWords, Option<i64>)>,
}

impl EventFacts {
    async fn of(db: &DatabaseConnection, page: &[event::Model]) -> Result<Self, StoreError> {
        let mut facts =
            Self { blocks: HashMap::new(), transactions: HashMap::new(), domains: HashMap::new() };
        // The page is in chain and block order: per chain, the blocks it spans.
        let mut spans: Vec<(i64, i64, i64)> = Vec::new();
        for e in page {
            match spans.last_mut() {
                Some((chain, _, last)) if *chain == e.chain_id => *last = e.block_number,
                _ => spans.push((e.chain_id, e.block_number, e.block_number)),
            }
        }
        for (chain, first, last) in spans {
            let blocks = event_block::Entity::find()
                .filter(event_block::Column::ChainId.eq(chain))
                .filter(event_block::Column::BlockNumber.between(first, last))
                .all(db)
                .await
                .map_err(StoreError::db("dump"))?;
            facts.blocks.extend(blocks.into_iter().map(|b| ((b.chain_id, b.block_number), b.hash)));
            let transactions = event_transaction::Entity::find()
                .filter(event_transaction::Column::ChainId.eq(chain))
                .filter(event_transaction::Column::BlockNumber.between(first, last))
                .all(db)
                .await
                .map_err(StoreError::db("dump"))?;
            facts.transactions.extend(
                transactions.into_iter().map(|t| ((t.chain_id, t.block_number, t.tx_index), t)),
            );
        }
        let mut wanted: Vec<i64> = page.iter().filter_map(|e| e.domain_seq).collect();
        // The domains, then the parents of those among them that have one.
        for _ in 0..2 {
            wanted.sort_unstable();
            wanted.dedup();
            wanted.retain(|seq| !facts.domains.contains_key(seq));
            let mut parents = Vec::new();
            for seqs in wanted.chunks(crate::store::writer::MAX_BINDS_PER_STATEMENT) {
                let rows = domain::Entity::find()
                    .filter(domain::Column::Seq.is_in(seqs.iter().copied()))
                    .all(db)
                    .await
                    .map_err(StoreError::db("dump"))?;
                for d in rows {
                    parents.extend(d.parent_seq);
                    facts.domains.insert(d.seq, (d.subject_words(None), d.parent_seq));
                }
            }
            wanted = parents;
        }
        Ok(facts)
    }

    /// The words of domain `seq` as its events' logs hold them, with its parent's node.
    fn subject(&self, seq: i64) -> Option<SubjectWords> {
        let (words, parent) = self.domains.get(&seq)?;
        let parent_node = parent.and_then(|p| self.domains.get(&p)).map(|(p, _)| p.node);
        Some(SubjectWords { parent_node, ..words.clone() })
    }
}
