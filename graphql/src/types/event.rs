//! `Event`: one applied ENS event with its log and transaction, the filters of event listings
//! (`EventsWhereInput`, `AccountEventsWhereInput`) and the listing itself.
//!
//! Events list oldest first in one global order, `(timestamp, chainId, blockNumber,
//! logIndex)`, which each of the `events` table's indexes holds for its lookup.
//!
//! The history is stored compactly (raw bytes, a selector code, block and transaction facts
//! in their own tables, words of the event's domain as references to it, see
//! `entities::event`); this type renders it back as the hex the chain shows, loading block,
//! transaction and domain facts per page through DataLoaders.

use alloy::hex::encode_prefixed as hex;
use async_graphql::{Context, Error, InputObject, Object, OneofObject, dataloader::DataLoader};
use entities::{event, event_selector, event_transaction, packed_words::PackedWords};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, JoinType, QueryFilter, QuerySelect,
    sea_query::{Expr, ExprTrait, Query},
};

use crate::{
    connection::Paging,
    error::{code, coded},
    keyset::{KeyKind, KeyPart, Keyset, key_columns, keyset_connection},
    loaders::{
        ContractLoader, DomainBySeqLoader, EventBlockLoader, EventTransactionLoader, load_row,
        loader_error,
    },
    name::{parse_address, parse_node},
    scalars::{Address, BigInt, ChainId, Hex},
};

/// The bytes of validated `0x` hex (an address or node the API already checked); anything
/// else becomes no bytes, which matches no stored row.
pub fn hex_bytes(text: &str) -> Vec<u8> {
    alloy::hex::decode(text).unwrap_or_default()
}

/// Largest `in` list of an event filter.
pub const MAX_FILTER_ITEMS: usize = 100;

/// An applied ENS event.
#[derive(Clone, Debug)]
pub struct Event(pub event::Model);

#[Object]
impl Event {
    /// `${chainId}-${blockNumber}-${logIndex}`, with `-${n}` for the n-th event of a log
    /// that carries several (batch transfers).
    async fn id(&self) -> async_graphql::ID {
        let e = &self.0;
        let base = format!("{}-{}-{}", e.chain_id, e.block_number, e.log_index);
        async_graphql::ID(if e.seq == 0 { base } else { format!("{base}-{}", e.seq) })
    }

    /// Chain id.
    async fn chain_id(&self) -> ChainId {
        ChainId(self.0.chain_id)
    }

    /// Block number.
    async fn block_number(&self) -> BigInt {
        BigInt(self.0.block_number.to_string())
    }

    /// Block hash.
    async fn block_hash(&self, ctx: &Context<'_>) -> Result<Hex, Error> {
        let loader = ctx.data::<DataLoader<EventBlockLoader>>()?;
        let hash = loader
            .load_one((self.0.chain_id, self.0.block_number))
            .await
            .map_err(loader_error)?
            .unwrap_or_default();
        Ok(Hex(hex(hash)))
    }

    /// Block timestamp, seconds.
    async fn timestamp(&self) -> BigInt {
        BigInt(self.0.timestamp.to_string())
    }

    /// Transaction hash.
    async fn transaction_hash(&self, ctx: &Context<'_>) -> Result<Hex, Error> {
        let tx = self.transaction(ctx).await?;
        Ok(Hex(hex(tx.map(|t| t.hash).unwrap_or_default())))
    }

    /// Index of the transaction in the block.
    async fn transaction_index(&self) -> i32 {
        self.0.tx_index
    }

    /// Sender of the transaction.
    async fn from(&self, ctx: &Context<'_>) -> Result<Address, Error> {
        self.tx_sender(ctx).await
    }

    /// Recipient of the transaction; null for a contract creation.
    async fn to(&self, ctx: &Context<'_>) -> Result<Option<Address>, Error> {
        let tx = self.transaction(ctx).await?;
        Ok(tx.and_then(|t| t.to_address).map(|a| Address(hex(a))))
    }

    /// Who acted: the transaction's sender (no account abstraction is interpreted).
    async fn sender(&self, ctx: &Context<'_>) -> Result<Address, Error> {
        self.tx_sender(ctx).await
    }

    /// Contract that emitted the log.
    async fn address(&self, ctx: &Context<'_>) -> Result<Address, Error> {
        let loader = ctx.data::<DataLoader<ContractLoader>>()?;
        let e = &self.0;
        let address = loader.load_one((e.chain_id, e.contract)).await.map_err(loader_error)?;
        let address = address.ok_or_else(|| self.damaged("names an unknown contract"))?;
        Ok(Address(hex(address)))
    }

    /// Index of the log in the block.
    async fn log_index(&self) -> i32 {
        self.0.log_index
    }

