//! `where`: The Graph's filter objects compiled to SQL over an entity's view
//! ([`super::model`]).
//!
//! A key is a field name, optionally followed by an operator suffix: none (equals), `_not`,
//! `_gt`, `_lt`, `_gte`, `_lte`, `_in`, `_not_in`; for text, references and bytes also
//! `_contains` and `_not_contains`; for text and references `_starts_with`, `_ends_with`,
//! their `_not_` forms, and `_nocase` after any of the text operators. `field_` filters the
//! entity a reference points at, or the entities of a list (rows with at least one match);
//! `and` and `or` combine filter objects. A `null` value means "is null" for equality and
//! "is not null" for `_not`; the negated operators also match rows where the field is null,
//! as The Graph's do.

use async_graphql::{Name, Value};
use entities::search_text;
use sea_orm::DbBackend;

use super::{
    model::{Enc, Entity, Field, Kind, entity},
    sql::{Env, Sql},
};

/// Most values one `_in` list may hold.
pub const MAX_IN_ITEMS: usize = 1_000;
/// Most filter conditions one `where` may hold, nested ones included.
pub const MAX_CONDITIONS: usize = 256;

/// Why a filter cannot be compiled (answered as `INVALID_ARGUMENT`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(pub String);

/// Compiles `where` objects, numbering the aliases of the subqueries it writes.
#[derive(Debug)]
pub struct Compiler<'a> {
    env: &'a Env,
    aliases: usize,
    conditions: usize,
    /// The index sets an `or` read its rows from, so that the caller can count them.
    pub sets: Vec<Sql>,
    /// Whether an `or` whose arms have index sets is tested row by row instead (each arm
    /// without its index), for a walk of the order's index: the caller found a set too
    /// large to read and sort.
    pub walk: bool,
    /// Inside such an `or`, compiling its arms.
    unindexed: bool,
}

/// An operator suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Not,
    Gt,
    Lt,
    Gte,
    Lte,
    In,
    NotIn,
    Contains,
    StartsWith,
    EndsWith,
}

impl<'a> Compiler<'a> {
    /// A compiler whose aliases start after `first_alias`.
    pub fn new(env: &'a Env, first_alias: usize) -> Self {
        Self {
            env,
            aliases: first_alias,
            conditions: 0,
            sets: Vec::new(),
            walk: false,
            unindexed: false,
        }
    }

    /// A fresh alias for a subquery.
    pub fn alias(&mut self) -> String {
        self.aliases += 1;
        format!("t{}", self.aliases)
    }

    /// The condition `filter` (an object) puts on the rows of `entity` aliased `alias`.
    pub fn compile(
        &mut self,
        entity: &'static Entity,
        alias: &str,
        filter: &Value,
    ) -> Result<Sql, FilterError> {
        let mut sql = Sql::new(self.env.backend);
        sql.push("(1 = 1");
        let Value::Object(fields) = filter else {
            return Err(FilterError("a filter must be an object".into()));
        };
        for (key, value) in fields {
            self.conditions += 1;
            if self.conditions > MAX_CONDITIONS {
                return Err(FilterError(format!(
                    "the filter has more than {MAX_CONDITIONS} conditions"
                )));
            }
            sql.push(" AND ");
            sql.append(self.condition(entity, alias, key, value)?);
        }
        sql.push(")");
        Ok(sql)
    }

