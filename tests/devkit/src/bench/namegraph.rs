//! [`generate`]: a mainnet-shaped ENSv1 namegraph written straight into the database, for
//! benchmarking queries at sizes a devnet cannot reach.
//!
//! Shape (per `domains` requested): 80% `.eth` second-level names, each with a base registrar
//! registration; 17% third-level and 3% fourth-level subnames under random parents; owners
//! drawn from a pool with a heavy head (a few accounts own thousands of names, most own one);
//! half the names have the public resolver with an ETH address record, a fifth of those also
//! a `url` text. Labels are lowercase letters and digits of 3 to 12 characters, with some
//! Unicode and some deliberately shared prefixes (`vitalik…`). Everything follows from the
//! seed, so two runs build byte-identical databases.
//!
//! Rows go through the indexer's own chunked upserts, in transactions of [`BATCH`] domains.

use std::collections::HashSet;

use alloy::primitives::{Address, B256, address};
use entities::{
    domain::{self, RawAddress, RawHash},
    label, registration, resolver_address, resolver_record, resolver_text,
};
use rand::{Rng, SeedableRng, rngs::StdRng};
use sea_orm::{DatabaseConnection, TransactionTrait};

use super::BenchError;
use ensemble::ChainId;
use ensemble::{
    ens::name::{
        child_node, domain_id, hex_address, interpret_label, labelhash, resolver_record_id,
    },
    store::{StoreError, domain_seq::DomainSeqs, name_search, writer::upsert},
};

/// Chain id of the generated namegraph (mainnet).
pub const CHAIN_ID: ChainId = ChainId(1);
/// Mainnet `ENSRegistryWithFallback`.
pub const REGISTRY: Address = address!("0x00000000000C2E074eC69A0dFB2997BA6C7d2e1e");
/// Mainnet `BaseRegistrarImplementation`.
pub const BASE_REGISTRAR: Address = address!("0x57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85");
/// Mainnet public resolver.
pub const PUBLIC_RESOLVER: Address = address!("0x231b0Ee14048e9dCcD1d247744d114a4EB5E8E63");
/// Domains per write transaction.
pub const BATCH: usize = 20_000;
/// First registration time (2019-05-04, the permanent registrar's launch).
const EPOCH: i64 = 1_556_928_000;
const YEAR: i64 = 365 * 24 * 60 * 60;

/// What [`generate`] wrote.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Domains written (top-level domains included).
    pub domains: usize,
    /// Rows written across every table.
    pub rows: usize,
}

/// A domain that later domains may hang under.
#[derive(Clone)]
struct Parent {
    node: B256,
    seq: i64,
    name: String,
    depth: i32,
}

struct Builder {
    rng: StdRng,
    owners: Vec<String>,
    labels_seen: HashSet<B256>,
    /// (parent node, labelhash) of every domain so far: names must not repeat.
    siblings: HashSet<(B256, B256)>,
    /// Creation number of the next domain.
    next_seq: i64,
    batch: Batch,
}

#[derive(Default)]
struct Batch {
    domains: Vec<domain::Model>,
    labels: Vec<label::Model>,
    registrations: Vec<registration::Model>,
    records: Vec<resolver_record::Model>,
    addresses: Vec<resolver_address::Model>,
    texts: Vec<resolver_text::Model>,
}

impl Batch {
    fn rows(&self) -> usize {
        self.domains.len()
            + self.labels.len()
            + self.registrations.len()
            + self.records.len()
            + self.addresses.len()
            + self.texts.len()
    }

