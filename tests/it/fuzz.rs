//! Hostile input over HTTP: thousands of malformed, oversized, deeply nested and otherwise
//! abusive GraphQL requests: token soup, argument literals, variable values and defaults and
//! directive arguments nested thousands deep, fragments that fan out or chain, and bodies
//! that are not JSON, too large, or streamed without a length. None may produce a 5xx or take
//! the server (here: the test's own process) down, every error carries a stable code, and
//! afterwards the server still answers a normal query correctly.

use ensemble::Service;
use ensemble_devkit::devnet::scenario::ScenarioOptions;
use rand::{Rng, SeedableRng, rngs::StdRng, seq::IndexedRandom};
use serde_json::{Value, json};

use crate::support::{self, Backend, TestDb};

/// Requests sent.
const REQUESTS: usize = 3000;

/// The codes an error may carry (`INTERNAL` is not among them: hostile input is the
/// client's fault, never an internal error).
pub(crate) const CODES: &[&str] = &[
    "INVALID_NAME",
    "INVALID_CURSOR",
    "INVALID_ARGUMENT",
    "TOO_MANY_ALIASES",
    "TOO_MANY_SUBSCRIPTIONS",
    "TIMEOUT",
    "TOO_DEEP",
    "TOO_COMPLEX",
    "TOO_MANY_DIRECTIVES",
    "GRAPHQL_PARSE_FAILED",
    "GRAPHQL_VALIDATION_FAILED",
    "BAD_REQUEST",
    "PAYLOAD_TOO_LARGE",
    "REQUEST_TIMEOUT",
    "TOO_MANY_REQUESTS",
    "UNSUPPORTED_MEDIA_TYPE",
];

const TOKENS: [&str; 40] = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "...",
    "@skip(if: true)",
    "$v",
    "query",
    "fragment",
    "on",
    "domain",
    "domains",
    "account",
    "resolver",
    "subdomains",
    "edges",
    "node",
    "id",
    "parent",
    "canonical",
    "name",
    "interpreted",
    "by:",
    "where:",
    "starts_with:",
    "first:",
    "after:",
    "last:",
    "\"eth\"",
    "\"Vitalik.eth\"",
    "\"\\u0000\"",
    "-1",
    "99999999999",
    "null",
    "true",
    "__schema",
];

