//! [`Scenario`]: hundreds of names driven through the real contracts, and what the indexer
//! should know about each of them.
//!
//! Phases, each in its own block(s) because later phases depend on earlier ones: names in the
//! old registry; commit and reveal of `.eth` names through the controller (with resolver and
//! address); records (text, contenthash, multicoin) and subnames; deeper subnames; registry and
//! registrar transfers, resolver changes, the `legacy` TLD moving to the new registry; records
//! on the new resolvers, renewals, a text overwritten, old-registry writes after the move;
//! primary names through the reverse registrar.

use alloy::{
    ens::namehash,
    primitives::{Address, B256, Bytes, U256, keccak256},
};

use super::{
    Deployment, DevnetError, Driver,
    contracts::{IBaseRegistrar, IController, IRegistry, IResolver, IReverseRegistrar},
    deploy::MIN_COMMITMENT_AGE,
};
use ensemble::ens::name::{child_node, encoded_label_hash, interpret_label, labelhash};

/// One year, seconds.
pub const YEAR: u64 = 365 * 24 * 60 * 60;

/// A `.eth` name that exists in the old registry (with a resolver) before it is registered
/// through the controller.
pub const OLD_WORLD: &str = "oldworld";

/// Scenario size.
#[derive(Clone, Copy, Debug)]
pub struct ScenarioOptions {
    /// `.eth` second-level names registered through the controller.
    pub eth_names: usize,
    /// Names per block in the registration phases (fewer = more blocks).
    pub per_block: usize,
}

impl Default for ScenarioOptions {
    fn default() -> Self {
        Self { eth_names: 130, per_block: 200 }
    }
}

/// A name the scenario created and how the indexer can know its labels.
#[derive(Clone, Debug)]
pub struct ScenarioName {
    /// Literal labels, leaf first, and whether the indexer can learn each one's plaintext.
    pub labels: Vec<(String, bool)>,
}

impl ScenarioName {
    fn new(labels: &[(&str, bool)]) -> Self {
        Self { labels: labels.iter().map(|(l, k)| ((*l).to_owned(), *k)).collect() }
    }

    /// The name as the indexer renders it: known labels interpreted, unknown ones `[hash]`.
    pub fn interpreted(&self) -> String {
        self.labels
            .iter()
            .map(
                |(l, known)| {
                    if *known { interpret_label(l) } else { encoded_label_hash(labelhash(l)) }
                },
            )
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The name as a user types it: every label in plaintext, whether the indexer learned it
    /// or not.
    pub fn plaintext(&self) -> String {
        self.labels.iter().map(|(l, _)| interpret_label(l)).collect::<Vec<_>>().join(".")
    }

    /// namehash.
    pub fn node(&self) -> B256 {
        self.labels.iter().rev().fold(B256::ZERO, |node, (l, _)| child_node(node, labelhash(l)))
    }

    /// labelhash of a `.eth` second-level name, `None` otherwise.
    pub fn eth_label(&self) -> Option<B256> {
        match self.labels.as_slice() {
            [(label, _), (tld, _)] if tld == "eth" => Some(labelhash(label)),
            _ => None,
        }
    }
}

/// What a scenario produced.
#[derive(Debug)]
pub struct Scenario {
    /// The contracts.
    pub deployment: Deployment,
    /// Every name created.
    pub names: Vec<ScenarioName>,
    /// Accounts that set a primary name.
    pub primary_accounts: Vec<Address>,
    /// Last block mined.
    pub last_block: u64,
}

fn eth_label(i: usize) -> String {
    match i {
        0 => "MixedCase".into(), // registrable, not normalized: renders as [hash]
        1 => long_label("long", LONG_LABEL_BYTES), // ENS bounds no label
        2 => "🚀🚀🚀".into(),
        3 => "café".into(),
        // The long label with its last character changed: the two names share a prefix far
        // longer than any index key.
        4 => {
            let mut label = long_label("long", LONG_LABEL_BYTES - 1);
            label.push('z');
            label
        }
        _ => format!("name{i:03}"),
    }
}

/// Length of the scenario's long labels, bytes.
pub const LONG_LABEL_BYTES: usize = 10_000;

/// A normalized label of `len` lowercase hex digits drawn from `seed`: long and, unlike a
/// repeated character, not compressible, so a database cannot shrink it under a size limit.
pub fn long_label(seed: &str, len: usize) -> String {
    let mut label = String::with_capacity(len + 64);
    let mut block = keccak256(seed);
    while label.len() < len {
        label.push_str(&hex::encode(block));
        block = keccak256(block);
    }
    label.truncate(len);
    label
}

impl Scenario {
    /// Runs the scenario on a fresh deployment.
    // Name `i` drives its label, owner, secret and records together: indexing reads clearer
    // than zipping five iterators.
    #[allow(clippy::needless_range_loop)]
    pub async fn run(driver: &mut Driver, options: ScenarioOptions) -> Result<Self, DevnetError> {
        let d = Deployment::deploy(driver).await?;
        let acc = driver.accounts.clone();
        let deployer = d.deployer;
        let owner_of = |i: usize| acc[1 + i % 5];
        let mut names = vec![
            ScenarioName::new(&[("eth", true)]),
            ScenarioName::new(&[("reverse", true)]),
            ScenarioName::new(&[("addr", true), ("reverse", true)]),
        ];

        // Old registry: a TLD with ten children, before the new registry knows the TLD.
        let legacy = keccak256("legacy");
        let legacy_node = child_node(B256::ZERO, legacy);
        driver
            .call_tx(
                deployer,
                d.registry_old,
                IRegistry::setSubnodeOwnerCall { node: B256::ZERO, label: legacy, owner: deployer },
                "old legacy",
            )
            .await?;
        driver.mine().await?;
        names.push(ScenarioName::new(&[("legacy", false)]));
        for l in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] {
            driver
                .call_tx(
                    deployer,
                    d.registry_old,
                    IRegistry::setSubnodeRecordCall {
                        node: legacy_node,
                        label: labelhash(l),
                        owner: acc[6],
                        resolver: d.resolver,
                        ttl: 60,
                    },
                    "old child",
                )
                .await?;
            names.push(ScenarioName::new(&[(l, false), ("legacy", false)]));
        }
        driver.mine().await?;
        driver
            .call_tx(
                acc[6],
                d.resolver,
                IResolver::setAddr_0Call {
                    node: child_node(legacy_node, labelhash("a")),
                    a: acc[6],
                },
                "old child addr",
            )
            .await?;
        driver.mine().await?;

