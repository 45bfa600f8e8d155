//! References between entities: the rows a page's references point at, loaded by one query
//! per entity type ([`RefLoader`]), and the rows that need no query (an account is its
//! address; a resolver the index holds no records of is its address and node).

use std::{collections::HashMap, sync::Arc};

use async_graphql::dataloader::Loader;
use sea_orm::{DatabaseConnection, DbErr};

use super::{
    model::{Enc, entity},
    rows::{Cell, Row, by_ids},
    sql::Env,
};

/// An entity by id, as its id column stores it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefKey {
    /// Entity type.
    pub entity: &'static str,
    /// Stored id: bytes or text.
    pub id: RefId,
}

/// A stored id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RefId {
    /// Bytes.
    Blob(Vec<u8>),
    /// Text.
    Text(String),
}

impl RefId {
    /// The id of a cell, if it holds one.
    pub fn of(cell: &Cell) -> Option<Self> {
        match cell {
            Cell::Blob(b) => Some(RefId::Blob(b.clone())),
            Cell::Text(t) => Some(RefId::Text(t.clone())),
            _ => None,
        }
    }

    /// The id parsed from API text for an entity whose id is stored as `enc`; `None` when it
    /// cannot be one (it then names no row).
    pub fn parse(enc: Enc, text: &str) -> Option<Self> {
        match enc {
            Enc::Blob => {
                let digits = text.strip_prefix("0x")?;
                hex::decode(digits).ok().map(RefId::Blob)
            }
            _ => Some(RefId::Text(text.to_owned())),
        }
    }

    fn cell(&self) -> Cell {
        match self {
            RefId::Blob(b) => Cell::Blob(b.clone()),
            RefId::Text(t) => Cell::Text(t.clone()),
        }
    }
}

/// Rows by [`RefKey`]: one `IN` query per entity type of the batch.
#[derive(Debug)]
pub struct RefLoader {
    /// Where the rows are.
    pub db: DatabaseConnection,
    /// Engine and namespace.
    pub env: Env,
}

impl Loader<RefKey> for RefLoader {
    type Value = Row;
    type Error = Arc<DbErr>;

    async fn load(&self, keys: &[RefKey]) -> Result<HashMap<RefKey, Row>, Self::Error> {
        let mut by_entity: HashMap<&'static str, Vec<Cell>> = HashMap::new();
        for key in keys {
            by_entity.entry(key.entity).or_default().push(key.id.cell());
        }
        let mut out = HashMap::new();
        for (name, ids) in by_entity {
            let Some(target) = entity(name) else { continue };
            for row in by_ids(&self.db, &self.env, target, &ids).await.map_err(Arc::new)? {
                if let Some(id) = row.cells.first().and_then(RefId::of) {
                    out.insert(RefKey { entity: name, id }, row);
                }
            }
        }
        Ok(out)
    }
}

/// An account row: the address is all it holds.
pub fn account_row(address: &str) -> Row {
    let account = entity("Account").expect("the Account entity");
    let mut cells = vec![Cell::Absent; account.fields.len()];
    cells[0] = Cell::Text(address.to_owned());
    Row { entity: account, cells: Arc::new(cells) }
}

/// A resolver the index holds no records for (a name's resolver that has emitted nothing for
/// it, or the zero address an unset resolver event names): its id, address and name.
pub fn bare_resolver(id: &str) -> Option<Row> {
    let resolver = entity("Resolver").expect("the Resolver entity");
    let (address, node) = match id.split_once('-') {
        Some((address, node)) => (address, Some(node)),
        None => (id, None),
    };
    let address = hex::decode(address.strip_prefix("0x")?).ok()?;
    let node = match node {
        Some(node) => Some(hex::decode(node.strip_prefix("0x")?).ok()?),
        None => None,
    };
    let cells = resolver
        .fields
        .iter()
        .map(|f| match f.name {
            "id" => Cell::Text(id.to_owned()),
            "address" => Cell::Blob(address.clone()),
            "domain" => node.clone().map_or(Cell::Null, Cell::Blob),
            "record_key" => Cell::Null,
            _ => Cell::Null,
        })
        .collect();
    Some(Row { entity: resolver, cells: Arc::new(cells) })
}
