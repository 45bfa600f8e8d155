//! Handler suite: real ABI-encoded logs decoded by the real decoder and applied through the
//! entity store to a real (SQLite) database, then read back after a flush. The NameWrapper has
//! no bytecode on npm, so its events are covered here.

use alloy::{
    ens::namehash,
    primitives::{Address, B256, Bytes, LogData, U256, keccak256},
    sol_types::SolEvent,
};
use ensemble::{
    ens::{
        DecodedEvent, EventMeta, HandlerError, IndexContext,
        abi::{BaseRegistrar, LegacyController, NameWrapper, Registry, Resolver, ThreeDnsToken},
        apply_event,
        canonical::Links,
        decode::decode_log,
        name::{child_node, encoded_label_hash, labelhash},
        role::ContractRole,
    },
    store::{Checkpoint, EntityStore, database},
};
use entities::{
    domain::{self, RawAddress},
    registration, renewal, resolver_address, resolver_record, resolver_text,
};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use crate::support::{Backend, TestDb};

/// A domain row's form of a non-zero address.
fn raw(address: Address) -> Option<RawAddress> {
    Some(RawAddress::new(address.0.0))
}

pub(crate) const REGISTRY: Address = Address::repeat_byte(0x11);
const OLD_REGISTRY: Address = Address::repeat_byte(0x10);
const REGISTRAR: Address = Address::repeat_byte(0x22);
const CONTROLLER: Address = Address::repeat_byte(0x33);
const WRAPPER: Address = Address::repeat_byte(0x44);
const RESOLVER: Address = Address::repeat_byte(0x55);
const THREE_DNS: Address = Address::repeat_byte(0x3d);
pub(crate) const ALICE: Address = Address::repeat_byte(0xa1);
const BOB: Address = Address::repeat_byte(0xb0);
const CAROL: Address = Address::repeat_byte(0xc0);

/// One chain's handler state over a test database.
pub(crate) struct Bed {
    _db: Option<TestDb>,
    pub(crate) conn: DatabaseConnection,
    pub(crate) store: EntityStore,
    pub(crate) ctx: IndexContext,
    block: u64,
    log_index: u64,
}

impl Bed {
    async fn new() -> Self {
        Self::with_budget(1000).await
    }

    /// A bed whose store has `budget` bytes of memory (0: nothing is cached at all).
    async fn with_budget(budget: u64) -> Self {
        let db = TestDb::new(Backend::Sqlite).await;
        let mut bed = Self::chain(&db.url, 1, budget).await;
        bed._db = Some(db);
        bed
    }

    /// Chain `chain_id`'s handler state over the database at `url` (several chains may
    /// share one), with `budget` bytes of memory.
    pub(crate) async fn chain(url: &str, chain_id: u64, budget: u64) -> Self {
        let conn = database::connect(url).await.unwrap();
        let store = EntityStore::new(conn.clone(), chain_id.into(), budget);
        let ctx = IndexContext {
            name_wrapper: Some(WRAPPER),
            ..IndexContext::new(chain_id.into(), REGISTRY)
        };
        Self { _db: None, conn, store, ctx, block: 1, log_index: 0 }
    }

    /// Decodes `log` as emitted by `address` and applies it.
    async fn emit(&mut self, address: Address, log: LogData) -> Result<(), HandlerError> {
        let role = match address {
            REGISTRY => Some(ContractRole::Registry),
            OLD_REGISTRY => Some(ContractRole::RegistryOld),
            REGISTRAR => Some(ContractRole::BaseRegistrar),
            CONTROLLER => Some(ContractRole::Controller),
            WRAPPER => Some(ContractRole::NameWrapper),
            THREE_DNS => Some(ContractRole::ThreeDnsToken),
            _ => None,
        };
        self.log_index += 1;
        let meta = EventMeta {
            chain_id: self.ctx.chain_id,
            block_number: self.block,
            block_hash: B256::repeat_byte(self.block as u8),
            timestamp: 1_000_000 + self.block * 12,
            tx_hash: B256::ZERO,
            tx_index: 0,
            log_index: self.log_index,
            address,
            tx_from: Address::ZERO,
            tx_to: None,
            log: std::sync::Arc::new(log.clone()),
        };
        for event in decode_log(role, &log).expect("decodes") {
            apply_event(&self.ctx, &mut self.store, &DecodedEvent { meta: meta.clone(), event })
                .await?;
        }
        Ok(())
    }

