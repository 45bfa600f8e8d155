//! Relay connections over domains with opaque keyset cursors.
//!
//! Every listing orders by one column (`NAME`, `DEPTH`, `REGISTRATION_TIMESTAMP`,
//! `REGISTRATION_EXPIRY`) in either direction, ties broken by the domain's creation number
//! (`seq`: the listing indexes end in it) in the same direction, and pages forwards
//! (`first`/`after`) or backwards (`last`/`before`). A cursor records the ordering it was made
//! for together with the row's sort value and creation number; a cursor from another
//! ordering is rejected rather than silently misread. "No registration" sorts as the largest
//! value: last ascending, first descending. `totalCount` is a separate `COUNT(*)` that runs
//! only when selected.

use async_graphql::{Context, Enum, Error, InputObject, Object, SimpleObject};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use entities::domain;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, Order,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    sea_query::{Expr, SimpleExpr},
};
use serde::{Deserialize, Serialize};

pub use crate::domain_filter::DomainFilter;
use crate::{
    error::{code, coded, internal},
    name_key,
    types::DomainInterface,
};

/// Page size when neither `first` nor `last` is given.
pub const DEFAULT_PAGE_SIZE: u64 = 100;
/// Largest page.
pub const MAX_PAGE_SIZE: u64 = 1000;

/// Orders of domain listings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enum, Serialize, Deserialize)]
#[graphql(name = "DomainsOrderBy")]
pub enum DomainsOrderBy {
    /// Canonical name, byte order.
    Name,
    /// Number of labels.
    Depth,
    /// Start of the latest registration.
    RegistrationTimestamp,
    /// Expiry of the latest registration.
    RegistrationExpiry,
}

/// A direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Enum, Serialize, Deserialize)]
pub enum OrderDirection {
    /// Ascending.
    #[default]
    Asc,
    /// Descending.
    Desc,
}

/// How to order a domain listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, InputObject)]
pub struct DomainsOrderInput {
    /// The column.
    pub by: DomainsOrderBy,
    /// The direction (ascending by default).
    #[graphql(default)]
    pub dir: OrderDirection,
}

/// Relay paging arguments.
#[derive(Clone, Debug, Default)]
pub struct Paging {
    /// Forward page size.
    pub first: Option<i32>,
    /// Forward cursor.
    pub after: Option<String>,
    /// Backward page size.
    pub last: Option<i32>,
    /// Backward cursor.
    pub before: Option<String>,
}

impl Paging {
    /// Whether the page is taken from the end of the bounded listing: with `last`, or with
    /// only `before`.
    pub fn backward(&self, last: Option<u64>) -> bool {
        last.is_some() || (self.first.is_none() && self.before.is_some() && self.after.is_none())
    }

    /// `(hasNextPage, hasPreviousPage)` of a page that found `more` rows beyond its size in
    /// its walking direction. The other flag is set when a cursor bounds that side (rows
    /// exist beyond a cursor: the cursor's own row at least).
    pub fn page_flags(&self, backward: bool, more: bool) -> (bool, bool) {
        if backward { (self.before.is_some(), more) } else { (more, self.after.is_some()) }
    }
}

impl DomainsOrderInput {
    /// Of two default orders, depth if either is (a prefix search anywhere wins).
    pub(crate) fn max_by_depth(self, other: Self) -> Self {
        if other.by == DomainsOrderBy::Depth { other } else { self }
    }
}

/// The sort value of a row for an ordering.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
enum SortValue {
    Int(i64),
    Text(String),
}

#[derive(Debug, Serialize, Deserialize)]
struct Cursor {
    by: DomainsOrderBy,
    dir: OrderDirection,
    value: SortValue,
    /// The row's creation number, the tie-breaker.
    seq: i64,
    /// [`crate::keyset::scope_of`] the listing's filter: a cursor pages only the listing
    /// (parent, owner, name filter) it came from.
    #[serde(default)]
    scope: u64,
}