fn random_query(rng: &mut StdRng) -> Value {
    match rng.random_range(0..16) {
        // Token soup.
        0 | 1 => {
            let n = rng.random_range(1..60);
            let q: Vec<&str> = (0..n).map(|_| *TOKENS.choose(rng).unwrap()).collect();
            json!({ "query": q.join(" ") })
        }
        // Deep nesting far past the depth limit.
        2 => {
            let depth = rng.random_range(10..300);
            json!({ "query": format!("{{ domain(by: {{name: \"eth\"}}) {{ {} id {} }} }}", "parent {".repeat(depth), "}".repeat(depth)) })
        }
        // Alias fan-out.
        3 => {
            let n = rng.random_range(50..2000);
            let fields: String = (0..n).map(|i| format!("a{i}: domains(where: {{name: {{starts_with: \"n\"}}}}, first: 1000) {{ totalCount }} ")).collect();
            json!({ "query": format!("{{ {fields} }}") })
        }
        // Names: unnormalized, oversized, control characters, odd unicode.
        4 => {
            let names = [
                "A.eth",
                "\u{0}",
                &"a".repeat(70_000)[..rng.random_range(1..40_000)],
                "🏳️‍🌈.eth",
                "..",
                "[zz].eth",
                "a\u{202e}b.eth",
                "xn--.eth",
            ];
            json!({ "query": "query($n: InterpretedName!) { domain(by: {name: $n}) { id } }", "variables": { "n": names.choose(rng).unwrap() } })
        }
        // Wrong variable types and unknown variables.
        5 => {
            json!({ "query": "query($n: InterpretedName!) { domain(by: {name: $n}) { id } }", "variables": { "n": rng.random::<i64>(), "extra": [1, 2, 3] } })
        }
        // Hostile paging.
        6 => {
            let first = [-1i64, 0, 1001, i64::from(i32::MAX), 5];
            let cursor = ["", "%%%", "eyJ9", "WyJhIiwiYiJd", &"A".repeat(5000)];
            json!({ "query": format!("{{ domains(where: {{name: {{starts_with: \"n\"}}}}, first: {}, after: \"{}\") {{ totalCount }} }}", first.choose(rng).unwrap(), cursor.choose(rng).unwrap()) })
        }
        // Substring search with full-text and LIKE syntax, quotes and odd unicode.
        7 => {
            let texts = [
                "\"\"\"",
                "a OR b",
                "NEAR(a b)",
                "ab*",
                "%%%",
                "_\\_",
                "\u{0}\u{0}\u{0}",
                "🚀🚀🚀",
                "x\"y",
                "^abc",
                &"ab".repeat(3000),
            ];
            json!({ "query": "query($t: String!) { domains(where: {name: {contains: $t}}, first: 5) { totalCount edges { node { id } } } }", "variables": { "t": texts.choose(rng).unwrap() } })
        }
        // Event filters with hostile bounds, selectors and cursors.
        8 => {
            let bounds = ["-1", "18446744073709551616", "abc", "0", "99999999999"];
            let query = format!(
                "{{ account(by: {{address: \"0x0000000000000000000000000000000000000001\"}}) {{ events(where: {{timestamp: {{gte: \"{}\", lt: \"{}\"}}, selector: {{eq: \"{}\"}}}}, after: \"{}\") {{ totalCount edges {{ node {{ id }} }} }} }} }}",
                bounds.choose(rng).unwrap(),
                bounds.choose(rng).unwrap(),
                ["0x", "0x00", &format!("0x{}", "ab".repeat(32))].choose(rng).unwrap(),
                [
                    "eyJvZiI6ImV2ZW50cyIsImtleSI6W119",
                    "%%",
                    "eyJvZiI6ImV2ZW50cyIsImtleSI6WzEsMiwzLDQsNV19"
                ]
                .choose(rng)
                .unwrap(),
            );
            json!({ "query": query })
        }
        // Not a query at all.
        9 => json!({ "query": Value::Null, "operationName": rng.random::<u32>() }),
        // Argument literals nested far past any limit, mixing lists and objects.
        10 => {
            let depth = rng.random_range(1..6000);
            let (mut open, mut close) = (String::new(), String::new());
            for _ in 0..depth {
                if rng.random_bool(0.5) {
                    open.push('[');
                    close.insert(0, ']');
                } else {
                    open.push_str("{a: ");
                    close.insert(0, '}');
                }
            }
            let place = [
                format!("{{ domain(by: {{name: {open}\"x\"{close}}}) {{ id }} }}"),
                format!("query($v: String = {open}1{close}) {{ root {{ id }} }}"),
                format!("{{ root {{ id @skip(if: {open}true{close}) }} }}"),
                format!(
                    "query($v: {}String{}) {{ root {{ id }} }}",
                    "[".repeat(depth),
                    "]".repeat(depth)
                ),
                format!("{}{}", "{ root ".repeat(depth), "}".repeat(depth)),
            ];
            json!({ "query": place.choose(rng).unwrap() })
        }
        // Variable values nested deeply (JSON arrays and objects).
        11 => {
            let depth = rng.random_range(1..200);
            let mut value = json!("x");
            for _ in 0..depth {
                value = if rng.random_bool(0.5) { json!([value]) } else { json!({ "a": value }) };
            }
            json!({ "query": "query($v: String) { root { id } }", "variables": { "v": value } })
        }
        // Fragments fanning out (each spreading the next two or more times) or chaining.
        12 => {
            let levels = rng.random_range(1..40);
            let width = rng.random_range(1..4);
            let leaf = ["__typename", "root { __typename }", "a: root { id }"].choose(rng).unwrap();
            let mut query = String::from("query { ...F0 }");
            for i in 0..levels {
                let spreads = format!("...F{} ", i + 1).repeat(width);
                query.push_str(&format!(" fragment F{i} on Query {{ {spreads} }}"));
            }
            query.push_str(&format!(" fragment F{levels} on Query {{ {leaf} }}"));
            json!({ "query": query })
        }
        // A fragment spreading itself, and spreads of unknown fragments.
        13 => {
            let query = [
                "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
                "{ ...Nope }",
                "fragment A on Query { __typename }",
            ]
            .choose(rng)
            .copied();
            json!({ "query": query })
        }
        // Request shapes that are not one GraphQL request.
        14 => [
            json!({ "query": 1 }),
            json!({ "query": "{ root { id } }", "variables": [1] }),
            json!("text"),
            json!(null),
            json!({}),
            json!({ "query": "{ root { id } }", "operationName": "Missing" }),
        ]
        .choose(rng)
        .unwrap()
        .clone(),
        _ => json!([{ "query": "{ __typename }" }, { "query": "{" }]),
    }
}

