//! [`DomainFilter`]: which domains a listing holds, and the SQL condition that selects them on
//! each engine (name searches through the name indexes and the trigram indexes).

use entities::domain::{self, RawAddress};
use entities::{domain_key::DomainKey, search_text};
use sea_orm::{
    ColumnTrait, Condition, DbBackend,
    sea_query::{Expr, ExprTrait, LikeExpr, SimpleExpr},
};

use crate::{
    connection::{DomainsOrderBy, DomainsOrderInput, OrderDirection},
    name_key,
};

/// Which domains a connection lists.
#[derive(Clone, Debug)]
pub enum DomainFilter {
    /// Children of the domain with this creation number (`seq`).
    Parent(i64),
    /// Domains whose effective owner is this address.
    Owner(RawAddress),
    /// Exact canonical name.
    NameEq(String),
    /// Any of these names.
    NameIn(Vec<String>),
    /// Names starting with this prefix.
    NameStartsWith(String),
    /// Names starting with this prefix, found by walking the ordering's index and testing
    /// each name (see [`crate::connection::DomainConnection::load`]); the same rows as
    /// `NameStartsWith`.
    NameStartsWithScan(String),
    /// Names containing this text (at least three characters).
    NameContains(String),
    /// Names containing this text, found by walking the ordering's index and testing each
    /// name (see [`crate::connection::DomainConnection::load`]); the same rows as
    /// `NameContains`.
    NameContainsScan(String),
    /// Both filters.
    And(Box<DomainFilter>, Box<DomainFilter>),
    /// Nothing at all.
    Nothing,
    /// The one domain with this id.
    Id(DomainKey),
    /// Domains whose link is one of these (the canonical links, `crate::namegraph`).
    Links(Vec<i64>),
    /// Domains whose link is none of these (the non-canonical domains).
    NotLinks(Vec<i64>),
    /// Top-level domains of one registry.
    TopLevel {
        /// The key of the registry's zero node: the lowest key of its domains.
        registry: DomainKey,
    },
}

impl DomainFilter {
    /// The domain with the Omnigraph id `id`; nothing when `id` is not a domain id (a virtual
    /// registry's id names its domain, but a caller may pass any text).
    pub fn id(id: &str) -> Self {
        id.parse().map_or(Self::Nothing, Self::Id)
    }

    /// The domains `owner` owns; nothing when `owner` is not an address.
    pub fn owner(owner: &str) -> Self {
        owner.parse().map_or(Self::Nothing, Self::Owner)
    }

    /// The top-level domains of the registry at `registry` on `chain_id`; nothing when
    /// `registry` is not an address.
    pub fn top_level(chain_id: i64, registry: &str) -> Self {
        let chain = u64::try_from(chain_id).ok().filter(|c| DomainKey::holds_chain(*c));
        match (chain, registry.parse::<RawAddress>()) {
            (Some(chain), Ok(address)) => match address.as_bytes().try_into() {
                Ok(address) => {
                    Self::TopLevel { registry: DomainKey::new(chain, address, &[0; 32]) }
                }
                Err(_) => Self::Nothing,
            },
            _ => Self::Nothing,
        }
    }

    pub(crate) fn condition(&self, backend: DbBackend) -> Condition {
        match self {
            Self::Parent(seq) => Condition::all().add(domain::Column::ParentSeq.eq(*seq)),
            Self::Owner(owner) => Condition::all().add(domain::Column::Owner.eq(owner.clone())),
            Self::NameEq(name) => name_key::eq(backend, name),
            Self::NameIn(names) => name_key::is_in(backend, names),
            // The registry is the middle of the id: its domains are one key range.
            Self::TopLevel { registry } => Condition::all()
                .add(domain::Column::ParentSeq.is_null())
                .add(domain::Column::Id.between(registry.clone(), registry.with_node(&[0xff; 32]))),
            // Read through the name index's slice of the prefix (see `name_key`).
            Self::NameStartsWith(prefix) => name_key::starts_with(backend, prefix),
            Self::NameStartsWithScan(prefix) => Condition::all().add(
                domain::Column::Name
                    .like(LikeExpr::new(format!("{}%", escape_like(prefix))).escape('\\')),
            ),
            Self::NameContains(text) => Condition::all().add(contains(text, backend)),
            Self::NameContainsScan(text) => Condition::all().add(contains_scanned(text, backend)),
            Self::And(a, b) => Condition::all().add(a.condition(backend)).add(b.condition(backend)),
            // `id IS NULL` never holds: the primary key is NOT NULL.
            Self::Nothing => Condition::all().add(domain::Column::Id.is_null()),
            Self::Id(id) => Condition::all().add(domain::Column::Id.eq(id.clone())),
            Self::Links(links) => {
                Condition::all().add(domain::Column::Link.is_in(links.iter().copied()))
            }
            Self::NotLinks(links) => Condition::any()
                .add(domain::Column::Link.is_null())
                .add(domain::Column::Link.is_not_in(links.iter().copied())),
        }
    }

    /// The prefix of a `starts_with` search in this filter, if any.
    pub(crate) fn prefix(&self) -> Option<&str> {
        match self {
            Self::NameStartsWith(prefix) => Some(prefix),
            Self::And(a, b) => a.prefix().or_else(|| b.prefix()),
            _ => None,
        }
    }

