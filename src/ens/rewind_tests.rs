//! Apply and rewind, per contract: each case applies a history in two parts, the first
//! final and the second in a journaled window, then rolls the window back and applies it
//! again. What the rollback leaves must equal the state after the first part, and the
//! replay must equal the state after both, dump for dump: a handler that writes a row the
//! journal does not cover, or restores it wrongly, fails here. (The pattern of reth's stage
//! test suites: execute, unwind to the checkpoint, execute again.)
//!
//! Labels are knowledge about hashes, not chain state: a rollback never unlearns one, so a
//! name healed in the window stays healed (`store::journal`). The histories here make their
//! labels known in the final part, so the windows change chain state only.

use alloy::{
    ens::namehash,
    primitives::{Address, B256, Bytes, LogData, U256, keccak256},
    sol_types::SolEvent,
};
use sea_orm::DatabaseConnection;

use super::{
    DecodedEvent, EventMeta, IndexContext,
    abi::{BaseRegistrar, LegacyController, NameWrapper, Registry, Resolver},
    apply_event,
    decode::decode_log,
    name::labelhash,
    role::ContractRole,
};
use crate::store::{Checkpoint, EntityStore, database, journal};

const REGISTRY: Address = Address::repeat_byte(0x11);
const REGISTRAR: Address = Address::repeat_byte(0x22);
const CONTROLLER: Address = Address::repeat_byte(0x33);
const WRAPPER: Address = Address::repeat_byte(0x44);
const RESOLVER: Address = Address::repeat_byte(0x55);
const ALICE: Address = Address::repeat_byte(0xa1);
const BOB: Address = Address::repeat_byte(0xb0);

/// The block the journaled part is applied in; the final part is applied in block 1.
const WINDOW: u64 = 2;

/// One emitted log: the contract and its data.
type Emitted = (Address, LogData);

/// One chain's handlers over a fresh SQLite database.
struct Bed {
    _dir: tempfile::TempDir,
    db: DatabaseConnection,
    ctx: IndexContext,
    log_index: u64,
}

impl Bed {
    async fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("rewind.sqlite").display());
        let db = database::connect(&url).await.expect("database");
        let ctx = IndexContext {
            name_wrapper: Some(WRAPPER),
            ..IndexContext::new(crate::ChainId(1), REGISTRY)
        };
        Self { _dir: dir, db, ctx, log_index: 0 }
    }

    /// Applies `logs` in `block` with a fresh store and commits them, journaled when asked.
    async fn apply(&mut self, block: u64, logs: &[Emitted], journaled: bool) {
        let mut store = EntityStore::new(self.db.clone(), crate::ChainId(1), 1 << 20);
        for (address, log) in logs {
            let role = match *address {
                REGISTRY => Some(ContractRole::Registry),
                REGISTRAR => Some(ContractRole::BaseRegistrar),
                CONTROLLER => Some(ContractRole::Controller),
                WRAPPER => Some(ContractRole::NameWrapper),
                _ => None,
            };
            self.log_index += 1;
            let meta = EventMeta {
                chain_id: crate::ChainId(1),
                block_number: block,
                block_hash: B256::repeat_byte(block as u8),
                timestamp: 1_000_000 + block * 12,
                tx_hash: B256::repeat_byte(0x77),
                tx_index: 0,
                log_index: self.log_index,
                address: *address,
                tx_from: ALICE,
                tx_to: Some(*address),
                log: std::sync::Arc::new(log.clone()),
            };
            for event in decode_log(role, log).expect("decodes") {
                let decoded = DecodedEvent { meta: meta.clone(), event };
                apply_event(&self.ctx, &mut store, &decoded).await.expect("applies");
            }
        }
        let hash = |n: u64| format!("{:#x}", B256::repeat_byte(n as u8));
        let checkpoint = Checkpoint {
            chain_id: crate::ChainId(1),
            block_number: block,
            block_hash: hash(block),
        };
        let window = journaled.then(|| journal::JournalWindow {
            start: block,
            end: block,
            end_hash: hash(block),
            start_parent_hash: hash(block - 1),
            prune_below: 0,
        });
        store.flush(&checkpoint, window.as_ref()).await.expect("flushes");
    }

    async fn dump(&self) -> String {
        crate::dump::dump(&self.db).await.expect("dumps")
    }
}

/// Applies `before` (final), then `window` (journaled); rolls the window back and checks the
/// state is what `before` left; applies `window` again and checks the state is what both left.
async fn apply_rewind_replay(before: Vec<Emitted>, window: Vec<Emitted>) {
    let mut bed = Bed::new().await;
    bed.apply(1, &before, false).await;
    let after_before = bed.dump().await;
    let first_index = bed.log_index;
    bed.apply(WINDOW, &window, true).await;
    let after_window = bed.dump().await;
    assert_ne!(after_window, after_before, "the window changes something");

    let restored = journal::rollback(&bed.db, crate::ChainId(1), WINDOW).await.expect("rolls back");
    assert_eq!(restored.map(|c| c.block_number), Some(1), "checkpoint back before the window");
    assert_eq!(bed.dump().await, after_before, "the rollback restores every row");

    bed.log_index = first_index;
    bed.apply(WINDOW, &window, true).await;
    assert_eq!(bed.dump().await, after_window, "the replay gives the same state");
}