        // An old-registry `.eth` name with a resolver and a record, registered anew through the
        // controller later (without a resolver): once the current registry has its record,
        // its resolver is the current registry's (none), not the old one.
        let old_eth = child_node(B256::ZERO, labelhash("eth"));
        driver
            .call_tx(
                deployer,
                d.registry_old,
                IRegistry::setSubnodeOwnerCall {
                    node: B256::ZERO,
                    label: labelhash("eth"),
                    owner: deployer,
                },
                "old eth",
            )
            .await?;
        driver
            .call_tx(
                deployer,
                d.registry_old,
                IRegistry::setSubnodeRecordCall {
                    node: old_eth,
                    label: labelhash(OLD_WORLD),
                    owner: acc[6],
                    resolver: d.resolver,
                    ttl: 60,
                },
                "old eth child",
            )
            .await?;
        driver.mine().await?;
        driver
            .call_tx(
                acc[6],
                d.resolver,
                IResolver::setAddr_0Call {
                    node: child_node(old_eth, labelhash(OLD_WORLD)),
                    a: acc[6],
                },
                "old eth child addr",
            )
            .await?;
        driver.mine().await?;

        // Commit, wait, reveal: `.eth` names with resolver and address.
        let mut labels: Vec<String> = (0..options.eth_names).map(eth_label).collect();
        // The last one is the old-registry name, registered without a resolver.
        labels.push(OLD_WORLD.to_owned());
        let old_world = labels.len() - 1;
        let resolver_of = |i: usize| if i == old_world { Address::ZERO } else { d.resolver };
        let secret = |i: usize| keccak256(format!("secret{i}"));
        for chunk in (0..labels.len()).collect::<Vec<_>>().chunks(options.per_block) {
            for &i in chunk {
                let commitment = driver
                    .read(
                        d.controller,
                        IController::makeCommitmentWithConfigCall {
                            name: labels[i].clone(),
                            owner: owner_of(i),
                            secret: secret(i),
                            resolver: resolver_of(i),
                            addr: if i == old_world { Address::ZERO } else { owner_of(i) },
                        },
                    )
                    .await?;
                driver
                    .call_tx(
                        deployer,
                        d.controller,
                        IController::commitCall { commitment },
                        "commit",
                    )
                    .await?;
            }
            driver.mine().await?;
        }
        driver.increase_time(MIN_COMMITMENT_AGE + 1).await?;
        for chunk in (0..labels.len()).collect::<Vec<_>>().chunks(options.per_block) {
            for &i in chunk {
                let call = IController::registerWithConfigCall {
                    name: labels[i].clone(),
                    owner: owner_of(i),
                    duration: U256::from(YEAR),
                    secret: secret(i),
                    resolver: resolver_of(i),
                    addr: if i == old_world { Address::ZERO } else { owner_of(i) },
                };
                driver
                    .send(
                        deployer,
                        Some(d.controller),
                        alloy::sol_types::SolCall::abi_encode(&call),
                        U256::from(10u128.pow(18)),
                        format!("register {i}"),
                    )
                    .await?;
                names.push(ScenarioName::new(&[(&labels[i], true), ("eth", true)]));
            }
            driver.mine().await?;
        }
        let node = |i: usize| child_node(namehash("eth"), labelhash(&labels[i]));