    fn condition(
        &mut self,
        entity: &'static Entity,
        alias: &str,
        key: &Name,
        value: &Value,
    ) -> Result<Sql, FilterError> {
        let key = key.as_str();
        if key == "and" || key == "or" {
            return self.combine(entity, alias, key, value);
        }
        let (field, suffix) = split_key(entity, key)
            .ok_or_else(|| FilterError(format!("{} has no filter {key}", entity.name)))?;
        if suffix == "_" {
            return self.nested(entity, alias, field, value);
        }
        let (op, nocase) = parse_op(suffix)
            .ok_or_else(|| FilterError(format!("{} has no filter {key}", entity.name)))?;
        let enc = match field.kind {
            Kind::Scalar(_, enc, _) => enc,
            Kind::Ref(target, _) => entity_or_err(target)?.id_enc(),
            _ => {
                return Err(FilterError(format!(
                    "{}.{} cannot be filtered",
                    entity.name, field.name
                )));
            }
        };
        if !nocase && let Some(sql) = self.indexed(entity, field, alias, op, value) {
            let negated = matches!(op, Op::Not) || suffix.starts_with("_not_");
            if !negated {
                return Ok(sql);
            }
            let mut out = Sql::new(self.env.backend);
            out.push("NOT COALESCE((").append(sql).push("), FALSE)");
            return Ok(out);
        }
        let mut expr = field.sql(self.env, alias).unwrap_or_default();
        if enc == Enc::Text {
            expr = self.env.collated(&expr);
        }
        if nocase {
            expr = format!("lower({expr})");
        }
        let negated = matches!(op, Op::Not | Op::NotIn) || suffix.starts_with("_not_");
        let mut positive = Sql::new(self.env.backend);
        match (op, value) {
            (Op::Eq, Value::Null) => {
                positive.push(&format!("{expr} IS NULL"));
                return Ok(positive);
            }
            (Op::Not, Value::Null) => {
                positive.push(&format!("{expr} IS NOT NULL"));
                return Ok(positive);
            }
            (_, Value::Null) => {
                positive.push("1 = 1");
                return Ok(positive);
            }
            (Op::Eq | Op::Not, v) => {
                positive.push(&format!("{expr} = "));
                bind(&mut positive, enc, v, nocase)?;
            }
            (Op::Gt | Op::Lt | Op::Gte | Op::Lte, v) => {
                let sign = match op {
                    Op::Gt => ">",
                    Op::Lt => "<",
                    Op::Gte => ">=",
                    _ => "<=",
                };
                positive.push(&format!("{expr} {sign} "));
                bind(&mut positive, enc, v, nocase)?;
            }
            (Op::In | Op::NotIn, Value::List(items)) => {
                if items.len() > MAX_IN_ITEMS {
                    return Err(FilterError(format!(
                        "{key} lists {} values; at most {MAX_IN_ITEMS} are allowed",
                        items.len()
                    )));
                }
                let items: Vec<&Value> = items.iter().filter(|v| **v != Value::Null).collect();
                if items.is_empty() {
                    positive.push("1 = 0");
                } else {
                    positive.push(&format!("{expr} IN ("));
                    for (i, item) in items.into_iter().enumerate() {
                        if i > 0 {
                            positive.push(", ");
                        }
                        bind(&mut positive, enc, item, nocase)?;
                    }
                    positive.push(")");
                }
            }
            (Op::In | Op::NotIn, _) => return Err(FilterError(format!("{key} takes a list"))),
            (Op::Contains, v) => {
                let mut needle = Sql::new(self.env.backend);
                bind(&mut needle, enc, v, nocase)?;
                let text = self.env.contains(&expr, "\u{1}");
                let (before, after) = text.split_once('\u{1}').unwrap_or((&text, ""));
                positive.push(before).append(needle).push(after);
            }
            (Op::StartsWith, v) => {
                positive.push(&format!("substr({expr}, 1, length("));
                bind(&mut positive, enc, v, nocase)?;
                positive.push(")) = ");
                bind(&mut positive, enc, v, nocase)?;
            }
            (Op::EndsWith, v) => {
                positive.push(&format!("length({expr}) >= length("));
                bind(&mut positive, enc, v, nocase)?;
                positive.push(&format!(") AND substr({expr}, length({expr}) - length("));
                bind(&mut positive, enc, v, nocase)?;
                positive.push(") + 1) = ");
                bind(&mut positive, enc, v, nocase)?;
            }
        }
        if !negated {
            return Ok(positive);
        }
        let mut sql = Sql::new(self.env.backend);
        sql.push("NOT COALESCE((").append(positive).push("), FALSE)");
        Ok(sql)
    }

