//! Reverse resolution: ENSIP-19 primary names, verified forward.
//!
//! For coin type 60 the name is the `name` record of `<addr>.addr.reverse`, resolved as any
//! name is. For an EVM chain's coin type (`0x80000000 | chainId`) it is the name the chain's
//! reverse registrar holds for `<addr>.<coinType hex>.reverse`, else the default registrar's
//! (`<addr>.default.reverse`). The index reads the registrars' indexed records; a live
//! answer resolves the reverse name from the root chain, through the resolvers the namespace
//! set on those names. A name is primary only if it is ENSIP-15 normalized and its forward
//! address for the coin type is the account.

use alloy::primitives::Address;
use entities::{resolver_record, resolver_record_key::ResolverRecordKey, reverse_registrar};
use graphql::resolution::{
    Answered, MAX_COIN_TYPES, PrimaryName, ResolutionError, ResolveOptions, Source, error_code,
};
use sea_orm::EntityTrait;

use super::{
    ResolutionService,
    name::ResolvableName,
    records::{ETH_COIN_TYPE, EVM_BIT, Record, Value, is_evm_coin},
    trace::Trace,
};

/// The default coin type (`default.reverse`).
pub const DEFAULT_COIN_TYPE: u64 = EVM_BIT;

/// The primary names of `address` for `coin_types`, in the order asked.
pub async fn primary_names(
    service: &ResolutionService,
    address: Address,
    coin_types: &[u64],
    options: ResolveOptions,
) -> Result<Vec<PrimaryName>, ResolutionError> {
    if coin_types.len() > MAX_COIN_TYPES {
        return Err(ResolutionError::new(
            error_code::TOO_MANY_RECORDS,
            format!("ask for at most {MAX_COIN_TYPES} coin types at once"),
        ));
    }
    if let Some(coin) = coin_types.iter().find(|c| !is_evm_coin(**c)) {
        return Err(ResolutionError::new(
            error_code::INVALID_ARGUMENT,
            format!(
                "coin type {coin} is not an EVM coin type: primary names exist for 60, \
                 0x80000000 | chainId and 0x80000000 (the default)"
            ),
        ));
    }
    futures::future::try_join_all(coin_types.iter().map(|coin| async move {
        let started = std::time::Instant::now();
        let result = service.within_time(primary_name(service, address, *coin, options)).await;
        let source = match &result {
            Ok(name) => Ok(super::source_label(name.answered.source, false)),
            Err(err) => Err(err.code),
        };
        super::observe("reverse", source, started);
        result
    }))
    .await
}

/// The label of `coin_type`'s reverse names.
fn reverse_label(coin_type: u64) -> String {
    match coin_type {
        ETH_COIN_TYPE => "addr".into(),
        DEFAULT_COIN_TYPE => "default".into(),
        coin => format!("{coin:x}"),
    }
}

/// The EVM chain of a coin type.
fn chain_of(coin_type: u64) -> Option<u64> {
    match coin_type {
        ETH_COIN_TYPE => Some(1),
        DEFAULT_COIN_TYPE => None,
        coin => Some(coin & !EVM_BIT),
    }
}

/// Combines how two steps were answered: live if either was, at the first step's block.
fn combine(first: Answered, then: &Answered) -> Answered {
    if first.source == Source::Live || then.source == Source::Index {
        return first;
    }
    Answered {
        source: Source::Live,
        live_because: first.live_because.or_else(|| then.live_because.clone()),
        ..first
    }
}

async fn primary_name(
    service: &ResolutionService,
    address: Address,
    coin_type: u64,
    options: ResolveOptions,
) -> Result<PrimaryName, ResolutionError> {
    let trace = Trace::new(options.trace);
    let (mut name, mut answered) =
        reverse_record(service, address, coin_type, options, &trace).await?;
    if name.is_none() && coin_type != ETH_COIN_TYPE && coin_type != DEFAULT_COIN_TYPE {
        let (default, how) =
            reverse_record(service, address, DEFAULT_COIN_TYPE, options, &trace).await?;
        name = default;
        answered = combine(answered, &how);
    }
    let mut primary = PrimaryName {
        coin_type,
        chain_id: chain_of(coin_type),
        name: None,
        rejected: None,
        answered: answered.clone(),
        trace: Vec::new(),
    };
    let Some(name) = name else {
        primary.trace = trace.steps();
        return Ok(primary);
    };
    if ens_normalize::ens_normalize(&name).ok().as_deref() != Some(name.as_str()) {
        primary.rejected = Some(format!("{:?} is not ENSIP-15 normalized", shorten(&name)));
        primary.trace = trace.steps();
        return Ok(primary);
    }
    let parsed = match ResolvableName::parse(&name) {
        Ok(parsed) => parsed,
        Err(err) => {
            primary.rejected = Some(err.message);
            primary.trace = trace.steps();
            return Ok(primary);
        }
    };
    trace.step("reverse.verify", || format!("{:?} for coin type {coin_type}", shorten(&name)));
    let forward = service.forward(&parsed, &[Record::Address(coin_type)], options, &trace).await?;
    primary.answered = combine(answered, &forward.resolution.answered);
    match forward.outcomes.first() {
        Some(Ok(Some(Value::Bytes(bytes)))) if bytes.as_slice() == address.as_slice() => {
            primary.name = Some(name);
        }
        Some(Ok(Some(Value::Bytes(bytes)))) => {
            primary.rejected = Some(format!(
                "its address for coin type {coin_type} is 0x{}, not the account",
                hex::encode(bytes)
            ));
        }
        Some(Err(err)) => {
            primary.rejected = Some(format!("its forward resolution failed: {}", err.code));
        }
        _ => primary.rejected = Some(format!("it has no address for coin type {coin_type}")),
    }
    primary.trace = trace.steps();
    Ok(primary)
}