fn sort_value(by: DomainsOrderBy, row: &domain::Model) -> SortValue {
    match by {
        DomainsOrderBy::Name => SortValue::Text(row.name.clone()),
        DomainsOrderBy::Depth => SortValue::Int(i64::from(row.depth)),
        DomainsOrderBy::RegistrationTimestamp => SortValue::Int(row.registration_start),
        DomainsOrderBy::RegistrationExpiry => SortValue::Int(row.registration_expiry),
    }
}

/// The column of a numeric ordering; names order through [`name_key`].
fn column(by: DomainsOrderBy) -> domain::Column {
    match by {
        DomainsOrderBy::Name => domain::Column::Name,
        DomainsOrderBy::Depth => domain::Column::Depth,
        DomainsOrderBy::RegistrationTimestamp => domain::Column::RegistrationStart,
        DomainsOrderBy::RegistrationExpiry => domain::Column::RegistrationExpiry,
    }
}

/// The expressions an ordering sorts by, before the `seq` tie-breaker.
fn order_exprs(by: DomainsOrderBy, backend: DbBackend) -> Vec<SimpleExpr> {
    match by {
        DomainsOrderBy::Name => name_key::order(backend),
        _ => vec![Expr::col((domain::Entity, column(by)))],
    }
}

fn encode_cursor(order: DomainsOrderInput, row: &domain::Model, scope: u64) -> String {
    let cursor = Cursor {
        by: order.by,
        dir: order.dir,
        value: sort_value(order.by, row),
        seq: row.seq,
        scope,
    };
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
}

fn decode_cursor(text: &str, order: DomainsOrderInput, scope: u64) -> Result<Cursor, Error> {
    let cursor: Cursor = URL_SAFE_NO_PAD
        .decode(text)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| coded(code::INVALID_CURSOR, "invalid cursor"))?;
    if cursor.scope != scope {
        return Err(coded(
            code::INVALID_CURSOR,
            "invalid cursor: it belongs to another listing (parent, owner or filter)",
        ));
    }
    if (cursor.by, cursor.dir) != (order.by, order.dir) {
        return Err(coded(
            code::INVALID_CURSOR,
            format!(
                "invalid cursor: it was created with orderBy={:?} {:?} but the query uses {:?} {:?}",
                cursor.by, cursor.dir, order.by, order.dir
            ),
        ));
    }
    let typed = matches!(
        (order.by, &cursor.value),
        (DomainsOrderBy::Name, SortValue::Text(_))
            | (
                DomainsOrderBy::Depth
                    | DomainsOrderBy::RegistrationTimestamp
                    | DomainsOrderBy::RegistrationExpiry,
                SortValue::Int(_)
            )
    );
    if !typed {
        return Err(coded(code::INVALID_CURSOR, "invalid cursor"));
    }
    Ok(cursor)
}

/// Rows strictly after `cursor` when walking in `dir`.
fn after(by: DomainsOrderBy, dir: OrderDirection, cursor: Cursor, backend: DbBackend) -> Condition {
    let col = column(by);
    let (value, seq) = (cursor.value, cursor.seq);
    let ascending = dir == OrderDirection::Asc;
    let (beyond, tie) = match (dir, value) {
        (_, SortValue::Text(name)) => return name_key::after(backend, ascending, &name, seq),
        (OrderDirection::Asc, SortValue::Int(v)) => (col.gt(v), col.eq(v)),
        (OrderDirection::Desc, SortValue::Int(v)) => (col.lt(v), col.eq(v)),
    };
    let seq_beyond = match dir {
        OrderDirection::Asc => domain::Column::Seq.gt(seq),
        OrderDirection::Desc => domain::Column::Seq.lt(seq),
    };
    Condition::any().add(beyond).add(Condition::all().add(tie).add(seq_beyond))
}

/// Name-slice rows above which a prefix counts as common: sorting this many rows costs about
/// what walking an order index to find a page of a rarer prefix would.
pub const COMMON_PREFIX_ROWS: u64 = 2000;

/// Names above which a `contains` text counts as common on SQLite: looking this many rows
/// up by the trigram index costs about what walking the name index to fill a page of a text
/// this common does (at 1M names, 3,000 matches of "ali" took 12-18 ms looked up and 3 ms
/// walked, ordered by name).
pub const COMMON_TEXT_ROWS: u64 = 1500;

