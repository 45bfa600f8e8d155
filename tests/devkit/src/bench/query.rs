//! [`run`]: times the GraphQL queries users run most, executed by the real schemas (the
//! Omnigraph's and the subgraph API's) against whatever database it is given, and reports
//! p50/p99 per query.
//!
//! Variables are drawn from the database itself (random domains by a random point of the
//! primary key, and their owners), so the bench works on a generated namegraph and on a real
//! index alike, and heavy owners come up as often as they own names. Each query runs `runs`
//! times or for [`TIME_BUDGET`], whichever ends first (but at least [`MIN_RUNS`] times).

use std::time::{Duration, Instant};

use entities::domain;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use serde_json::{Value, json};

use super::BenchError;
use ensemble::store::StoreError;

/// Longest one query is repeated.
pub const TIME_BUDGET: Duration = Duration::from_secs(20);
/// Fewest runs per query, whatever the time.
pub const MIN_RUNS: usize = 20;

/// Timings of one query.
#[derive(Clone, Debug)]
pub struct QueryTiming {
    /// What was asked.
    pub name: String,
    /// How often.
    pub runs: usize,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
}

/// A query and how to vary its variables per run.
struct Case {
    name: String,
    query: String,
    variables: Box<dyn Fn(&mut StdRng) -> Value>,
}

/// `count` random domains: each the first row at or after a random point of the id space.
async fn sample(
    db: &DatabaseConnection,
    rng: &mut StdRng,
    count: usize,
) -> Result<Vec<domain::Model>, BenchError> {
    let first = domain::Entity::find()
        .order_by_asc(domain::Column::Id)
        .one(db)
        .await
        .map_err(StoreError::db("sample"))?
        .ok_or(BenchError::Empty)?;
    // Keys are (chain, registry, node); nodes are uniform, so a random node is a uniform
    // point of the key space.
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let point = first.id.with_node(&rng.random::<[u8; 32]>());
        let row = domain::Entity::find()
            .filter(domain::Column::Id.gte(point))
            .order_by_asc(domain::Column::Id)
            .one(db)
            .await
            .map_err(StoreError::db("sample"))?;
        out.push(row.unwrap_or_else(|| first.clone()));
    }
    Ok(out)
}

/// The `p` quantile of `sorted` (nearest rank).
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn pick<T: Clone>(rng: &mut StdRng, items: &[T]) -> T {
    items[rng.random_range(0..items.len())].clone()
}

fn cases(domains: &[domain::Model]) -> Vec<Case> {
    let names: Vec<String> = domains.iter().map(|d| d.name.clone()).collect();
    let owners: Vec<String> =
        domains.iter().filter_map(|d| d.owner.as_ref().map(ToString::to_string)).collect();
    let resolved: Vec<(i64, String, String)> = domains
        .iter()
        .filter_map(|d| d.resolver.as_ref().map(|r| (d.chain_id, r.to_string(), d.name.clone())))
        .collect();
    let fixed = |_: &mut StdRng| json!({});
    let mut cases = vec![
        Case {
            name: "domain by name".into(),
            query: "query($n: InterpretedName!) { domain(by: {name: $n}) { id canonical { name { interpreted } } owner { address } registration { expiry } resolver { assigned { id } } } }".into(),
            variables: Box::new(move |rng| json!({ "n": pick(rng, &names) })),
        },
        Case {
            name: "subdomains of eth, first 20".into(),
            query: "{ domain(by: {name: \"eth\"}) { subdomains(first: 20) { edges { node { canonical { name { interpreted } } } } } } }".into(),
            variables: Box::new(fixed),
        },
        Case {
            name: "starts_with \"vitalik\", first 20".into(),
            query: "{ domains(where: {name: {starts_with: \"vitalik\"}}, first: 20) { edges { node { canonical { name { interpreted } } } } } }".into(),
            variables: Box::new(fixed),
        },
    ];
    for by in ["NAME", "DEPTH", "REGISTRATION_TIMESTAMP", "REGISTRATION_EXPIRY"] {
        for dir in ["ASC", "DESC"] {
            cases.push(Case {
                name: format!("starts_with \"a\", first 20, {by} {dir}"),
                query: format!("{{ domains(where: {{name: {{starts_with: \"a\"}}}}, order: {{by: {by}, dir: {dir}}}, first: 20) {{ edges {{ node {{ canonical {{ name {{ interpreted }} }} }} }} }} }}"),
                variables: Box::new(fixed),
            });
        }
    }
    cases.push(Case {
        name: "contains \"ali\", first 20".into(),
        query: "{ domains(where: {name: {contains: \"ali\"}}, first: 20) { edges { node { canonical { name { interpreted } } } } } }".into(),
        variables: Box::new(fixed),
    });
    cases.push(Case {
        name: "account domains, first 20".into(),
        query: "query($a: Address!) { account(by: {address: $a}) { domains(first: 20) { edges { node { canonical { name { interpreted } } } } } } }".into(),
        variables: Box::new(move |rng| json!({ "a": pick(rng, &owners) })),
    });
    cases.push(Case {
        name: "resolver records of a name".into(),
        query: "query($c: ChainId!, $r: Address!, $n: InterpretedName!) { resolver(by: {contract: {chainId: $c, address: $r}}) { records_(by: {name: $n}) { addresses { coinType address } texts { key value } contenthash } } }".into(),
        variables: Box::new(move |rng| {
            let (chain, resolver, name) = pick(rng, &resolved);
            json!({ "c": chain, "r": resolver, "n": name })
        }),
    });
    cases
}

