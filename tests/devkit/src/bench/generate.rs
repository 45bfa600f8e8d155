//! [`generate`]: a mainnet-shaped corpus of ENS logs, deterministic for a seed.
//!
//! Every log is the real ABI encoding of a real ENS event, emitted by the mainnet contract
//! that emits it (`config/mainnet.toml`'s registry, base registrar, controllers; the public
//! resolvers and the default reverse resolver for record events), grouped into transactions
//! the way the contracts emit them:
//!
//! - a `.eth` registration through the 2020 or 2023 controller: the registrar mints the token
//!   and the registry assigns the node, then the registrar's and the controller's
//!   `NameRegistered`; with a resolver (≈45%), the controller first takes the name, sets the
//!   resolver and the ETH address, then hands node and token to the buyer (9 logs);
//! - re-registration of an expired name (the old token is burnt first), renewals, token
//!   transfers (half of them followed by a `reclaim`), registry `Transfer`, `NewTTL`;
//! - subnames under existing names down to depth 5 (unknown labels: only the labelhash is on
//!   chain), some with a resolver and an address;
//! - resolver record changes (`AddrChanged` + `AddressChanged`, `TextChanged` with a value,
//!   `ContenthashChanged`) on names that have a resolver;
//! - reverse claims (`addr.reverse` children named after the sender, with `NameChanged`).
//!
//! Owners come from a pool with a heavy head, as on mainnet. The mix per event is printed by
//! `ensemble bench generate` and recorded in `BENCHMARKS.md`.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use alloy::{
    consensus::{SignableTransaction, TxLegacy},
    primitives::{Address, B256, Bytes, LogData, Signature, TxKind, U256, address, keccak256},
    sol_types::SolEvent,
};
use rand::{Rng, SeedableRng, rngs::StdRng};

use super::{
    BenchError,
    corpus::{CorpusBlock, CorpusHeader, CorpusLog, CorpusTx, CorpusWriter},
};
use ensemble::ens::{
    EnsEvent,
    abi::{BaseRegistrar, LegacyController, Registry, Resolver, WrappedController},
    decode::decode_log,
    name::{child_node, labelhash},
    role::ContractRole,
};

/// Mainnet chain id.
pub const CHAIN_ID: u64 = 1;
/// `ENSRegistryWithFallback`.
pub const REGISTRY: Address = address!("0x00000000000C2E074eC69A0dFB2997BA6C7d2e1e");
/// `BaseRegistrarImplementation`.
pub const BASE_REGISTRAR: Address = address!("0x57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85");
/// The 2020 `ETHRegistrarController` (`NameRegistered` with `cost`).
pub const LEGACY_CONTROLLER: Address = address!("0x283Af0B28c62C092C9727F1Ee09c02CA627EB7F5");
/// The 2023 `ETHRegistrarController` (`baseCost`, `premium`).
pub const WRAPPED_CONTROLLER: Address = address!("0x253553366Da8546fC250F225fe3d25d0C782303b");
/// Public resolvers that emit `TextChanged` with its value.
pub const PUBLIC_RESOLVERS: [Address; 2] = [
    address!("0x231b0Ee14048e9dCcD1d247744d114a4EB5E8E63"),
    address!("0xF29100983E058B709F3D539b0c765937B804AC15"),
];
/// The reverse registrar that claims `addr.reverse` children for their senders.
pub const REVERSE_REGISTRAR: Address = address!("0xa58E81fe9b61B5c3fE2AFD33CF304c454AbFc7Cb");
/// The default reverse resolver (emits `NameChanged`).
pub const REVERSE_RESOLVER: Address = address!("0x231b0Ee14048e9dCcD1d247744d114a4EB5E8E63");
/// First block of a corpus: the current registry's deployment year.
pub const FIRST_BLOCK: u64 = 9_380_410;
/// Mainnet's block time since the merge.
pub const BLOCK_TIME: u64 = 12;
/// Timestamp of block 0 such that [`FIRST_BLOCK`] falls in early 2020.
pub const GENESIS_TIMESTAMP: u64 = 1_438_269_973;
/// Owner pool size.
const OWNERS: usize = 250_000;
const YEAR: u64 = 365 * 24 * 60 * 60;
/// Registration grace period (names re-register after expiry + grace).
const GRACE: u64 = 90 * 24 * 60 * 60;

