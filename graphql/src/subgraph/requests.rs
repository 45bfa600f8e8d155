//! [`SubgraphRequests`]: the schema extension that takes requests as The Graph takes them and
//! bounds what they may list.
//!
//! - The Graph accepts a `String` variable where the schema says `ID` (`domain(id: $id)` with
//!   `$id: String!`), and the clients people use rely on it (`@ensdomains/ensjs` does). Such
//!   variables are retyped `ID` before validation, when every use of them is an id.
//! - A collection lists at most `first` (≤ 1000) entities, but nested collections multiply:
//!   the entities a document may list, with every collection at its `first`, are counted
//!   before it runs, and a document over [`MAX_ENTITIES`] is refused (`TOO_MANY_ENTITIES`).

use std::{collections::HashSet, sync::Arc};

use async_graphql::{
    Name, Positioned, Request, ServerResult, Variables,
    extensions::{Extension, ExtensionContext, ExtensionFactory, NextPrepareRequest},
    parser::types::{
        BaseType, DocumentOperations, ExecutableDocument, Selection, SelectionSet, Type,
    },
};
use async_graphql_value::{ConstValue, Value};

use super::{
    model::{ENTITIES, Kind},
    schema::DEFAULT_FIRST,
};
use crate::error::{code, server_error};

/// Most entities one document may list, counting every collection at its `first` times the
/// entities of the collections around it.
pub const MAX_ENTITIES: u64 = 50_000;

/// The extension.
#[derive(Debug, Default)]
pub struct SubgraphRequests;

