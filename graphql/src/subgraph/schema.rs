//! The subgraph's GraphQL types, generated from the entity definitions ([`super::model`]):
//! per entity an object (or interface), a `<Entity>_filter` input and an `<Entity>_orderBy`
//! enum, and on `Query` a single-entity field and a collection field, as The Graph generates
//! them for a subgraph schema.

use async_graphql::{
    Error, Name, Value,
    dataloader::DataLoader,
    dynamic::{
        Enum, Field, FieldFuture, FieldValue, InputObject, InputValue, Interface, InterfaceField,
        Object, ResolverContext, Scalar as ScalarType, SchemaBuilder, TypeRef,
    },
};
use entities::{checkpoint, packed_words::PackedWords};
use sea_orm::{DatabaseConnection, EntityTrait};

use super::{
    events::{Decoded, Log, decode, specific_fields},
    filter::Compiler,
    model::{ENTITIES, Entity, Kind, Scalar, entity, event_type_of, family_of},
    references::{RefId, RefKey, RefLoader, account_row, bare_resolver},
    rows::{Cell, Listing, Order, Row, one_field},
    sql::{Env, Sql},
};
use crate::error::{code, coded, internal};

/// Largest `first` The Graph accepts.
pub const MAX_FIRST: i64 = 1_000;
/// Largest `skip` The Graph's hosted service accepted.
pub const MAX_SKIP: i64 = 5_000;
/// `first` when a collection field is not given one.
pub const DEFAULT_FIRST: i64 = 100;

/// What the resolvers read: the database and the namespace.
#[derive(Clone, Debug)]
pub struct SubgraphData {
    /// Where the rows are.
    pub db: DatabaseConnection,
    /// Engine and namespace.
    pub env: Env,
}

/// Adds every type and the `Query` root to `builder`.
pub fn register(mut builder: SchemaBuilder) -> SchemaBuilder {
    builder = builder
        .register(
            ScalarType::new("BigInt")
                .description("An integer of any size, as decimal text")
                .validator(|v| match v {
                    Value::String(s) => {
                        let digits = s.strip_prefix('-').unwrap_or(s);
                        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                    }
                    Value::Number(n) => n.is_i64() || n.is_u64(),
                    _ => false,
                }),
        )
        .register(
            ScalarType::new("Bytes")
                .description("Bytes, 0x-prefixed hex")
                .validator(|v| matches!(v, Value::String(_))),
        )
        .register(Enum::new("OrderDirection").item("asc").item("desc"))
        .register(Enum::new("_SubgraphErrorPolicy_").item("allow").item("deny"))
        .register(
            InputObject::new("Block_height")
                .field(InputValue::new("hash", TypeRef::named("Bytes")))
                .field(InputValue::new("number", TypeRef::named(TypeRef::INT)))
                .field(InputValue::new("number_gte", TypeRef::named(TypeRef::INT))),
        )
        .register(
            Object::new("_Block_")
                .description("The block the index stands at")
                .field(meta_field("hash", TypeRef::named("Bytes")))
                .field(meta_field("number", TypeRef::named_nn(TypeRef::INT)))
                .field(meta_field("timestamp", TypeRef::named(TypeRef::INT)))
                .field(meta_field("parentHash", TypeRef::named("Bytes"))),
        )
        .register(
            Object::new("_Meta_")
                .description("The state of the index")
                .field(meta_field("block", TypeRef::named_nn("_Block_")))
                .field(meta_field("deployment", TypeRef::named_nn(TypeRef::STRING)))
                .field(meta_field("hasIndexingErrors", TypeRef::named_nn(TypeRef::BOOLEAN))),
        );
    let mut query = Object::new("Query");
    for e in ENTITIES.iter() {
        builder = builder.register(filter_input(e)).register(order_enum(e));
        builder =
            if e.interface { builder.register(interface(e)) } else { builder.register(object(e)) };
        query = query.field(single_field(e)).field(collection_field(e.plural, e, None));
    }
    query = query.field(
        Field::new("_meta", TypeRef::named("_Meta_"), |ctx| {
            FieldFuture::new(async move { meta(&ctx).await })
        })
        .argument(InputValue::new("block", TypeRef::named("Block_height"))),
    );
    builder.register(query)
}