    async fn write(&mut self, db: &DatabaseConnection) -> Result<usize, StoreError> {
        let rows = self.rows();
        let txn = db.begin().await.map_err(StoreError::db("begin"))?;
        upsert::<label::Entity, _>(&txn, &self.labels).await?;
        let ids: Vec<&domain::DomainKey> = self.domains.iter().map(|d| &d.id).collect();
        let last = name_search::last_row(&txn).await?;
        name_search::forget(&txn, &ids).await?;
        upsert::<domain::Entity, _>(&txn, &self.domains).await?;
        name_search::index(&txn, &ids, last).await?;
        upsert::<registration::Entity, _>(&txn, &self.registrations).await?;
        upsert::<resolver_record::Entity, _>(&txn, &self.records).await?;
        upsert::<resolver_address::Entity, _>(&txn, &self.addresses).await?;
        upsert::<resolver_text::Entity, _>(&txn, &self.texts).await?;
        txn.commit().await.map_err(StoreError::db("commit"))?;
        *self = Self::default();
        Ok(rows)
    }
}

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzaeiouaeioustnrl0123456789";
const UNICODE: [&str; 4] = ["é", "ü", "🚀", "ß"];
const PREFIXES: [&str; 3] = ["vitalik", "nick", "alpha"];

impl Builder {
    fn label(&mut self) -> String {
        let roll: f64 = self.rng.random();
        let len = self.rng.random_range(3..=12);
        let mut label: String =
            (0..len).map(|_| ALPHABET[self.rng.random_range(0..ALPHABET.len())] as char).collect();
        if roll < 0.01 {
            label.push_str(UNICODE[self.rng.random_range(0..UNICODE.len())]);
        } else if roll < 0.015 {
            label =
                format!("{}{}", PREFIXES[self.rng.random_range(0..PREFIXES.len())], &label[..3]);
        }
        label
    }

    /// An owner: the pool's head is drawn far more often than its tail.
    fn owner(&mut self) -> String {
        let skew = self.rng.random::<f64>().powi(4);
        self.owners[(skew * self.owners.len() as f64) as usize % self.owners.len()].clone()
    }

    /// Whether `label` is still free under `parent`; claims it.
    fn claim(&mut self, parent: &Parent, label: &str) -> bool {
        self.siblings.insert((parent.node, labelhash(label)))
    }

    /// Adds a domain under `parent` (none: a top-level domain) and returns it as a parent.
    fn domain(&mut self, parent: Option<&Parent>, label: &str, registered: bool) -> Parent {
        let hash = labelhash(label);
        let parent_node = parent.map_or(B256::ZERO, |p| p.node);
        let interpreted = interpret_label(label);
        if self.labels_seen.insert(hash) {
            self.batch.labels.push(label::Model {
                label_hash: RawHash::new(hash.0),
                label: Some(label.to_owned()),
                normalized: interpreted == label,
            });
        }
        let node = child_node(parent_node, hash);
        let id = domain_id(CHAIN_ID, REGISTRY, node);
        let (name, depth) = match parent {
            Some(p) => (format!("{interpreted}.{}", p.name), p.depth + 1),
            None => (interpreted, 1),
        };
        let owner = self.owner();
        let created_at = EPOCH + self.rng.random_range(0..6 * YEAR);
        let created_block = 7_700_000 + (created_at - EPOCH) / 12;
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut row = domain::Model {
            id: id.clone(),
            seq,
            chain_id: CHAIN_ID.column(),
            label_hash: RawHash::new(hash.0),
            parent_seq: parent.map(|p| p.seq),
            owner: owner.parse().ok(),
            registry_owner: owner.parse().ok(),
            token_owner: None,
            wrapped_owner: None,
            resolver: None,
            ttl: None,
            name: name.clone(),
            depth,
            migrated: true,
            registration_count: 0,
            registration_start: i64::MAX,
            registration_expiry: i64::MAX,
            created_block,
            created_at,
            link: Some(domain::LINK_ROOT),
        };
        if registered {
            let expiry = created_at + self.rng.random_range(1..=5) * YEAR;
            self.batch.registrations.push(registration::Model {
                id: registration::RegistrationKey::new(&id, 0),
                kind: "BaseRegistrar".into(),
                registrar_chain_id: CHAIN_ID.column(),
                registrar: hex_address(BASE_REGISTRAR),
                registrant: Some(owner.clone()),
                start: created_at,
                expiry: Some(expiry),
                grace_period: 90 * 24 * 60 * 60,
                base_cost: Some("3000000000000000".into()),
                premium: Some("0".into()),
                referrer: None,
                fuses: None,
                wrapped: false,
                renewal_count: 0,
                block_number: created_block,
            });
            row.registration_count = 1;
            row.registration_start = created_at;
            row.registration_expiry = expiry;
        }
        if self.rng.random_bool(0.5) {
            row.resolver = Some(RawAddress::new(PUBLIC_RESOLVER.0.0));
            let record_id = resolver_record_id(CHAIN_ID, PUBLIC_RESOLVER, node);
            self.batch.records.push(resolver_record::Model {
                id: record_id.clone(),
                name: None,
                contenthash: None,
                pubkey_x: None,
                pubkey_y: None,
                version: 0,
            });
            self.batch.addresses.push(resolver_address::Model {
                record_id: record_id.clone(),
                coin_type: 60,
                address: owner,
            });
            if self.rng.random_bool(0.2) {
                let key = "url".to_owned();
                self.batch.texts.push(resolver_text::Model {
                    record_id,
                    key_hash: RawHash::new(alloy::primitives::keccak256(&key).0),
                    key,
                    value: Some(format!("https://{label}.example")),
                });
            }
        }
        self.batch.domains.push(row);
        Parent { node, seq, name, depth }
    }
}

