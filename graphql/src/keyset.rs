//! Keyset pages for the connections that list rows in one fixed order (events, registrations,
//! renewals, name references, resolver records): Relay arguments, an opaque cursor holding the
//! row's key, and `totalCount` only when asked. Domain listings, which have several orders,
//! live in [`crate::connection`].
//!
//! A cursor names the connection it was made for, so a cursor from another listing is
//! rejected instead of being misread as a key of this one.

use async_graphql::{Error, OutputType, SimpleObject};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use sea_orm::{
    Condition, DatabaseConnection, EntityTrait, IntoSimpleExpr, Order, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Select,
    sea_query::{Expr, ExprTrait},
};
use serde::{Deserialize, Serialize};

use crate::{
    connection::{DEFAULT_PAGE_SIZE, PageInfo, Paging, page_size},
    error::{code, coded, internal},
};

/// One column of a row's key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum KeyPart {
    /// An integer column.
    Int(i64),
    /// A text column.
    Text(String),
    /// A binary column (a raw key).
    Bytes(Vec<u8>),
}

impl From<KeyPart> for sea_orm::Value {
    fn from(part: KeyPart) -> Self {
        match part {
            KeyPart::Int(v) => v.into(),
            KeyPart::Text(v) => v.into(),
            KeyPart::Bytes(v) => v.into(),
        }
    }
}

impl KeyPart {
    /// The kind of column this part is for.
    pub fn kind(&self) -> KeyKind {
        match self {
            Self::Int(_) => KeyKind::Int,
            Self::Text(_) => KeyKind::Text,
            Self::Bytes(_) => KeyKind::Bytes,
        }
    }
}

/// The kind of one key column: a cursor's parts must have the listing's kinds, or the
/// comparison it becomes would compare a number column with text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// An integer column.
    Int,
    /// A text column.
    Text,
    /// A binary column.
    Bytes,
}

#[derive(Debug, Serialize, Deserialize)]
struct KeyCursor {
    of: String,
    /// [`scope_of`] the listing's query: a cursor pages only the listing (parent, filters)
    /// it came from.
    #[serde(default)]
    scope: u64,
    key: Vec<KeyPart>,
}

