//! Rows of the subgraph's entities: one `SELECT` over an entity's view per listing, with its
//! filter, order and page, and the lookups by id that references are answered with.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, QueryResult};

use super::{
    model::{Enc, Entity, Kind},
    sql::{Env, Sql},
};

/// A value read from SQL.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Not selected (the query did not ask for the field).
    Absent,
    /// SQL `NULL`.
    Null,
    /// An integer.
    Int(i64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
    /// A boolean.
    Bool(bool),
}

impl Cell {
    /// The cell as a bind value.
    pub fn value(&self) -> sea_orm::Value {
        match self {
            Cell::Int(n) => (*n).into(),
            Cell::Text(t) => t.clone().into(),
            Cell::Blob(b) => b.clone().into(),
            Cell::Bool(b) => (*b).into(),
            Cell::Absent | Cell::Null => sea_orm::Value::String(None),
        }
    }
}

/// One row of an entity's view: a cell per field (lists and computed fields stay absent).
#[derive(Clone, Debug)]
pub struct Row {
    /// Its entity.
    pub entity: &'static Entity,
    /// Cells, in the entity's field order.
    pub cells: Arc<Vec<Cell>>,
}

impl Row {
    /// The cell of the field named `name`.
    pub fn cell(&self, name: &str) -> &Cell {
        self.entity.field(name).and_then(|(i, _)| self.cells.get(i)).unwrap_or(&Cell::Absent)
    }
}

/// How a field's value is stored, for reading it back.
fn enc_of(kind: &Kind) -> Option<Enc> {
    match kind {
        Kind::Scalar(_, enc, _) | Kind::Hidden(enc, _) => Some(*enc),
        Kind::Ref(target, _) => super::model::entity(target).map(Entity::id_enc),
        Kind::List(..) | Kind::Computed => None,
    }
}

/// The term of an ordering: SQL and direction.
#[derive(Clone, Debug)]
pub struct Order {
    /// Expression over the listing's alias.
    pub sql: String,
    /// Descending.
    pub desc: bool,
    /// Whether the expression can be null (then nulls are placed explicitly, which keeps an
    /// index from giving the order).
    pub nullable: bool,
    /// An expression that orders as `sql` does and that an index holds (PostgreSQL's name
    /// indexes hold a name's first 256 characters), put first so that the index serves.
    pub key: Option<String>,
}

/// A listing of one entity.
#[derive(Debug)]
pub struct Listing<'a> {
    /// The entity.
    pub entity: &'static Entity,
    /// Which fields to select (by index); the others stay absent.
    pub wanted: Vec<bool>,
    /// Conditions beyond the entity's scope, over alias `t0`.
    pub condition: Option<Sql>,
    /// Ordering before the id.
    pub order: Option<Order>,
    /// Page size.
    pub first: u64,
    /// Rows skipped.
    pub skip: u64,
    /// Engine and namespace.
    pub env: &'a Env,
}