        // Records and first-level subnames.
        let subs_of = options.eth_names.min(60);
        for i in 0..options.eth_names {
            let o = owner_of(i);
            driver
                .call_tx(
                    o,
                    d.resolver,
                    IResolver::setTextCall {
                        node: node(i),
                        key: "url".into(),
                        value: format!("https://{i}.example"),
                    },
                    "url",
                )
                .await?;
            if i % 3 == 0 {
                driver
                    .call_tx(
                        o,
                        d.resolver,
                        IResolver::setTextCall {
                            node: node(i),
                            key: "avatar".into(),
                            value: format!(
                                "eip155:1/erc721:0xb7f7f6c52f2e2fdb1963eab30438024864c313f6/{i}"
                            ),
                        },
                        "avatar",
                    )
                    .await?;
            }
            if i % 4 == 0 {
                let hash = Bytes::from(
                    [
                        &[0xe3, 0x01, 0x01, 0x70, 0x12, 0x20][..],
                        keccak256(format!("site{i}")).as_slice(),
                    ]
                    .concat(),
                );
                driver
                    .call_tx(
                        o,
                        d.resolver,
                        IResolver::setContenthashCall { node: node(i), hash },
                        "contenthash",
                    )
                    .await?;
            }
            if i % 5 == 0 {
                driver
                    .call_tx(
                        o,
                        d.resolver,
                        IResolver::setAddr_1Call {
                            node: node(i),
                            coinType: U256::ZERO,
                            a: Bytes::from(vec![0x00, 0x14, i as u8]),
                        },
                        "btc",
                    )
                    .await?;
            }
            if i < subs_of {
                for j in 0..2 {
                    let sub = format!("sub{j}");
                    driver
                        .call_tx(
                            o,
                            d.registry,
                            IRegistry::setSubnodeRecordCall {
                                node: node(i),
                                label: labelhash(&sub),
                                owner: o,
                                resolver: d.resolver,
                                ttl: 300,
                            },
                            "sub",
                        )
                        .await?;
                    names.push(ScenarioName::new(&[
                        (&sub, false),
                        (&labels[i], true),
                        ("eth", true),
                    ]));
                }
            }
            if (i + 1) % options.per_block == 0 {
                driver.mine().await?;
            }
        }
        driver.mine().await?;

        // Depth 4, and records on subnames.
        let deep_of = subs_of.min(20);
        for i in 0..deep_of {
            let o = owner_of(i);
            for j in 0..2 {
                let sub = format!("sub{j}");
                let sub_node = child_node(node(i), labelhash(&sub));
                driver
                    .call_tx(
                        o,
                        d.registry,
                        IRegistry::setSubnodeRecordCall {
                            node: sub_node,
                            label: labelhash("deep"),
                            owner: acc[6],
                            resolver: d.resolver,
                            ttl: 0,
                        },
                        "deep",
                    )
                    .await?;
                driver
                    .call_tx(
                        o,
                        d.resolver,
                        IResolver::setTextCall {
                            node: sub_node,
                            key: "url".into(),
                            value: format!("https://{j}.{i}.example"),
                        },
                        "sub url",
                    )
                    .await?;
                driver
                    .call_tx(
                        o,
                        d.resolver,
                        IResolver::setAddr_0Call { node: sub_node, a: acc[7] },
                        "sub addr",
                    )
                    .await?;
                names.push(ScenarioName::new(&[
                    ("deep", false),
                    (&sub, false),
                    (&labels[i], true),
                    ("eth", true),
                ]));
            }
        }
        driver.mine().await?;