/// A stable fingerprint of a listing's query (FNV-1a of its SQL with values inlined): the
/// same in every process and across restarts, so cursors stay valid between API replicas.
pub fn scope_of(sql: &str) -> u64 {
    sql.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The order of one listing: its key columns, ascending, and how to read a row's key.
#[derive(Debug)]
pub struct Keyset<E: EntityTrait> {
    /// Name of the listing, bound into its cursors.
    pub of: &'static str,
    /// Key columns; together they are unique. They may belong to a joined table (an
    /// account's events are ordered by their transactions' index), so they are expressions.
    pub columns: Vec<Expr>,
    /// The key of a row, one part per column.
    pub key: fn(&E::Model) -> Vec<KeyPart>,
    /// The kind of each key column.
    pub kinds: &'static [KeyKind],
    /// When the key spans two tables: how many of its leading columns one index holds, in
    /// order. A page also bounds those columns alone (inclusively), which PostgreSQL needs
    /// before it seeks that index; `None` when one table holds the whole key.
    pub index_prefix: Option<usize>,
}

/// One page of rows with their cursors.
#[derive(Debug)]
pub struct Page<T> {
    /// Rows in listing order, each with its cursor.
    pub rows: Vec<(String, T)>,
    /// Whether rows follow the page.
    pub has_next_page: bool,
    /// Whether rows precede the page.
    pub has_previous_page: bool,
}

impl<T> Page<T> {
    /// The same page with every row converted.
    pub fn map<U>(self, f: impl Fn(T) -> U) -> Page<U> {
        Page {
            rows: self.rows.into_iter().map(|(c, r)| (c, f(r))).collect(),
            has_next_page: self.has_next_page,
            has_previous_page: self.has_previous_page,
        }
    }

    /// Relay page info.
    pub fn page_info(&self) -> PageInfo {
        PageInfo {
            start_cursor: self.rows.first().map(|(c, _)| c.clone()),
            end_cursor: self.rows.last().map(|(c, _)| c.clone()),
            has_next_page: self.has_next_page,
            has_previous_page: self.has_previous_page,
        }
    }
}

/// An edge of a keyset connection.
#[derive(Debug, SimpleObject)]
#[graphql(concrete(name = "EventEdge", params(crate::types::Event)))]
#[graphql(concrete(name = "RegistrationEdge", params(crate::types::Registration)))]
#[graphql(concrete(name = "RenewalEdge", params(crate::types::Renewal)))]
#[graphql(concrete(name = "NameReferenceEdge", params(crate::types::NameReference)))]
#[graphql(concrete(name = "ResolverRecordsEdge", params(crate::types::ResolverRecords)))]
pub struct Edge<T: OutputType> {
    /// Opaque cursor of this edge.
    pub cursor: String,
    /// The row.
    pub node: T,
}

/// Key columns of one table, for [`Keyset::columns`].
pub fn key_columns<C: IntoSimpleExpr>(columns: impl IntoIterator<Item = C>) -> Vec<Expr> {
    columns.into_iter().map(IntoSimpleExpr::into_simple_expr).collect()
}

impl<E: EntityTrait> Keyset<E> {
    fn encode(&self, row: &E::Model, scope: u64) -> String {
        let cursor = KeyCursor { of: self.of.to_owned(), scope, key: (self.key)(row) };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cursor).unwrap_or_default())
    }

    fn decode(&self, text: &str, scope: u64) -> Result<Vec<KeyPart>, Error> {
        URL_SAFE_NO_PAD
            .decode(text)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<KeyCursor>(&bytes).ok())
            .filter(|c| {
                c.of == self.of
                    && c.scope == scope
                    && c.key.len() == self.columns.len()
                    && c.key.iter().map(KeyPart::kind).eq(self.kinds.iter().copied())
            })
            .map(|c| c.key)
            .ok_or_else(|| {
                coded(
                    code::INVALID_CURSOR,
                    format!("invalid cursor: not one of this {} listing's", self.of),
                )
            })
    }

    /// Rows strictly beyond `key` walking up (`ascending`) or down, as one row-value
    /// comparison `(c1, c2, ..) > (k1, k2, ..)`. Both engines seek an index with it when the
    /// key columns follow the index's order after its equality columns; the same condition
    /// spelled out as an OR of column comparisons made SQLite seek on the first column only,
    /// and both engines scan an account's events from its first transaction.
    fn beyond(&self, key: Vec<KeyPart>, ascending: bool) -> Condition {
        let tuple = |n: usize| {
            let columns = Expr::tuple(self.columns.iter().take(n).cloned());
            let values = key.iter().take(n).map(|p| Expr::val(sea_orm::Value::from(p.clone())));
            (columns, Expr::tuple(values))
        };
        let (columns, values) = tuple(key.len());
        let mut beyond =
            Condition::all().add(if ascending { columns.gt(values) } else { columns.lt(values) });
        if let Some(n) = self.index_prefix {
            let (columns, values) = tuple(n);
            beyond = beyond.add(if ascending { columns.gte(values) } else { columns.lte(values) });
        }
        beyond
    }

    /// One page of `select` (already filtered), in key order.
    pub async fn page(
        &self,
        db: &DatabaseConnection,
        select: Select<E>,
        paging: &Paging,
    ) -> Result<Page<E::Model>, Error> {
        let (first, last) = (page_size(paging.first, "first")?, page_size(paging.last, "last")?);
        if first.is_some() && last.is_some() {
            return Err(coded(code::INVALID_ARGUMENT, "give first or last, not both"));
        }
        let backward = paging.backward(last);
        let size = first.or(last).unwrap_or(DEFAULT_PAGE_SIZE);
        let scope =
            scope_of(&sea_orm::QueryTrait::build(&select, db.get_database_backend()).to_string());
        let mut query = select;
        // Relay's rule: `after` and `before` bound the listing, then `first` takes from the
        // start of what is left, `last` from its end.
        if let Some(text) = &paging.after {
            query = query.filter(self.beyond(self.decode(text, scope)?, true));
        }
        if let Some(text) = &paging.before {
            query = query.filter(self.beyond(self.decode(text, scope)?, false));
        }
        let order = if backward { Order::Desc } else { Order::Asc };
        for col in &self.columns {
            query = query.order_by(col.clone(), order.clone());
        }
        let query = query.limit(size + 1);
        let mut rows = crate::schema_retry::retry_schema_change(|| query.clone().all(db))
            .await
            .map_err(internal)?;
        let more = rows.len() as u64 > size;
        rows.truncate(size as usize);
        if backward {
            rows.reverse();
        }
        let (has_next_page, has_previous_page) = paging.page_flags(backward, more);
        Ok(Page {
            rows: rows.into_iter().map(|r| (self.encode(&r, scope), r)).collect(),
            has_next_page,
            has_previous_page,
        })
    }
}