fn data<'a>(ctx: &'a ResolverContext<'_>) -> Result<&'a SubgraphData, Error> {
    ctx.data::<SubgraphData>()
}

fn parent_row<'a>(ctx: &'a ResolverContext<'_>) -> Result<&'a Row, Error> {
    ctx.parent_value.try_downcast_ref::<Row>()
}

/// The value a row shows as: interface rows as their concrete event type.
fn shown(row: Row) -> Option<FieldValue<'static>> {
    if !row.entity.interface {
        return Some(FieldValue::owned_any(row));
    }
    let family = family_of(row.entity)?;
    let Cell::Int(code) = row.cell("selector") else { return None };
    let concrete = event_type_of(family, i16::try_from(*code).ok()?)?;
    Some(FieldValue::owned_any(row).with_type(concrete))
}

fn scalar_value(scalar: Scalar, cell: &Cell) -> Option<Value> {
    Some(match (scalar, cell) {
        (_, Cell::Null | Cell::Absent) => return None,
        (Scalar::Int, Cell::Int(n)) => Value::from(*n),
        (Scalar::Boolean, Cell::Bool(b)) => Value::Boolean(*b),
        (Scalar::Boolean, Cell::Int(n)) => Value::Boolean(*n != 0),
        (_, Cell::Int(n)) => Value::String(n.to_string()),
        (_, Cell::Blob(b)) => Value::String(alloy::hex::encode_prefixed(b)),
        (_, Cell::Text(t)) => Value::String(t.clone()),
        (_, Cell::Bool(b)) => Value::Boolean(*b),
    })
}

/// The cell of field `index`, read on its own when the row was listed without it.
async fn cell_of(ctx: &ResolverContext<'_>, row: &Row, index: usize) -> Result<Cell, Error> {
    match &row.cells[index] {
        Cell::Absent => {
            let d = data(ctx)?;
            one_field(&d.db, &d.env, row, row.entity.fields[index].name).await.map_err(internal)
        }
        cell => Ok(cell.clone()),
    }
}

/// The entity a reference points at.
async fn referenced(
    ctx: &ResolverContext<'_>,
    target: &'static str,
    id: Option<RefId>,
) -> Result<Option<FieldValue<'static>>, Error> {
    let Some(id) = id else { return Ok(None) };
    if target == "Account" {
        let RefId::Text(address) = &id else { return Ok(None) };
        return Ok(Some(FieldValue::owned_any(account_row(address))));
    }
    let loader = ctx.data::<DataLoader<RefLoader>>()?;
    let row = loader
        .load_one(RefKey { entity: target, id: id.clone() })
        .await
        .map_err(|e| internal((*e).clone()))?;
    let row = match (row, &id) {
        (None, RefId::Text(text)) if target == "Resolver" => bare_resolver(text),
        (row, _) => row,
    };
    Ok(row.and_then(shown))
}

fn type_ref(name: &str, nullable: bool) -> TypeRef {
    if nullable { TypeRef::named(name) } else { TypeRef::named_nn(name) }
}

/// The GraphQL type of a field computed in Rust, and whether it is a list.
fn computed_type(entity: &Entity, field: &str) -> (&'static str, bool) {
    match (entity.name, field) {
        ("Registration", "cost") => ("BigInt", false),
        ("Resolver", "texts") => ("String", true),
        ("Resolver", "coinTypes") => ("BigInt", true),
        ("Resolver", "events") => ("ResolverEvent", true),
        (_, "resolver") if entity.is_event() => ("Resolver", false),
        (name, field) => specific_fields(name)
            .iter()
            .find(|(f, _, _)| *f == field)
            .map_or(("String", false), |(_, ty, _)| (*ty, false)),
    }
}