/// Action weights: how often each kind of transaction is drawn.
const WEIGHTS: [(Action, u32); 11] = [
    (Action::Register, 26),
    (Action::Reregister, 3),
    (Action::Renew, 8),
    (Action::TransferToken, 16),
    (Action::Subname, 22),
    (Action::SetAddr, 6),
    (Action::SetText, 5),
    (Action::SetContenthash, 1),
    (Action::ReverseClaim, 10),
    (Action::SetResolver, 4),
    (Action::RegistryTransfer, 2),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Register,
    Reregister,
    Renew,
    TransferToken,
    Subname,
    SetAddr,
    SetText,
    SetContenthash,
    ReverseClaim,
    SetResolver,
    RegistryTransfer,
}

/// What [`generate`] wrote.
#[derive(Clone, Debug)]
pub struct GeneratedCorpus {
    /// The header as written.
    pub header: CorpusHeader,
    /// Logs per event name, sorted by name.
    pub mix: BTreeMap<&'static str, u64>,
    /// The plaintext of every subname label, which the corpus carries only as a hash: the
    /// label set a heal benchmark imports.
    pub unknown_labels: Vec<String>,
}

struct EthName {
    label: String,
    hash: B256,
    node: B256,
    owner: Address,
    expires: u64,
}

/// A node events may later touch: a name with (maybe) a resolver, or a parent of subnames.
#[derive(Clone, Copy)]
struct Node {
    node: B256,
    depth: u8,
    resolver: Option<Address>,
}

struct Generator {
    rng: StdRng,
    owners: Vec<Address>,
    names: Vec<EthName>,
    nodes: Vec<Node>,
    eth_node: B256,
    addr_reverse_node: B256,
    nonce: u64,
    label_counter: u64,
    unknown_labels: Vec<String>,
    now: u64,
    mix: BTreeMap<&'static str, u64>,
    /// Roles of the mainnet contracts, to name each log as the indexer will.
    roles: HashMap<Address, ContractRole>,
    /// The block being filled.
    block: CorpusBlock,
}

fn sig() -> Signature {
    Signature::new(U256::from(1u64), U256::from(1u64), false)
}

/// Hash of the signed legacy transaction an endpoint serves for (`nonce`, `to`): the corpus
/// and the endpoint derive it the same way.
pub fn transaction(nonce: u64, to: Address) -> alloy::consensus::Signed<TxLegacy> {
    TxLegacy {
        chain_id: Some(CHAIN_ID),
        nonce,
        gas_price: 1_000_000_000,
        gas_limit: 500_000,
        to: TxKind::Call(to),
        value: U256::ZERO,
        input: Bytes::new(),
    }
    .into_signed(sig())
}