        // Transfers, resolver changes, the legacy TLD arrives in the new registry.
        for i in 60..75.min(options.eth_names) {
            let token = U256::from_be_bytes(labelhash(&labels[i]).0);
            driver
                .call_tx(
                    owner_of(i),
                    d.base_registrar,
                    IBaseRegistrar::transferFromCall {
                        from: owner_of(i),
                        to: acc[8],
                        tokenId: token,
                    },
                    "token transfer",
                )
                .await?;
        }
        // After those transfers, the registry record of a `.eth` name moves away from its token
        // holder, by the registry owner's `setOwner` and by the holder's `reclaim`: its owner
        // stays the token holder.
        for i in 60..64.min(options.eth_names) {
            driver
                .call_tx(
                    owner_of(i),
                    d.registry,
                    IRegistry::setOwnerCall { node: node(i), owner: acc[7] },
                    "registry owner moves",
                )
                .await?;
        }
        for i in 64..68.min(options.eth_names) {
            let token = U256::from_be_bytes(labelhash(&labels[i]).0);
            driver
                .call_tx(
                    acc[8],
                    d.base_registrar,
                    IBaseRegistrar::reclaimCall { id: token, owner: acc[9] },
                    "reclaim",
                )
                .await?;
        }
        for i in 0..10.min(subs_of) {
            let sub_node = child_node(node(i), labelhash("sub1"));
            driver
                .call_tx(
                    owner_of(i),
                    d.registry,
                    IRegistry::setOwnerCall { node: sub_node, owner: acc[9] },
                    "sub transfer",
                )
                .await?;
        }
        let moved = 80..95.min(options.eth_names);
        for i in moved.clone() {
            driver
                .call_tx(
                    owner_of(i),
                    d.registry,
                    IRegistry::setResolverCall { node: node(i), resolver: d.legacy_resolver },
                    "resolver change",
                )
                .await?;
        }
        driver
            .call_tx(
                deployer,
                d.registry,
                IRegistry::setSubnodeOwnerCall { node: B256::ZERO, label: legacy, owner: deployer },
                "legacy to new registry",
            )
            .await?;
        driver.mine().await?;

        // Records on the new resolver, renewals, an overwritten text, old-registry writes
        // after the move (the TLD's is ignored, a new child's is not).
        for i in moved {
            driver
                .call_tx(
                    owner_of(i),
                    d.legacy_resolver,
                    IResolver::setTextCall {
                        node: node(i),
                        key: "url".into(),
                        value: "https://legacy.example".into(),
                    },
                    "legacy url",
                )
                .await?;
            driver
                .call_tx(
                    owner_of(i),
                    d.legacy_resolver,
                    IResolver::setAddr_0Call { node: node(i), a: owner_of(i + 1) },
                    "legacy addr",
                )
                .await?;
        }
        for i in 100..120.min(options.eth_names) {
            let call =
                IController::renewCall { name: labels[i].clone(), duration: U256::from(YEAR) };
            driver
                .send(
                    deployer,
                    Some(d.controller),
                    alloy::sol_types::SolCall::abi_encode(&call),
                    U256::from(10u128.pow(18)),
                    "renew",
                )
                .await?;
        }
        if options.eth_names > 5 {
            driver
                .call_tx(
                    owner_of(5),
                    d.resolver,
                    IResolver::setTextCall {
                        node: node(5),
                        key: "url".into(),
                        value: "https://updated.example".into(),
                    },
                    "url overwrite",
                )
                .await?;
        }
        driver
            .call_tx(
                deployer,
                d.registry_old,
                IRegistry::setSubnodeOwnerCall {
                    node: legacy_node,
                    label: labelhash("late"),
                    owner: acc[6],
                },
                "old child after move",
            )
            .await?;
        driver
            .call_tx(
                deployer,
                d.registry_old,
                IRegistry::setOwnerCall { node: legacy_node, owner: acc[7] },
                "old write after move",
            )
            .await?;
        names.push(ScenarioName::new(&[("late", false), ("legacy", false)]));
        // An old-registry child with a resolver gets its first record in the current registry
        // by a registry write: from then on it has the current record's resolver (none).
        driver
            .call_tx(
                deployer,
                d.registry,
                IRegistry::setSubnodeOwnerCall {
                    node: legacy_node,
                    label: labelhash("b"),
                    owner: acc[6],
                },
                "legacy child to new registry",
            )
            .await?;
        driver.mine().await?;

        // Primary names.
        let mut primary_accounts = Vec::new();
        for k in 0..5.min(options.eth_names) {
            let name = format!("{}.eth", labels[k + 5 * usize::from(options.eth_names > 10)]);
            let account = owner_of(k + 5 * usize::from(options.eth_names > 10));
            driver
                .call_tx(
                    account,
                    d.reverse_registrar,
                    IReverseRegistrar::setNameCall { name },
                    "primary name",
                )
                .await?;
            primary_accounts.push(account);
            let label = hex::encode(account);
            names.push(ScenarioName::new(&[(&label, true), ("addr", true), ("reverse", true)]));
        }
        let last_block = driver.mine().await?;
        Ok(Self { deployment: d, names, primary_accounts, last_block })
    }
}

/// `namehash("<hex address>.addr.reverse")`.
pub fn reverse_node(account: Address) -> B256 {
    child_node(namehash("addr.reverse"), labelhash(&hex::encode(account)))
}