/// `SELECT count(*)` of a listing's filter, run only when `totalCount` is selected.
pub async fn count<E: EntityTrait>(db: &DatabaseConnection, select: Select<E>) -> Result<u64, Error>
where
    E::Model: Sync,
{
    crate::schema_retry::retry_schema_change(|| select.clone().count(db)).await.map_err(internal)
}

/// Declares a Relay connection type over a keyset [`Page`] of `$node`, with a lazy
/// `totalCount` over `$entity`.
macro_rules! keyset_connection {
    ($(#[$doc:meta])* $name:ident, $node:ty, $entity:path) => {
        $(#[$doc])*
        pub struct $name {
            /// The page.
            pub page: $crate::keyset::Page<$node>,
            /// The listing's filter, for `totalCount`.
            pub select: sea_orm::Select<$entity>,
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("rows", &self.page.rows.len()).finish()
            }
        }

        #[async_graphql::Object]
        impl $name {
            /// The edges of this page.
            async fn edges(&self) -> Vec<$crate::keyset::Edge<$node>> {
                self.page
                    .rows
                    .iter()
                    .map(|(cursor, node)| $crate::keyset::Edge {
                        cursor: cursor.clone(),
                        node: node.clone(),
                    })
                    .collect()
            }

            /// Page info.
            async fn page_info(&self) -> $crate::connection::PageInfo {
                self.page.page_info()
            }

            /// Number of rows in the listing (all pages); counted only when asked.
            async fn total_count(
                &self,
                ctx: &async_graphql::Context<'_>,
            ) -> Result<u64, async_graphql::Error> {
                let db = ctx.data::<sea_orm::DatabaseConnection>()?;
                $crate::keyset::count(db, self.select.clone()).await
            }
        }
    };
}
pub(crate) use keyset_connection;

#[cfg(test)]
mod tests {
    use entities::{event, event_transaction};
    use sea_orm::{DbBackend, QueryTrait};

    use super::*;

    fn sql(keyset: &Keyset<event::Entity>, ascending: bool) -> String {
        let key = vec![KeyPart::Int(7), KeyPart::Int(1), KeyPart::Int(9)];
        event::Entity::find()
            .filter(keyset.beyond(key, ascending))
            .build(DbBackend::Sqlite)
            .to_string()
    }

    #[test]
    fn pages_by_one_row_value_and_bound_the_index_prefix() {
        let mut keyset = Keyset::<event::Entity> {
            of: "events",
            columns: key_columns([
                event::Column::Timestamp,
                event::Column::ChainId,
                event::Column::BlockNumber,
            ]),
            key: |_| Vec::new(),
            kinds: &[KeyKind::Int; 3],
            index_prefix: None,
        };
        let up = sql(&keyset, true);
        assert!(
            up.ends_with(
                r#"WHERE ("events"."timestamp", "events"."chain_id", "events"."block_number") > (7, 1, 9)"#
            ),
            "{up}"
        );
        assert!(sql(&keyset, false).ends_with("< (7, 1, 9)"));

        // A key over two tables also bounds the leading columns one index holds.
        keyset.columns =
            key_columns([event_transaction::Column::Timestamp, event_transaction::Column::ChainId]);
        keyset.columns.extend(key_columns([event::Column::LogIndex]));
        keyset.index_prefix = Some(2);
        let up = sql(&keyset, true);
        assert!(
            up.ends_with(
                r#"> (7, 1, 9) AND ("event_transactions"."timestamp", "event_transactions"."chain_id") >= (7, 1)"#
            ),
            "{up}"
        );
        assert!(sql(&keyset, false).ends_with(r#""event_transactions"."chain_id") <= (7, 1)"#));
    }
}
