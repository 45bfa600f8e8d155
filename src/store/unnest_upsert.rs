//! PostgreSQL's bulk upsert: one statement per chunk of rows, binding one array per column.
//!
//! A multi-row `INSERT … VALUES` binds one parameter per value: 17 per domain row, thousands
//! per statement, and PostgreSQL plans and binds every one of them. Here each column travels
//! as one binary array (`$n::bytea[]`, `$n::text[]`, …) and `unnest` turns the arrays back
//! into rows, so a statement's text depends only on the table and the columns its conflict
//! updates, never on the number of rows: prepared once per connection, and a chunk of
//! [`UNNEST_ROWS`] rows binds a parameter or two per column.
//!
//! The ORM's array binding refuses NULL elements, so a nullable column travels as two arrays:
//! its values, with a placeholder where the row has NULL, and a `bool[]` saying which rows
//! are NULL; the `SELECT` puts the NULLs back. (Array literals sent as text carried NULLs
//! directly, but parsing them was a third of the server's time: a custom plan parses every
//! literal once to estimate the rows and again to run.)

use std::borrow::Borrow;

use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, IdenStatic, Iterable, ModelTrait,
    PrimaryKeyToColumn, Statement, Value, sea_query::ArrayType,
};

use super::{StoreError, writer::Conflict};

/// Rows per statement. Large enough that the round trip and the statement's fixed cost
/// vanish, small enough that one chunk's arrays stay a few megabytes.
pub const UNNEST_ROWS: usize = 10_000;

/// Inserts `rows` into `E`'s table, resolving key conflicts as `conflict` says.
pub(crate) async fn upsert<E, C, R>(
    db: &C,
    rows: &[R],
    conflict: Conflict<'_, E::Column>,
) -> Result<(), StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E>,
    C: ConnectionTrait,
    R: Borrow<E::Model>,
{
    let Some(first) = rows.first() else { return Ok(()) };
    let columns = shapes::<E>(first.borrow())?;
    let sql = statement_text::<E>(&columns, conflict);
    for chunk in rows.chunks(UNNEST_ROWS) {
        let mut values = Vec::with_capacity(columns.len() * 2);
        for shape in &columns {
            let (array, nulls) =
                arrays(shape, chunk.iter().map(|row| row.borrow().get(shape.column)))
                    .ok_or_else(|| unsupported::<E>(shape.column))?;
            values.push(array);
            values.extend(nulls);
        }
        db.execute_raw(Statement::from_sql_and_values(db.get_database_backend(), &sql, values))
            .await
            .map_err(StoreError::db("upsert"))?;
    }
    Ok(())
}

/// How one column travels.
#[derive(Debug)]
struct Shape<Col> {
    column: Col,
    /// Element type, for the array and the SQL cast.
    ty: ArrayType,
    /// Whether the column is nullable, so a mask array travels with it.
    nullable: bool,
}

/// Every column's shape. The element types come from the first row's values: a typed model
/// column always yields the same `Value` variant, NULL or not.
fn shapes<E>(first: &E::Model) -> Result<Vec<Shape<E::Column>>, StoreError>
where
    E: EntityTrait,
    E::Model: ModelTrait<Entity = E>,
{
    E::Column::iter()
        .map(|column| {
            let ty = element_type(&first.get(column)).ok_or_else(|| unsupported::<E>(column))?;
            Ok(Shape { column, ty, nullable: column.def().is_null() })
        })
        .collect()
}

/// `INSERT INTO t (…) SELECT … FROM (SELECT unnest($1::type[]) AS …, …) AS u [ON CONFLICT (pk)
/// DO …]`.
///
/// The arrays are unnested in the inner select list, not as `unnest($1, $2, …)` in `FROM`: a
/// function in `FROM` is a function scan, which stores every row it returns in a tuple store
/// before the insert reads them back (in a profile of the server during a backfill, writing
/// and reading that store took a tenth of its CPU). Set-returning functions in a select list
/// run in step, one row of each per output row, and hand each row straight to the insert. The
/// arrays of a statement always have the same length, so the two forms give the same rows.
fn statement_text<E: EntityTrait>(
    columns: &[Shape<E::Column>],
    conflict: Conflict<'_, E::Column>,
) -> String {
    let pk: Vec<E::Column> = E::PrimaryKey::iter().map(|k| k.into_column()).collect();
    let named = |cs: &[E::Column]| {
        cs.iter().map(|c| format!("\"{}\"", c.as_str())).collect::<Vec<_>>().join(", ")
    };
    let (mut unnested, mut selected) = (Vec::new(), Vec::new());
    for shape in columns {
        let name = shape.column.as_str();
        let n = unnested.len() + 1;
        unnested.push(format!("unnest(${n}::{}[]) AS \"{name}\"", sql_type(&shape.ty)));
        if shape.nullable {
            let n = unnested.len() + 1;
            unnested.push(format!("unnest(${n}::bool[]) AS \"{name}__null\""));
            selected.push(format!("CASE WHEN \"{name}__null\" THEN NULL ELSE \"{name}\" END"));
        } else {
            selected.push(format!("\"{name}\""));
        }
    }
    let action = match conflict {
        Conflict::Refuse => String::new(),
        Conflict::UpdateAllBut(keep) => {
            let updates: Vec<String> = columns
                .iter()
                .map(|shape| shape.column)
                .filter(|c| !pk.iter().chain(keep).any(|k| k.as_str() == c.as_str()))
                .map(|c| format!("\"{0}\" = excluded.\"{0}\"", c.as_str()))
                .collect();
            let action = if updates.is_empty() {
                "NOTHING".to_owned()
            } else {
                format!("UPDATE SET {}", updates.join(", "))
            };
            format!(" ON CONFLICT ({}) DO {action}", named(&pk))
        }
    };
    let all: Vec<E::Column> = columns.iter().map(|shape| shape.column).collect();
    format!(
        "INSERT INTO \"{table}\" ({columns}) SELECT {selected} FROM (SELECT {unnested}) AS u{action}",
        table = E::default().table_name(),
        columns = named(&all),
        selected = selected.join(", "),
        unnested = unnested.join(", "),
    )
}