/// Estimated names above which a `contains` text counts as common on PostgreSQL, where the
/// planner's estimate stands in for a count. At 1M names, "ali" (3,042 names; estimated
/// 4,004 or 5,005 by two samples of the name column's statistics, target 1,000) took 13 ms
/// read from the trigram index and sorted, and 30 ms (70-94 ms with its pages out of shared
/// buffers) walking the name index, which PostgreSQL chose. Sorting costs about 4 µs a match;
/// walking about 2-5 µs a name passed, and a page of 20 passes ~20/share names. They meet near
/// 6,000 matches; the estimate moves in steps of 1,000 at 1M, so the bound leaves room for a
/// sample's noise above that.
pub const COMMON_TEXT_ESTIMATE: u64 = 8000;

/// Query planning knobs, carried in the schema's data.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// See [`COMMON_PREFIX_ROWS`].
    pub common_prefix_rows: u64,
    /// See [`COMMON_TEXT_ROWS`].
    pub common_text_rows: u64,
    /// See [`COMMON_TEXT_ESTIMATE`].
    pub common_text_estimate: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            common_prefix_rows: COMMON_PREFIX_ROWS,
            common_text_rows: COMMON_TEXT_ROWS,
            common_text_estimate: COMMON_TEXT_ESTIMATE,
        }
    }
}

/// Whether more than `limit` names start with `prefix`. SQLite counts at most that many
/// entries of its name index (an index-only read). PostgreSQL cannot read an expression index
/// without the table, so there the planner's estimate from the name key's statistics decides:
/// either plan returns the same rows, only faster or slower.
async fn common_prefix(db: &DatabaseConnection, prefix: &str, limit: u64) -> Result<bool, Error> {
    let backend = db.get_database_backend();
    let select = domain::Entity::find()
        .select_only()
        .column(domain::Column::Seq)
        .filter(name_key::starts_with(backend, prefix));
    if backend == DbBackend::Postgres {
        return Ok(estimated_rows(db, &select).await? > limit as f64);
    }
    let slice = select.limit(limit + 1);
    let slice =
        crate::schema_retry::retry_schema_change(|| slice.clone().into_tuple::<i64>().all(db))
            .await
            .map_err(internal)?;
    Ok(slice.len() as u64 > limit)
}

/// The rows PostgreSQL's planner expects `select` to return.
async fn estimated_rows(
    db: &DatabaseConnection,
    select: &sea_orm::Select<domain::Entity>,
) -> Result<f64, Error> {
    let backend = db.get_database_backend();
    let query = sea_orm::QueryTrait::build(select, backend);
    let explain = sea_orm::Statement::from_sql_and_values(
        backend,
        format!("EXPLAIN (FORMAT JSON) {}", query.sql),
        query.values.map(|v| v.0).unwrap_or_default(),
    );
    let plan = crate::schema_retry::retry_schema_change(|| db.query_one_raw(explain.clone()))
        .await
        .map_err(internal)?;
    Ok(plan
        .and_then(|row| row.try_get::<serde_json::Value>("", "QUERY PLAN").ok())
        .and_then(|plan| plan[0]["Plan"]["Plan Rows"].as_f64())
        .unwrap_or(0.0))
}

/// Whether PostgreSQL expects more than `limit` names to contain `text`.
async fn common_text_estimated(
    db: &DatabaseConnection,
    text: &str,
    limit: u64,
) -> Result<bool, Error> {
    let select = domain::Entity::find()
        .select_only()
        .column(domain::Column::Seq)
        .filter(DomainFilter::NameContains(text.to_owned()).condition(DbBackend::Postgres));
    Ok(estimated_rows(db, &select).await? > limit as f64)
}