impl ExtensionFactory for SubgraphRequests {
    fn create(&self) -> Arc<dyn Extension> {
        Arc::new(SubgraphRequests)
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for SubgraphRequests {
    async fn prepare_request(
        &self,
        ctx: &ExtensionContext<'_>,
        mut request: Request,
        next: NextPrepareRequest<'_>,
    ) -> ServerResult<Request> {
        let mut doc = request.parsed_query()?.clone();
        retype_id_variables(&mut doc);
        let listed = entities_listed(&doc, &request.variables);
        if listed > MAX_ENTITIES {
            return Err(server_error(
                code::TOO_MANY_ENTITIES,
                format!(
                    "the query may list {listed} entities (each collection at its `first`, times \
                     the collections around it); at most {MAX_ENTITIES} are allowed"
                ),
            ));
        }
        request.set_parsed_query(doc);
        next.run(ctx, request).await
    }
}

/// Every selection set of the document: its operations' and its fragments'.
fn selection_sets(doc: &ExecutableDocument) -> Vec<&SelectionSet> {
    let mut sets: Vec<&SelectionSet> = match &doc.operations {
        DocumentOperations::Single(op) => vec![&op.node.selection_set.node],
        DocumentOperations::Multiple(ops) => {
            ops.values().map(|op| &op.node.selection_set.node).collect()
        }
    };
    sets.extend(doc.fragments.values().map(|f| &f.node.selection_set.node));
    sets
}

/// Sorts the variables `value` uses: as ids (the value of an `id` key, or of `id_*` keys in
/// filter objects, at any depth) into `ids`, anywhere else into `others`.
fn classify_variables(
    value: &Value,
    as_id: bool,
    ids: &mut HashSet<Name>,
    others: &mut HashSet<Name>,
) {
    match value {
        Value::Variable(name) => {
            if as_id { ids } else { others }.insert(name.clone());
        }
        Value::List(items) => items.iter().for_each(|v| classify_variables(v, as_id, ids, others)),
        Value::Object(fields) => {
            for (key, v) in fields {
                let key_is_id = key.as_str() == "id" || key.as_str().starts_with("id_");
                classify_variables(v, key_is_id, ids, others);
            }
        }
        _ => {}
    }
}

fn walk_arguments(set: &SelectionSet, f: &mut dyn FnMut(&str, &Value)) {
    for selection in &set.items {
        match &selection.node {
            Selection::Field(field) => {
                for (name, value) in &field.node.arguments {
                    f(name.node.as_str(), &value.node);
                }
                walk_arguments(&field.node.selection_set.node, f);
            }
            Selection::InlineFragment(fragment) => {
                walk_arguments(&fragment.node.selection_set.node, f)
            }
            Selection::FragmentSpread(_) => {}
        }
    }
}

fn retype(ty: &mut Type) {
    match &mut ty.base {
        BaseType::Named(name) if name.as_str() == "String" => *name = Name::new("ID"),
        BaseType::List(inner) => retype(inner),
        BaseType::Named(_) => {}
    }
}

/// Retypes `String` variables that are used only as ids to `ID`.
fn retype_id_variables(doc: &mut ExecutableDocument) {
    let mut ids = HashSet::new();
    let mut others = HashSet::new();
    for set in selection_sets(doc) {
        walk_arguments(set, &mut |name, value| {
            classify_variables(value, name == "id", &mut ids, &mut others);
        });
    }
    let only_ids: HashSet<&Name> = ids.difference(&others).collect();
    if only_ids.is_empty() {
        return;
    }
    let fix =
        |definitions: &mut Vec<Positioned<async_graphql::parser::types::VariableDefinition>>| {
            for definition in definitions {
                if only_ids.contains(&definition.node.name.node) {
                    retype(&mut definition.node.var_type.node);
                }
            }
        };
    match &mut doc.operations {
        DocumentOperations::Single(op) => fix(&mut op.node.variable_definitions),
        DocumentOperations::Multiple(ops) => {
            ops.values_mut().for_each(|op| fix(&mut op.node.variable_definitions))
        }
    }
}

/// Names of the fields that list entities.
fn is_collection(name: &str) -> bool {
    ENTITIES.iter().any(|e| {
        e.plural == name
            || e.fields
                .iter()
                .any(|f| f.name == name && (matches!(f.kind, Kind::List(..)) || f.name == "events"))
    })
}

/// The `first` of a collection field: its argument (a literal or a variable), else the default.
fn first_of(arguments: &[(Positioned<Name>, Positioned<Value>)], variables: &Variables) -> u64 {
    let value = arguments.iter().find(|(n, _)| n.node.as_str() == "first").map(|(_, v)| &v.node);
    let n = match value {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::Variable(name)) => match variables.get(name) {
            Some(ConstValue::Number(n)) => n.as_i64(),
            _ => Some(DEFAULT_FIRST),
        },
        _ => Some(DEFAULT_FIRST),
    };
    n.map_or(0, |n| u64::try_from(n).unwrap_or(0))
}

/// The most entities the document's operations may list.
fn entities_listed(doc: &ExecutableDocument, variables: &Variables) -> u64 {
    let operations: Vec<&SelectionSet> = match &doc.operations {
        DocumentOperations::Single(op) => vec![&op.node.selection_set.node],
        DocumentOperations::Multiple(ops) => {
            ops.values().map(|op| &op.node.selection_set.node).collect()
        }
    };
    operations.into_iter().map(|set| listed(doc, set, 1, variables, 0)).max().unwrap_or(0)
}

fn listed(
    doc: &ExecutableDocument,
    set: &SelectionSet,
    outer: u64,
    variables: &Variables,
    depth: usize,
) -> u64 {
    // Fragment cycles are refused before this runs; the depth bound keeps a long chain cheap.
    if depth > 64 {
        return u64::MAX;
    }
    let mut total: u64 = 0;
    for selection in &set.items {
        let more = match &selection.node {
            Selection::Field(field) => {
                let field = &field.node;
                let rows = if is_collection(field.name.node.as_str()) {
                    outer.saturating_mul(first_of(&field.arguments, variables))
                } else {
                    outer
                };
                let own = if rows == outer { 0 } else { rows };
                own.saturating_add(listed(
                    doc,
                    &field.selection_set.node,
                    rows,
                    variables,
                    depth + 1,
                ))
            }
            Selection::InlineFragment(fragment) => {
                listed(doc, &fragment.node.selection_set.node, outer, variables, depth + 1)
            }
            Selection::FragmentSpread(spread) => {
                doc.fragments.get(&spread.node.fragment_name.node).map_or(0, |f| {
                    listed(doc, &f.node.selection_set.node, outer, variables, depth + 1)
                })
            }
        };
        total = total.saturating_add(more);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::parser::parse_query;

    #[test]
    fn string_variables_used_as_ids_become_ids() {
        let mut doc = parse_query(
            "query Q($id: String!, $s: String, $both: String) { domain(id: $id) { id } \
             domains(where: {name: $s, id_gt: $both, labelName: $both}) { id } }",
        )
        .expect("parses");
        retype_id_variables(&mut doc);
        let DocumentOperations::Multiple(ops) = &doc.operations else { panic!("named") };
        let op = ops.values().next().expect("one operation");
        let types: Vec<String> =
            op.node.variable_definitions.iter().map(|d| d.node.var_type.node.to_string()).collect();
        assert_eq!(types, ["ID!", "String", "String"]);
    }

    #[test]
    fn nested_collections_multiply() {
        let doc = parse_query(
            "query($n: Int) { domains(first: 1000) { id subdomains(first: $n) { id events { id } } } }",
        )
        .expect("parses");
        let vars = Variables::from_json(serde_json::json!({ "n": 10 }));
        // 1000 domains, 10 000 subdomains, 1 000 000 events (each at the default 100).
        assert_eq!(entities_listed(&doc, &vars), 1_000 + 10_000 + 1_000_000);
        let small = parse_query("{ domain(id: \"0x00\") { events { id } } }").expect("parses");
        assert_eq!(entities_listed(&small, &Variables::default()), 100);
    }
}