    /// The same condition written so that an index serves it, where the stored column allows:
    /// a domain's name (its name indexes, and on `contains` the trigram index of each
    /// engine) and the owners a domain row stores as bytes. `None`: the generic form.
    fn indexed(
        &self,
        entity: &Entity,
        field: &Field,
        alias: &str,
        op: Op,
        value: &Value,
    ) -> Option<Sql> {
        let Value::String(text) = value else { return None };
        let backend = self.env.backend;
        let mut sql = Sql::new(backend);
        match (entity.name, field.name, op) {
            ("Domain", "name", Op::Eq | Op::Not) => {
                sql.push(&format!("{alias}.name = ")).bind(text.clone());
            }
            ("Domain", "name", Op::StartsWith) => {
                name_prefix(&mut sql, alias, text);
            }
            ("Domain", "labelName", Op::StartsWith)
                if !text.contains('.') && !text.starts_with('[') =>
            {
                // A name's first label is its label when that is known and normalized, and
                // `[labelhash]` otherwise (no normalized label holds a dot or starts with a
                // bracket). So for such a text, the label starts with it exactly when the name
                // does, and the name index finds them without reading a label.
                name_prefix(&mut sql, alias, text);
            }
            // A text the names' search texts answer for; any other is tested against each name
            // by the generic form.
            ("Domain", "name", Op::Contains)
                if text.chars().count() >= 3 && search_text::is_searchable(text) =>
            {
                if backend == DbBackend::Postgres {
                    let pattern = format!("%{}%", crate::domain_filter::escape_like(text));
                    let searched = search_text::postgres(&format!("{alias}.name"));
                    sql.push(&format!("{searched} LIKE ")).bind(pattern).push(" ESCAPE '\\'");
                } else {
                    sql.push(&format!(
                        "{alias}.rowid IN (SELECT rowid FROM domains_name_fts WHERE domains_name_fts MATCH "
                    ))
                    .bind(crate::domain_filter::trigram_query(text))
                    .push(&format!(") AND instr({alias}.name, "))
                    .bind(text.clone())
                    .push(") > 0");
                }
            }
            ("Domain", "resolvedAddress", Op::Eq | Op::Not) => {
                // The names whose records hold the address, found through the address index
                // once for the query; each candidate's own resolver must be the one.
                // In a walked `or`, SQLite must not start from the set (see the owners below).
                let unindexed =
                    if self.unindexed && backend == DbBackend::Sqlite { "+" } else { "" };
                sql.push(&format!("({unindexed}{alias}.id IN ("))
                    .append(resolved_address_set(self.env, text))
                    .push(") AND ")
                    .push(&field.sql(self.env, alias)?)
                    .push(" = ")
                    .bind(text.clone())
                    .push(")");
            }
            ("Domain", "owner" | "registrant" | "wrappedOwner", Op::Eq | Op::Not) => {
                let column = owner_column(field.name);
                let bytes = address_bytes(text)?;
                // Arms of an `or` that is walked are kept off their index (SQLite would
                // otherwise read the arms' indexes and sort, the plan the walk replaces).
                let target = match (self.unindexed, backend) {
                    (false, _) => format!("{alias}.{column}"),
                    (true, DbBackend::Postgres) => format!("({alias}.{column} || ''::bytea)"),
                    (true, _) => format!("+{alias}.{column}"),
                };
                if bytes.iter().all(|b| *b == 0) && field.name == "owner" {
                    // The registry owner is stored as null for the zero address.
                    sql.push(&format!("({target} IS NULL OR {target} = ")).bind(bytes).push(")");
                } else {
                    sql.push(&format!("{target} = ")).bind(bytes);
                }
            }
            _ => return None,
        }
        Some(sql)
    }