impl Generator {
    fn new(seed: u64, roles: HashMap<Address, ContractRole>) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let owners = (0..OWNERS)
            .map(|i| {
                let mut buf = [0u8; 16];
                buf[..8].copy_from_slice(&seed.to_be_bytes());
                buf[8..].copy_from_slice(&(i as u64).to_be_bytes());
                Address::from_slice(&keccak256(buf)[12..])
            })
            .collect();
        let eth_node = child_node(B256::ZERO, labelhash("eth"));
        let reverse_node = child_node(B256::ZERO, labelhash("reverse"));
        let addr_reverse_node = child_node(reverse_node, labelhash("addr"));
        let first = FIRST_BLOCK + rng.random_range(0..3);
        Self {
            rng,
            owners,
            names: Vec::new(),
            nodes: Vec::new(),
            eth_node,
            addr_reverse_node,
            nonce: 0,
            label_counter: 0,
            unknown_labels: Vec::new(),
            now: GENESIS_TIMESTAMP + first * BLOCK_TIME,
            mix: BTreeMap::new(),
            roles,
            block: CorpusBlock { number: first, ..CorpusBlock::default() },
        }
    }

    /// An owner: a few accounts own a lot, most own little (cube of a uniform draw).
    fn owner(&mut self) -> Address {
        let u: f64 = self.rng.random();
        self.owners[((u * u * u) * OWNERS as f64) as usize % OWNERS]
    }

    fn fresh_label(&mut self) -> String {
        const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let len = self.rng.random_range(3..10);
        let mut label: String =
            (0..len).map(|_| LETTERS[self.rng.random_range(0..LETTERS.len())] as char).collect();
        // Unique: a base-36 counter suffix.
        let mut n = self.label_counter;
        self.label_counter += 1;
        loop {
            label.push(LETTERS[(n % 36) as usize] as char);
            n /= 36;
            if n == 0 {
                break;
            }
        }
        label
    }

    fn tx(&mut self, from: Address, to: Address) -> u32 {
        self.nonce += 1;
        let hash = *transaction(self.nonce, to).hash();
        self.block.txs.push(CorpusTx { nonce: self.nonce, hash, from, to });
        (self.block.txs.len() - 1) as u32
    }

    fn log(&mut self, tx: u32, address: Address, data: LogData) {
        // Counted under the name the indexer gives the event, decoded as the indexer does.
        let role = self.roles.get(&address).copied();
        let name = decode_log(role, &data)
            .ok()
            .and_then(|events| events.first().map(EnsEvent::name))
            .unwrap_or("undecodable");
        *self.mix.entry(name).or_default() += 1;
        self.block.logs.push(CorpusLog { tx_index: tx, address, data });
    }

    fn token(hash: B256) -> U256 {
        U256::from_be_bytes(hash.0)
    }

    fn resolver(&mut self) -> Address {
        PUBLIC_RESOLVERS[usize::from(self.rng.random_bool(0.3))]
    }

    /// Sets a resolver and the ETH address on `node`, in `tx`.
    fn resolver_with_addr(&mut self, tx: u32, node: B256, owner: Address) -> Address {
        let resolver = self.resolver();
        self.log(tx, REGISTRY, Registry::NewResolver { node, resolver }.encode_log_data());
        self.log(tx, resolver, Resolver::AddrChanged { node, a: owner }.encode_log_data());
        self.log(
            tx,
            resolver,
            Resolver::AddressChanged {
                node,
                coinType: U256::from(60u64),
                newAddress: Bytes::copy_from_slice(owner.as_slice()),
            }
            .encode_log_data(),
        );
        resolver
    }

    fn register(&mut self, existing: Option<usize>) {
        let buyer = self.owner();
        let (label, hash, node, previous) = match existing {
            Some(i) => {
                let n = &self.names[i];
                (n.label.clone(), n.hash, n.node, Some(n.owner))
            }
            None => {
                let label = self.fresh_label();
                let hash = labelhash(&label);
                (label, hash, child_node(self.eth_node, hash), None)
            }
        };
        let wrapped = self.rng.random_bool(0.5);
        let controller = if wrapped { WRAPPED_CONTROLLER } else { LEGACY_CONTROLLER };
        let with_resolver = self.rng.random_bool(0.45);
        let years = self.rng.random_range(1..=5u64);
        let expires = self.now + years * YEAR;
        let id = Self::token(hash);
        let tx = self.tx(buyer, controller);
        if let Some(previous) = previous {
            self.log(
                tx,
                BASE_REGISTRAR,
                BaseRegistrar::Transfer { from: previous, to: Address::ZERO, tokenId: id }
                    .encode_log_data(),
            );
        }
        let first_owner = if with_resolver { controller } else { buyer };
        self.log(
            tx,
            BASE_REGISTRAR,
            BaseRegistrar::Transfer { from: Address::ZERO, to: first_owner, tokenId: id }
                .encode_log_data(),
        );
        self.log(
            tx,
            REGISTRY,
            Registry::NewOwner { node: self.eth_node, label: hash, owner: first_owner }
                .encode_log_data(),
        );
        self.log(
            tx,
            BASE_REGISTRAR,
            BaseRegistrar::NameRegistered { id, owner: first_owner, expires: U256::from(expires) }
                .encode_log_data(),
        );
        let mut resolver = None;
        if with_resolver {
            resolver = Some(self.resolver_with_addr(tx, node, buyer));
            self.log(
                tx,
                REGISTRY,
                Registry::NewOwner { node: self.eth_node, label: hash, owner: buyer }
                    .encode_log_data(),
            );
            self.log(
                tx,
                BASE_REGISTRAR,
                BaseRegistrar::Transfer { from: controller, to: buyer, tokenId: id }
                    .encode_log_data(),
            );
        }
        let cost =
            U256::from(self.rng.random_range(1_000_000_000_000_000u64..50_000_000_000_000_000));
        let data = if wrapped {
            WrappedController::NameRegistered {
                name: label.clone(),
                label: hash,
                owner: buyer,
                baseCost: cost,
                premium: U256::ZERO,
                expires: U256::from(expires),
            }
            .encode_log_data()
        } else {
            LegacyController::NameRegistered {
                name: label.clone(),
                label: hash,
                owner: buyer,
                cost,
                expires: U256::from(expires),
            }
            .encode_log_data()
        };
        self.log(tx, controller, data);
        match existing {
            Some(i) => {
                let n = &mut self.names[i];
                n.owner = buyer;
                n.expires = expires;
            }
            None => {
                self.names.push(EthName { label, hash, node, owner: buyer, expires });
                self.nodes.push(Node { node, depth: 2, resolver });
            }
        }
    }

    fn pick_name(&mut self) -> Option<usize> {
        (!self.names.is_empty()).then(|| {
            // Recent names are touched more often than old ones.
            let u: f64 = self.rng.random();
            let back = ((u * u) * self.names.len() as f64) as usize;
            self.names.len() - 1 - back.min(self.names.len() - 1)
        })
    }

    fn renew(&mut self) {
        let Some(i) = self.pick_name() else { return self.register(None) };
        let years = self.rng.random_range(1..=3u64);
        let (label, hash) = (self.names[i].label.clone(), self.names[i].hash);
        let expires = self.names[i].expires.max(self.now) + years * YEAR;
        self.names[i].expires = expires;
        let payer = self.owner();
        let tx = self.tx(payer, LEGACY_CONTROLLER);
        self.log(
            tx,
            BASE_REGISTRAR,
            BaseRegistrar::NameRenewed { id: Self::token(hash), expires: U256::from(expires) }
                .encode_log_data(),
        );
        self.log(
            tx,
            LEGACY_CONTROLLER,
            LegacyController::NameRenewed {
                name: label,
                label: hash,
                cost: U256::from(3_000_000_000_000_000u64),
                expires: U256::from(expires),
            }
            .encode_log_data(),
        );
    }

    fn reregister(&mut self) {
        // An expired name past its grace period, if the draw finds one.
        let now = self.now;
        let found = (0..8).find_map(|_| {
            let i = self.rng.random_range(0..self.names.len().max(1));
            self.names.get(i).filter(|n| n.expires + GRACE < now).map(|_| i)
        });
        self.register(found);
    }

    fn transfer_token(&mut self) {
        let Some(i) = self.pick_name() else { return self.register(None) };
        let to = self.owner();
        let (from, hash) = (self.names[i].owner, self.names[i].hash);
        let tx = self.tx(from, BASE_REGISTRAR);
        self.log(
            tx,
            BASE_REGISTRAR,
            BaseRegistrar::Transfer { from, to, tokenId: Self::token(hash) }.encode_log_data(),
        );
        if self.rng.random_bool(0.5) {
            self.log(
                tx,
                REGISTRY,
                Registry::NewOwner { node: self.eth_node, label: hash, owner: to }
                    .encode_log_data(),
            );
        }
        self.names[i].owner = to;
    }

    fn pick_node(&mut self, with_resolver: bool) -> Option<Node> {
        for _ in 0..8 {
            if self.nodes.is_empty() {
                return None;
            }
            let u: f64 = self.rng.random();
            let back = ((u * u) * self.nodes.len() as f64) as usize;
            let node = self.nodes[self.nodes.len() - 1 - back.min(self.nodes.len() - 1)];
            if !with_resolver || node.resolver.is_some() {
                return Some(node);
            }
        }
        None
    }

    fn subname(&mut self) {
        let Some(parent) = self.pick_node(false).filter(|p| p.depth < 5) else {
            return self.register(None);
        };
        let owner = self.owner();
        let plaintext = self.fresh_label();
        let label = labelhash(&plaintext);
        self.unknown_labels.push(plaintext);
        let node = child_node(parent.node, label);
        let tx = self.tx(owner, REGISTRY);
        self.log(
            tx,
            REGISTRY,
            Registry::NewOwner { node: parent.node, label, owner }.encode_log_data(),
        );
        let resolver = self.rng.random_bool(0.3).then(|| self.resolver_with_addr(tx, node, owner));
        self.nodes.push(Node { node, depth: parent.depth + 1, resolver });
    }

    fn set_record(&mut self, action: Action) {
        let Some(target) = self.pick_node(true) else { return self.register(None) };
        let (node, resolver) = (target.node, target.resolver.unwrap_or(PUBLIC_RESOLVERS[0]));
        let sender = self.owner();
        let tx = self.tx(sender, resolver);
        match action {
            Action::SetAddr => {
                let a = self.owner();
                self.log(tx, resolver, Resolver::AddrChanged { node, a }.encode_log_data());
                self.log(
                    tx,
                    resolver,
                    Resolver::AddressChanged {
                        node,
                        coinType: U256::from(60u64),
                        newAddress: Bytes::copy_from_slice(a.as_slice()),
                    }
                    .encode_log_data(),
                );
            }
            Action::SetText => {
                const KEYS: [&str; 6] =
                    ["url", "avatar", "com.twitter", "description", "email", "com.github"];
                let key = KEYS[self.rng.random_range(0..KEYS.len())].to_owned();
                let value = format!("https://example.org/{}", self.rng.random::<u32>());
                self.log(
                    tx,
                    resolver,
                    Resolver::TextChanged { node, indexedKey: keccak256(&key), key, value }
                        .encode_log_data(),
                );
            }
            _ => {
                let mut hash = vec![0xe3, 0x01, 0x01, 0x70, 0x12, 0x20];
                hash.extend_from_slice(keccak256(self.nonce.to_be_bytes()).as_slice());
                self.log(
                    tx,
                    resolver,
                    Resolver::ContenthashChanged { node, hash: hash.into() }.encode_log_data(),
                );
            }
        }
    }

    fn reverse_claim(&mut self) {
        let sender = self.owner();
        let label = keccak256(format!("{sender:x}").trim_start_matches("0x"));
        let node = child_node(self.addr_reverse_node, label);
        let name =
            self.pick_name().map_or_else(String::new, |i| format!("{}.eth", self.names[i].label));
        let tx = self.tx(sender, REVERSE_REGISTRAR);
        self.log(
            tx,
            REGISTRY,
            Registry::NewOwner { node: self.addr_reverse_node, label, owner: REVERSE_REGISTRAR }
                .encode_log_data(),
        );
        self.log(
            tx,
            REGISTRY,
            Registry::NewResolver { node, resolver: REVERSE_RESOLVER }.encode_log_data(),
        );
        self.log(tx, REVERSE_RESOLVER, Resolver::NameChanged { node, name }.encode_log_data());
    }

    fn set_resolver(&mut self) {
        let Some(mut target) = self.pick_node(false) else { return self.register(None) };
        let owner = self.owner();
        let tx = self.tx(owner, REGISTRY);
        let resolver = self.resolver_with_addr(tx, target.node, owner);
        target.resolver = Some(resolver);
        self.nodes.push(target);
    }

    fn registry_transfer(&mut self) {
        let Some(target) = self.pick_node(false) else { return self.register(None) };
        let owner = self.owner();
        let tx = self.tx(owner, REGISTRY);
        if self.rng.random_bool(0.8) {
            self.log(
                tx,
                REGISTRY,
                Registry::Transfer { node: target.node, owner }.encode_log_data(),
            );
        } else {
            let ttl = self.rng.random_range(0..86_400);
            self.log(tx, REGISTRY, Registry::NewTTL { node: target.node, ttl }.encode_log_data());
        }
    }

    fn genesis(&mut self) {
        let deployer = self.owners[0];
        let tx = self.tx(deployer, REGISTRY);
        for (parent, label, owner) in [
            (B256::ZERO, "eth", BASE_REGISTRAR),
            (B256::ZERO, "reverse", deployer),
            (child_node(B256::ZERO, labelhash("reverse")), "addr", REVERSE_REGISTRAR),
        ] {
            self.log(
                tx,
                REGISTRY,
                Registry::NewOwner { node: parent, label: labelhash(label), owner }
                    .encode_log_data(),
            );
        }
    }

    fn action(&mut self) {
        let total: u32 = WEIGHTS.iter().map(|(_, w)| w).sum();
        let mut draw = self.rng.random_range(0..total);
        let action = WEIGHTS
            .iter()
            .find(|(_, w)| {
                if draw < *w {
                    return true;
                }
                draw -= w;
                false
            })
            .map_or(Action::Register, |(a, _)| *a);
        match action {
            Action::Register => self.register(None),
            Action::Reregister => self.reregister(),
            Action::Renew => self.renew(),
            Action::TransferToken => self.transfer_token(),
            Action::Subname => self.subname(),
            Action::SetAddr | Action::SetText | Action::SetContenthash => self.set_record(action),
            Action::ReverseClaim => self.reverse_claim(),
            Action::SetResolver => self.set_resolver(),
            Action::RegistryTransfer => self.registry_transfer(),
        }
    }

    /// Closes the current block (if it has logs) and opens the next, 1–3 blocks later.
    fn next_block(&mut self, out: &mut CorpusWriter) -> Result<(), BenchError> {
        let gap = self.rng.random_range(1..=3);
        let number = self.block.number + gap;
        let done = std::mem::replace(&mut self.block, CorpusBlock { number, ..Default::default() });
        if !done.logs.is_empty() {
            out.block(&done)?;
        }
        self.now = GENESIS_TIMESTAMP + number * BLOCK_TIME;
        Ok(())
    }
}

