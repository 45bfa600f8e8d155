//! The subgraph's entities as views over Ensemble's tables: for each entity, the rows it is
//! read from and, for each field, the SQL expression that gives its value. Listings, lookups
//! by id, `where` filters and `orderBy` are all built from these definitions, so a field
//! filters and orders by exactly the value it shows.
//!
//! How the subgraph's entities map onto the tables (the registry of the root chain only):
//! - `Domain`: a `domains` row; its id is the node. `owner` is the registry owner,
//!   `registrant` the registrar token's holder, `wrappedOwner` the NameWrapper token's holder;
//!   `expiryDate` is the registration's expiry plus the grace period for a `.eth` second-level
//!   name, the NameWrapper expiry for another wrapped name whose parent cannot control it,
//!   else null; `resolvedAddress` is the ETH address its resolver holds for it.
//! - `Registration`: the latest base registrar registration of a direct subname of `eth`,
//!   by label hash; `registrant` is the token's current holder, as the subgraph keeps it.
//! - `WrappedDomain`: a domain while it is wrapped, by node.
//! - `Resolver`: the records a resolver holds for a node (`<address>-<node>`).
//! - `Account`: an address that owns, holds or wrapped-owns a domain.
//! - The event entities: the event history, by `<block>-<logIndex>`, typed by selector; the
//!   fields of each type are decoded from the stored log ([`super::events`]).

use std::sync::LazyLock;

use entities::event_selector::code_of_signature;

use super::sql::Env;

/// How a column's SQL value is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    /// Raw bytes, shown as `0x` hex.
    Blob,
    /// Text, shown as it is.
    Text,
    /// An integer.
    Int,
    /// A boolean.
    Bool,
}

/// The GraphQL scalar a field shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `ID`.
    Id,
    /// `String`.
    String,
    /// `Bytes` (`0x` hex).
    Bytes,
    /// `BigInt` (decimal text).
    BigInt,
    /// `Int`.
    Int,
    /// `Boolean`.
    Boolean,
}

impl Scalar {
    /// Its GraphQL name.
    pub fn type_name(self) -> &'static str {
        match self {
            Scalar::Id => "ID",
            Scalar::String => "String",
            Scalar::Bytes => "Bytes",
            Scalar::BigInt => "BigInt",
            Scalar::Int => "Int",
            Scalar::Boolean => "Boolean",
        }
    }

    /// Whether its filters include the text operators (`_contains`, `_starts_with`, ...).
    pub fn is_text(self) -> bool {
        matches!(self, Scalar::String)
    }
}

/// SQL for a value of the row aliased by the argument.
pub type Expr = fn(&Env, &str) -> String;

/// What a field is.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A scalar held in SQL.
    Scalar(Scalar, Enc, Expr),
    /// A reference to another entity: the SQL gives the target's id, as the target stores it.
    Ref(&'static str, Expr),
    /// The list of entities of the target type that point back at this one: those whose SQL
    /// (over the target's row) equals this entity's field of the given name.
    List(&'static str, Expr, &'static str),
    /// Read from SQL but not shown (what other fields are computed from).
    Hidden(Enc, Expr),
    /// Computed in Rust from the row (event fields, lists of record keys).
    Computed,
}

/// One field of an entity.
#[derive(Clone, Debug)]
pub struct Field {
    /// Its GraphQL name.
    pub name: &'static str,
    /// What it is.
    pub kind: Kind,
    /// Whether the schema says it may be null.
    pub nullable: bool,
    /// Whether `where` and `orderBy` take it (every SQL-backed field but the expensive ones).
    pub filterable: bool,
    /// Whether its SQL is a column that is never null, though the schema lets it be (a
    /// domain's name): ordering by it needs no place for nulls, so its index gives the order.
    pub stored: bool,
    /// Its description in the schema.
    pub doc: &'static str,
}

impl Field {
    /// The field's SQL over the row `alias`, if it has any (lists have none).
    pub fn sql(&self, env: &Env, alias: &str) -> Option<String> {
        match self.kind {
            Kind::Scalar(_, _, expr) | Kind::Ref(_, expr) | Kind::Hidden(_, expr) => {
                Some(expr(env, alias))
            }
            Kind::List(..) | Kind::Computed => None,
        }
    }
}