    fn combine(
        &mut self,
        entity: &'static Entity,
        alias: &str,
        key: &str,
        value: &Value,
    ) -> Result<Sql, FilterError> {
        let Value::List(items) = value else {
            return Err(FilterError(format!("{key} takes a list of filters")));
        };
        let items: Vec<&Value> = items.iter().filter(|v| **v != Value::Null).collect();
        let mut sql = Sql::new(self.env.backend);
        if items.is_empty() {
            sql.push("1 = 1");
            return Ok(sql);
        }
        let joiner = if key == "and" { " AND " } else { " OR " };
        // Every arm of an `or` may be met only by rows of a set an index gives. Then the rows
        // come from those sets and the arms are still checked on each: an `or` of conditions
        // on different columns would otherwise read every row on PostgreSQL, and on SQLite
        // whenever its planner prefers the order's index. When walking, the sets are only
        // recorded (for the caller to count) and the arms are kept off their indexes.
        let sets = (key == "or")
            .then(|| {
                items.iter().map(|item| self.candidates(entity, item)).collect::<Option<Vec<_>>>()
            })
            .flatten();
        let from_sets = sets.map(|sets| {
            self.sets.extend(sets.iter().cloned());
            union_all(self.env.backend, sets)
        });
        let outer = self.unindexed;
        self.unindexed = outer || (self.walk && from_sets.is_some());
        let mut arms = Sql::new(self.env.backend);
        arms.push("(");
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                arms.push(joiner);
            }
            arms.append(self.compile(entity, alias, item)?);
        }
        arms.push(")");
        self.unindexed = outer;
        let Some(union) = from_sets.filter(|_| !self.walk) else { return Ok(arms) };
        sql.push(&format!("({alias}.id IN (")).append(union).push(") AND ").append(arms).push(")");
        Ok(sql)
    }

    /// The stored ids (`domains.id`) of a set of domains that holds every domain `filter`
    /// matches, read through an index, if the filter has a condition that gives one: an
    /// owner, registrant or wrapped owner (not the zero address, which stands for none), or
    /// a resolved address. An `and` needs one such condition, an `or` one in every arm.
    fn candidates(&self, entity: &Entity, filter: &Value) -> Option<Sql> {
        let Value::Object(fields) = filter else { return None };
        if entity.name != "Domain" {
            return None;
        }
        let env = self.env;
        fields.iter().find_map(|(key, value)| match (key.as_str(), value) {
            ("and", Value::List(items)) => {
                items.iter().find_map(|item| self.candidates(entity, item))
            }
            ("or", Value::List(items)) if !items.is_empty() => {
                let sets = items
                    .iter()
                    .map(|item| self.candidates(entity, item))
                    .collect::<Option<Vec<_>>>()?;
                Some(union_all(env.backend, sets))
            }
            (field @ ("owner" | "registrant" | "wrappedOwner"), Value::String(text)) => {
                let bytes = address_bytes(text).filter(|b| b.iter().any(|b| *b != 0))?;
                let column = owner_column(field);
                let mut sql = Sql::new(env.backend);
                sql.push(&format!("SELECT c.id FROM domains c WHERE c.{column} = ")).bind(bytes);
                Some(sql)
            }
            ("resolvedAddress", Value::String(text)) => Some(resolved_address_set(env, text)),
            _ => None,
        })
    }

    /// `field_: {...}`: the referenced entity, or some entity of the list, matches.
    fn nested(
        &mut self,
        entity: &'static Entity,
        alias: &str,
        field: &Field,
        value: &Value,
    ) -> Result<Sql, FilterError> {
        let mut sql = Sql::new(self.env.backend);
        if *value == Value::Null {
            sql.push("1 = 1");
            return Ok(sql);
        }
        let (target, link) = match field.kind {
            Kind::Ref(target, _) => {
                let target = entity_or_err(target)?;
                let inner = self.alias();
                let link = format!(
                    "{} = {}",
                    target.id_sql(self.env, &inner),
                    field.sql(self.env, alias).unwrap_or_default()
                );
                (target, (inner, link))
            }
            Kind::List(target, child, parent) => {
                let target = entity_or_err(target)?;
                let inner = self.alias();
                let parent_sql = entity
                    .field(parent)
                    .and_then(|(_, f)| f.sql(self.env, alias))
                    .unwrap_or_default();
                let link = format!("{} = {parent_sql}", child(self.env, &inner));
                (target, (inner, link))
            }
            _ => {
                return Err(FilterError(format!(
                    "{}.{} has no nested filter",
                    entity.name, field.name
                )));
            }
        };
        let (inner, link) = link;
        let condition = self.compile(target, &inner, value)?;
        sql.push(&format!(
            "EXISTS (SELECT 1 FROM {} WHERE {} AND {link} AND ",
            (target.from)(self.env, &inner),
            (target.scope)(self.env, &inner),
        ));
        sql.append(condition).push(")");
        Ok(sql)
    }
}

fn entity_or_err(name: &str) -> Result<&'static Entity, FilterError> {
    entity(name).ok_or_else(|| FilterError(format!("unknown entity {name}")))
}

/// The field a filter key names and the rest of the key (`""`, `"_"` or an operator suffix).
/// The longest field name that the key starts with wins, so `name_not` is `name` with `_not`.
fn split_key<'k>(entity: &'static Entity, key: &'k str) -> Option<(&'static Field, &'k str)> {
    entity
        .fields
        .iter()
        .filter(|f| f.filterable)
        .filter_map(|f| {
            let rest = key.strip_prefix(f.name)?;
            (rest.is_empty() || rest.starts_with('_')).then_some((f, rest))
        })
        .max_by_key(|(f, _)| f.name.len())
}

fn parse_op(suffix: &str) -> Option<(Op, bool)> {
    let (suffix, nocase) = match suffix.strip_suffix("_nocase") {
        Some(rest) => (rest, true),
        None => (suffix, false),
    };
    let op = match suffix {
        "" => Op::Eq,
        "_not" => Op::Not,
        "_gt" => Op::Gt,
        "_lt" => Op::Lt,
        "_gte" => Op::Gte,
        "_lte" => Op::Lte,
        "_in" => Op::In,
        "_not_in" => Op::NotIn,
        "_contains" | "_not_contains" => Op::Contains,
        "_starts_with" | "_not_starts_with" => Op::StartsWith,
        "_ends_with" | "_not_ends_with" => Op::EndsWith,
        _ => return None,
    };
    let text_op = matches!(op, Op::Contains | Op::StartsWith | Op::EndsWith);
    (!nocase || text_op).then_some((op, nocase))
}