/// Whether more than `limit` names hold the trigrams of `text` (SQLite's trigram index,
/// read without the rows). A text the names' search texts do not answer for counts as common:
/// every name is tested for it, and walking the name index stops once the page is full.
async fn common_text(db: &DatabaseConnection, text: &str, limit: u64) -> Result<bool, Error> {
    if !entities::search_text::is_searchable(text) {
        return Ok(true);
    }
    let count = sea_orm::Statement::from_sql_and_values(
        DbBackend::Sqlite,
        "SELECT count(*) AS n FROM (SELECT rowid FROM domains_name_fts \
         WHERE domains_name_fts MATCH ? LIMIT ?)",
        [crate::domain_filter::trigram_query(text).into(), (limit as i64 + 1).into()],
    );
    let row = crate::schema_retry::retry_schema_change(|| db.query_one_raw(count.clone()))
        .await
        .map_err(internal)?;
    let n = row.and_then(|r| r.try_get::<i64>("", "n").ok()).unwrap_or(0);
    Ok(n as u64 > limit)
}

/// Complexity of a connection field: its selection counts once per row it may return, so a
/// query cannot multiply large pages by fanning out aliases.
pub fn page_complexity(first: Option<i32>, last: Option<i32>, child_complexity: usize) -> usize {
    let rows =
        first.or(last).map_or(DEFAULT_PAGE_SIZE, |n| n.clamp(1, MAX_PAGE_SIZE as i32) as u64);
    (rows as usize).saturating_mul(child_complexity.max(1))
}

pub(crate) fn page_size(n: Option<i32>, name: &str) -> Result<Option<u64>, Error> {
    match n {
        None => Ok(None),
        Some(n) if n < 0 => {
            Err(coded(code::INVALID_ARGUMENT, format!("{name} must not be negative")))
        }
        Some(n) if n as u64 > MAX_PAGE_SIZE => {
            Err(coded(code::INVALID_ARGUMENT, format!("{name} must be at most {MAX_PAGE_SIZE}")))
        }
        Some(n) => Ok(Some(n as u64)),
    }
}

/// One page of domains.
#[derive(Debug)]
pub struct DomainConnection {
    rows: Vec<domain::Model>,
    order: DomainsOrderInput,
    has_next_page: bool,
    has_previous_page: bool,
    filter: DomainFilter,
    scope: u64,
}

/// An edge.
#[derive(Debug, SimpleObject)]
pub struct DomainEdge {
    /// Opaque cursor of this edge.
    pub cursor: String,
    /// The domain.
    pub node: DomainInterface,
}

/// Relay page info.
#[derive(Debug, SimpleObject)]
pub struct PageInfo {
    /// Cursor of the first edge.
    pub start_cursor: Option<String>,
    /// Cursor of the last edge.
    pub end_cursor: Option<String>,
    /// Whether more edges follow.
    pub has_next_page: bool,
    /// Whether edges precede.
    pub has_previous_page: bool,
}