/// An entity type.
#[derive(Debug)]
pub struct Entity {
    /// Its GraphQL type name.
    pub name: &'static str,
    /// Its collection field on `Query`.
    pub plural: &'static str,
    /// Its single-entity field on `Query`.
    pub single: &'static str,
    /// The interface it implements, for event types.
    pub implements: Option<&'static str>,
    /// Whether it is an interface (its rows are shown as their concrete types).
    pub interface: bool,
    /// `FROM` item for the alias.
    pub from: Expr,
    /// Condition every row of the entity meets, for the alias.
    pub scope: Expr,
    /// Its fields; the first is `id`.
    pub fields: Vec<Field>,
    /// Its description in the schema.
    pub doc: &'static str,
}

impl Entity {
    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<(usize, &Field)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }

    /// The id's SQL over `alias`.
    pub fn id_sql(&self, env: &Env, alias: &str) -> String {
        self.fields[0].sql(env, alias).unwrap_or_default()
    }

    /// How the id is stored.
    pub fn id_enc(&self) -> Enc {
        match self.fields[0].kind {
            Kind::Scalar(_, enc, _) => enc,
            _ => Enc::Text,
        }
    }

    /// Whether its rows are event history rows.
    pub fn is_event(&self) -> bool {
        self.implements.is_some() || self.interface
    }
}

fn scalar(name: &'static str, s: Scalar, enc: Enc, expr: Expr, doc: &'static str) -> Field {
    Field {
        name,
        kind: Kind::Scalar(s, enc, expr),
        nullable: true,
        filterable: true,
        stored: false,
        doc,
    }
}

fn required(mut field: Field) -> Field {
    field.nullable = false;
    field
}

fn reference(name: &'static str, target: &'static str, expr: Expr, doc: &'static str) -> Field {
    Field {
        name,
        kind: Kind::Ref(target, expr),
        nullable: true,
        filterable: true,
        stored: false,
        doc,
    }
}

fn list(
    name: &'static str,
    target: &'static str,
    child: Expr,
    parent: &'static str,
    doc: &'static str,
) -> Field {
    Field {
        name,
        kind: Kind::List(target, child, parent),
        nullable: false,
        filterable: true,
        stored: false,
        doc,
    }
}

fn hidden(name: &'static str, enc: Enc, expr: Expr) -> Field {
    Field {
        name,
        kind: Kind::Hidden(enc, expr),
        nullable: true,
        filterable: false,
        stored: false,
        doc: "",
    }
}

fn computed(name: &'static str, nullable: bool, doc: &'static str) -> Field {
    Field { name, kind: Kind::Computed, nullable, filterable: false, stored: false, doc }
}

fn stored(mut field: Field) -> Field {
    field.stored = true;
    field
}

fn unfiltered(mut field: Field) -> Field {
    field.filterable = false;
    field
}

/// A domain row of the namespace.
fn domain_scope(env: &Env, a: &str) -> String {
    format!("{a}.chain_id = {}", env.chain_id)
}

/// `NULL` unless the address column holds a non-zero address.
fn nonzero(env: &Env, column: &str) -> String {
    format!("({column} IS NOT NULL AND {column} <> {})", env.bytes(&[0u8; 20]))
}

fn label_name(_: &Env, a: &str) -> String {
    format!("(SELECT l.label FROM labels l WHERE l.label_hash = {a}.label_hash AND l.normalized)")
}

/// SQL of the latest registration's column `expr` (over alias `r`) of domain row `a`.
fn latest_registration(env: &Env, a: &str, expr: &str) -> String {
    format!("(SELECT {expr} FROM registrations r WHERE r.id = {})", env.latest_registration_key(a))
}

fn domain_expiry(env: &Env, a: &str) -> String {
    latest_registration(
        env,
        a,
        &format!(
            "CASE WHEN r.kind = 'BaseRegistrar' THEN r.expiry + r.grace_period \
             WHEN r.kind = 'NameWrapper' AND {a}.wrapped_owner IS NOT NULL \
             AND (r.fuses & {PARENT_CANNOT_CONTROL}) <> 0 THEN r.expiry END"
        ),
    )
}

/// The NameWrapper fuse that takes control away from the parent.
pub const PARENT_CANNOT_CONTROL: i64 = 65_536;

