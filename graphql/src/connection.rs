//! Relay connections over domains with opaque keyset cursors on `(name, id)`. `totalCount`
//! is a separate `COUNT(*)` that runs only when selected.

use async_graphql::{Context, Error, Object, SimpleObject};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use entities::domain;
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};

use crate::{
    error::{code, coded, internal},
    types::Domain,
};

/// Page size when `first` is not given.
pub const DEFAULT_PAGE_SIZE: u64 = 100;
/// Largest page.
pub const MAX_PAGE_SIZE: u64 = 1000;

/// Which domains a connection lists.
#[derive(Clone, Debug)]
pub enum DomainFilter {
    /// Children of a domain.
    Parent(String),
    /// Domains whose effective owner is this address.
    Owner(String),
    /// Exact canonical name.
    NameEq(String),
    /// Any of these names.
    NameIn(Vec<String>),
    /// Names starting with this prefix.
    NameStartsWith(String),
}

impl DomainFilter {
    fn condition(&self) -> Condition {
        match self {
            Self::Parent(id) => Condition::all().add(domain::Column::ParentId.eq(id.clone())),
            Self::Owner(owner) => Condition::all().add(domain::Column::Owner.eq(owner.clone())),
            Self::NameEq(name) => Condition::all().add(domain::Column::Name.eq(name.clone())),
            Self::NameIn(names) => {
                Condition::all().add(domain::Column::Name.is_in(names.iter().cloned()))
            }
            Self::NameStartsWith(prefix) => {
                let escaped = prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
                Condition::all().add(
                    domain::Column::Name.like(
                        sea_orm::sea_query::LikeExpr::new(format!("{escaped}%")).escape('\\'),
                    ),
                )
            }
        }
    }
}

fn encode_cursor(row: &domain::Model) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(&(&row.name, &row.id)).unwrap_or_default())
}

fn decode_cursor(cursor: &str) -> Result<(String, String), Error> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| coded(code::INVALID_CURSOR, "invalid cursor"))
}

/// One page of domains.
#[derive(Debug)]
pub struct DomainConnection {
    rows: Vec<domain::Model>,
    has_next_page: bool,
    has_previous_page: bool,
    filter: DomainFilter,
}

/// An edge.
#[derive(Debug, SimpleObject)]
pub struct DomainEdge {
    /// Opaque cursor of this edge.
    pub cursor: String,
    /// The domain.
    pub node: Domain,
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
    /// Whether edges precede (true when `after` was given).
    pub has_previous_page: bool,
}

impl DomainConnection {
    /// Loads the page after `after` (ordered by name, then id) of at most `first` rows.
    pub async fn load(
        db: &DatabaseConnection,
        filter: DomainFilter,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Self, Error> {
        let first = match first {
            None => DEFAULT_PAGE_SIZE,
            Some(n) if n < 0 => {
                return Err(coded(code::INVALID_ARGUMENT, "first must not be negative"));
            }
            Some(n) if n as u64 > MAX_PAGE_SIZE => {
                return Err(coded(
                    code::INVALID_ARGUMENT,
                    format!("first must be at most {MAX_PAGE_SIZE}"),
                ));
            }
            Some(n) => n as u64,
        };
        let mut query = domain::Entity::find().filter(filter.condition());
        if let Some(cursor) = &after {
            let (name, id) = decode_cursor(cursor)?;
            query = query.filter(Condition::any().add(domain::Column::Name.gt(name.clone())).add(
                Condition::all().add(domain::Column::Name.eq(name)).add(domain::Column::Id.gt(id)),
            ));
        }
        let mut rows = query
            .order_by_asc(domain::Column::Name)
            .order_by_asc(domain::Column::Id)
            .limit(first + 1)
            .all(db)
            .await
            .map_err(internal)?;
        let has_next_page = rows.len() as u64 > first;
        rows.truncate(first as usize);
        Ok(Self { rows, has_next_page, has_previous_page: after.is_some(), filter })
    }
}

#[Object]
impl DomainConnection {
    /// The edges of this page.
    async fn edges(&self) -> Vec<DomainEdge> {
        self.rows
            .iter()
            .map(|row| DomainEdge { cursor: encode_cursor(row), node: Domain(row.clone()) })
            .collect()
    }

    /// Page info.
    async fn page_info(&self) -> PageInfo {
        PageInfo {
            start_cursor: self.rows.first().map(encode_cursor),
            end_cursor: self.rows.last().map(encode_cursor),
            has_next_page: self.has_next_page,
            has_previous_page: self.has_previous_page,
        }
    }

    /// Number of domains matching the filter (all pages).
    async fn total_count(&self, ctx: &Context<'_>) -> Result<u64, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        domain::Entity::find().filter(self.filter.condition()).count(db).await.map_err(internal)
    }
}