/// Binds a filter value as the column stores it.
fn bind(sql: &mut Sql, enc: Enc, value: &Value, nocase: bool) -> Result<(), FilterError> {
    match (enc, value) {
        (Enc::Blob, Value::String(text)) => {
            let digits = text.strip_prefix("0x").unwrap_or(text);
            let bytes = hex::decode(digits)
                .map_err(|_| FilterError(format!("{text:?} is not 0x-prefixed hex")))?;
            sql.bind(bytes);
        }
        (Enc::Text, Value::String(text)) => {
            sql.bind(if nocase { text.to_lowercase() } else { text.clone() });
        }
        (Enc::Int, Value::Number(n)) => {
            let n = n.as_i64().ok_or_else(|| FilterError(format!("{n} is not an integer")))?;
            sql.bind(n);
        }
        (Enc::Int, Value::String(text)) => {
            let n: i64 = text
                .parse()
                .map_err(|_| FilterError(format!("{text:?} is not an integer this index holds")))?;
            sql.bind(n);
        }
        (Enc::Bool, Value::Boolean(b)) => {
            sql.bind(*b);
        }
        (_, other) => return Err(FilterError(format!("{other} is not a value of this field"))),
    }
    Ok(())
}

/// The domain column a subgraph owner field is stored in.
fn owner_column(field: &str) -> &'static str {
    match field {
        "owner" => "registry_owner",
        "registrant" => "token_owner",
        _ => "wrapped_owner",
    }
}

/// The 20 bytes of a `0x` address, if `text` is one.
fn address_bytes(text: &str) -> Option<Vec<u8>> {
    hex::decode(text.strip_prefix("0x")?).ok().filter(|b| b.len() == 20)
}

/// The stored ids of the domains whose ETH address record is `address`, through the address
/// index (the record key with the registry in place of the resolver is the domain's key).
fn resolved_address_set(env: &Env, address: &str) -> Sql {
    let key = env.concat_bytes(&[
        "substr(x.record_id, 1, 4)",
        &env.bytes(&env.registry),
        "substr(x.record_id, 25)",
    ]);
    let mut sql = Sql::new(env.backend);
    sql.push(&format!("SELECT {key} FROM resolver_addresses x WHERE x.address = "))
        .bind(address.to_owned())
        .push(" AND x.coin_type = 60");
    sql
}

/// `sets` joined by `UNION ALL`.
fn union_all(backend: DbBackend, sets: Vec<Sql>) -> Sql {
    let mut sql = Sql::new(backend);
    for (i, set) in sets.into_iter().enumerate() {
        if i > 0 {
            sql.push(" UNION ALL ");
        }
        sql.append(set);
    }
    sql
}

/// `name` of row `alias` starts with `text`, written so that the name index serves it: on
/// PostgreSQL through the index's key (the first 256 characters, see `name_key`), on SQLite as
/// a range of the column. LIKE then checks the whole name.
fn name_prefix(sql: &mut Sql, alias: &str, text: &str) {
    let pattern = format!("{}%", crate::domain_filter::escape_like(text));
    if sql.backend() == DbBackend::Postgres {
        let key: String = text.chars().take(crate::name_key::KEY_CHARS).collect();
        let key_pattern = format!("{}%", crate::domain_filter::escape_like(&key));
        sql.push(&format!("substr({alias}.name, 1, 256) LIKE "))
            .bind(key_pattern)
            .push(" ESCAPE '\\' AND ");
    } else {
        sql.push(&format!("{alias}.name >= "))
            .bind(text.to_owned())
            .push(&format!(" AND {alias}.name < "))
            .bind(format!("{text}\u{10FFFF}"))
            .push(" AND ");
    }
    sql.push(&format!("{alias}.name LIKE ")).bind(pattern).push(" ESCAPE '\\'");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subgraph::model::entity;

    #[test]
    fn keys_split_at_the_longest_field_name() {
        let domain = entity("Domain").expect("Domain");
        let (f, rest) = split_key(domain, "labelName_not_contains_nocase").expect("known");
        assert_eq!((f.name, rest), ("labelName", "_not_contains_nocase"));
        let (f, rest) = split_key(domain, "labelhash_in").expect("known");
        assert_eq!((f.name, rest), ("labelhash", "_in"));
        let (f, rest) = split_key(domain, "parent_").expect("known");
        assert_eq!((f.name, rest), ("parent", "_"));
        assert!(split_key(domain, "nope").is_none());
        assert_eq!(parse_op("_not_starts_with_nocase"), Some((Op::StartsWith, true)));
        assert_eq!(parse_op("_gt_nocase"), None);
    }
}