fn domain_entity() -> Entity {
    Entity {
        name: "Domain",
        plural: "domains",
        single: "domain",
        implements: None,
        interface: false,
        from: |_, a| format!("domains {a}"),
        scope: domain_scope,
        doc: "A name in the registry.",
        fields: vec![
            required(scalar(
                "id",
                Scalar::Id,
                Enc::Blob,
                |_, a| format!("substr({a}.id, 25)"),
                "The namehash of the name",
            )),
            stored(scalar(
                "name",
                Scalar::String,
                Enc::Text,
                |_, a| format!("{a}.name"),
                "The name; labels that are unknown or not normalized show as their hash in brackets",
            )),
            scalar(
                "labelName",
                Scalar::String,
                Enc::Text,
                label_name,
                "The label, when known and normalized",
            ),
            scalar(
                "labelhash",
                Scalar::Bytes,
                Enc::Blob,
                |_, a| format!("{a}.label_hash"),
                "keccak256 of the label",
            ),
            reference(
                "parent",
                "Domain",
                |_, a| {
                    format!("(SELECT substr(p.id, 25) FROM domains p WHERE p.seq = {a}.parent_seq)")
                },
                "The parent name (null for a top-level name)",
            ),
            list(
                "subdomains",
                "Domain",
                |_, c| format!("{c}.parent_seq"),
                "seq",
                "The names directly below this one",
            ),
            unfiltered(required(scalar(
                "subdomainCount",
                Scalar::Int,
                Enc::Int,
                |env, a| {
                    format!(
                        "(SELECT count(*) FROM domains c WHERE c.parent_seq = {a}.seq AND ({} OR {} \
                         OR EXISTS (SELECT 1 FROM domains g WHERE g.parent_seq = c.seq)))",
                        nonzero(env, "c.registry_owner"),
                        nonzero(env, "c.resolver"),
                    )
                },
                "The names directly below this one that are not deleted (an owner, a resolver or names below)",
            ))),
            reference(
                "resolvedAddress",
                "Account",
                |env, a| {
                    format!(
                        "(SELECT x.address FROM resolver_addresses x WHERE x.record_id = {} AND x.coin_type = 60)",
                        env.records_key(a)
                    )
                },
                "The ETH address its resolver holds for it",
            ),
            reference(
                "resolver",
                "Resolver",
                |env, a| {
                    format!(
                        "CASE WHEN {} THEN {} || '-' || {} END",
                        nonzero(env, &format!("{a}.resolver")),
                        env.hex_text(&format!("{a}.resolver")),
                        env.hex_text(&format!("substr({a}.id, 25)"))
                    )
                },
                "Its resolver and the records it holds for it",
            ),
            scalar(
                "ttl",
                Scalar::BigInt,
                Enc::Int,
                |_, a| format!("{a}.ttl"),
                "Time-to-live of its records, seconds",
            ),
            required(scalar(
                "isMigrated",
                Scalar::Boolean,
                Enc::Bool,
                |_, a| format!("{a}.migrated"),
                "Whether it is in the current registry",
            )),
            required(scalar(
                "createdAt",
                Scalar::BigInt,
                Enc::Int,
                |_, a| format!("{a}.created_at"),
                "Timestamp of the block that created it",
            )),
            required(reference(
                "owner",
                "Account",
                |env, a| env.account_or_zero(&format!("{a}.registry_owner")),
                "Its owner in the registry",
            )),
            reference(
                "registrant",
                "Account",
                |env, a| env.hex_text(&format!("{a}.token_owner")),
                "The holder of its registrar token",
            ),
            reference(
                "wrappedOwner",
                "Account",
                |env, a| env.hex_text(&format!("{a}.wrapped_owner")),
                "The holder of its NameWrapper token, while it is wrapped",
            ),
            scalar(
                "expiryDate",
                Scalar::BigInt,
                Enc::Int,
                domain_expiry,
                "When it expires: a .eth name's registration expiry plus the grace period; a wrapped name's expiry once its parent cannot control it",
            ),
            reference(
                "registration",
                "Registration",
                |env, a| {
                    format!(
                        "CASE WHEN {} = 'BaseRegistrar' THEN {a}.label_hash END",
                        latest_registration(env, a, "r.kind")
                    )
                },
                "Its registration, for a .eth name",
            ),
            reference(
                "wrappedDomain",
                "WrappedDomain",
                |_, a| {
                    format!("CASE WHEN {a}.wrapped_owner IS NOT NULL THEN substr({a}.id, 25) END")
                },
                "Its NameWrapper state, while it is wrapped",
            ),
            list(
                "events",
                "DomainEvent",
                |_, c| format!("{c}.domain_seq"),
                "seq",
                "Its registry and NameWrapper events, oldest first",
            ),
            hidden("seq", Enc::Int, |_, a| format!("{a}.seq")),
        ],
    }
}