#[actix_rt::test]
async fn thousands_of_hostile_requests_get_no_5xx() {
    let chain_id = 31_460;
    let (anvil, _driver, scenario) =
        support::devnet(chain_id, ScenarioOptions { eth_names: 12, per_block: 12 }).await;
    let db = TestDb::new(Backend::Sqlite).await;
    let service = Service::start(&support::config(
        &db.url,
        scenario.deployment.chain_config(chain_id, &anvil.url),
    ))
    .await
    .unwrap();
    support::wait_for_block(&service.db, chain_id, scenario.last_block).await;
    let url = format!("http://{}/graphql", service.http_addr);
    let client = crate::support::http_client();
    let mut rng = StdRng::seed_from_u64(6);
    let mut statuses = std::collections::BTreeMap::new();
    for i in 0..REQUESTS {
        let request = if i % 50 == 0 {
            // Raw garbage and oversized bodies, not JSON at all.
            let len = if i % 100 == 0 { 200_000 } else { rng.random_range(1..500) };
            let body: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            client.post(&url).header("content-type", "application/json").body(body)
        } else if i % 50 == 25 {
            // A body streamed without a length (chunked), sometimes past the limit, under
            // another content type.
            let len = [10usize, 60_000, 70_000, 1_000_000][rng.random_range(0..4)];
            let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                vec![Ok(b"{\"query\":\"".to_vec()), Ok(vec![b'a'; len]), Ok(b"\"}".to_vec())];
            let content_type =
                ["text/plain", "multipart/form-data; boundary=x", "application/json"]
                    [rng.random_range(0..3)];
            client
                .post(&url)
                .header("content-type", content_type)
                .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        } else {
            client.post(&url).json(&random_query(&mut rng))
        };
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("request {i} broke the connection: {e}"));
        let status = response.status().as_u16();
        assert!(
            status < 500,
            "request {i} got {status}: {}",
            response.text().await.unwrap_or_default()
        );
        *statuses.entry(status).or_insert(0) += 1;
        let body: Value =
            response.json().await.unwrap_or_else(|e| panic!("request {i}: body not JSON: {e}"));
        if let Some(errors) = body.get("errors").and_then(Value::as_array) {
            for error in errors {
                let code = error["extensions"]["code"].as_str();
                assert!(
                    code.is_some_and(|c| CODES.contains(&c)),
                    "request {i}: an error without a stable code: {error}"
                );
            }
        } else {
            assert_eq!(status, 200, "request {i}: a refusal without errors: {body}");
        }
    }
    eprintln!("statuses: {statuses:?}");
    let answer: Value = client
        .post(&url)
        .json(
            &json!({ "query": "{ domain(by: {name: \"name005.eth\"}) { canonical { depth } } }" }),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["data"]["domain"]["canonical"]["depth"], 2, "still answering: {answer}");
    service.stop().await;
}