/// The type of field `index` of `entity` on its object.
fn field_type(entity: &Entity, index: usize) -> Option<TypeRef> {
    let field = &entity.fields[index];
    Some(match field.kind {
        Kind::Scalar(s, _, _) => type_ref(s.type_name(), field.nullable),
        Kind::Ref(target, _) => type_ref(target, field.nullable),
        Kind::List(target, _, _) => TypeRef::named_nn_list_nn(target),
        Kind::Hidden(..) => return None,
        Kind::Computed => match computed_type(entity, field.name) {
            ("ResolverEvent", true) => TypeRef::named_nn_list_nn("ResolverEvent"),
            (ty, true) => TypeRef::named_nn_list(ty),
            (ty, false) => type_ref(ty, field.nullable),
        },
    })
}

fn object(e: &'static Entity) -> Object {
    let mut object = Object::new(e.name).description(e.doc);
    if let Some(interface) = e.implements {
        object = object.implement(interface);
    }
    for index in 0..e.fields.len() {
        if let Some(field) = entity_field(e, index) {
            object = object.field(field);
        }
    }
    object
}

fn interface(e: &'static Entity) -> Interface {
    let mut interface = Interface::new(e.name).description(e.doc);
    for (index, field) in e.fields.iter().enumerate() {
        if let Some(ty) = field_type(e, index) {
            interface = interface.field(InterfaceField::new(field.name, ty));
        }
    }
    interface
}

/// Field `index` of `e` with its resolver, or `None` for a hidden one.
fn entity_field(e: &'static Entity, index: usize) -> Option<Field> {
    let field = &e.fields[index];
    let ty = field_type(e, index)?;
    let built = match field.kind {
        Kind::Scalar(scalar, _, _) => Field::new(field.name, ty, move |ctx| {
            FieldFuture::new(async move {
                let row = parent_row(&ctx)?;
                let cell = cell_of(&ctx, row, index).await?;
                Ok(scalar_value(scalar, &cell).map(FieldValue::value))
            })
        }),
        Kind::Ref(target, _) => Field::new(field.name, ty, move |ctx| {
            FieldFuture::new(async move {
                let row = parent_row(&ctx)?;
                let cell = cell_of(&ctx, row, index).await?;
                referenced(&ctx, target, RefId::of(&cell)).await
            })
        }),
        Kind::List(target, child, parent) => {
            let target = entity(target)?;
            let link = move |env: &Env, row: &Row| {
                let mut sql = Sql::new(env.backend);
                sql.push(&format!("{} = ", child(env, "t0"))).bind(row.cell(parent).value());
                sql
            };
            return Some(list_field(field.name, target, Some(Box::new(link))));
        }
        Kind::Computed if e.name == "Resolver" && field.name == "events" => {
            let target = entity("ResolverEvent")?;
            return Some(list_field(field.name, target, Some(Box::new(resolver_events_link))));
        }
        Kind::Computed => {
            let name = field.name;
            Field::new(name, ty, move |ctx| {
                FieldFuture::new(async move { computed(&ctx, name).await })
            })
        }
        Kind::Hidden(..) => return None,
    };
    Some(built.description(field.doc))
}

/// The condition that ties a listing to the row it hangs off.
type LinkFn = Box<dyn Fn(&Env, &Row) -> Sql + Send + Sync>;

/// A resolver's events for its name: its contract's record events whose first topic is the
/// node. The history keeps each topic packed ([`PackedWords`]), and a node, packed on its own,
/// is exactly how the first topic starts.
fn resolver_events_link(env: &Env, row: &Row) -> Sql {
    let mut sql = Sql::new(env.backend);
    let (Cell::Blob(address), Cell::Blob(node)) = (row.cell("address"), row.cell("domain")) else {
        sql.push("1 = 0");
        return sql;
    };
    let packed = PackedWords::pack(node).as_bytes().to_vec();
    sql.push(&format!(
        "t0.contract = (SELECT c.code FROM contracts c WHERE c.chain_id = {} AND c.address = ",
        env.chain_id
    ))
    .bind(address.clone())
    .push(&format!(") AND substr(t0.topics, 1, {}) = ", packed.len()))
    .bind(packed);
    sql
}