    /// The log's topics, topic0 (the selector) first.
    async fn topics(&self, ctx: &Context<'_>) -> Result<Vec<Hex>, Error> {
        let topics = self.unpacked(ctx, &self.0.topics).await?;
        Ok(event_selector::selector(self.0.selector)
            .map(|s| s.as_slice())
            .into_iter()
            .chain(topics.chunks(32))
            .map(|t| Hex(hex(t)))
            .collect())
    }

    /// The log's data.
    async fn data(&self, ctx: &Context<'_>) -> Result<Hex, Error> {
        Ok(Hex(hex(self.unpacked(ctx, &self.0.data).await?)))
    }
}

impl Event {
    /// An internal error about this stored event (a damaged or hand-edited row).
    fn damaged(&self, what: &str) -> Error {
        let e = &self.0;
        let id = format!("{}-{}-{}", e.chain_id, e.block_number, e.log_index);
        coded(code::INTERNAL, format!("stored event {id} {what}"))
    }

    /// Stored topics or data as the log held them; a damaged row is an internal error that
    /// names the event, not a wrong answer. Words stored as references to the event's domain
    /// (its node, label hash or parent's node) are read from the domain row, and its parent's
    /// when needed, through the page's loader.
    async fn unpacked(&self, ctx: &Context<'_>, packed: &PackedWords) -> Result<Vec<u8>, Error> {
        let (needs_domain, needs_parent) = packed.needs_subject();
        let subject = match (needs_domain, self.0.domain_seq) {
            (true, Some(seq)) => {
                let loader = ctx.data::<DataLoader<DomainBySeqLoader>>()?;
                let domain = load_row(loader, seq).await?;
                let domain = domain.ok_or_else(|| self.damaged("refers to a missing domain"))?;
                let parent = match (needs_parent, domain.parent_seq) {
                    (true, Some(parent)) => load_row(loader, parent).await?.map(|p| p.node()),
                    _ => None,
                };
                Some(domain.subject_words(parent))
            }
            _ => None,
        };
        packed.unpack_with(subject.as_ref()).map_err(|e| self.damaged(&format!("holds {e}")))
    }

    /// The sender, from the event's transaction row; every recorded event has one.
    async fn tx_sender(&self, ctx: &Context<'_>) -> Result<Address, Error> {
        let tx =
            self.transaction(ctx).await?.ok_or_else(|| self.damaged("has no transaction row"))?;
        Ok(Address(hex(tx.tx_from)))
    }

    /// The event's transaction row, loaded with the page's others.
    async fn transaction(
        &self,
        ctx: &Context<'_>,
    ) -> Result<Option<entities::event_transaction::Model>, Error> {
        let loader = ctx.data::<DataLoader<EventTransactionLoader>>()?;
        loader
            .load_one((self.0.chain_id, self.0.block_number, self.0.tx_index))
            .await
            .map_err(loader_error)
    }
}

/// Matches one address or any of a list.
#[derive(Clone, Debug, OneofObject)]
pub enum AddressFilter {
    /// This address.
    Eq(Address),
    /// Any of these addresses (at most 100).
    In(Vec<Address>),
}

/// Matches one selector (topic0) or any of a list.
#[derive(Clone, Debug, OneofObject)]
pub enum SelectorFilter {
    /// This selector.
    Eq(Hex),
    /// Any of these selectors (at most 100).
    In(Vec<Hex>),
}

/// A time range over block timestamps (seconds); bounds combine.
#[derive(Clone, Debug, Default, InputObject)]
pub struct TimestampFilter {
    /// After.
    pub gt: Option<BigInt>,
    /// At or after.
    pub gte: Option<BigInt>,
    /// Before.
    pub lt: Option<BigInt>,
    /// At or before.
    pub lte: Option<BigInt>,
}

/// Filter of `Domain.events` and `Resolver.events`.
#[derive(Clone, Debug, Default, InputObject)]
pub struct EventsWhereInput {
    /// Transaction sender.
    pub from: Option<AddressFilter>,
    /// Event selector (topic0).
    pub selector: Option<SelectorFilter>,
    /// Who acted (the transaction sender).
    pub sender: Option<AddressFilter>,
    /// Block time.
    pub timestamp: Option<TimestampFilter>,
}

/// Filter of `Account.events` (the sender is the account).
#[derive(Clone, Debug, Default, InputObject)]
pub struct AccountEventsWhereInput {
    /// Transaction sender.
    pub from: Option<AddressFilter>,
    /// Event selector (topic0).
    pub selector: Option<SelectorFilter>,
    /// Block time.
    pub timestamp: Option<TimestampFilter>,
}

