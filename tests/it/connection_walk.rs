//! Walking a GraphQL connection page by page, forwards and backwards, as a client does:
//! the listing tests compare the walks with the rows they expect.

use serde_json::{Value, json};

/// The data of `query`, which must answer without errors.
pub(crate) async fn gql(schema: &graphql::EnsSchema, query: &str) -> Value {
    let response = schema.execute(query).await;
    assert!(response.errors.is_empty(), "{query}: {:?}", response.errors);
    response.data.into_json().unwrap()
}

/// The ids of a connection walked with `first: 2` forwards, then with `last: 2` backwards;
/// both walks must agree.
pub(crate) async fn walk(schema: &graphql::EnsSchema, wrap: &str, path: &[&str]) -> Vec<String> {
    let at = |mut v: Value| {
        for key in path {
            v = v[*key].clone();
        }
        v
    };
    let fields = "{ edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }";
    let (mut forwards, mut after) = (Vec::new(), None::<String>);
    loop {
        let cursor = after.as_ref().map(|c| format!(", after: \"{c}\"")).unwrap_or_default();
        let page =
            at(gql(schema, &wrap.replace("ARGS", &format!("(first: 2{cursor}) {fields}"))).await);
        forwards.extend(ids(&page));
        if page["pageInfo"]["hasNextPage"] != json!(true) {
            break;
        }
        after = page["pageInfo"]["endCursor"].as_str().map(str::to_owned);
    }
    let (mut backwards, mut before) = (Vec::new(), None::<String>);
    loop {
        let cursor = before.as_ref().map(|c| format!(", before: \"{c}\"")).unwrap_or_default();
        let page =
            at(gql(schema, &wrap.replace("ARGS", &format!("(last: 2{cursor}) {fields}"))).await);
        let mut chunk = ids(&page);
        chunk.extend(backwards);
        backwards = chunk;
        if page["pageInfo"]["hasPreviousPage"] != json!(true) {
            break;
        }
        before = page["pageInfo"]["startCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(forwards, backwards, "{wrap}: forwards and backwards differ");
    forwards
}

pub(crate) fn ids(page: &Value) -> Vec<String> {
    page["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"]["id"].as_str().unwrap().to_owned())
        .collect()
}
