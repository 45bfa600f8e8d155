//! Resolution in GraphQL: `Domain.resolve` and `Query.resolveName` (forward, for any name,
//! indexed or not: a name that resolves only through an ancestor's wildcard resolver has no
//! domain, and resolves here), and `Account.resolve` (ENSIP-19 primary names, verified
//! forward). Each asks the service's resolver ([`crate::resolution::Resolution`], in the
//! schema's data); a schema built without one answers `RESOLUTION_UNAVAILABLE`.

use std::sync::Arc;

use async_graphql::{Context, Error, Object};

use super::primary_name::{PrimaryNameByInput, PrimaryNamesWhereInput};
use crate::{
    error::{code, coded},
    resolution::{
        ForwardResolution, PrimaryName, RecordsSelection, Resolution, ResolutionError,
        ResolveOptions,
    },
    scalars::{BigInt, CoinType, Hex},
};

/// The service's resolver, shared by every request.
pub type SharedResolution = Arc<dyn Resolution>;

fn resolution<'a>(ctx: &Context<'a>) -> Result<&'a SharedResolution, Error> {
    ctx.data_opt::<SharedResolution>()
        .ok_or_else(|| coded(code::RESOLUTION_UNAVAILABLE, "this process does not resolve names"))
}

/// A resolution failure as a GraphQL error with its stable code.
fn failure(err: ResolutionError) -> Error {
    coded(err.code, err.message)
}

/// Forward resolution of one name.
#[derive(Clone, Debug)]
pub struct ForwardResolve {
    /// The name (interpreted).
    pub name: String,
    /// Options asked for.
    pub options: ResolveOptions,
}

#[Object]
impl ForwardResolve {
    /// The records asked for, with the resolver used and how the answer was reached.
    #[allow(clippy::too_many_arguments)]
    async fn records(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Coin types of the addresses (60 is ETH).")] addresses: Option<
            Vec<CoinType>,
        >,
        #[graphql(desc = "Text keys.")] texts: Option<Vec<String>>,
        contenthash: Option<bool>,
        #[graphql(desc = "The `name` record.")] name: Option<bool>,
        pubkey: Option<bool>,
        #[graphql(desc = "Content type mask of the ABI.")] abi: Option<BigInt>,
        #[graphql(desc = "ERC-165 interface ids, `0x` and 4 bytes.")] interfaces: Option<Vec<Hex>>,
    ) -> Result<ForwardResolution, Error> {
        let bad = |what: &str| coded(code::INVALID_ARGUMENT, what.to_owned());
        let addresses = addresses
            .unwrap_or_default()
            .into_iter()
            .map(|c| u64::try_from(c.0).map_err(|_| bad("a coin type is negative")))
            .collect::<Result<_, _>>()?;
        let abi = abi
            .map(|m| m.0.parse::<u64>().map_err(|_| bad("the ABI content type mask is not a u64")))
            .transpose()?;
        let interfaces = interfaces
            .unwrap_or_default()
            .into_iter()
            .map(|id| {
                id.0.strip_prefix("0x")
                    .and_then(|h| hex::decode(h).ok())
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .ok_or_else(|| bad("an interface id is not 0x and 4 bytes"))
            })
            .collect::<Result<_, _>>()?;
        let selection = RecordsSelection {
            addresses,
            texts: texts.unwrap_or_default(),
            contenthash: contenthash.unwrap_or(false),
            name: name.unwrap_or(false),
            pubkey: pubkey.unwrap_or(false),
            abi,
            interfaces,
        };
        resolution(ctx)?.forward(&self.name, &selection, self.options).await.map_err(failure)
    }
}

/// Verified reverse resolution of an account.
#[derive(Clone, Debug)]
pub struct VerifiedReverseResolve {
    /// Lowercase `0x` address.
    pub account: String,
    /// Options asked for.
    pub options: ResolveOptions,
}

impl VerifiedReverseResolve {
    async fn resolve(&self, ctx: &Context<'_>, coins: Vec<i64>) -> Result<Vec<PrimaryName>, Error> {
        let account: alloy::primitives::Address = self
            .account
            .parse()
            .map_err(|_| coded(code::INVALID_ARGUMENT, "not a 20-byte hex address"))?;
        let coins = coins
            .into_iter()
            .map(|c| {
                u64::try_from(c)
                    .map_err(|_| coded(code::INVALID_ARGUMENT, "a coin type is negative"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        resolution(ctx)?.primary_names(account.0.0, &coins, self.options).await.map_err(failure)
    }
}

#[Object]
impl VerifiedReverseResolve {
    /// The primary name for one chain or coin type.
    async fn primary_name(
        &self,
        ctx: &Context<'_>,
        by: PrimaryNameByInput,
    ) -> Result<PrimaryName, Error> {
        let mut names = self.resolve(ctx, vec![by.coin_type()]).await?;
        names.pop().ok_or_else(|| coded(code::INTERNAL, "no answer"))
    }

    /// The primary names for several chains or coin types, in the order asked.
    async fn primary_names(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: PrimaryNamesWhereInput,
    ) -> Result<Vec<PrimaryName>, Error> {
        self.resolve(ctx, filter.coin_types()).await
    }
}