fn registration_entity() -> Entity {
    Entity {
        name: "Registration",
        plural: "registrations",
        single: "registration",
        implements: None,
        interface: false,
        from: |_, a| format!("domains {a}"),
        scope: |env, a| {
            // The parent is compared without its index (unary `+`, on both engines): with a
            // list of label hashes, SQLite's planner otherwise walks every name below `eth`
            // instead of looking each label hash up, and PostgreSQL's, which cannot see how
            // many names the parent has when planning, reads all of them into a bitmap.
            format!(
                "{} AND +{a}.parent_seq = (SELECT e.seq FROM domains e WHERE e.id = {}) AND {} = 'BaseRegistrar'",
                domain_scope(env, a),
                env.bytes(&env.domain_key(&env.registrar_node)),
                latest_registration(env, a, "r.kind"),
            )
        },
        doc: "The registration of a .eth name by the base registrar.",
        fields: vec![
            required(scalar(
                "id",
                Scalar::Id,
                Enc::Blob,
                |_, a| format!("{a}.label_hash"),
                "The label hash",
            )),
            required(reference(
                "domain",
                "Domain",
                |_, a| format!("substr({a}.id, 25)"),
                "The registered name",
            )),
            required(scalar(
                "registrationDate",
                Scalar::BigInt,
                Enc::Int,
                |env, a| latest_registration(env, a, "r.start"),
                "When it was registered",
            )),
            required(scalar(
                "expiryDate",
                Scalar::BigInt,
                Enc::Int,
                |env, a| latest_registration(env, a, "r.expiry"),
                "When it expires (the grace period follows)",
            )),
            computed("cost", true, "What the latest registration or renewal cost, in wei"),
            required(reference(
                "registrant",
                "Account",
                |env, a| env.account_or_zero(&format!("{a}.token_owner")),
                "The holder of the registrar token",
            )),
            scalar(
                "labelName",
                Scalar::String,
                Enc::Text,
                label_name,
                "The label, when known and normalized",
            ),
            list(
                "events",
                "RegistrationEvent",
                |_, c| format!("{c}.domain_seq"),
                "seq",
                "Its base registrar events, oldest first",
            ),
            hidden("seq", Enc::Int, |_, a| format!("{a}.seq")),
            hidden("registration_key", Enc::Blob, |env, a| env.latest_registration_key(a)),
            hidden("base_cost", Enc::Text, |env, a| latest_registration(env, a, "r.base_cost")),
            hidden("premium", Enc::Text, |env, a| latest_registration(env, a, "r.premium")),
            hidden("renewals", Enc::Int, |env, a| latest_registration(env, a, "r.renewal_count")),
        ],
    }
}

fn wrapped_domain_entity() -> Entity {
    Entity {
        name: "WrappedDomain",
        plural: "wrappedDomains",
        single: "wrappedDomain",
        implements: None,
        interface: false,
        from: |_, a| format!("domains {a}"),
        scope: |env, a| format!("{} AND {a}.wrapped_owner IS NOT NULL", domain_scope(env, a)),
        doc: "A name while the NameWrapper holds it.",
        fields: vec![
            required(scalar(
                "id",
                Scalar::Id,
                Enc::Blob,
                |_, a| format!("substr({a}.id, 25)"),
                "The namehash",
            )),
            required(reference(
                "domain",
                "Domain",
                |_, a| format!("substr({a}.id, 25)"),
                "The wrapped name",
            )),
            required(scalar(
                "expiryDate",
                Scalar::BigInt,
                Enc::Int,
                |env, a| {
                    latest_registration(
                        env,
                        a,
                        "CASE WHEN r.kind = 'BaseRegistrar' THEN r.expiry + r.grace_period ELSE r.expiry END",
                    )
                },
                "The NameWrapper expiry",
            )),
            required(scalar(
                "fuses",
                Scalar::Int,
                Enc::Int,
                |env, a| format!("COALESCE({}, 0)", latest_registration(env, a, "r.fuses")),
                "The fuses burned",
            )),
            required(reference(
                "owner",
                "Account",
                |env, a| env.hex_text(&format!("{a}.wrapped_owner")),
                "The holder of the NameWrapper token",
            )),
            scalar("name", Scalar::String, Enc::Text, |_, a| format!("{a}.name"), "The name"),
        ],
    }
}

