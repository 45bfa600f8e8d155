//! Resolution by live calls: the Universal Resolver's rules, run against the chain's RPC
//! endpoint at a given block. ENSIP-10's walk asks the registry for the resolver of the name
//! and then of each ancestor until one is set; a resolver found at an ancestor is used only if
//! it is an extended resolver (ERC-165 `0x9061b923`). An extended resolver is asked through
//! `resolve(dnsName, call)`, any other directly; either may answer through CCIP-Read.

use alloy::{
    primitives::{Address, B256, Bytes},
    sol_types::SolCall,
};
use futures::{StreamExt, stream};
use graphql::resolution::{RecordError, ResolutionError, ResolverUsed, error_code};

use super::{
    abi::{EXTENDED_RESOLVER_INTERFACE, IRegistryLookup, IResolverRecords},
    ccip_read::{self, CallFailure, Gateways},
    name::ResolvableName,
    records::{Outcome, Record},
    trace::Trace,
};
use crate::rpc::{CallOutcome, RpcClient, RpcError};

/// Calls in flight at once for one resolution (the registry walk, the records).
const CONCURRENT_CALLS: usize = 8;

/// A chain as live resolution calls it.
#[derive(Clone, Debug)]
pub struct LiveChain {
    /// EIP-155 chain id.
    pub chain_id: u64,
    /// Its endpoint.
    pub rpc: RpcClient,
    /// Its ENS registry.
    pub registry: Address,
    /// Gas one call may use: a resolver that loops stops here, not at the node's cap (often
    /// the block gas limit, which takes seconds to burn).
    pub call_gas: u64,
}

impl LiveChain {
    /// `eth_call` after block `block`.
    pub async fn call(
        &self,
        to: Address,
        data: Vec<u8>,
        block: B256,
    ) -> Result<CallOutcome, RpcError> {
        self.rpc.try_call_at(to, Bytes::from(data), block, Some(self.call_gas)).await
    }
}

/// What the walk found.
#[derive(Clone, Debug)]
pub struct Found {
    /// The resolver.
    pub resolver: Address,
    /// Labels dropped from the name to reach the name it is set on (0: the name itself).
    pub skip: usize,
    /// Whether it is an ENSIP-10 extended resolver.
    pub extended: bool,
}

fn rpc_failed(chain: &LiveChain, err: RpcError) -> ResolutionError {
    ResolutionError::new(error_code::RPC_FAILED, format!("chain {}: {err}", chain.chain_id))
}

/// ENSIP-10's walk: the resolver set on the name or its nearest ancestor, if any, and whether
/// it may be used (set on the name itself, or extended).
pub async fn find_resolver(
    chain: &LiveChain,
    name: &ResolvableName,
    block: B256,
    trace: &Trace,
) -> Result<Option<Found>, ResolutionError> {
    let nodes = name.suffix_nodes();
    // Every label but the root's: the root's resolver is no resolver of a name.
    let lookups = nodes[..name.depth()].iter().copied().map(|node| async move {
        let data = IRegistryLookup::resolverCall { node }.abi_encode();
        match chain.call(chain.registry, data, block).await {
            Ok(CallOutcome::Returned(bytes)) => {
                Ok(IRegistryLookup::resolverCall::abi_decode_returns(&bytes).unwrap_or_default())
            }
            Ok(CallOutcome::Reverted(_)) => Ok(Address::ZERO),
            Err(err) => Err(err),
        }
    });
    let resolvers: Vec<Result<Address, RpcError>> =
        stream::iter(lookups).buffered(CONCURRENT_CALLS).collect().await;
    for (skip, resolver) in resolvers.into_iter().enumerate() {
        let resolver = resolver.map_err(|e| rpc_failed(chain, e))?;
        if resolver.is_zero() {
            continue;
        }
        let extended = supports_extended(chain, resolver, block).await?;
        trace.step("live.walk", || {
            format!("{resolver:#x} set on {:?} (extended: {extended})", name.suffix(skip))
        });
        return Ok(Some(Found { resolver, skip, extended }));
    }
    trace.step("live.walk", || "no resolver on the name or any ancestor".into());
    Ok(None)
}

/// ERC-165 for ENSIP-10; a resolver that reverts or answers nonsense is not extended.
async fn supports_extended(
    chain: &LiveChain,
    resolver: Address,
    block: B256,
) -> Result<bool, ResolutionError> {
    let data =
        IResolverRecords::supportsInterfaceCall { interfaceID: EXTENDED_RESOLVER_INTERFACE.into() }
            .abi_encode();
    match chain.call(resolver, data, block).await.map_err(|e| rpc_failed(chain, e))? {
        CallOutcome::Returned(bytes) => {
            Ok(IResolverRecords::supportsInterfaceCall::abi_decode_returns(&bytes).unwrap_or(false))
        }
        CallOutcome::Reverted(_) => Ok(false),
    }
}

/// The resolver to use and the records' outcomes, by live calls after `block`.
pub async fn forward(
    chain: &LiveChain,
    gateways: &Gateways,
    name: &ResolvableName,
    records: &[Record],
    block: B256,
    trace: &Trace,
) -> Result<(Option<ResolverUsed>, Vec<Outcome>), ResolutionError> {
    let unset = || records.iter().map(|_| Ok(None)).collect();
    let Some(found) = find_resolver(chain, name, block, trace).await? else {
        return Ok((None, unset()));
    };
    if found.skip > 0 && !found.extended {
        trace.step("live.walk", || {
            format!("{:#x} is on an ancestor and is not extended: no resolver", found.resolver)
        });
        return Ok((None, unset()));
    }
    let node = name.node_of_suffix(0);
    let dns_name = Bytes::from(name.dns_encoded());
    let calls = records.iter().cloned().map(|record| {
        let dns_name = dns_name.clone();
        let found = &found;
        async move {
            let record = &record;
            let inner = record.calldata(node);
            let data = if found.extended {
                IResolverRecords::resolveCall { name: dns_name, data: inner.into() }.abi_encode()
            } else {
                inner
            };
            trace.step("live.call", || format!("{} on {:#x}", record.label(), found.resolver));
            let answer = ccip_read::call(chain, gateways, found.resolver, data, block, trace)
                .await
                .map_err(|failure| record_error(record, failure))?;
            let answer = if found.extended {
                IResolverRecords::resolveCall::abi_decode_returns(&answer)
                    .map_err(|e| RecordError {
                        record: record.label(),
                        code: error_code::RESOLVER_BAD_RESPONSE,
                        message: format!("resolve() answer does not decode: {e}"),
                    })?
                    .to_vec()
            } else {
                answer.to_vec()
            };
            record.decode(&answer)
        }
    });
    let outcomes: Vec<Outcome> = stream::iter(calls).buffered(CONCURRENT_CALLS).collect().await;
    let used = ResolverUsed {
        chain_id: chain.chain_id,
        address: format!("{:#x}", found.resolver),
        found_at: name.suffix(found.skip),
        extended: Some(found.extended),
    };
    Ok((Some(used), outcomes))
}

fn record_error(record: &Record, failure: CallFailure) -> RecordError {
    RecordError { record: record.label(), code: failure.code, message: failure.message }
}