fn token(label: &str) -> U256 {
    U256::from_be_bytes(labelhash(label).0)
}

/// `eth` owned by the registrar, and `alice.eth` registered to Alice through the registrar
/// and the controller (which names the label).
fn registered_alice() -> Vec<Emitted> {
    let eth = namehash("eth");
    vec![
        (
            REGISTRY,
            Registry::NewOwner { node: B256::ZERO, label: keccak256("eth"), owner: REGISTRAR }
                .encode_log_data(),
        ),
        (
            REGISTRAR,
            BaseRegistrar::Transfer { from: Address::ZERO, to: ALICE, tokenId: token("alice") }
                .encode_log_data(),
        ),
        (
            REGISTRY,
            Registry::NewOwner { node: eth, label: labelhash("alice"), owner: ALICE }
                .encode_log_data(),
        ),
        (
            REGISTRAR,
            BaseRegistrar::NameRegistered {
                id: token("alice"),
                owner: ALICE,
                expires: U256::from(2_000_000),
            }
            .encode_log_data(),
        ),
        (
            CONTROLLER,
            LegacyController::NameRegistered {
                name: "alice".into(),
                label: labelhash("alice"),
                owner: ALICE,
                cost: U256::from(7),
                expires: U256::from(2_000_000),
            }
            .encode_log_data(),
        ),
    ]
}

#[tokio::test]
async fn registry_ownership_resolver_ttl_and_subnames() {
    let alice = namehash("alice.eth");
    apply_rewind_replay(
        registered_alice(),
        vec![
            (REGISTRY, Registry::Transfer { node: alice, owner: BOB }.encode_log_data()),
            (REGISTRY, Registry::NewResolver { node: alice, resolver: RESOLVER }.encode_log_data()),
            (REGISTRY, Registry::NewTTL { node: alice, ttl: 600 }.encode_log_data()),
            (
                REGISTRY,
                Registry::NewOwner { node: alice, label: labelhash("pay"), owner: BOB }
                    .encode_log_data(),
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn registrar_transfer_and_renewals() {
    apply_rewind_replay(
        registered_alice(),
        vec![
            (
                REGISTRAR,
                BaseRegistrar::Transfer { from: ALICE, to: BOB, tokenId: token("alice") }
                    .encode_log_data(),
            ),
            (
                REGISTRAR,
                BaseRegistrar::NameRenewed { id: token("alice"), expires: U256::from(3_000_000) }
                    .encode_log_data(),
            ),
            (
                CONTROLLER,
                LegacyController::NameRenewed {
                    name: "alice".into(),
                    label: labelhash("alice"),
                    cost: U256::from(5),
                    expires: U256::from(3_000_000),
                }
                .encode_log_data(),
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn resolver_records_and_a_version_change() {
    let node = namehash("alice.eth");
    let text = |key: &str, value: &str| {
        Resolver::TextChanged { node, indexedKey: B256::ZERO, key: key.into(), value: value.into() }
            .encode_log_data()
    };
    let mut before = registered_alice();
    before.push((REGISTRY, Registry::NewResolver { node, resolver: RESOLVER }.encode_log_data()));
    before.push((RESOLVER, Resolver::AddrChanged { node, a: ALICE }.encode_log_data()));
    before.push((RESOLVER, text("url", "https://alice.example")));
    apply_rewind_replay(
        before,
        vec![
            (RESOLVER, text("avatar", "ipfs://x")),
            (
                RESOLVER,
                Resolver::ContenthashChanged { node, hash: Bytes::from(vec![0xe3, 1]) }
                    .encode_log_data(),
            ),
            (RESOLVER, Resolver::VersionChanged { node, newVersion: 1 }.encode_log_data()),
            (RESOLVER, Resolver::AddrChanged { node, a: BOB }.encode_log_data()),
            (RESOLVER, Resolver::NameChanged { node, name: "alice.eth".into() }.encode_log_data()),
        ],
    )
    .await;
}

#[tokio::test]
async fn wrapping_fuses_expiry_and_unwrapping() {
    let alice = namehash("alice.eth");
    let dns = |labels: &[&str]| {
        let mut out = Vec::new();
        for label in labels {
            out.push(label.len() as u8);
            out.extend_from_slice(label.as_bytes());
        }
        out.push(0);
        Bytes::from(out)
    };
    apply_rewind_replay(
        registered_alice(),
        vec![
            (
                REGISTRAR,
                BaseRegistrar::Transfer { from: ALICE, to: WRAPPER, tokenId: token("alice") }
                    .encode_log_data(),
            ),
            (REGISTRY, Registry::Transfer { node: alice, owner: WRAPPER }.encode_log_data()),
            (
                WRAPPER,
                NameWrapper::NameWrapped {
                    node: alice,
                    name: dns(&["alice", "eth"]),
                    owner: BOB,
                    fuses: 1,
                    expiry: 2_000_000 + 90 * 86_400,
                }
                .encode_log_data(),
            ),
            (WRAPPER, NameWrapper::FusesSet { node: alice, fuses: 5 }.encode_log_data()),
            (
                WRAPPER,
                NameWrapper::ExpiryExtended { node: alice, expiry: 9_000_000 }.encode_log_data(),
            ),
            (WRAPPER, NameWrapper::NameUnwrapped { node: alice, owner: ALICE }.encode_log_data()),
        ],
    )
    .await;
}