impl From<AccountEventsWhereInput> for EventsWhereInput {
    fn from(w: AccountEventsWhereInput) -> Self {
        Self { from: w.from, selector: w.selector, sender: None, timestamp: w.timestamp }
    }
}

fn list<S: AsRef<str>, T>(
    items: Vec<S>,
    parse: impl Fn(&str) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    if items.len() > MAX_FILTER_ITEMS {
        return Err(coded(
            code::INVALID_ARGUMENT,
            format!("an `in` list holds at most {MAX_FILTER_ITEMS} items"),
        ));
    }
    items.iter().map(|i| parse(i.as_ref())).collect()
}

fn address_bytes(text: &str) -> Result<Vec<u8>, Error> {
    parse_address(text).map(|a| hex_bytes(&a))
}

/// Events whose transaction was sent by one of the filter's addresses: the sender lives on
/// the transaction row, which the event's coordinates find by primary key.
fn address_condition(filter: AddressFilter) -> Result<Condition, Error> {
    let senders = match filter {
        AddressFilter::Eq(a) => vec![address_bytes(&a.0)?],
        AddressFilter::In(list_) => list(list_, address_bytes)?,
    };
    let tx = |c: event_transaction::Column| Expr::col((TxAlias, c));
    let same = |c: event_transaction::Column, e: event::Column| tx(c).equals((event::Entity, e));
    let sent = Query::select()
        .expr(Expr::val(1))
        .from_as(event_transaction::Entity, TxAlias)
        .and_where(same(event_transaction::Column::ChainId, event::Column::ChainId))
        .and_where(same(event_transaction::Column::BlockNumber, event::Column::BlockNumber))
        .and_where(same(event_transaction::Column::TxIndex, event::Column::TxIndex))
        .and_where(tx(event_transaction::Column::TxFrom).is_in(senders))
        .to_owned();
    Ok(Condition::all().add(Expr::exists(sent)))
}

/// The alias of the sender filter's transaction table, distinct from the one an account
/// listing joins.
#[derive(Clone, Copy, Debug)]
struct TxAlias;

impl sea_orm::sea_query::Iden for TxAlias {
    fn unquoted(&self) -> &str {
        "sender_tx"
    }
}

/// The stored code of a selector filter value; a well-formed selector the indexer never
/// records has none (and matches nothing).
fn selector_code(text: &str) -> Result<Option<i16>, Error> {
    parse_node(text).map(|s| event_selector::code_of_hex(&s))
}

fn timestamp(text: &BigInt) -> Result<i64, Error> {
    text.0
        .parse::<u64>()
        .ok()
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| coded(code::INVALID_ARGUMENT, "a timestamp is a decimal number of seconds"))
}

impl TimestampFilter {
    /// The inclusive range `[low, high]` the filter allows.
    fn range(&self) -> Result<(i64, i64), Error> {
        let bad = |m: &str| Err(coded(code::INVALID_ARGUMENT, m.to_owned()));
        if self.gt.is_some() && self.gte.is_some() {
            return bad("give gt or gte, not both");
        }
        if self.lt.is_some() && self.lte.is_some() {
            return bad("give lt or lte, not both");
        }
        let low = match (&self.gt, &self.gte) {
            (Some(v), _) => timestamp(v)?.saturating_add(1),
            (_, Some(v)) => timestamp(v)?,
            _ => i64::MIN,
        };
        let high = match (&self.lt, &self.lte) {
            (Some(v), _) => timestamp(v)?.saturating_sub(1),
            (_, Some(v)) => timestamp(v)?,
            _ => i64::MAX,
        };
        if (low, high) == (i64::MIN, i64::MAX) {
            return bad("a timestamp filter needs at least one bound");
        }
        if low > high {
            return bad("the timestamp range is empty");
        }
        Ok((low, high))
    }
}

impl EventsWhereInput {
    /// The SQL condition of the filter; arguments are validated here.
    pub fn condition(self) -> Result<Condition, Error> {
        let mut all = Condition::all();
        if let Some(from) = self.from {
            all = all.add(address_condition(from)?);
        }
        if let Some(sender) = self.sender {
            all = all.add(address_condition(sender)?);
        }
        if let Some(selector) = self.selector {
            let codes: Vec<i16> = match selector {
                SelectorFilter::Eq(s) => selector_code(&s.0)?.into_iter().collect(),
                SelectorFilter::In(l) => list(l, selector_code)?.into_iter().flatten().collect(),
            };
            // An empty list renders as a false condition: no stored event has that selector.
            all = all.add(event::Column::Selector.is_in(codes));
        }
        if let Some(range) = self.timestamp {
            let (low, high) = range.range()?;
            all = all.add(event::Column::Timestamp.between(low, high));
        }
        Ok(all)
    }
}