impl DomainConnection {
    /// Loads one page of the domains matching `filter`, in `order` (or the filter's default).
    pub async fn load(
        ctx: &Context<'_>,
        filter: DomainFilter,
        order: Option<DomainsOrderInput>,
        paging: Paging,
    ) -> Result<Self, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let tuning = ctx.data::<Tuning>().copied().unwrap_or_default();
        let order = order.unwrap_or_else(|| filter.default_order());
        let (first, last) = (page_size(paging.first, "first")?, page_size(paging.last, "last")?);
        if first.is_some() && last.is_some() {
            return Err(coded(code::INVALID_ARGUMENT, "give first or last, not both"));
        }
        let backward = paging.backward(last);
        let size = first.or(last).unwrap_or(DEFAULT_PAGE_SIZE);
        // Walking backwards is walking forwards in the opposite direction, then reversing.
        let walk = match (order.dir, backward) {
            (OrderDirection::Asc, false) | (OrderDirection::Desc, true) => OrderDirection::Asc,
            _ => OrderDirection::Desc,
        };
        let sql_order = if walk == OrderDirection::Asc { Order::Asc } else { Order::Desc };
        let backend = db.get_database_backend();
        // A prefix search in another order than by name has two plans: read the prefix's
        // slice of the name index and sort it (fast for a rare prefix like "vitalik"), or walk
        // the order's index and test each name (fast for a common prefix like "a": matches
        // come every few rows). Neither planner can tell which without statistics SQLite does
        // not keep, so a capped count of the slice decides.
        let page_filter = match filter.prefix() {
            Some(prefix)
                if order.by != DomainsOrderBy::Name
                    && common_prefix(db, prefix, tuning.common_prefix_rows).await? =>
            {
                filter.scanning_prefix()
            }
            _ => filter.clone(),
        };
        // A `contains` search ordered by name has two plans on SQLite as well: look each name
        // holding the text's trigrams up and sort them (fast for rare text), or walk the name
        // index, which holds every name, and test each until the page is full (fast for
        // common text: no row is read but the page's). A capped count of the trigram index's
        // matches decides.
        let page_filter = match page_filter.contained() {
            Some(text)
                if backend == DbBackend::Sqlite
                    && order.by == DomainsOrderBy::Name
                    && common_text(db, text, tuning.common_text_rows).await? =>
            {
                page_filter.scanning_contains()
            }
            _ => page_filter,
        };
        // On PostgreSQL the same two plans are the planner's, but it walks the name index for
        // any text it expects more than about a thousand times, far below where walking pays
        // (see [`COMMON_TEXT_ESTIMATE`]). Below that, the page is ordered by the name alone,
        // which no index holds, so the planner reads the trigram index's matches and sorts
        // them: the same order, since the key is a prefix of the name (`name_key`).
        let sort_matches = match filter.contained() {
            Some(text) if backend == DbBackend::Postgres && order.by == DomainsOrderBy::Name => {
                !common_text_estimated(db, text, tuning.common_text_estimate).await?
            }
            _ => false,
        };
        let scope = crate::keyset::scope_of(
            &sea_orm::QueryTrait::build(
                &domain::Entity::find().filter(filter.condition(backend)),
                backend,
            )
            .to_string(),
        );
        let mut query = domain::Entity::find().filter(page_filter.condition(backend));
        // Relay's rule: `after` and `before` bound the listing, then `first` takes from the
        // start of what is left, `last` from its end.
        if let Some(text) = &paging.after {
            query = query.filter(after(
                order.by,
                order.dir,
                decode_cursor(text, order, scope)?,
                backend,
            ));
        }
        if let Some(text) = &paging.before {
            let reverse = match order.dir {
                OrderDirection::Asc => OrderDirection::Desc,
                OrderDirection::Desc => OrderDirection::Asc,
            };
            query =
                query.filter(after(order.by, reverse, decode_cursor(text, order, scope)?, backend));
        }
        let exprs = if sort_matches {
            vec![Expr::col((domain::Entity, domain::Column::Name))]
        } else {
            order_exprs(order.by, backend)
        };
        for expr in exprs {
            query = query.order_by(expr, sql_order.clone());
        }
        let query = query.order_by(domain::Column::Seq, sql_order).limit(size + 1);
        let mut rows = crate::schema_retry::retry_schema_change(|| query.clone().all(db))
            .await
            .map_err(internal)?;
        let more = rows.len() as u64 > size;
        rows.truncate(size as usize);
        if backward {
            rows.reverse();
        }
        let (has_next_page, has_previous_page) = paging.page_flags(backward, more);
        Ok(Self { rows, order, has_next_page, has_previous_page, filter, scope })
    }
}

#[Object]
impl DomainConnection {
    /// The edges of this page.
    async fn edges(&self) -> Vec<DomainEdge> {
        self.rows
            .iter()
            .map(|row| DomainEdge {
                cursor: encode_cursor(self.order, row, self.scope),
                node: DomainInterface::from(row.clone()),
            })
            .collect()
    }

    /// Page info.
    async fn page_info(&self) -> PageInfo {
        PageInfo {
            start_cursor: self.rows.first().map(|r| encode_cursor(self.order, r, self.scope)),
            end_cursor: self.rows.last().map(|r| encode_cursor(self.order, r, self.scope)),
            has_next_page: self.has_next_page,
            has_previous_page: self.has_previous_page,
        }
    }

    /// Number of domains matching the filter (all pages).
    async fn total_count(&self, ctx: &Context<'_>) -> Result<u64, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let select =
            domain::Entity::find().filter(self.filter.condition(db.get_database_backend()));
        crate::schema_retry::retry_schema_change(|| select.clone().count(db))
            .await
            .map_err(internal)
    }
}