/// Writes a corpus of at least `events` logs (a transaction is never split) to `path`.
pub fn generate(path: &Path, events: u64, seed: u64) -> Result<GeneratedCorpus, BenchError> {
    let mut g = Generator::new(seed, super::run::mainnet_roles()?);
    let first_block = g.block.number;
    let salt = keccak256(format!("ensemble-corpus-{seed}"));
    let mut out = CorpusWriter::create(
        path,
        CorpusHeader {
            chain_id: CHAIN_ID,
            seed,
            first_block,
            last_block: first_block,
            genesis_timestamp: GENESIS_TIMESTAMP,
            block_time: BLOCK_TIME,
            salt,
            blocks: 0,
            transactions: 0,
            logs: 0,
        },
    )?;
    g.genesis();
    let mut written = 0u64;
    let mut last_block = first_block;
    while written < events {
        let actions = g.rng.random_range(1..=6);
        for _ in 0..actions {
            g.action();
        }
        written += g.block.logs.len() as u64;
        last_block = g.block.number;
        g.next_block(&mut out)?;
    }
    let header = out.finish(last_block)?;
    Ok(GeneratedCorpus { header, mix: g.mix, unknown_labels: g.unknown_labels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::corpus::CorpusReader;

    #[test]
    fn same_seed_same_corpus_and_every_log_decodes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let made = generate(&a, 2_000, 11).expect("generate");
        generate(&b, 2_000, 11).expect("generate again");
        assert_eq!(std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
        assert!(made.header.logs >= 2_000);
        assert!(made.mix["NewOwner"] > 0 && made.mix["TokenTransfer"] > 0);

        let roles = crate::bench::run::mainnet_roles().expect("roles");
        let mut reader = CorpusReader::open(&a).expect("open");
        assert_eq!(reader.header().last_block, made.header.last_block);
        let mut logs = 0;
        while let Some(block) = reader.next_block().expect("block") {
            for log in &block.logs {
                let role = roles.get(&log.address).copied();
                let events = ensemble::ens::decode::decode_log(role, &log.data)
                    .unwrap_or_else(|e| panic!("block {} log does not decode: {e}", block.number));
                assert!(!events.is_empty(), "block {} has a log no handler reads", block.number);
                logs += 1;
            }
        }
        assert_eq!(logs, made.header.logs);
    }
}