fn unsupported<E: EntityTrait>(column: E::Column) -> StoreError {
    StoreError::UnsupportedColumn { table: E::default().table_name(), column: column.as_str() }
}

/// The array element type of a value's variant, for the variants entities use.
fn element_type(value: &Value) -> Option<ArrayType> {
    Some(match value {
        Value::Bool(_) => ArrayType::Bool,
        Value::SmallInt(_) => ArrayType::SmallInt,
        Value::Int(_) => ArrayType::Int,
        Value::BigInt(_) => ArrayType::BigInt,
        Value::String(_) => ArrayType::String,
        Value::Bytes(_) => ArrayType::Bytes,
        _ => return None,
    })
}

/// The SQL element type of an array. Only the variants [`element_type`] yields reach here.
fn sql_type(ty: &ArrayType) -> &'static str {
    match ty {
        ArrayType::Bool => "bool",
        ArrayType::SmallInt => "int2",
        ArrayType::Int => "int4",
        ArrayType::BigInt => "int8",
        ArrayType::Bytes => "bytea",
        _ => "text",
    }
}

/// One column of a chunk as an array, NULLs replaced by a placeholder of the same type, and
/// for a nullable column the mask of NULL rows. `None` when a value is not of the column's
/// element type.
fn arrays<Col>(
    shape: &Shape<Col>,
    values: impl Iterator<Item = Value>,
) -> Option<(Value, Option<Value>)> {
    let (lower, _) = values.size_hint();
    let (mut elements, mut nulls) = (Vec::with_capacity(lower), Vec::with_capacity(lower));
    for value in values {
        if element_type(&value).as_ref() != Some(&shape.ty) {
            return None;
        }
        let null = !value.is_some();
        if null && !shape.nullable {
            return None;
        }
        nulls.push(Value::Bool(Some(null)));
        elements.push(if null { placeholder(&shape.ty) } else { value });
    }
    let mask = shape.nullable.then(|| Value::Array(ArrayType::Bool, Some(Box::new(nulls))));
    Some((Value::Array(shape.ty.clone(), Some(Box::new(elements))), mask))
}

/// A non-NULL stand-in of an element type, masked out by the NULL array. Only the variants
/// [`element_type`] yields reach here.
fn placeholder(ty: &ArrayType) -> Value {
    match ty {
        ArrayType::Bool => Value::Bool(Some(false)),
        ArrayType::SmallInt => Value::SmallInt(Some(0)),
        ArrayType::Int => Value::Int(Some(0)),
        ArrayType::BigInt => Value::BigInt(Some(0)),
        ArrayType::Bytes => Value::Bytes(Some(Vec::new())),
        _ => Value::String(Some(String::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(ty: ArrayType, nullable: bool) -> Shape<()> {
        Shape { column: (), ty, nullable }
    }

    #[test]
    fn nulls_travel_as_placeholders_and_a_mask() {
        let (array, mask) = arrays(
            &shape(ArrayType::String, true),
            [Value::String(Some("a".into())), Value::String(None)].into_iter(),
        )
        .expect("strings");
        assert_eq!(
            array,
            Value::Array(
                ArrayType::String,
                Some(Box::new(vec![
                    Value::String(Some("a".into())),
                    Value::String(Some(String::new()))
                ]))
            )
        );
        assert_eq!(
            mask,
            Some(Value::Array(
                ArrayType::Bool,
                Some(Box::new(vec![Value::Bool(Some(false)), Value::Bool(Some(true))]))
            ))
        );
        let (_, mask) =
            arrays(&shape(ArrayType::BigInt, false), [Value::BigInt(Some(7))].into_iter())
                .expect("ints");
        assert_eq!(mask, None);
    }

    #[test]
    fn values_that_do_not_fit_the_column_are_refused() {
        // A NULL in a column declared NOT NULL, and a value of another type.
        assert!(
            arrays(&shape(ArrayType::Bytes, false), [Value::Bytes(None)].into_iter()).is_none()
        );
        assert!(
            arrays(&shape(ArrayType::Int, true), [Value::BigInt(Some(1))].into_iter()).is_none()
        );
        assert!(element_type(&Value::Double(Some(1.0))).is_none());
    }
}