    /// The text of a `contains` search in this filter, if any.
    pub(crate) fn contained(&self) -> Option<&str> {
        match self {
            Self::NameContains(text) => Some(text),
            Self::And(a, b) => a.contained().or_else(|| b.contained()),
            _ => None,
        }
    }

    /// The same filter with its `contains` search done by [`Self::NameContainsScan`].
    pub(crate) fn scanning_contains(&self) -> Self {
        self.replacing(&|leaf| match leaf {
            Self::NameContains(text) => Some(Self::NameContainsScan(text.clone())),
            _ => None,
        })
    }

    /// The same filter with its prefix search done by [`Self::NameStartsWithScan`].
    pub(crate) fn scanning_prefix(&self) -> Self {
        self.replacing(&|leaf| match leaf {
            Self::NameStartsWith(prefix) => Some(Self::NameStartsWithScan(prefix.clone())),
            _ => None,
        })
    }

    /// The same filter with each part below its `And`s that `replace` answers for replaced.
    fn replacing(&self, replace: &impl Fn(&Self) -> Option<Self>) -> Self {
        match self {
            Self::And(a, b) => {
                Self::And(Box::new(a.replacing(replace)), Box::new(b.replacing(replace)))
            }
            leaf => replace(leaf).unwrap_or_else(|| leaf.clone()),
        }
    }

    /// The ordering used when the query gives none: by depth for prefix searches (so
    /// `vitalik.eth` comes before `vitalik.ethereum.foundation`), else by name.
    pub fn default_order(&self) -> DomainsOrderInput {
        let by = match self {
            Self::NameStartsWith(_) | Self::NameStartsWithScan(_) => DomainsOrderBy::Depth,
            Self::And(a, b) => return a.default_order().max_by_depth(b.default_order()),
            _ => DomainsOrderBy::Name,
        };
        DomainsOrderInput { by, dir: OrderDirection::Asc }
    }
}

/// `text` with the `LIKE` wildcards and the escape character escaped.
pub(crate) fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// Names containing `text`, through each engine's trigram index of the names' search texts
/// ([`search_text`]) when `text` is one the search text answers for, and by testing the names
/// themselves when it is not (a text of hex digits may lie inside a `[labelhash]`, which the
/// search text leaves out). PostgreSQL's `pg_trgm` GIN index serves `LIKE '%text%'` on the
/// search text's expression itself. On SQLite the FTS5 trigram table `domains_name_fts` (kept
/// in step with `domains` by the flushes that write names) keeps which search texts hold each
/// trigram but not where (`detail='none'`, a fraction of the size), so it answers only whether
/// a name holds every trigram of `text`: those rowids are candidates, and `instr` keeps the
/// names that hold `text` itself (the API lowercased it already). Trigrams are matched as
/// terms, not as a `LIKE` pattern, so a `%` or `_` in `text` is a character like any other and
/// never a wildcard that would make the trigram table scan every name.
fn contains(text: &str, backend: DbBackend) -> SimpleExpr {
    if !search_text::is_searchable(text) {
        return contains_scanned(text, backend);
    }
    match backend {
        DbBackend::Sqlite => Expr::cust_with_values(
            "domains.rowid IN (SELECT rowid FROM domains_name_fts WHERE domains_name_fts MATCH ?) \
             AND instr(domains.name, ?) > 0",
            [trigram_query(text), text.to_owned()],
        ),
        // Written out as the index's expression (custom SQL is copied as it is).
        _ => Expr::cust(search_text::postgres("\"domains\".\"name\""))
            .like(LikeExpr::new(format!("%{}%", escape_like(text))).escape('\\')),
    }
}

/// `contains` tested on each name the plan reads, without a trigram index: a walk of a name
/// index tests the names it holds (on PostgreSQL, the planner also reads every name this way
/// when `text` is not one the search text answers for).
fn contains_scanned(text: &str, backend: DbBackend) -> SimpleExpr {
    match backend {
        DbBackend::Sqlite => {
            Expr::cust_with_values("instr(domains.name, ?) > 0", [text.to_owned()])
        }
        _ => domain::Column::Name
            .like(LikeExpr::new(format!("%{}%", escape_like(text))).escape('\\')),
    }
}

/// The FTS5 query for names holding every trigram of `text` (at least three characters):
/// each distinct trigram a quoted term (double quotes doubled), joined by `AND`.
pub(crate) fn trigram_query(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut terms: Vec<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    terms.sort_unstable();
    terms.dedup();
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" AND ")
}

#[cfg(test)]
mod tests {
    use super::trigram_query;

    #[test]
    fn trigrams_are_distinct_quoted_terms() {
        assert_eq!(trigram_query("abcb"), r#""abc" AND "bcb""#);
        assert_eq!(trigram_query("aaaa"), r#""aaa""#);
        // Quotes are doubled; `%` and `_` are plain characters.
        assert_eq!(trigram_query(r#"a"%_"#), r#""""%_" AND "a""%""#);
        // Trigrams are of characters, not bytes.
        assert_eq!(trigram_query("né.eth").matches(" AND ").count(), 3);
    }
}