fn resolver_entity() -> Entity {
    Entity {
        name: "Resolver",
        plural: "resolvers",
        single: "resolver",
        implements: None,
        interface: false,
        from: |_, a| format!("resolver_records {a}"),
        scope: |env, a| {
            let prefix = env.chain_prefix();
            let mut low = prefix.to_vec();
            low.extend_from_slice(&[0u8; 52]);
            let mut high = prefix.to_vec();
            high.extend_from_slice(&[0xffu8; 52]);
            format!("{a}.id BETWEEN {} AND {}", env.bytes(&low), env.bytes(&high))
        },
        doc: "The records one resolver holds for one name.",
        fields: vec![
            required(scalar(
                "id",
                Scalar::Id,
                Enc::Text,
                |env, a| {
                    format!(
                        "({} || '-' || {})",
                        env.hex_text(&format!("substr({a}.id, 5, 20)")),
                        env.hex_text(&format!("substr({a}.id, 25)"))
                    )
                },
                "`<resolver address>-<namehash>`",
            )),
            reference(
                "domain",
                "Domain",
                |_, a| format!("substr({a}.id, 25)"),
                "The name the records are for",
            ),
            required(scalar(
                "address",
                Scalar::Bytes,
                Enc::Blob,
                |_, a| format!("substr({a}.id, 5, 20)"),
                "The resolver contract",
            )),
            reference(
                "addr",
                "Account",
                |_, a| {
                    format!(
                        "(SELECT x.address FROM resolver_addresses x WHERE x.record_id = {a}.id AND x.coin_type = 60)"
                    )
                },
                "Its ETH address record",
            ),
            scalar(
                "contentHash",
                Scalar::Bytes,
                Enc::Text,
                |_, a| format!("{a}.contenthash"),
                "Its contenthash record",
            ),
            computed("texts", true, "The text record keys it has set"),
            computed("coinTypes", true, "The coin types it has set addresses for"),
            Field {
                name: "events",
                kind: Kind::Computed,
                nullable: false,
                filterable: false,
                stored: false,
                doc: "Its record events for this name, oldest first",
            },
            hidden("record_key", Enc::Blob, |_, a| format!("{a}.id")),
        ],
    }
}

fn account_entity() -> Entity {
    Entity {
        name: "Account",
        plural: "accounts",
        single: "account",
        implements: None,
        interface: false,
        from: |env, a| {
            let chain = env.chain_id;
            let column = |c: &str| {
                format!(
                    "SELECT {} AS id FROM domains WHERE chain_id = {chain} AND {c} IS NOT NULL",
                    env.hex_text(c)
                )
            };
            format!(
                "({} UNION {} UNION {}) {a}",
                column("registry_owner"),
                column("token_owner"),
                column("wrapped_owner")
            )
        },
        scope: |_, _| "1 = 1".to_owned(),
        doc: "An address that owns, holds or wrapped-owns a name.",
        fields: vec![
            required(scalar(
                "id",
                Scalar::Id,
                Enc::Text,
                |_, a| format!("{a}.id"),
                "The address, lowercase hex",
            )),
            list(
                "domains",
                "Domain",
                |env, c| env.account_or_zero(&format!("{c}.registry_owner")),
                "id",
                "The names it owns in the registry",
            ),
            list(
                "wrappedDomains",
                "WrappedDomain",
                |env, c| env.hex_text(&format!("{c}.wrapped_owner")),
                "id",
                "The names whose NameWrapper token it holds",
            ),
            list(
                "registrations",
                "Registration",
                |env, c| env.hex_text(&format!("{c}.token_owner")),
                "id",
                "The .eth registrations whose token it holds",
            ),
        ],
    }
}

/// The three event interfaces and what each event type is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventFamily {
    /// Registry and NameWrapper events of a domain.
    Domain,
    /// Base registrar events of a registration.
    Registration,
    /// Record events of a resolver.
    Resolver,
}

impl EventFamily {
    /// The interface's name.
    pub fn interface(self) -> &'static str {
        match self {
            EventFamily::Domain => "DomainEvent",
            EventFamily::Registration => "RegistrationEvent",
            EventFamily::Resolver => "ResolverEvent",
        }
    }
}

