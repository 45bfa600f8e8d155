//! [`Sql`]: a statement's text with its bound values, written once for both engines, and
//! [`Env`]: the engine and the indexed namespace the subgraph's entities live in, with the
//! SQL fragments whose spelling differs between SQLite and PostgreSQL.
//!
//! Fragments are built around table aliases the caller chooses (`t0`, `t1`, ... for the
//! entities a query reaches), so one entity's definition serves a top-level listing, a nested
//! filter (`EXISTS` over the same definition) and a nested ordering alike.

use sea_orm::{DbBackend, Statement, Value};

/// Statement text with `?`-free placeholders already numbered for the engine, and the values
/// they stand for.
#[derive(Clone, Debug)]
pub struct Sql {
    backend: DbBackend,
    text: String,
    values: Vec<Value>,
}

impl Sql {
    /// An empty statement for `backend`.
    pub fn new(backend: DbBackend) -> Self {
        Self { backend, text: String::new(), values: Vec::new() }
    }

    /// The engine it is written for.
    pub fn backend(&self) -> DbBackend {
        self.backend
    }

    /// Appends literal SQL.
    pub fn push(&mut self, text: &str) -> &mut Self {
        self.text.push_str(text);
        self
    }

    /// Appends a placeholder for `value`.
    pub fn bind(&mut self, value: impl Into<Value>) -> &mut Self {
        self.values.push(value.into());
        match self.backend {
            DbBackend::Postgres => {
                self.text.push('$');
                self.text.push_str(&self.values.len().to_string());
            }
            _ => self.text.push('?'),
        }
        self
    }

    /// Appends `other` (built for the same engine), renumbering its placeholders.
    pub fn append(&mut self, other: Sql) -> &mut Self {
        if self.backend != DbBackend::Postgres {
            self.text.push_str(&other.text);
            self.values.extend(other.values);
            return self;
        }
        let offset = self.values.len();
        let mut chars = other.text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' || !chars.peek().is_some_and(char::is_ascii_digit) {
                self.text.push(c);
                continue;
            }
            let mut digits = String::new();
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                digits.push(d);
                chars.next();
            }
            let n: usize = digits.parse().unwrap_or(0);
            self.text.push('$');
            self.text.push_str(&(n + offset).to_string());
        }
        self.values.extend(other.values);
        self
    }

    /// The statement.
    pub fn statement(self) -> Statement {
        Statement::from_sql_and_values(self.backend, self.text, self.values)
    }
}

/// The engine and the namespace: which chain's registry the subgraph's entities are read from.
#[derive(Clone, Debug)]
pub struct Env {
    /// The engine the SQL is for.
    pub backend: DbBackend,
    /// Chain of the registry.
    pub chain_id: i64,
    /// The registry's address.
    pub registry: [u8; 20],
    /// The registry it replaced, whose events count only for names not yet in the registry.
    pub old_registry: Option<[u8; 20]>,
    /// Node of the name whose subnames the base registrar registers (`eth`).
    pub registrar_node: [u8; 32],
    /// See [`super::SubgraphScope::common_set_rows`].
    pub common_set_rows: u64,
}

impl Env {
    /// A byte string literal.
    pub fn bytes(&self, bytes: &[u8]) -> String {
        match self.backend {
            DbBackend::Postgres => format!("'\\x{}'::bytea", hex::encode(bytes)),
            _ => format!("X'{}'", hex::encode(bytes)),
        }
    }

    /// `expr` (bytes) as lowercase `0x` hex text; null stays null.
    pub fn hex_text(&self, expr: &str) -> String {
        match self.backend {
            DbBackend::Postgres => format!("('0x' || encode({expr}, 'hex'))"),
            // SQLite's `hex(NULL)` is the empty string, not null.
            _ => {
                format!("(CASE WHEN {expr} IS NULL THEN NULL ELSE '0x' || lower(hex({expr})) END)")
            }
        }
    }