fn list_arguments(field: Field, e: &Entity) -> Field {
    field
        .argument(InputValue::new("skip", TypeRef::named(TypeRef::INT)).default_value(0))
        .argument(
            InputValue::new("first", TypeRef::named(TypeRef::INT)).default_value(DEFAULT_FIRST),
        )
        .argument(InputValue::new("orderBy", TypeRef::named(format!("{}_orderBy", e.name))))
        .argument(InputValue::new("orderDirection", TypeRef::named("OrderDirection")))
        .argument(InputValue::new("where", TypeRef::named(format!("{}_filter", e.name))))
}

fn list_field(name: &str, target: &'static Entity, link: Option<LinkFn>) -> Field {
    let link = link.map(std::sync::Arc::new);
    let field = Field::new(name, TypeRef::named_nn_list_nn(target.name), move |ctx| {
        let link = link.clone();
        FieldFuture::new(async move {
            let d = data(&ctx)?;
            let condition = match &link {
                Some(link) => Some(link(&d.env, parent_row(&ctx)?)),
                None => None,
            };
            listing(&ctx, target, condition).await
        })
    });
    list_arguments(field, target)
}

fn collection_field(name: &str, e: &'static Entity, link: Option<LinkFn>) -> Field {
    list_field(name, e, link)
        .argument(InputValue::new("block", TypeRef::named("Block_height")))
        .argument(
            InputValue::new("subgraphError", TypeRef::named_nn("_SubgraphErrorPolicy_"))
                .default_value(Value::Enum(Name::new("deny"))),
        )
}

fn single_field(e: &'static Entity) -> Field {
    Field::new(e.single, TypeRef::named(e.name), move |ctx| {
        FieldFuture::new(async move {
            check_block(&ctx).await?;
            let d = data(&ctx)?;
            let id = ctx.args.try_get("id")?.string()?;
            let Some(id) = RefId::parse(e.id_enc(), id) else { return Ok(None) };
            let cell = match id {
                RefId::Blob(b) => Cell::Blob(b),
                RefId::Text(t) => Cell::Text(t),
            };
            let mut condition = Sql::new(d.env.backend);
            condition.push(&format!("{} = ", e.id_sql(&d.env, "t0"))).bind(cell.value());
            let rows = Listing {
                entity: e,
                wanted: wanted(e, &ctx),
                condition: Some(condition),
                order: None,
                first: 1,
                skip: 0,
                env: &d.env,
            }
            .rows(&d.db)
            .await
            .map_err(internal)?;
            Ok(rows.into_iter().next().and_then(shown))
        })
    })
    .argument(InputValue::new("id", TypeRef::named_nn(TypeRef::ID)))
    .argument(InputValue::new("block", TypeRef::named("Block_height")))
    .argument(
        InputValue::new("subgraphError", TypeRef::named_nn("_SubgraphErrorPolicy_"))
            .default_value(Value::Enum(Name::new("deny"))),
    )
}

/// The fields a listing selects: the id, what the query asks for, and what other fields are
/// computed from.
fn wanted(e: &Entity, ctx: &ResolverContext<'_>) -> Vec<bool> {
    let look = ctx.look_ahead();
    e.fields
        .iter()
        .enumerate()
        .map(|(i, f)| i == 0 || matches!(f.kind, Kind::Hidden(..)) || look.field(f.name).exists())
        .collect()
}

fn arg_i64(ctx: &ResolverContext<'_>, name: &str, default: i64) -> Result<i64, Error> {
    match ctx.args.get(name) {
        Some(v) if !v.is_null() => Ok(v.i64()?),
        _ => Ok(default),
    }
}