/// The event types: GraphQL name, collection names, family, and the signatures stored as it.
pub const EVENT_TYPES: [(&str, &str, &str, EventFamily, &[&str]); 22] = [
    ("Transfer", "transfers", "transfer", EventFamily::Domain, &["Transfer(bytes32,address)"]),
    (
        "NewOwner",
        "newOwners",
        "newOwner",
        EventFamily::Domain,
        &["NewOwner(bytes32,bytes32,address)"],
    ),
    (
        "NewResolver",
        "newResolvers",
        "newResolver",
        EventFamily::Domain,
        &["NewResolver(bytes32,address)"],
    ),
    ("NewTTL", "newTTLs", "newTTL", EventFamily::Domain, &["NewTTL(bytes32,uint64)"]),
    (
        "WrappedTransfer",
        "wrappedTransfers",
        "wrappedTransfer",
        EventFamily::Domain,
        &[
            "TransferSingle(address,address,address,uint256,uint256)",
            "TransferBatch(address,address,address,uint256[],uint256[])",
        ],
    ),
    (
        "NameWrapped",
        "nameWrappeds",
        "nameWrapped",
        EventFamily::Domain,
        &["NameWrapped(bytes32,bytes,address,uint32,uint64)"],
    ),
    (
        "NameUnwrapped",
        "nameUnwrappeds",
        "nameUnwrapped",
        EventFamily::Domain,
        &["NameUnwrapped(bytes32,address)"],
    ),
    ("FusesSet", "fusesSets", "fusesSet", EventFamily::Domain, &["FusesSet(bytes32,uint32)"]),
    (
        "ExpiryExtended",
        "expiryExtendeds",
        "expiryExtended",
        EventFamily::Domain,
        &["ExpiryExtended(bytes32,uint64)"],
    ),
    (
        "NameRegistered",
        "nameRegistereds",
        "nameRegistered",
        EventFamily::Registration,
        &["NameRegistered(uint256,address,uint256)"],
    ),
    (
        "NameRenewed",
        "nameReneweds",
        "nameRenewed",
        EventFamily::Registration,
        &["NameRenewed(uint256,uint256)"],
    ),
    (
        "NameTransferred",
        "nameTransferreds",
        "nameTransferred",
        EventFamily::Registration,
        &["Transfer(address,address,uint256)"],
    ),
    (
        "AddrChanged",
        "addrChangeds",
        "addrChanged",
        EventFamily::Resolver,
        &["AddrChanged(bytes32,address)"],
    ),
    (
        "MulticoinAddrChanged",
        "multicoinAddrChangeds",
        "multicoinAddrChanged",
        EventFamily::Resolver,
        &["AddressChanged(bytes32,uint256,bytes)"],
    ),
    (
        "NameChanged",
        "nameChangeds",
        "nameChanged",
        EventFamily::Resolver,
        &["NameChanged(bytes32,string)"],
    ),
    (
        "AbiChanged",
        "abiChangeds",
        "abiChanged",
        EventFamily::Resolver,
        &["ABIChanged(bytes32,uint256)"],
    ),
    (
        "PubkeyChanged",
        "pubkeyChangeds",
        "pubkeyChanged",
        EventFamily::Resolver,
        &["PubkeyChanged(bytes32,bytes32,bytes32)"],
    ),
    (
        "TextChanged",
        "textChangeds",
        "textChanged",
        EventFamily::Resolver,
        &["TextChanged(bytes32,string,string)", "TextChanged(bytes32,string,string,string)"],
    ),
    (
        "ContenthashChanged",
        "contenthashChangeds",
        "contenthashChanged",
        EventFamily::Resolver,
        &["ContenthashChanged(bytes32,bytes)"],
    ),
    (
        "InterfaceChanged",
        "interfaceChangeds",
        "interfaceChanged",
        EventFamily::Resolver,
        &["InterfaceChanged(bytes32,bytes4,address)"],
    ),
    (
        "AuthorisationChanged",
        "authorisationChangeds",
        "authorisationChanged",
        EventFamily::Resolver,
        &["AuthorisationChanged(bytes32,address,address,bool)"],
    ),
    (
        "VersionChanged",
        "versionChangeds",
        "versionChanged",
        EventFamily::Resolver,
        &["VersionChanged(bytes32,uint64)"],
    ),
];

/// Selector codes of the signatures the history stores (a signature it never stores has none,
/// and its type lists nothing).
pub fn codes_of(signatures: &[&str]) -> Vec<i16> {
    signatures.iter().filter_map(|s| code_of_signature(s)).collect()
}

/// Selector codes of every type of `family`.
pub fn family_codes(family: EventFamily) -> Vec<i16> {
    EVENT_TYPES.iter().filter(|t| t.3 == family).flat_map(|t| codes_of(t.4)).collect()
}

/// The event type a stored selector code is shown as, within `family`.
pub fn event_type_of(family: EventFamily, code: i16) -> Option<&'static str> {
    EVENT_TYPES.iter().find(|t| t.3 == family && codes_of(t.4).contains(&code)).map(|t| t.0)
}

fn code_list(codes: &[i16]) -> String {
    if codes.is_empty() {
        return "NULL".to_owned();
    }
    codes.iter().map(i16::to_string).collect::<Vec<_>>().join(", ")
}