keyset_connection!(
    /// A page of events.
    EventConnection,
    Event,
    event::Entity
);

fn key(e: &event::Model) -> Vec<KeyPart> {
    vec![
        KeyPart::Int(e.timestamp),
        KeyPart::Int(e.chain_id),
        KeyPart::Int(e.block_number),
        KeyPart::Int(i64::from(e.log_index)),
        KeyPart::Int(i64::from(e.seq)),
    ]
}

/// One page of the events matching `subject` (whose they are) and `filter`.
pub async fn list_events(
    db: &DatabaseConnection,
    subject: Condition,
    filter: Option<EventsWhereInput>,
    paging: Paging,
) -> Result<EventConnection, Error> {
    let mut select = event::Entity::find().filter(subject);
    if let Some(filter) = filter {
        select = select.filter(filter.condition()?);
    }
    let keyset = Keyset::<event::Entity> {
        of: "events",
        columns: key_columns([
            event::Column::Timestamp,
            event::Column::ChainId,
            event::Column::BlockNumber,
            event::Column::LogIndex,
            event::Column::Seq,
        ]),
        key,
        kinds: &[KeyKind::Int; 5],
        index_prefix: None,
    };
    let page = keyset.page(db, select.clone(), &paging).await?.map(Event);
    Ok(EventConnection { page, select })
}

/// The key of an event in an account listing: its transaction's place, then its own.
fn account_key(e: &event::Model) -> Vec<KeyPart> {
    vec![
        KeyPart::Int(e.timestamp),
        KeyPart::Int(e.chain_id),
        KeyPart::Int(e.block_number),
        KeyPart::Int(i64::from(e.tx_index)),
        KeyPart::Int(i64::from(e.log_index)),
        KeyPart::Int(i64::from(e.seq)),
    ]
}

/// One page of the events of transactions `sender` sent, matching `filter`.
///
/// The listing walks the sender's transactions in the order of their index
/// (`event_transactions_from`) and joins each one's events. Logs in a block are numbered in
/// transaction order, so `(timestamp, chain, block, transaction, log)` is the same order as
/// every other event listing's `(timestamp, chain, block, log)`.
pub async fn list_account_events(
    db: &DatabaseConnection,
    sender: Vec<u8>,
    filter: Option<EventsWhereInput>,
    paging: Paging,
) -> Result<EventConnection, Error> {
    use event_transaction::Column as Tx;
    let transaction = event::Entity::belongs_to(event_transaction::Entity)
        .from((event::Column::ChainId, event::Column::BlockNumber, event::Column::TxIndex))
        .to((Tx::ChainId, Tx::BlockNumber, Tx::TxIndex))
        .into();
    let mut select =
        event::Entity::find().join(JoinType::InnerJoin, transaction).filter(Tx::TxFrom.eq(sender));
    if let Some(filter) = filter {
        // The time range bounds the walk of the sender's index, not only the events.
        if let Some(range) = &filter.timestamp {
            let (low, high) = range.range()?;
            select = select.filter(Tx::Timestamp.between(low, high));
        }
        select = select.filter(filter.condition()?);
    }
    let mut columns = key_columns([Tx::Timestamp, Tx::ChainId, Tx::BlockNumber, Tx::TxIndex]);
    columns.extend(key_columns([event::Column::LogIndex, event::Column::Seq]));
    // The first four key columns are `event_transactions_from`'s after the sender.
    let keyset = Keyset::<event::Entity> {
        of: "accountEvents",
        columns,
        key: account_key,
        kinds: &[KeyKind::Int; 6],
        index_prefix: Some(4),
    };
    let page = keyset.page(db, select.clone(), &paging).await?.map(Event);
    Ok(EventConnection { page, select })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_ranges_are_checked() {
        let f = |gt: Option<&str>, gte: Option<&str>, lt: Option<&str>, lte: Option<&str>| {
            TimestampFilter {
                gt: gt.map(BigInt::from),
                gte: gte.map(BigInt::from),
                lt: lt.map(BigInt::from),
                lte: lte.map(BigInt::from),
            }
            .range()
        };
        assert_eq!(f(Some("10"), None, Some("20"), None).unwrap(), (11, 19));
        assert_eq!(f(None, Some("10"), None, Some("10")).unwrap(), (10, 10));
        assert!(f(None, None, None, None).is_err(), "empty");
        assert!(f(Some("1"), Some("1"), None, None).is_err(), "gt and gte");
        assert!(f(None, None, Some("1"), Some("1")).is_err(), "lt and lte");
        assert!(f(Some("10"), None, Some("11"), None).is_err(), "inverted");
        assert!(f(Some("-1"), None, None, None).is_err(), "negative");
    }
}