    pub(crate) async fn ok(&mut self, address: Address, log: LogData) {
        self.emit(address, log).await.expect("applies");
    }

    pub(crate) async fn flush(&mut self) {
        let cp = Checkpoint {
            chain_id: self.ctx.chain_id,
            block_number: self.block,
            block_hash: "0x".into(),
        };
        self.store.flush(&cp, None).await.unwrap();
        self.block += 1;
    }

    pub(crate) async fn domain(&self, name: &str) -> domain::Model {
        domain::Entity::find_by_id(self.ctx.domain_id(namehash(name)))
            .one(&self.conn)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    async fn registration(&self, name: &str) -> registration::Model {
        let id = self.domain(name).await.registration_id().expect("has a registration");
        registration::Entity::find_by_id(id).one(&self.conn).await.unwrap().unwrap()
    }

    /// The registrar renews `label.eth` to expiry 3,000,000, then the controller's renewal
    /// names the label in plaintext, which heals it.
    async fn renew_and_heal(&mut self, label: &str) {
        let token = labelhash(label);
        self.ok(
            REGISTRAR,
            BaseRegistrar::NameRenewed {
                id: U256::from_be_bytes(token.0),
                expires: U256::from(3_000_000),
            }
            .encode_log_data(),
        )
        .await;
        self.ok(
            CONTROLLER,
            LegacyController::NameRenewed {
                name: label.into(),
                label: token,
                cost: U256::from(1),
                expires: U256::from(3_000_000),
            }
            .encode_log_data(),
        )
        .await;
    }

    /// `eth` under the root, and `label.eth` registered to `owner` through registrar + controller.
    pub(crate) async fn register(&mut self, label: &str, owner: Address, heal: bool) {
        let eth = namehash("eth");
        if self.store.domain(&self.ctx.domain_id(eth)).await.unwrap().is_none() {
            self.ok(
                REGISTRY,
                Registry::NewOwner { node: B256::ZERO, label: keccak256("eth"), owner: REGISTRAR }
                    .encode_log_data(),
            )
            .await;
        }
        let token = U256::from_be_bytes(labelhash(label).0);
        self.ok(
            REGISTRAR,
            BaseRegistrar::Transfer { from: Address::ZERO, to: owner, tokenId: token }
                .encode_log_data(),
        )
        .await;
        self.ok(
            REGISTRY,
            Registry::NewOwner { node: eth, label: labelhash(label), owner }.encode_log_data(),
        )
        .await;
        self.ok(
            REGISTRAR,
            BaseRegistrar::NameRegistered { id: token, owner, expires: U256::from(2_000_000) }
                .encode_log_data(),
        )
        .await;
        if heal {
            self.ok(
                CONTROLLER,
                LegacyController::NameRegistered {
                    name: label.into(),
                    label: labelhash(label),
                    owner,
                    cost: U256::from(7),
                    expires: U256::from(2_000_000),
                }
                .encode_log_data(),
            )
            .await;
        }
    }
}

fn dns(name: &str) -> Bytes {
    let mut out = Vec::new();
    for label in name.split('.') {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.into()
}

/// A stored domain that is updated while no cache holds it is not new: a heal that renames
/// it still finds its stored children. (The store used to guess newness from the cache, so an
/// uncached stored domain looked new and its children were looked for in memory only.)
#[actix_rt::test]
async fn three_dns_tokens_are_registries_of_their_own_outside_the_namegraph() {
    let mut bed = Bed::new().await;
    let chain = bed.ctx.chain_id;
    bed.ctx.three_dns = Some(Box::new(IndexContext {
        links: Links::detached(chain),
        ..IndexContext::new(chain, THREE_DNS)
    }));
    let new_owner = |parent: &str, label: &str, owner: Address| {
        Registry::NewOwner { node: namehash(parent), label: keccak256(label), owner }
            .encode_log_data()
    };
    bed.ok(
        THREE_DNS,
        Registry::NewOwner { node: B256::ZERO, label: keccak256("xyz"), owner: THREE_DNS }
            .encode_log_data(),
    )
    .await;
    bed.ok(THREE_DNS, new_owner("xyz", "example", ALICE)).await;
    let node = namehash("example.xyz");
    bed.ok(
        THREE_DNS,
        ThreeDnsToken::RegistrationCreated {
            node,
            tld: namehash("xyz"),
            fqdn: dns("example.xyz"),
            registrant: ALICE,
            controlBitmap: 0,
            expiry: 2_000_000,
        }
        .encode_log_data(),
    )
    .await;
    bed.ok(
        THREE_DNS,
        ThreeDnsToken::RegistrationExtended { node, duration: 1_000_000, newExpiry: 3_000_000 }
            .encode_log_data(),
    )
    .await;
    bed.ok(THREE_DNS, Registry::Transfer { node, owner: BOB }.encode_log_data()).await;
    bed.flush().await;

    // Keyed by the token, named from the registration's plaintext, never canonical.
    let id = ensemble::ens::name::domain_id(chain, THREE_DNS, node);
    let row = domain::Entity::find_by_id(id).one(&bed.conn).await.unwrap().expect("3DNS domain");
    assert_eq!(row.name, "example.xyz");
    assert_eq!(row.owner, raw(BOB));
    assert_eq!(row.link, None);
    assert_eq!(row.registration_expiry, 3_000_000);
    let reg = registration::Entity::find_by_id(row.registration_id().unwrap())
        .one(&bed.conn)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reg.kind, "ThreeDNS");
    assert_eq!(reg.registrant.as_deref(), Some(format!("{ALICE:#x}").as_str()));
    assert_eq!((reg.expiry, reg.renewal_count), (Some(3_000_000), 1));
    // Nothing landed in the chain's own registry.
    assert!(bed.store.domain(&bed.ctx.domain_id(node)).await.unwrap().is_none());
    // A registration for a node the token never created is a skippable error, not a panic.
    let unknown = bed
        .emit(
            THREE_DNS,
            ThreeDnsToken::RegistrationExtended {
                node: namehash("nobody.xyz"),
                duration: 1,
                newExpiry: 1,
            }
            .encode_log_data(),
        )
        .await;
    assert!(
        unknown.is_err_and(|e| matches!(e, HandlerError::UnknownNode { .. }) && !e.is_fatal()),
        "unknown 3DNS node"
    );
}

#[actix_rt::test]
async fn heal_reaches_the_stored_children_of_an_uncached_domain_updated_first() {
    let mut bed = Bed::with_budget(0).await;
    bed.register("carol", CAROL, false).await;
    let carol = namehash("carol.eth");
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: carol, label: labelhash("sub"), owner: BOB }.encode_log_data(),
    )
    .await;
    bed.flush().await;

    // One batch: the registrar renews `carol.eth` (its domain row is read from the database
    // and stored again), then the controller's renewal carries the plaintext label.
    bed.renew_and_heal("carol").await;
    bed.flush().await;
    assert_eq!(bed.domain("carol.eth").await.name, "carol.eth");
    assert_eq!(
        bed.domain("sub.carol.eth").await.name,
        format!("{}.carol.eth", encoded_label_hash(labelhash("sub"))),
        "the stored child is renamed too"
    );
}