/// Fields every event entity has, then those of its family, then what its values are decoded
/// from.
fn event_fields(family: EventFamily) -> Vec<Field> {
    let mut fields = vec![
        required(scalar(
            "id",
            Scalar::Id,
            Enc::Text,
            |env, a| {
                format!(
                    "({} || '-' || {} || CASE WHEN {a}.seq = 0 THEN '' ELSE '-' || {} END)",
                    env.int_text(&format!("{a}.block_number")),
                    env.int_text(&format!("{a}.log_index")),
                    env.int_text(&format!("{a}.seq"))
                )
            },
            "`<blockNumber>-<logIndex>` (`-<n>` after it for the n-th id of a batch transfer)",
        )),
        required(scalar(
            "blockNumber",
            Scalar::Int,
            Enc::Int,
            |_, a| format!("{a}.block_number"),
            "The block",
        )),
        required(scalar(
            "transactionID",
            Scalar::Bytes,
            Enc::Blob,
            |_, a| {
                format!(
                    "(SELECT x.hash FROM event_transactions x WHERE x.chain_id = {a}.chain_id \
                     AND x.block_number = {a}.block_number AND x.tx_index = {a}.tx_index)"
                )
            },
            "The transaction hash",
        )),
    ];
    match family {
        EventFamily::Domain => fields.push(required(reference(
            "domain",
            "Domain",
            |_, a| format!("(SELECT substr(d.id, 25) FROM domains d WHERE d.seq = {a}.domain_seq)"),
            "The name",
        ))),
        EventFamily::Registration => fields.push(required(reference(
            "registration",
            "Registration",
            |_, a| format!("(SELECT d.label_hash FROM domains d WHERE d.seq = {a}.domain_seq)"),
            "The registration",
        ))),
        EventFamily::Resolver => fields.push(Field {
            name: "resolver",
            kind: Kind::Computed,
            nullable: false,
            filterable: false,
            stored: false,
            doc: "The resolver and name",
        }),
    }
    fields.extend([
        hidden("selector", Enc::Int, |_, a| format!("{a}.selector")),
        hidden("topics", Enc::Blob, |_, a| format!("{a}.topics")),
        hidden("data", Enc::Blob, |_, a| format!("{a}.data")),
        hidden("subject_node", Enc::Blob, |_, a| {
            format!("(SELECT substr(d.id, 25) FROM domains d WHERE d.seq = {a}.domain_seq)")
        }),
        hidden("subject_label", Enc::Blob, |_, a| {
            format!("(SELECT d.label_hash FROM domains d WHERE d.seq = {a}.domain_seq)")
        }),
        hidden("subject_parent", Enc::Blob, |_, a| {
            format!(
                "(SELECT substr(p.id, 25) FROM domains d JOIN domains p ON p.seq = d.parent_seq \
                 WHERE d.seq = {a}.domain_seq)"
            )
        }),
        hidden("contract", Enc::Blob, |_, a| {
            format!(
                "(SELECT c.address FROM contracts c WHERE c.chain_id = {a}.chain_id AND c.code = {a}.contract)"
            )
        }),
        hidden("seq", Enc::Int, |_, a| format!("{a}.seq")),
    ]);
    fields
}

/// The condition the subgraph puts on registry events: an event of the old registry counts
/// only while its name has not appeared in the current registry (the old registry's later
/// events for it change nothing, and the subgraph records none of them).
fn not_superseded(env: &Env, a: &str) -> String {
    let Some(old) = env.old_registry else { return "1 = 1".to_owned() };
    let code = |address: &[u8; 20]| {
        format!(
            "(SELECT c.code FROM contracts c WHERE c.chain_id = {} AND c.address = {})",
            env.chain_id,
            env.bytes(address)
        )
    };
    format!(
        "NOT COALESCE(({a}.contract = {old} AND EXISTS (SELECT 1 FROM events b \
         WHERE b.domain_seq = {a}.domain_seq AND b.contract = {new} \
         AND (b.block_number < {a}.block_number \
         OR (b.block_number = {a}.block_number AND b.log_index < {a}.log_index)))), FALSE)",
        old = code(&old),
        new = code(&env.registry),
    )
}

fn event_from(_: &Env, a: &str) -> String {
    format!("events {a}")
}

