//! GraphQL against a real (migrated, SQLite) database: hostile input gets errors with stable
//! codes, never a panic, and the schema keeps answering.

use ensemble::store::database;
use serde_json::json;

use crate::support::{Backend, TestDb};

fn code(response: &async_graphql::Response) -> Option<String> {
    response
        .errors
        .first()
        .and_then(|e| e.extensions.as_ref())
        .and_then(|x| x.get("code"))
        .map(|v| v.to_string().trim_matches('"').to_owned())
}

#[actix_rt::test]
async fn hostile_queries_get_coded_errors() {
    let db = TestDb::new(Backend::Sqlite).await;
    let conn = database::connect(&db.url).await.unwrap();
    let schema = graphql::build_schema(conn);
    let cases = [
        (r#"{ domain(by: {name: "Vitalik.eth"}) { id } }"#.to_owned(), Some("INVALID_NAME")),
        (format!(r#"{{ domain(by: {{name: "{}"}}) {{ id }} }}"#, "a".repeat(40_000)), Some("INVALID_NAME")),
        (format!(r#"{{ domain(by: {{name: "{}eth"}}) {{ id }} }}"#, "a.".repeat(40)), Some("INVALID_NAME")),
        (r#"{ domain(by: {name: "a..eth"}) { id } }"#.to_owned(), Some("INVALID_NAME")),
        (r#"{ domains(where: {name: {eq: "eth"}}, after: "not-a-cursor") { totalCount } }"#.to_owned(), Some("INVALID_CURSOR")),
        (r#"{ domains(where: {name: {starts_with: "a"}}, first: 100000) { totalCount } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ domains(where: {name: {starts_with: "a"}}, first: -1) { totalCount } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ domains(where: {name: {starts_with: ""}}) { totalCount } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ account(by: {address: "0x1234"}) { id } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ resolver(by: {id: "nonsense"}) { id } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ resolver(by: {contract: {chainId: 1, address: "0x0000000000000000000000000000000000000001"}}) { records_(by: {node: "0x12"}) { id } } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ domains(where: {name: {contains: "ab"}}) { totalCount } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ registry(by: {id: "1-0x0000000000000000000000000000000000000001-0x12"}) { id } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (r#"{ account(by: {id: "0x0000000000000000000000000000000000000001"}) { events(where: {timestamp: {gt: "5", lt: "4"}}) { totalCount } } }"#.to_owned(), Some("INVALID_ARGUMENT")),
        (format!(r#"{{ account(by: {{id: "0x0000000000000000000000000000000000000001"}}) {{ events(where: {{from: {{in: [{}]}}}}) {{ totalCount }} }} }}"#, vec!["\"0x0000000000000000000000000000000000000001\""; 101].join(",")), Some("INVALID_ARGUMENT")),
        ((0..65).map(|i| format!("a{i}: root {{ id }}")).collect::<Vec<_>>().join(" ").replace("a0:", "{ a0:") + " }", Some("TOO_MANY_ALIASES")),
    ];
    for (query, expected) in cases {
        let response = schema.execute(query.as_str()).await;
        assert_eq!(code(&response).as_deref(), expected, "{}", &query[..query.len().min(120)]);
    }

    // Depth and complexity limits refuse runaway nesting before touching the database.
    let deep = format!(
        "{{ domain(by: {{name: \"eth\"}}) {{ {} id {} }} }}",
        "parent {".repeat(40),
        "}".repeat(40)
    );
    assert!(!schema.execute(deep.as_str()).await.errors.is_empty(), "deep query must be refused");

    // Still answering, with LIKE and FTS metacharacters taken literally, and 64 aliases are
    // fine.
    let ok = schema.execute(r#"{ domains(where: {name: {starts_with: "%_"}}) { totalCount } c: domains(where: {name: {contains: "\"%_*"}}) { totalCount } domain(by: {name: "eth"}) { id } }"#).await;
    assert!(ok.errors.is_empty(), "{:?}", ok.errors);
    assert_eq!(
        ok.data.into_json().unwrap(),
        json!({ "domains": { "totalCount": 0 }, "c": { "totalCount": 0 }, "domain": null })
    );
    let aliases = (0..64).map(|i| format!("a{i}: root {{ id }}")).collect::<Vec<_>>().join(" ");
    let ok = schema.execute(format!("{{ {aliases} }}").as_str()).await;
    assert!(ok.errors.is_empty(), "{:?}", ok.errors);
}