#[actix_rt::test]
async fn heal_rerenders_names_and_descendants_in_db_and_in_memory() {
    let mut bed = Bed::new().await;
    bed.register("alice", ALICE, false).await;
    let alice = namehash("alice.eth");
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: alice, label: labelhash("sub"), owner: BOB }.encode_log_data(),
    )
    .await;
    bed.ok(
        REGISTRY,
        Registry::NewOwner {
            node: child_node(alice, labelhash("sub")),
            label: labelhash("deep"),
            owner: BOB,
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    let hidden = encoded_label_hash(labelhash("alice"));
    assert_eq!(
        bed.domain("sub.alice.eth").await.name,
        format!("{}.{hidden}.eth", encoded_label_hash(labelhash("sub")))
    );

    // The heal arrives after the rows are in the database: they are found through indexes.
    bed.renew_and_heal("alice").await;
    bed.flush().await;
    assert_eq!(bed.domain("alice.eth").await.name, "alice.eth");
    assert_eq!(bed.domain("alice.eth").await.depth, 2);
    let deep = bed.domain("deep.sub.alice.eth").await;
    assert_eq!(
        deep.name,
        format!(
            "{}.{}.alice.eth",
            encoded_label_hash(labelhash("deep")),
            encoded_label_hash(labelhash("sub"))
        )
    );
    assert_eq!(deep.depth, 4);

    // Created and healed within one unflushed batch.
    bed.register("bob", BOB, false).await;
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: namehash("bob.eth"), label: labelhash("x"), owner: BOB }
            .encode_log_data(),
    )
    .await;
    bed.ok(
        CONTROLLER,
        LegacyController::NameRegistered {
            name: "bob".into(),
            label: labelhash("bob"),
            owner: BOB,
            cost: U256::from(9),
            expires: U256::from(2_000_000),
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    assert_eq!(
        bed.domain("x.bob.eth").await.name,
        format!("{}.bob.eth", encoded_label_hash(labelhash("x")))
    );
    assert_eq!(bed.registration("bob.eth").await.base_cost.as_deref(), Some("9"));

    // One label at two levels: the heal renames both, whichever the cascade reaches first.
    bed.register("echo", BOB, false).await;
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: namehash("echo.eth"), label: labelhash("echo"), owner: BOB }
            .encode_log_data(),
    )
    .await;
    bed.ok(
        REGISTRY,
        Registry::NewOwner {
            node: namehash("echo.echo.eth"),
            label: labelhash("tail"),
            owner: BOB,
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    let hidden = encoded_label_hash(labelhash("echo"));
    assert_eq!(bed.domain("echo.echo.eth").await.name, format!("{hidden}.{hidden}.eth"));
    bed.renew_and_heal("echo").await;
    bed.flush().await;
    assert_eq!(bed.domain("echo.eth").await.name, "echo.eth");
    assert_eq!(bed.domain("echo.echo.eth").await.name, "echo.echo.eth");
    let tail = bed.domain("tail.echo.echo.eth").await;
    assert_eq!(tail.name, format!("{}.echo.echo.eth", encoded_label_hash(labelhash("tail"))));
    assert_eq!(tail.depth, 4);
}

#[actix_rt::test]
async fn plaintext_that_does_not_match_the_hash_is_ignored() {
    let mut bed = Bed::new().await;
    bed.register("real", ALICE, false).await;
    bed.ok(
        CONTROLLER,
        LegacyController::NameRegistered {
            name: "fake".into(),
            label: labelhash("real"),
            owner: ALICE,
            cost: U256::from(1),
            expires: U256::from(2),
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    assert_eq!(
        bed.domain("real.eth").await.name,
        format!("{}.eth", encoded_label_hash(labelhash("real")))
    );
}

#[actix_rt::test]
async fn old_registry_is_ignored_for_migrated_nodes_only() {
    let mut bed = Bed::new().await;
    let legacy = keccak256("legacy");
    let legacy_node = child_node(B256::ZERO, legacy);
    bed.ok(
        OLD_REGISTRY,
        Registry::NewOwner { node: B256::ZERO, label: legacy, owner: ALICE }.encode_log_data(),
    )
    .await;
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: B256::ZERO, label: legacy, owner: BOB }.encode_log_data(),
    )
    .await;
    bed.ok(OLD_REGISTRY, Registry::Transfer { node: legacy_node, owner: CAROL }.encode_log_data())
        .await;
    bed.ok(
        OLD_REGISTRY,
        Registry::NewOwner { node: legacy_node, label: labelhash("x"), owner: CAROL }
            .encode_log_data(),
    )
    .await;
    bed.flush().await;
    let id = bed.ctx.domain_id(legacy_node);
    let row = domain::Entity::find_by_id(id).one(&bed.conn).await.unwrap().unwrap();
    assert_eq!(row.owner, raw(BOB), "old-registry transfer after migration is ignored");
    assert!(row.migrated);
    let child =
        domain::Entity::find_by_id(bed.ctx.domain_id(child_node(legacy_node, labelhash("x"))))
            .one(&bed.conn)
            .await
            .unwrap()
            .unwrap();
    assert_eq!(child.owner, raw(CAROL), "a child only in the old registry is indexed");
}

#[actix_rt::test]
async fn registrar_transfer_renewal_and_controller_price() {
    let mut bed = Bed::new().await;
    bed.register("alice", ALICE, true).await;
    let token = U256::from_be_bytes(labelhash("alice").0);
    bed.ok(
        REGISTRAR,
        BaseRegistrar::Transfer { from: ALICE, to: BOB, tokenId: token }.encode_log_data(),
    )
    .await;
    bed.ok(
        REGISTRAR,
        BaseRegistrar::NameRenewed { id: token, expires: U256::from(2_500_000) }.encode_log_data(),
    )
    .await;
    bed.ok(
        CONTROLLER,
        LegacyController::NameRenewed {
            name: "alice".into(),
            label: labelhash("alice"),
            cost: U256::from(42),
            expires: U256::from(2_500_000),
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    let d = bed.domain("alice.eth").await;
    assert_eq!(d.owner, raw(BOB));
    assert_eq!(d.registry_owner, raw(ALICE));
    let reg = bed.registration("alice.eth").await;
    assert_eq!(
        (reg.expiry, reg.base_cost.as_deref(), reg.renewal_count),
        (Some(2_500_000), Some("7"), 1)
    );
    let renewal_id = format!("{}-0", reg.id).parse::<renewal::RenewalKey>().unwrap();
    let renewal = renewal::Entity::find_by_id(renewal_id).one(&bed.conn).await.unwrap().unwrap();
    assert_eq!((renewal.duration, renewal.base_cost.as_deref()), (500_000, Some("42")));
}

#[actix_rt::test]
async fn name_wrapper_wraps_eth_names_and_subnames() {
    let mut bed = Bed::new().await;
    bed.register("alice", ALICE, false).await;
    let alice = namehash("alice.eth");
    let wrap = |node, name: &str, owner, fuses, expiry| {
        NameWrapper::NameWrapped { node, name: dns(name), owner, fuses, expiry }.encode_log_data()
    };

    // A live .eth 2LD, as `wrapETH2LD` does it: the registrar token and the registry record go
    // to the wrapper, which mints its own token. Its base registrar registration becomes
    // wrapped, and the label heals.
    let token = U256::from_be_bytes(labelhash("alice").0);
    bed.ok(
        REGISTRAR,
        BaseRegistrar::Transfer { from: ALICE, to: WRAPPER, tokenId: token }.encode_log_data(),
    )
    .await;
    bed.ok(REGISTRY, Registry::Transfer { node: alice, owner: WRAPPER }.encode_log_data()).await;
    bed.ok(
        WRAPPER,
        NameWrapper::TransferSingle {
            operator: BOB,
            from: Address::ZERO,
            to: BOB,
            id: U256::from_be_bytes(alice.0),
            value: U256::from(1),
        }
        .encode_log_data(),
    )
    .await;
    bed.ok(WRAPPER, wrap(alice, "alice.eth", BOB, 1, 2_000_000 + 90 * 86_400)).await;
    bed.flush().await;
    let reg = bed.registration("alice.eth").await;
    assert_eq!((reg.kind.as_str(), reg.wrapped, reg.fuses), ("BaseRegistrar", true, Some(1)));
    assert_eq!(bed.domain("alice.eth").await.name, "alice.eth");
    assert_eq!(bed.domain("alice.eth").await.owner, raw(BOB));

    bed.ok(WRAPPER, NameWrapper::FusesSet { node: alice, fuses: 5 }.encode_log_data()).await;
    bed.ok(
        WRAPPER,
        NameWrapper::TransferSingle {
            operator: BOB,
            from: BOB,
            to: CAROL,
            id: U256::from_be_bytes(alice.0),
            value: U256::from(1),
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    assert_eq!(bed.registration("alice.eth").await.fuses, Some(5));
    assert_eq!(bed.domain("alice.eth").await.owner, raw(CAROL));

    // A subname: a NameWrapper registration with its own expiry, renewed by ExpiryExtended.
    let sub = child_node(alice, labelhash("sub"));
    bed.ok(
        REGISTRY,
        Registry::NewOwner { node: alice, label: labelhash("sub"), owner: WRAPPER }
            .encode_log_data(),
    )
    .await;
    bed.ok(WRAPPER, wrap(sub, "sub.alice.eth", ALICE, 0, 1_500_000)).await;
    bed.ok(WRAPPER, NameWrapper::ExpiryExtended { node: sub, expiry: 1_600_000 }.encode_log_data())
        .await;
    bed.ok(
        WRAPPER,
        NameWrapper::TransferBatch {
            operator: ALICE,
            from: ALICE,
            to: BOB,
            ids: vec![U256::from_be_bytes(sub.0)],
            values: vec![U256::from(1)],
        }
        .encode_log_data(),
    )
    .await;
    bed.flush().await;
    let d = bed.domain("sub.alice.eth").await;
    assert_eq!((d.name.as_str(), d.owner.clone()), ("sub.alice.eth", raw(BOB)));
    let reg = bed.registration("sub.alice.eth").await;
    assert_eq!(
        (reg.kind.as_str(), reg.expiry, reg.renewal_count),
        ("NameWrapper", Some(1_600_000), 1)
    );

    // The parent burns PARENT_CANNOT_CONTROL (a parent-controlled fuse), the owner
    // CANNOT_SET_TTL (an owner-controlled one).
    bed.ok(WRAPPER, NameWrapper::FusesSet { node: sub, fuses: 0x10000 | 16 }.encode_log_data())
        .await;

    // Unwrapping, as `unwrap` and `unwrapETH2LD` do it (burn, hand the registry record and the
    // registrar token back, then the event): the wrapper keeps the subname's expiry and its
    // parent-controlled fuses; the 2LD's registration is simply no longer wrapped.
    let burn = |from, node: B256| {
        NameWrapper::TransferSingle {
            operator: from,
            from,
            to: Address::ZERO,
            id: U256::from_be_bytes(node.0),
            value: U256::from(1),
        }
        .encode_log_data()
    };
    bed.ok(WRAPPER, burn(BOB, sub)).await;
    bed.ok(REGISTRY, Registry::Transfer { node: sub, owner: CAROL }.encode_log_data()).await;
    bed.ok(WRAPPER, NameWrapper::NameUnwrapped { node: sub, owner: CAROL }.encode_log_data()).await;
    bed.ok(WRAPPER, burn(CAROL, alice)).await;
    bed.ok(
        REGISTRAR,
        BaseRegistrar::Transfer { from: WRAPPER, to: ALICE, tokenId: token }.encode_log_data(),
    )
    .await;
    bed.ok(REGISTRY, Registry::Transfer { node: alice, owner: ALICE }.encode_log_data()).await;
    bed.ok(WRAPPER, NameWrapper::NameUnwrapped { node: alice, owner: ALICE }.encode_log_data())
        .await;
    bed.flush().await;
    let kept = bed.registration("sub.alice.eth").await;
    assert_eq!((kept.expiry, kept.fuses), (Some(1_600_000), Some(0x10000)));
    let reg = bed.registration("alice.eth").await;
    assert_eq!((reg.wrapped, reg.fuses), (false, None));
    assert_eq!(bed.domain("alice.eth").await.owner, raw(ALICE));
    assert_eq!(bed.domain("sub.alice.eth").await.owner, raw(CAROL));

    // Wrapped again with `wrap` (fuses 0, expiry 0 in the event): the token has the kept
    // expiry and parent-controlled fuses, as `getData` reports them.
    bed.ok(REGISTRY, Registry::Transfer { node: sub, owner: WRAPPER }.encode_log_data()).await;
    bed.ok(
        WRAPPER,
        NameWrapper::TransferSingle {
            operator: CAROL,
            from: Address::ZERO,
            to: CAROL,
            id: U256::from_be_bytes(sub.0),
            value: U256::from(1),
        }
        .encode_log_data(),
    )
    .await;
    bed.ok(WRAPPER, wrap(sub, "sub.alice.eth", CAROL, 0, 0)).await;
    bed.flush().await;
    let rewrapped = bed.registration("sub.alice.eth").await;
    assert_eq!(
        (rewrapped.kind.as_str(), rewrapped.expiry, rewrapped.fuses),
        ("NameWrapper", Some(1_600_000), Some(0x10000))
    );
    assert_ne!(rewrapped.id, kept.id, "a wrap opens a registration");
    assert_eq!(bed.domain("sub.alice.eth").await.owner, raw(CAROL));
}

#[actix_rt::test]
async fn version_changed_clears_only_earlier_records() {
    let mut bed = Bed::new().await;
    let node = namehash("alice.eth");
    let text = |key: &str, value: &str| {
        Resolver::TextChanged { node, indexedKey: B256::ZERO, key: key.into(), value: value.into() }
            .encode_log_data()
    };
    bed.ok(RESOLVER, Resolver::AddrChanged { node, a: ALICE }.encode_log_data()).await;
    bed.ok(RESOLVER, text("url", "https://a")).await;
    bed.ok(
        RESOLVER,
        Resolver::ContenthashChanged { node, hash: Bytes::from(vec![1, 2]) }.encode_log_data(),
    )
    .await;
    bed.flush().await;
    bed.ok(RESOLVER, text("avatar", "x")).await;
    bed.ok(RESOLVER, Resolver::VersionChanged { node, newVersion: 1 }.encode_log_data()).await;
    bed.ok(RESOLVER, text("email", "a@b.c")).await;
    bed.flush().await;
    let id: resolver_record::ResolverRecordKey =
        format!("1-{RESOLVER:#x}-{node:#x}").parse().unwrap();
    let record =
        resolver_record::Entity::find_by_id(id.clone()).one(&bed.conn).await.unwrap().unwrap();
    assert_eq!((record.contenthash, record.version), (None, 1));
    let addresses = resolver_address::Entity::find()
        .filter(resolver_address::Column::RecordId.eq(id.clone()))
        .all(&bed.conn)
        .await
        .unwrap();
    assert!(addresses.is_empty());
    let keys: Vec<String> = resolver_text::Entity::find()
        .filter(resolver_text::Column::RecordId.eq(id))
        .all(&bed.conn)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.key)
        .collect();
    assert_eq!(keys, vec!["email".to_owned()]);
}

#[actix_rt::test]
async fn events_for_unknown_nodes_are_skippable_errors() {
    let mut bed = Bed::new().await;
    let err = bed
        .emit(
            REGISTRY,
            Registry::Transfer { node: namehash("nobody.eth"), owner: ALICE }.encode_log_data(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HandlerError::UnknownNode { .. }) && !err.is_fatal(), "{err}");
    let err = bed
        .emit(
            REGISTRAR,
            BaseRegistrar::NameRenewed { id: U256::from(1), expires: U256::from(2) }
                .encode_log_data(),
        )
        .await
        .unwrap_err();
    assert!(!err.is_fatal(), "{err}");
}