/// A collection: `first`, `skip`, `orderBy`, `orderDirection`, `where`.
async fn listing(
    ctx: &ResolverContext<'_>,
    e: &'static Entity,
    condition: Option<Sql>,
) -> Result<Option<FieldValue<'static>>, Error> {
    check_block(ctx).await?;
    let d = data(ctx)?;
    let first = arg_i64(ctx, "first", DEFAULT_FIRST)?;
    let skip = arg_i64(ctx, "skip", 0)?;
    if !(0..=MAX_FIRST).contains(&first) {
        return Err(coded(
            code::INVALID_ARGUMENT,
            format!("the `first` argument must be between 0 and {MAX_FIRST}, but is {first}"),
        ));
    }
    if !(0..=MAX_SKIP).contains(&skip) {
        return Err(coded(
            code::INVALID_ARGUMENT,
            format!("the `skip` argument must be between 0 and {MAX_SKIP}, but is {skip}"),
        ));
    }
    let desc = match ctx.args.get("orderDirection") {
        Some(v) if !v.is_null() => v.enum_name()? == "desc",
        _ => false,
    };
    let order_key = match ctx.args.get("orderBy") {
        Some(v) if !v.is_null() => Some(v.enum_name()?.to_owned()),
        _ => None,
    };
    let order = match order_key.as_deref() {
        Some(key) => {
            let (sql, nullable) = order_sql(&d.env, e, key)?;
            // The name indexes of PostgreSQL hold a key of the name (see `name_key`).
            let indexed_name = d.env.backend == sea_orm::DbBackend::Postgres
                && key == "name"
                && matches!(e.name, "Domain" | "WrappedDomain");
            let key = indexed_name.then(|| crate::name_key::KEY_SQL.replace("domains.", "t0."));
            Some(Order { sql, desc, nullable, key })
        }
        // Without `orderBy`, rows come by id; `orderDirection` still applies to it.
        None if desc => {
            Some(Order { sql: e.id_sql(&d.env, "t0"), desc, nullable: false, key: None })
        }
        None => None,
    };
    let mut all = condition;
    if let Some(filter) = ctx.args.get("where").filter(|v| !v.is_null()) {
        let filter = filter.as_value();
        let mut compiled = compile_where(&d.env, e, filter, false)?;
        // An `or` over owners reads its rows from the owners' index sets and sorts them; for
        // an owner of many names, walking the order's index (a domain's name or id) and
        // testing each row fills the page long before.
        let walkable = e.name == "Domain" && matches!(order_key.as_deref(), None | Some("name"));
        if walkable
            && large_set(&d.db, &compiled.1, d.env.common_set_rows).await.map_err(internal)?
        {
            compiled = compile_where(&d.env, e, filter, true)?;
        }
        all = Some(match all {
            Some(mut sql) => {
                sql.push(" AND ").append(compiled.0);
                sql
            }
            None => compiled.0,
        });
    }
    let rows = Listing {
        entity: e,
        wanted: wanted(e, ctx),
        condition: all,
        order,
        first: first as u64,
        skip: skip as u64,
        env: &d.env,
    }
    .rows(&d.db)
    .await
    .map_err(internal)?;
    Ok(Some(FieldValue::list(rows.into_iter().filter_map(shown))))
}

/// Rows of an `or`'s index sets above which the listing walks the order's index instead of
/// reading and sorting them: reading and sorting a set costs about 20 µs a row (each row's
/// fields and filters), walking about 4 µs a row for the rows between matches, and at a
/// million names a page of 100 matches among 5,000 is reached after some 20,000 rows.
pub const COMMON_SET_ROWS: u64 = 5_000;

/// `where` compiled over `t0`, and the index sets its `or`s read rows from (none when
/// `walk`: then those `or`s are tested row by row).
fn compile_where(
    env: &Env,
    e: &'static Entity,
    filter: &async_graphql::Value,
    walk: bool,
) -> Result<(Sql, Vec<Sql>), Error> {
    let mut compiler = Compiler::new(env, 0);
    compiler.walk = walk;
    let sql =
        compiler.compile(e, "t0", filter).map_err(|err| coded(code::INVALID_ARGUMENT, err.0))?;
    Ok((sql, compiler.sets))
}