impl Listing<'_> {
    /// The rows.
    pub async fn rows(self, db: &DatabaseConnection) -> Result<Vec<Row>, DbErr> {
        let env = self.env;
        let entity = self.entity;
        let alias = "t0";
        let mut sql = Sql::new(env.backend);
        let mut selected = Vec::new();
        sql.push("SELECT ");
        for (i, field) in entity.fields.iter().enumerate() {
            let (Some(expr), Some(enc), true) =
                (field.sql(env, alias), enc_of(&field.kind), self.wanted.get(i) == Some(&true))
            else {
                continue;
            };
            if !selected.is_empty() {
                sql.push(", ");
            }
            let expr = if enc == Enc::Int { format!("CAST({expr} AS BIGINT)") } else { expr };
            sql.push(&expr);
            selected.push((i, enc));
        }
        if selected.is_empty() {
            sql.push("1");
        }
        let id = match entity.id_enc() {
            Enc::Text => env.collated(&entity.id_sql(env, alias)),
            _ => entity.id_sql(env, alias),
        };
        let direction = |desc: bool| if desc { "DESC" } else { "ASC" };
        let mut order_by = String::from(" ORDER BY ");
        let id_desc = self.order.as_ref().is_some_and(|o| o.desc);
        if let Some(order) = &self.order {
            // Nulls after every value ascending and before them descending, on both engines
            // (PostgreSQL's default, which The Graph's clients page by).
            let d = direction(order.desc);
            if order.nullable {
                order_by.push_str(&format!("({} IS NULL) {d}, ", order.sql));
            }
            if let Some(key) = &order.key {
                order_by.push_str(&format!("{key} {d}, "));
            }
            order_by.push_str(&format!("{} {d}, ", order.sql));
        }
        order_by.push_str(&format!("{id} {}", direction(id_desc)));
        // The page is chosen over the stored columns alone, and the fields are computed for
        // its rows only: an engine that sorts carries whole result rows through its sorter, and
        // computing every field of every matching row before the limit would cost that much.
        sql.push(&format!(
            " FROM (SELECT {alias}.* FROM {} WHERE {}",
            (entity.from)(env, alias),
            (entity.scope)(env, alias)
        ));
        if let Some(condition) = self.condition {
            sql.push(" AND ").append(condition);
        }
        sql.push(&order_by);
        sql.push(&format!(" LIMIT {} OFFSET {}) {alias}", self.first, self.skip));
        sql.push(&order_by);
        let results = db.query_all_raw(sql.statement()).await?;
        results.iter().map(|r| read_row(entity, &selected, r)).collect()
    }
}

fn read_row(
    entity: &'static Entity,
    selected: &[(usize, Enc)],
    result: &QueryResult,
) -> Result<Row, DbErr> {
    let mut cells = vec![Cell::Absent; entity.fields.len()];
    for (position, (index, enc)) in selected.iter().enumerate() {
        let cell = match enc {
            Enc::Int => result.try_get_by_index::<Option<i64>>(position)?.map(Cell::Int),
            Enc::Text => result.try_get_by_index::<Option<String>>(position)?.map(Cell::Text),
            Enc::Blob => result.try_get_by_index::<Option<Vec<u8>>>(position)?.map(Cell::Blob),
            Enc::Bool => result.try_get_by_index::<Option<bool>>(position)?.map(Cell::Bool),
        };
        cells[*index] = cell.unwrap_or(Cell::Null);
    }
    Ok(Row { entity, cells: Arc::new(cells) })
}

/// Every field that a lookup by id selects: all with SQL but the expensive counts, which are
/// read on their own when asked for.
pub fn lookup_fields(entity: &Entity) -> Vec<bool> {
    entity.fields.iter().map(|f| f.name != "subdomainCount").collect()
}

/// The rows of `entity` whose ids are `ids` (as the id column stores them).
pub async fn by_ids(
    db: &DatabaseConnection,
    env: &Env,
    entity: &'static Entity,
    ids: &[Cell],
) -> Result<Vec<Row>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut condition = Sql::new(env.backend);
    condition.push(&format!("{} IN (", entity.id_sql(env, "t0")));
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            condition.push(", ");
        }
        condition.bind(id.value());
    }
    condition.push(")");
    Listing {
        entity,
        wanted: lookup_fields(entity),
        condition: Some(condition),
        order: None,
        first: ids.len() as u64,
        skip: 0,
        env,
    }
    .rows(db)
    .await
}

/// One field of one row, read on its own (a field its listing did not select).
pub async fn one_field(
    db: &DatabaseConnection,
    env: &Env,
    row: &Row,
    field: &str,
) -> Result<Cell, DbErr> {
    let entity = row.entity;
    let Some((index, _)) = entity.field(field) else { return Ok(Cell::Null) };
    let id = row.cells.first().cloned().unwrap_or(Cell::Null);
    let mut wanted = vec![false; entity.fields.len()];
    wanted[index] = true;
    let mut condition = Sql::new(env.backend);
    condition.push(&format!("{} = ", entity.id_sql(env, "t0"))).bind(id.value());
    let rows =
        Listing { entity, wanted, condition: Some(condition), order: None, first: 1, skip: 0, env }
            .rows(db)
            .await?;
    Ok(rows.into_iter().next().map(|r| r.cells[index].clone()).unwrap_or(Cell::Null))
}