fn interface_entity(family: EventFamily) -> Entity {
    let scope: Expr = match family {
        EventFamily::Domain => |env, a| {
            format!(
                "{a}.chain_id = {} AND {a}.domain_seq IS NOT NULL AND {a}.selector IN ({}) AND {}",
                env.chain_id,
                code_list(&family_codes(EventFamily::Domain)),
                not_superseded(env, a)
            )
        },
        EventFamily::Registration => |env, a| {
            format!(
                "{a}.chain_id = {} AND {a}.domain_seq IS NOT NULL AND {a}.selector IN ({})",
                env.chain_id,
                code_list(&family_codes(EventFamily::Registration))
            )
        },
        EventFamily::Resolver => |env, a| {
            format!(
                "{a}.chain_id = {} AND {a}.domain_seq IS NULL AND {a}.selector IN ({})",
                env.chain_id,
                code_list(&family_codes(EventFamily::Resolver))
            )
        },
    };
    let (plural, single, doc) = match family {
        EventFamily::Domain => ("domainEvents", "domainEvent", "A registry or NameWrapper event."),
        EventFamily::Registration => {
            ("registrationEvents", "registrationEvent", "A base registrar event.")
        }
        EventFamily::Resolver => ("resolverEvents", "resolverEvent", "A resolver record event."),
    };
    Entity {
        name: family.interface(),
        plural,
        single,
        implements: None,
        interface: true,
        from: event_from,
        scope,
        fields: event_fields(family),
        doc,
    }
}

/// The scope of one event type: its family's rows with its own selectors. Written out per
/// type because a scope is a plain function.
macro_rules! event_scope {
    ($index:expr) => {
        |env: &Env, a: &str| {
            let (_, _, _, family, signatures) = EVENT_TYPES[$index];
            let domain = if family == EventFamily::Resolver { "IS NULL" } else { "IS NOT NULL" };
            let current = if family == EventFamily::Domain {
                not_superseded(env, a)
            } else {
                "1 = 1".to_owned()
            };
            format!(
                "{a}.chain_id = {} AND {a}.domain_seq {domain} AND {a}.selector IN ({}) AND {current}",
                env.chain_id,
                code_list(&codes_of(signatures))
            )
        }
    };
}

const EVENT_SCOPES: [Expr; 22] = [
    event_scope!(0),
    event_scope!(1),
    event_scope!(2),
    event_scope!(3),
    event_scope!(4),
    event_scope!(5),
    event_scope!(6),
    event_scope!(7),
    event_scope!(8),
    event_scope!(9),
    event_scope!(10),
    event_scope!(11),
    event_scope!(12),
    event_scope!(13),
    event_scope!(14),
    event_scope!(15),
    event_scope!(16),
    event_scope!(17),
    event_scope!(18),
    event_scope!(19),
    event_scope!(20),
    event_scope!(21),
];

fn event_entity(index: usize) -> Entity {
    let (name, plural, single, family, _) = EVENT_TYPES[index];
    let mut fields = event_fields(family);
    for (field, _, nullable) in super::events::specific_fields(name) {
        fields.push(computed(field, *nullable, ""));
    }
    Entity {
        name,
        plural,
        single,
        implements: Some(family.interface()),
        interface: false,
        from: event_from,
        scope: EVENT_SCOPES[index],
        fields,
        doc: "An event.",
    }
}

/// Every entity, entity types first, then the event interfaces and types.
pub static ENTITIES: LazyLock<Vec<Entity>> = LazyLock::new(|| {
    let mut all = vec![
        domain_entity(),
        account_entity(),
        registration_entity(),
        wrapped_domain_entity(),
        resolver_entity(),
        interface_entity(EventFamily::Domain),
        interface_entity(EventFamily::Registration),
        interface_entity(EventFamily::Resolver),
    ];
    all.extend((0..EVENT_TYPES.len()).map(event_entity));
    all
});

/// The entity named `name`.
pub fn entity(name: &str) -> Option<&'static Entity> {
    ENTITIES.iter().find(|e| e.name == name)
}

/// The family of an event entity.
pub fn family_of(entity: &Entity) -> Option<EventFamily> {
    let interface = if entity.interface { Some(entity.name) } else { entity.implements }?;
    [EventFamily::Domain, EventFamily::Registration, EventFamily::Resolver]
        .into_iter()
        .find(|f| f.interface() == interface)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_type_has_a_stored_selector_but_the_unindexed_ones() {
        let unindexed = ["AbiChanged", "InterfaceChanged", "AuthorisationChanged"];
        for (name, _, _, _, signatures) in EVENT_TYPES {
            let codes = codes_of(signatures);
            assert_eq!(codes.is_empty(), unindexed.contains(&name), "{name}");
        }
    }

    #[test]
    fn each_entity_starts_with_its_id_and_names_known_targets() {
        for e in ENTITIES.iter() {
            assert_eq!(e.fields[0].name, "id", "{}", e.name);
            for f in &e.fields {
                if let Kind::Ref(target, _) | Kind::List(target, _, _) = f.kind {
                    assert!(entity(target).is_some(), "{}.{} names {target}", e.name, f.name);
                }
            }
        }
    }
}