fn shorten(name: &str) -> String {
    name.chars().take(128).collect()
}

/// The name `coin_type`'s reverse record holds for `address`, if any.
async fn reverse_record(
    service: &ResolutionService,
    address: Address,
    coin_type: u64,
    options: ResolveOptions,
    trace: &Trace,
) -> Result<(Option<String>, Answered), ResolutionError> {
    let label = reverse_label(coin_type);
    let reverse_name = format!("{}.{label}.reverse", hex::encode(address));
    let mut live_because = None;
    if coin_type != ETH_COIN_TYPE && options.accelerate {
        match registrar_record(service, &reverse_name, coin_type, trace).await? {
            Ok(answer) => return Ok(answer),
            Err(why) => live_because = Some(why),
        }
    }
    // `addr.reverse` names are names like any other: the forward path decides index or live.
    // Other reverse names go live when the registrar's record could not answer.
    let forward_options =
        ResolveOptions { accelerate: options.accelerate && coin_type == ETH_COIN_TYPE, ..options };
    let parsed = ResolvableName::parse(&reverse_name)?;
    let forward = service.forward(&parsed, &[Record::Name], forward_options, trace).await?;
    let name = match forward.outcomes.first() {
        Some(Ok(Some(Value::Text(name)))) => Some(name.clone()),
        _ => None,
    };
    trace.step("reverse.record", || format!("{reverse_name}: {name:?}"));
    let mut answered = forward.resolution.answered;
    answered.acceleration_requested = options.accelerate;
    if live_because.is_some() {
        answered.live_because = live_because;
    }
    Ok((name, answered))
}

/// The name a chain's reverse registrar holds, from the index; why not, when it cannot say.
async fn registrar_record(
    service: &ResolutionService,
    reverse_name: &str,
    coin_type: u64,
    trace: &Trace,
) -> Result<Result<(Option<String>, Answered), String>, ResolutionError> {
    let db = &service.db;
    let internal = |err: sea_orm::DbErr| {
        tracing::warn!(target: "ensemble::resolution", error = %err, "Index lookup failed");
        ResolutionError::new(error_code::INTERNAL, "the index could not be read")
    };
    let Ok(stored) = i64::try_from(coin_type) else {
        return Ok(Err(format!("coin type {coin_type} is beyond the index")));
    };
    let Some(registrar) =
        reverse_registrar::Entity::find_by_id(stored).one(db).await.map_err(internal)?
    else {
        return Ok(Err(format!("no reverse registrar for coin type {coin_type} is indexed")));
    };
    let Ok(chain) = u64::try_from(registrar.chain_id) else {
        return Ok(Err("the registrar's chain is out of range".into()));
    };
    let point = service.chains().point(db, chain).await?;
    let (true, Some(block)) = (point.fresh, point.indexed.clone()) else {
        return Ok(Err(point.stale_reason(chain)));
    };
    let node = alloy::ens::namehash(reverse_name);
    let key = ResolverRecordKey::new(
        chain,
        registrar.address.as_bytes().try_into().unwrap_or(&[0; 20]),
        &node.0,
    );
    let name = resolver_record::Entity::find_by_id(key)
        .one(db)
        .await
        .map_err(internal)?
        .and_then(|r| r.name)
        .filter(|n| !n.is_empty());
    trace.step("index.reverse_registrar", || {
        format!("{reverse_name} on chain {chain} ({}): {name:?}", registrar.address)
    });
    let answered =
        Answered { source: Source::Index, acceleration_requested: true, block, live_because: None };
    Ok(Ok((name, answered)))
}