/// Whether one of `sets` holds more than `limit` rows (each counted up to `limit + 1`).
async fn large_set(
    db: &sea_orm::DatabaseConnection,
    sets: &[Sql],
    limit: u64,
) -> Result<bool, sea_orm::DbErr> {
    use sea_orm::ConnectionTrait;
    for set in sets {
        let mut count = Sql::new(db.get_database_backend());
        count
            .push("SELECT count(*) AS n FROM (")
            .append(set.clone())
            .push(&format!(" LIMIT {}) c", limit + 1));
        let n = db
            .query_one_raw(count.statement())
            .await?
            .and_then(|row| row.try_get::<i64>("", "n").ok())
            .unwrap_or(0);
        if n as u64 > limit {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The SQL an `orderBy` value orders by, and whether it can be null: a field, or a field of
/// the entity a reference points at (`parent__name`, null where nothing is pointed at).
fn order_sql(env: &Env, e: &Entity, key: &str) -> Result<(String, bool), Error> {
    let unknown =
        || coded(code::INVALID_ARGUMENT, format!("{} cannot be ordered by {key}", e.name));
    let collate = |enc: super::model::Enc, sql: String| {
        if enc == super::model::Enc::Text { env.collated(&sql) } else { sql }
    };
    if let Some((head, tail)) = key.split_once("__") {
        let (_, field) = e.field(head).ok_or_else(unknown)?;
        let Kind::Ref(target, expr) = field.kind else { return Err(unknown()) };
        let target = entity(target).ok_or_else(unknown)?;
        let (_, inner) = target.field(tail).ok_or_else(unknown)?;
        let Kind::Scalar(_, enc, _) = inner.kind else { return Err(unknown()) };
        let inner_sql = inner.sql(env, "o1").ok_or_else(unknown)?;
        let sql = format!(
            "(SELECT {inner_sql} FROM {} WHERE {} AND {} = {})",
            (target.from)(env, "o1"),
            (target.scope)(env, "o1"),
            target.id_sql(env, "o1"),
            expr(env, "t0")
        );
        return Ok((collate(enc, sql), true));
    }
    let (_, field) = e.field(key).ok_or_else(unknown)?;
    let nullable = field.nullable && !field.stored;
    match field.kind {
        Kind::Scalar(_, enc, expr) if field.filterable => {
            Ok((collate(enc, expr(env, "t0")), nullable))
        }
        Kind::Ref(target, expr) => {
            let enc = entity(target).map_or(super::model::Enc::Text, Entity::id_enc);
            Ok((collate(enc, expr(env, "t0")), nullable))
        }
        _ => Err(unknown()),
    }
}

fn filter_input(e: &Entity) -> InputObject {
    let mut input = InputObject::new(format!("{}_filter", e.name));
    let add =
        |input: InputObject, name: String, ty: TypeRef| input.field(InputValue::new(name, ty));
    for field in e.fields.iter().filter(|f| f.filterable) {
        let (base, text, bytes) = match field.kind {
            Kind::Scalar(s, _, _) => (s.type_name(), s.is_text(), s == Scalar::Bytes),
            Kind::Ref(..) => ("String", true, false),
            Kind::List(target, _, _) => {
                input = add(
                    input,
                    format!("{}_", field.name),
                    TypeRef::named(format!("{target}_filter")),
                );
                continue;
            }
            _ => continue,
        };
        let n = field.name;
        let mut ops: Vec<&str> = vec!["", "_not"];
        if base != "Boolean" {
            ops.extend(["_gt", "_lt", "_gte", "_lte"]);
        }
        for op in ops {
            input = add(input, format!("{n}{op}"), TypeRef::named(base));
        }
        for op in ["_in", "_not_in"] {
            input = add(input, format!("{n}{op}"), TypeRef::named_nn_list(base));
        }
        if bytes {
            for op in ["_contains", "_not_contains"] {
                input = add(input, format!("{n}{op}"), TypeRef::named(base));
            }
        }
        if text {
            for op in [
                "_contains",
                "_not_contains",
                "_starts_with",
                "_not_starts_with",
                "_ends_with",
                "_not_ends_with",
            ] {
                input = add(input, format!("{n}{op}"), TypeRef::named(base));
                input = add(input, format!("{n}{op}_nocase"), TypeRef::named(base));
            }
        }
        if let Kind::Ref(target, _) = field.kind {
            input = add(input, format!("{n}_"), TypeRef::named(format!("{target}_filter")));
        }
    }
    let own = format!("{}_filter", e.name);
    input = add(input, "and".into(), TypeRef::named_list(&own));
    add(input, "or".into(), TypeRef::named_list(&own))
}

fn order_enum(e: &Entity) -> Enum {
    let mut items = Vec::new();
    for field in e.fields.iter().filter(|f| f.filterable) {
        match field.kind {
            Kind::Scalar(..) => items.push(field.name.to_owned()),
            Kind::Ref(target, _) => {
                items.push(field.name.to_owned());
                if let Some(target) = entity(target) {
                    for inner in target.fields.iter().filter(|f| f.filterable) {
                        if matches!(inner.kind, Kind::Scalar(..)) {
                            items.push(format!("{}__{}", field.name, inner.name));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Enum::new(format!("{}_orderBy", e.name)).items(items)
}

/// A computed field of an entity row.
async fn computed(
    ctx: &ResolverContext<'_>,
    field: &'static str,
) -> Result<Option<FieldValue<'static>>, Error> {
    let row = parent_row(ctx)?;
    let d = data(ctx)?;
    match (row.entity.name, field) {
        ("Registration", "cost") => {
            let cost = super::lookups::latest_cost(&d.db, row).await.map_err(internal)?;
            Ok(cost.map(|c| FieldValue::value(Value::String(c))))
        }
        ("Resolver", "texts" | "coinTypes") => {
            let Cell::Blob(key) = row.cell("record_key") else { return Ok(None) };
            let items = super::lookups::record_keys(&d.db, key, field == "texts")
                .await
                .map_err(internal)?;
            Ok((!items.is_empty()).then(|| {
                FieldValue::list(items.into_iter().map(|v| FieldValue::value(Value::String(v))))
            }))
        }
        _ => event_field(ctx, row, field).await,
    }
}

/// A field decoded from an event's stored log.
async fn event_field(
    ctx: &ResolverContext<'_>,
    row: &Row,
    field: &'static str,
) -> Result<Option<FieldValue<'static>>, Error> {
    let blob = |name: &str| match row.cell(name) {
        Cell::Blob(b) => Some(b.clone()),
        _ => None,
    };
    let word = |name: &str| blob(name).and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok());
    let subject = match (word("subject_node"), word("subject_label")) {
        (Some(node), Some(label_hash)) => Some(entities::packed_words::SubjectWords {
            node,
            label_hash,
            parent_node: word("subject_parent"),
        }),
        _ => None,
    };
    let damaged = |e| coded(code::INTERNAL, format!("a stored event is damaged: {e}"));
    let unpack = |name: &str| {
        PackedWords::from_stored(blob(name).unwrap_or_default()).unpack_with(subject.as_ref())
    };
    let log = Log {
        topics: unpack("topics").map_err(damaged)?,
        data: unpack("data").map_err(damaged)?,
        seq: match row.cell("seq") {
            Cell::Int(n) => *n,
            _ => 0,
        },
        contract: blob("contract").unwrap_or_default(),
    };
    let type_name = match (row.entity.interface, family_of(row.entity), row.cell("selector")) {
        (true, Some(family), Cell::Int(code)) => {
            i16::try_from(*code).ok().and_then(|c| event_type_of(family, c)).unwrap_or_default()
        }
        _ => row.entity.name,
    };
    match decode(type_name, field, &log) {
        Decoded::Value(v) => Ok(Some(FieldValue::value(v))),
        Decoded::Account(a) => Ok(Some(FieldValue::owned_any(account_row(&a)))),
        Decoded::Domain(node) => referenced(ctx, "Domain", Some(RefId::Blob(node))).await,
        Decoded::Resolver(id) => referenced(ctx, "Resolver", Some(RefId::Text(id))).await,
        Decoded::Null => Ok(None),
    }
}

/// Refuses a `block` argument this index cannot answer at: it holds the state at its
/// checkpoint only, so a past block (or a hash) is refused, and a future one too.
async fn check_block(ctx: &ResolverContext<'_>) -> Result<(), Error> {
    let Some(block) = ctx.args.get("block").filter(|v| !v.is_null()) else { return Ok(()) };
    let block = block.object()?;
    let d = data(ctx)?;
    let head = checkpoint::Entity::find_by_id(d.env.chain_id)
        .one(&d.db)
        .await
        .map_err(internal)?
        .map(|c| c.block_number);
    let head = head.unwrap_or(-1);
    if let Some(n) = block.get("number_gte").filter(|v| !v.is_null()) {
        let n = n.i64()?;
        if n > head {
            return Err(coded(
                code::BLOCK_NOT_INDEXED,
                format!("block {n} is not indexed yet; the index stands at block {head}"),
            ));
        }
    }
    if let Some(n) = block.get("number").filter(|v| !v.is_null()) {
        let n = n.i64()?;
        if n != head {
            return Err(coded(
                code::TIME_TRAVEL_UNSUPPORTED,
                format!("the index answers at its latest block ({head}) only, not at block {n}"),
            ));
        }
    }
    if block.get("hash").is_some_and(|v| !v.is_null()) {
        return Err(coded(
            code::TIME_TRAVEL_UNSUPPORTED,
            "the index answers at its latest block only; query without `block.hash`",
        ));
    }
    Ok(())
}

fn meta_field(name: &'static str, ty: TypeRef) -> Field {
    Field::new(name, ty, move |ctx| {
        FieldFuture::new(async move {
            let meta = ctx.parent_value.try_downcast_ref::<Meta>()?;
            Ok(match name {
                "block" => Some(FieldValue::owned_any(meta.clone())),
                "deployment" => Some(FieldValue::value("ensemble")),
                "hasIndexingErrors" => Some(FieldValue::value(meta.has_errors)),
                "hash" => Some(FieldValue::value(meta.hash.clone())),
                "number" => Some(FieldValue::value(meta.number)),
                "timestamp" => meta.timestamp.map(FieldValue::value),
                _ => None,
            })
        })
    })
}

/// What `_meta` shows.
#[derive(Clone, Debug)]
struct Meta {
    number: i64,
    hash: String,
    timestamp: Option<i64>,
    has_errors: bool,
}

async fn meta(ctx: &ResolverContext<'_>) -> Result<Option<FieldValue<'static>>, Error> {
    check_block(ctx).await?;
    let d = data(ctx)?;
    let chain = d.env.chain_id;
    let checkpoint = checkpoint::Entity::find_by_id(chain).one(&d.db).await.map_err(internal)?;
    let Some(checkpoint) = checkpoint else {
        return Err(coded(code::BLOCK_NOT_INDEXED, "the root chain has no indexed block yet"));
    };
    let status =
        entities::chain_status::Entity::find_by_id(chain).one(&d.db).await.map_err(internal)?;
    let timestamp = super::lookups::block_timestamp(&d.db, chain, checkpoint.block_number)
        .await
        .map_err(internal)?;
    Ok(Some(FieldValue::owned_any(Meta {
        number: checkpoint.block_number,
        hash: checkpoint.block_hash,
        timestamp,
        has_errors: status.is_some_and(|s| s.error.is_some()),
    })))
}
