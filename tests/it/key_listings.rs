//! Listings keyed by raw bytes walk in key order, forwards and backwards, on both engines: a
//! domain's registrations (numeric index order, not text order), a registration's renewals
//! and a resolver's record sets. Rows of the neighbouring keys on either side (the domains,
//! registrations and resolvers next to them, another chain) never leak into a page.

use entities::{
    domain::{self, DomainKey, RawAddress, RawHash},
    registration::{self, RegistrationKey},
    renewal::{self, RenewalKey},
    resolver_record::{self, ResolverRecordKey},
};
use sea_orm::{DatabaseConnection, EntityTrait, IntoActiveModel};

use crate::{
    connection_walk::walk,
    support::{Backend, TestDb},
};

const REGISTRY: [u8; 20] = [0x11; 20];
const RESOLVER: [u8; 20] = [0x4a; 20];

fn domain_key(node: u8) -> DomainKey {
    DomainKey::new(1, &REGISTRY, &[node; 32])
}

fn domain(node: u8, seq: i64, registrations: i32) -> domain::Model {
    domain::Model {
        id: domain_key(node),
        seq: (1 << 32) + seq,
        chain_id: 1,
        label_hash: RawHash::new([node; 32]),
        parent_seq: None,
        owner: Some(RawAddress::new([1; 20])),
        registry_owner: Some(RawAddress::new([1; 20])),
        token_owner: None,
        wrapped_owner: None,
        resolver: None,
        ttl: None,
        name: format!("[{}]", hex::encode([node; 32])),
        depth: 1,
        migrated: true,
        registration_count: registrations,
        registration_start: 10,
        registration_expiry: 20,
        created_block: 1,
        created_at: 2,
        link: Some(0),
    }
}

fn registration(id: RegistrationKey) -> registration::Model {
    registration::Model {
        id,
        kind: "BaseRegistrar".into(),
        registrar_chain_id: 1,
        registrar: format!("0x{}", hex::encode(REGISTRY)),
        registrant: None,
        start: 10,
        expiry: Some(20),
        grace_period: 0,
        base_cost: None,
        premium: None,
        referrer: None,
        fuses: None,
        wrapped: false,
        renewal_count: 0,
        block_number: 1,
    }
}

fn renewal(id: RenewalKey) -> renewal::Model {
    renewal::Model {
        id,
        duration: 5,
        expiry: 25,
        base_cost: None,
        premium: None,
        referrer: None,
        block_number: 2,
        timestamp: 3,
    }
}

fn records(
    chain: u64,
    resolver: &[u8; 20],
    nodes: impl Iterator<Item = u8>,
) -> Vec<resolver_record::Model> {
    nodes
        .map(|n| resolver_record::Model {
            id: ResolverRecordKey::new(chain, resolver, &[n; 32]),
            name: None,
            contenthash: None,
            pubkey_x: None,
            pubkey_y: None,
            version: 0,
        })
        .collect()
}

async fn insert<E, M>(db: &DatabaseConnection, rows: Vec<M>)
where
    E: EntityTrait,
    M: IntoActiveModel<E::ActiveModel>,
    E::ActiveModel: sea_orm::ActiveModelTrait<Entity = E> + Send,
{
    E::insert_many(rows.into_iter().map(IntoActiveModel::into_active_model))
        .exec_without_returning(db)
        .await
        .expect("insert");
}

async fn walks_in_key_order(backend: Backend) {
    let test_db = TestDb::new(backend).await;
    let db = ensemble::store::database::connect(&test_db.url).await.expect("connect");
    // The domain under test (node 0x50) has 13 registrations, inserted out of order; its
    // neighbours (0x4f, 0x51) have two each.
    insert::<domain::Entity, _>(
        &db,
        vec![domain(0x4f, 1, 2), domain(0x50, 2, 13), domain(0x51, 3, 2)],
    )
    .await;
    let mut registrations = Vec::new();
    for index in [7, 0, 12, 3, 10, 1, 11, 2, 9, 4, 8, 6, 5] {
        registrations.push(registration(RegistrationKey::new(&domain_key(0x50), index)));
    }
    for node in [0x4f, 0x51] {
        for index in [0, 1] {
            registrations.push(registration(RegistrationKey::new(&domain_key(node), index)));
        }
    }
    insert::<registration::Entity, _>(&db, registrations).await;
    // The latest registration (12) has 9 renewals; registration 11 has two.
    let latest = RegistrationKey::new(&domain_key(0x50), 12);
    let previous = RegistrationKey::new(&domain_key(0x50), 11);
    let mut renewals: Vec<renewal::Model> = [4, 8, 0, 2, 6, 1, 3, 7, 5]
        .into_iter()
        .map(|i| renewal(RenewalKey::new(&latest, i)))
        .collect();
    renewals.extend([0, 1].map(|i| renewal(RenewalKey::new(&previous, i))));
    insert::<renewal::Entity, _>(&db, renewals).await;
    // The resolver's 11 record sets, and record sets of the resolvers next to it and of the
    // same resolver on another chain.
    let mut below = RESOLVER;
    below[19] -= 1;
    let mut above = RESOLVER;
    above[19] += 1;
    let mut sets =
        records(1, &RESOLVER, [0xff, 0, 0x80, 0x10, 0x7f, 1, 0x20, 0xfe, 2, 0x40, 3].into_iter());
    sets.extend(records(1, &below, [0xff].into_iter()));
    sets.extend(records(1, &above, [0].into_iter()));
    sets.extend(records(8453, &RESOLVER, [0].into_iter()));
    insert::<resolver_record::Entity, _>(&db, sets).await;

    let schema = graphql::build_schema(db.clone());
    let id = domain_key(0x50).to_string();
    let walked = walk(
        &schema,
        &format!("{{ domain(by: {{id: \"{id}\"}}) {{ registrations ARGS }} }}"),
        &["domain", "registrations"],
    )
    .await;
    let expected: Vec<String> = (0..13).map(|i| format!("{id}-{i}")).collect();
    assert_eq!(walked, expected, "{backend:?}: registrations in index order");

    let walked = walk(
        &schema,
        &format!("{{ domain(by: {{id: \"{id}\"}}) {{ registration {{ renewals ARGS }} }} }}"),
        &["domain", "registration", "renewals"],
    )
    .await;
    let expected: Vec<String> = (0..9).map(|i| format!("{latest}-{i}")).collect();
    assert_eq!(walked, expected, "{backend:?}: the latest registration's renewals in order");

    let resolver = format!("1-0x{}", hex::encode(RESOLVER));
    let walked = walk(
        &schema,
        &format!("{{ resolver(by: {{id: \"{resolver}\"}}) {{ records ARGS }} }}"),
        &["resolver", "records"],
    )
    .await;
    let mut nodes = vec![0xff_u8, 0, 0x80, 0x10, 0x7f, 1, 0x20, 0xfe, 2, 0x40, 3];
    nodes.sort_unstable();
    let expected: Vec<String> =
        nodes.iter().map(|n| format!("{resolver}-0x{}", hex::encode([*n; 32]))).collect();
    assert_eq!(walked, expected, "{backend:?}: the resolver's record sets in node order");
}

crate::support::on_both_engines!(walks_in_key_order);