/// Writes about `domains` domains generated from `seed`, calling `progress(written)` after
/// each transaction.
pub async fn generate(
    db: &DatabaseConnection,
    domains: usize,
    seed: u64,
    mut progress: impl FnMut(usize),
) -> Result<Generated, BenchError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let owners = (0..(domains / 5).max(10))
        .map(|_| hex_address(Address::from(rng.random::<[u8; 20]>())))
        .collect();
    let mut b = Builder {
        rng,
        owners,
        labels_seen: HashSet::new(),
        siblings: HashSet::new(),
        next_seq: DomainSeqs::default().next(db, CHAIN_ID).await?,
        batch: Batch::default(),
    };
    let mut out = Generated::default();
    let eth = b.domain(None, "eth", false);
    let reverse = b.domain(None, "reverse", false);
    b.domain(Some(&reverse), "addr", false);
    let seconds = domains * 80 / 100;
    let thirds = domains * 17 / 100;
    let fourths = domains.saturating_sub(seconds + thirds + b.batch.domains.len());
    let mut level2: Vec<Parent> = Vec::with_capacity(seconds);
    let mut level3: Vec<Parent> = Vec::with_capacity(thirds);
    for (count, level) in [(seconds, 2), (thirds, 3), (fourths, 4)] {
        let mut made = 0;
        while made < count {
            let label = b.label();
            let parent = match level {
                2 => eth.clone(),
                3 => level2[b.rng.random_range(0..level2.len())].clone(),
                _ => level3[b.rng.random_range(0..level3.len())].clone(),
            };
            if !b.claim(&parent, &label) {
                continue;
            }
            let added = b.domain(Some(&parent), &label, level == 2);
            made += 1;
            match level {
                2 => level2.push(added),
                3 => level3.push(added),
                _ => {}
            }
            if b.batch.domains.len() >= BATCH {
                out.domains += b.batch.domains.len();
                out.rows += b.batch.write(db).await?;
                progress(out.domains);
            }
        }
    }
    out.domains += b.batch.domains.len();
    out.rows += b.batch.write(db).await?;
    progress(out.domains);
    Ok(out)
}

/// Gathers planner statistics after a bulk load (on SQLite from a sample of each index, as
/// `PRAGMA optimize` does, so it takes seconds rather than a full pass).
pub async fn analyze(db: &DatabaseConnection) -> Result<(), BenchError> {
    use sea_orm::{ConnectionTrait, DbBackend};
    if db.get_database_backend() == DbBackend::Sqlite {
        db.execute_unprepared("PRAGMA analysis_limit = 1000")
            .await
            .map_err(StoreError::db("analyze"))?;
    }
    db.execute_unprepared("ANALYZE").await.map_err(StoreError::db("analyze"))?;
    Ok(())
}