/// The subgraph API's common queries, as `@ensdomains/ensjs` sends them.
fn subgraph_cases(domains: &[domain::Model]) -> Vec<Case> {
    let owners: Vec<String> =
        domains.iter().filter_map(|d| d.owner.as_ref().map(ToString::to_string)).collect();
    let ids: Vec<String> = domains.iter().map(|d| d.node_hex()).collect();
    let fixed = |_: &mut StdRng| json!({});
    let details = "id name labelName labelhash isMigrated createdAt resolvedAddress { id } \
        owner { id } registrant { id } wrappedOwner { id } parent { id name } \
        registration { registrationDate expiryDate } wrappedDomain { expiryDate fuses }";
    let names_for_address = format!(
        "query($a: String!, $now: BigInt!) {{ domains(first: 100, orderBy: name, \
         orderDirection: asc, where: {{and: [{{or: [{{owner: $a}}, {{registrant: $a}}, \
         {{wrappedOwner: $a}}, {{resolvedAddress: $a}}]}}, {{parent_not: \
         \"0x91d1777781884d03a6757a803996e38de2a42967fb37eeaca72729271025a9e2\"}}, \
         {{or: [{{expiryDate_gt: $now}}, {{expiryDate: null}}]}}]}}) {{ {details} }} }}"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string();
    vec![
        Case {
            name: "subgraph: names for an address (ensjs), first 100".into(),
            query: names_for_address,
            variables: Box::new(move |rng| json!({ "a": pick(rng, &owners), "now": now })),
        },
        Case {
            name: "subgraph: subnames of eth (ensjs), first 100 by name".into(),
            query: format!(
                "query($id: String!) {{ domain(id: $id) {{ subdomains(first: 100, \
                 orderBy: name, orderDirection: asc) {{ {details} }} }} }}"
            ),
            variables: Box::new(
                |_| json!({ "id": "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae" }),
            ),
        },
        Case {
            name: "subgraph: domain by id with registration".into(),
            query: format!("query($id: String!) {{ domain(id: $id) {{ {details} }} }}"),
            variables: Box::new(move |rng| json!({ "id": pick(rng, &ids) })),
        },
        Case {
            name: "subgraph: name_contains \"ali\", first 20".into(),
            query: "{ domains(first: 20, where: {name_contains: \"ali\"}) { id name } }".into(),
            variables: Box::new(fixed),
        },
        Case {
            name: "subgraph: labelName_starts_with \"vitalik\", first 20".into(),
            query:
                "{ domains(first: 20, where: {labelName_starts_with: \"vitalik\"}) { id name } }"
                    .into(),
            variables: Box::new(fixed),
        },
    ]
}

/// Runs every query up to `runs` times against `db`.
pub async fn run(
    db: &DatabaseConnection,
    runs: usize,
    seed: u64,
) -> Result<Vec<QueryTiming>, BenchError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let domains = sample(db, &mut rng, 1000).await?;
    let schema = graphql::build_schema(db.clone());
    // The subgraph API over the registry of the sampled names.
    let registry: [u8; 20] = domains[0].id.registry().try_into().unwrap_or_default();
    let scope = graphql::subgraph::SubgraphScope {
        chain_id: domains[0].id.chain_id(),
        registry,
        old_registry: None,
        registrar_name: "eth".into(),
        common_set_rows: graphql::subgraph::schema::COMMON_SET_ROWS,
    };
    let subgraph = graphql::subgraph::build_subgraph_schema(db.clone(), scope)
        .map_err(|e| BenchError::Query { name: "subgraph schema".into(), errors: e.to_string() })?;
    let mut out = Vec::new();
    let all = cases(&domains).into_iter().map(|c| (false, c));
    for (on_subgraph, case) in all.chain(subgraph_cases(&domains).into_iter().map(|c| (true, c))) {
        let started = Instant::now();
        let mut times = Vec::with_capacity(runs);
        while times.len() < runs.max(1)
            && (times.len() < MIN_RUNS || started.elapsed() < TIME_BUDGET)
        {
            let request = async_graphql::Request::new(case.query.as_str())
                .variables(async_graphql::Variables::from_json((case.variables)(&mut rng)));
            let at = Instant::now();
            let response = if on_subgraph {
                async_graphql::Executor::execute(&subgraph, request).await
            } else {
                schema.execute(request).await
            };
            times.push(at.elapsed());
            if !response.errors.is_empty() {
                return Err(BenchError::Query {
                    name: case.name,
                    errors: format!("{:?}", response.errors),
                });
            }
        }
        times.sort_unstable();
        let timing = QueryTiming {
            name: case.name,
            runs: times.len(),
            p50: percentile(&times, 0.50),
            p99: percentile(&times, 0.99),
        };
        tracing::info!(target: "bench", query = %timing.name, runs = timing.runs, p50 = ?timing.p50, p99 = ?timing.p99, "Query timed");
        out.push(timing);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_ranks() {
        let times: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&times, 0.5), Duration::from_millis(50));
        assert_eq!(percentile(&times, 0.99), Duration::from_millis(99));
        assert_eq!(percentile(&times[..1], 0.99), Duration::from_millis(1));
    }
}