    /// `expr` (an integer) as decimal text.
    pub fn int_text(&self, expr: &str) -> String {
        match self.backend {
            DbBackend::Postgres => format!("(({expr})::text)"),
            _ => format!("(CAST({expr} AS TEXT))"),
        }
    }

    /// The concatenation of byte strings.
    pub fn concat_bytes(&self, parts: &[&str]) -> String {
        match self.backend {
            DbBackend::Postgres => format!("({})", parts.join(" || ")),
            _ => {
                let hexes: Vec<String> = parts.iter().map(|p| format!("hex({p})")).collect();
                format!("unhex({})", hexes.join(" || "))
            }
        }
    }

    /// The 4-byte big-endian form of an integer expression (the index part of row keys).
    pub fn index_bytes(&self, expr: &str) -> String {
        match self.backend {
            DbBackend::Postgres => format!("int4send(({expr})::int4)"),
            _ => format!("unhex(printf('%08X', {expr}))"),
        }
    }

    /// Text compared and ordered by bytes on both engines.
    pub fn collated(&self, expr: &str) -> String {
        match self.backend {
            DbBackend::Postgres => format!("(({expr}) COLLATE \"C\")"),
            _ => format!("({expr})"),
        }
    }

    /// Whether `needle` occurs in `haystack` (text or bytes), exactly.
    pub fn contains(&self, haystack: &str, needle: &str) -> String {
        match self.backend {
            DbBackend::Postgres => format!("(position({needle} in {haystack}) > 0)"),
            _ => format!("(instr({haystack}, {needle}) > 0)"),
        }
    }

    /// The first 4 bytes of every key of this chain (the chain id, big-endian).
    pub fn chain_prefix(&self) -> [u8; 4] {
        u32::try_from(self.chain_id).unwrap_or(u32::MAX).to_be_bytes()
    }

    /// The key of a domain of the registry by its node expression.
    pub fn domain_key(&self, node: &[u8; 32]) -> Vec<u8> {
        let mut key = self.chain_prefix().to_vec();
        key.extend_from_slice(&self.registry);
        key.extend_from_slice(node);
        key
    }

    /// Key of the latest registration of the domain row `alias`.
    pub fn latest_registration_key(&self, alias: &str) -> String {
        let index = self.index_bytes(&format!("{alias}.registration_count - 1"));
        self.concat_bytes(&[&format!("{alias}.id"), &index])
    }

    /// Key of the records the domain row `alias`'s resolver holds for its node.
    pub fn records_key(&self, alias: &str) -> String {
        self.concat_bytes(&[
            &format!("substr({alias}.id, 1, 4)"),
            &format!("{alias}.resolver"),
            &format!("substr({alias}.id, 25)"),
        ])
    }

    /// The address word of an account column: the zero address where none is stored.
    pub fn account_or_zero(&self, expr: &str) -> String {
        format!("COALESCE({}, '{ZERO_ADDRESS}')", self.hex_text(expr))
    }
}

/// The zero address as the subgraph names its account.
pub const ZERO_ADDRESS: &str = "0x0000000000000000000000000000000000000000";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_placeholders_are_renumbered_on_postgres() {
        let mut outer = Sql::new(DbBackend::Postgres);
        outer.push("a = ").bind(1i64).push(" AND ");
        let mut inner = Sql::new(DbBackend::Postgres);
        inner.push("b = ").bind(2i64).push(" AND c = ").bind(3i64);
        outer.append(inner);
        let statement = outer.statement();
        assert_eq!(statement.sql, "a = $1 AND b = $2 AND c = $3");
        assert_eq!(statement.values.map(|v| v.0.len()), Some(3));
    }

    #[test]
    fn sqlite_placeholders_stay_positional() {
        let mut outer = Sql::new(DbBackend::Sqlite);
        outer.push("a = ").bind(1i64);
        let mut inner = Sql::new(DbBackend::Sqlite);
        inner.push(" AND b = ").bind(2i64);
        outer.append(inner);
        assert_eq!(outer.statement().sql, "a = ? AND b = ?");
    }
}
