//! `Registration`: the interface over the ENSv1 registrars, `BaseRegistrarRegistration`
//! (`.eth` second-level names, with a grace period), `NameWrapperRegistration` (anything
//! wrapped outside `.eth` 2LDs, with fuses) and `ThreeDNSRegistration` (3DNS tokens on
//! Optimism and Base), plus `Renewal` and their connections.

use alloy::primitives::U256;
use async_graphql::{Context, Error, Interface, Object, SimpleObject, dataloader::DataLoader};
use entities::{
    domain,
    domain_key::DomainKey,
    registration::{self, RegistrationKey},
    renewal::{self, RenewalKey},
};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::{Account, AccountId, DomainInterface, Event};
use crate::{
    connection::Paging,
    keyset::{KeyKind, KeyPart, Keyset, key_columns, keyset_connection},
    loaders::{DomainLoader, OpeningEventLoader, load_row, loader_error},
    scalars::{BigInt, Hex, RegistrationId, RenewalId},
};

/// `kind` of base registrar registrations in the `registrations` table.
pub const BASE_REGISTRAR: &str = "BaseRegistrar";
/// `kind` of 3DNS registrations.
pub const THREE_DNS: &str = "ThreeDNS";

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A registration of either registrar.
// The lint reads two arguments of one type as a repeated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(Clone, Debug, Interface)]
#[graphql(
    field(name = "id", ty = "RegistrationId", desc = "`${domainId}-${index}`."),
    field(name = "domain", ty = "Option<DomainInterface>", desc = "The registered domain."),
    field(name = "event", ty = "Option<Event>", desc = "The event that opened it."),
    field(name = "start", ty = "BigInt", desc = "Block timestamp of the registration."),
    field(name = "expiry", ty = "Option<BigInt>", desc = "Expiry; null: never."),
    field(name = "expired", ty = "bool", desc = "Past expiry (plus grace period, if any)."),
    field(name = "registrar", ty = "AccountId", desc = "The registrar contract."),
    field(name = "registrant", ty = "Option<Account>", desc = "Who it was registered to."),
    field(name = "referrer", ty = "Option<Hex>", desc = "Referrer, from the controller."),
    field(
        name = "renewals",
        ty = "RenewalConnection",
        desc = "Renewals, oldest first.",
        arg(name = "first", ty = "Option<i32>"),
        arg(name = "after", ty = "Option<String>"),
        arg(name = "last", ty = "Option<i32>"),
        arg(name = "before", ty = "Option<String>")
    )
)]
pub enum Registration {
    /// `.eth` second-level names.
    BaseRegistrar(BaseRegistrarRegistration),
    /// Wrapped names outside `.eth` second-level names.
    NameWrapper(NameWrapperRegistration),
    /// 3DNS names.
    ThreeDns(ThreeDNSRegistration),
}

impl Registration {
    /// The typed registration of a row.
    pub fn from_model(row: registration::Model) -> Self {
        match row.kind.as_str() {
            BASE_REGISTRAR => Self::BaseRegistrar(BaseRegistrarRegistration(row)),
            THREE_DNS => Self::ThreeDns(ThreeDNSRegistration(row)),
            _ => Self::NameWrapper(NameWrapperRegistration(row)),
        }
    }
}

/// A base registrar registration.
#[derive(Clone, Debug)]
pub struct BaseRegistrarRegistration(pub registration::Model);

/// A NameWrapper registration.
#[derive(Clone, Debug)]
pub struct NameWrapperRegistration(pub registration::Model);

/// A 3DNS registration (GraphQL `ThreeDNSRegistration`).
#[derive(Clone, Debug)]
pub struct ThreeDNSRegistration(pub registration::Model);

/// A base registrar name while it is wrapped by the NameWrapper.
#[derive(Clone, Debug, SimpleObject)]
pub struct WrappedBaseRegistrarRegistration {
    /// NameWrapper fuses.
    pub fuses: i64,
    /// NameWrapper token id (the node).
    pub token_id: BigInt,
}

async fn domain_of(
    ctx: &Context<'_>,
    row: &registration::Model,
) -> Result<Option<domain::Model>, Error> {
    let loader = ctx.data::<DataLoader<DomainLoader>>()?;
    load_row(loader, row.domain_id()).await
}

/// The registrar or NameWrapper event in the registration's block that opened it.
async fn opening_event(
    ctx: &Context<'_>,
    row: &registration::Model,
) -> Result<Option<Event>, Error> {
    let Some(domain) = domain_of(ctx, row).await? else { return Ok(None) };
    let loader = ctx.data::<DataLoader<OpeningEventLoader>>()?;
    let key = (domain.seq, row.block_number);
    Ok(loader.load_one(key).await.map_err(loader_error)?.map(Event))
}

/// A 32-byte big-endian number in decimal.
fn decimal(bytes: &[u8]) -> BigInt {
    BigInt(U256::try_from_be_slice(bytes).map(|n| n.to_string()).unwrap_or_default())
}

keyset_connection!(
    /// A page of registrations.
    RegistrationConnection,
    Registration,
    registration::Entity
);

keyset_connection!(
    /// A page of renewals.
    RenewalConnection,
    Renewal,
    renewal::Entity
);

/// A domain's registrations, oldest first.
pub async fn list_registrations(
    db: &DatabaseConnection,
    domain_id: &DomainKey,
    paging: Paging,
) -> Result<RegistrationConnection, Error> {
    // One domain's registrations are one range of the primary key, in index order.
    let (first, last) = RegistrationKey::range_of(domain_id);
    let select = registration::Entity::find().filter(registration::Column::Id.between(first, last));
    let keyset = Keyset::<registration::Entity> {
        // Not "registrations": that listing's cursors held the index, and are refused now.
        of: "domain_registrations",
        columns: key_columns([registration::Column::Id]),
        key: |r| vec![KeyPart::Bytes(r.id.as_bytes().to_vec())],
        kinds: &[KeyKind::Bytes],
        index_prefix: None,
    };
    let page = keyset.page(db, select.clone(), &paging).await?.map(Registration::from_model);
    Ok(RegistrationConnection { page, select })
}

/// A registration's renewals, oldest first.
async fn list_renewals(
    db: &DatabaseConnection,
    registration_id: &RegistrationKey,
    paging: Paging,
) -> Result<RenewalConnection, Error> {
    // One registration's renewals are one range of the primary key, in index order.
    let (first, last) = RenewalKey::range_of(registration_id);
    let select = renewal::Entity::find().filter(renewal::Column::Id.between(first, last));
    let keyset = Keyset::<renewal::Entity> {
        // Not "renewals": that listing's cursors held the index, and are refused now.
        of: "registration_renewals",
        columns: key_columns([renewal::Column::Id]),
        key: |r| vec![KeyPart::Bytes(r.id.as_bytes().to_vec())],
        kinds: &[KeyKind::Bytes],
        index_prefix: None,
    };
    let page = keyset.page(db, select.clone(), &paging).await?.map(Renewal);
    Ok(RenewalConnection { page, select })
}

/// The fields every registration has, then the registrar's own.
macro_rules! registration_object {
    ($ty:ident { $($own:tt)* }) => {
        #[Object]
        impl $ty {
            /// `${domainId}-${index}`.
            async fn id(&self) -> RegistrationId {
                RegistrationId(self.0.id.to_string())
            }

            /// The registered domain.
            async fn domain(&self, ctx: &Context<'_>) -> Result<Option<DomainInterface>, Error> {
                Ok(domain_of(ctx, &self.0).await?.map(DomainInterface::from))
            }

            /// The event that opened it.
            async fn event(&self, ctx: &Context<'_>) -> Result<Option<Event>, Error> {
                opening_event(ctx, &self.0).await
            }

            /// Block timestamp of the registration.
            async fn start(&self) -> BigInt {
                BigInt(self.0.start.to_string())
            }

            /// Expiry; null: never.
            async fn expiry(&self) -> Option<BigInt> {
                self.0.expiry.map(|e| BigInt(e.to_string()))
            }

            /// Past expiry (plus grace period, if any).
            async fn expired(&self) -> bool {
                self.0.expiry.is_some_and(|e| e.saturating_add(self.0.grace_period) < now())
            }

            /// The registrar contract.
            async fn registrar(&self) -> AccountId {
                AccountId::new(self.0.registrar_chain_id, &self.0.registrar)
            }

            /// The holder of the token the registration stands for (the registrar's for a
            /// `BaseRegistrar` registration, the NameWrapper's for a `NameWrapper` one): it
            /// follows transfers and wraps. Who registered it is in the registration's event.
            async fn registrant(&self) -> Option<Account> {
                self.0.registrant.clone().map(Account)
            }

            /// Referrer, from the controller.
            async fn referrer(&self) -> Option<Hex> {
                self.0.referrer.clone().map(Hex)
            }

            /// Renewals, oldest first.
            #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
            async fn renewals(
                &self,
                ctx: &Context<'_>,
                first: Option<i32>,
                after: Option<String>,
                last: Option<i32>,
                before: Option<String>,
            ) -> Result<RenewalConnection, Error> {
                let db = ctx.data::<DatabaseConnection>()?;
                list_renewals(db, &self.0.id, Paging { first, after, last, before }).await
            }

            $($own)*
        }
    };
}

registration_object!(BaseRegistrarRegistration {
    /// Base cost in wei, from the controller.
    async fn base_cost(&self) -> Option<BigInt> {
        self.0.base_cost.clone().map(BigInt)
    }

    /// Premium in wei, from the controller.
    async fn premium(&self) -> Option<BigInt> {
        self.0.premium.clone().map(BigInt)
    }

    /// Past expiry but within the 90-day grace period.
    async fn is_in_grace_period(&self) -> bool {
        let now = now();
        self.0.expiry.is_some_and(|e| e < now && now <= e.saturating_add(self.0.grace_period))
    }

    /// The ERC-721 token id (the labelhash).
    async fn token_id(&self, ctx: &Context<'_>) -> Result<Option<BigInt>, Error> {
        Ok(domain_of(ctx, &self.0).await?.map(|d| decimal(d.label_hash.as_bytes())))
    }

    /// The NameWrapper token while the name is wrapped.
    async fn wrapped(&self) -> Option<WrappedBaseRegistrarRegistration> {
        self.0.wrapped.then(|| WrappedBaseRegistrarRegistration {
            fuses: self.0.fuses.unwrap_or_default(),
            token_id: decimal(self.0.domain_id().node()),
        })
    }
});

registration_object!(NameWrapperRegistration {
    /// NameWrapper fuses.
    async fn fuses(&self) -> i64 {
        self.0.fuses.unwrap_or_default()
    }

    /// The ERC-1155 token id (the node).
    async fn token_id(&self) -> BigInt {
        decimal(self.0.domain_id().node())
    }
});

registration_object!(ThreeDNSRegistration {
    /// The 3DNS token id (the node).
    async fn token_id(&self) -> BigInt {
        decimal(self.0.domain_id().node())
    }
});

/// A renewal of a registration.
#[derive(Clone, Debug)]
pub struct Renewal(pub renewal::Model);

#[Object]
impl Renewal {
    /// `${registrationId}-${index}`.
    async fn id(&self) -> RenewalId {
        RenewalId(self.0.id.to_string())
    }

    /// Seconds added.
    async fn duration(&self) -> BigInt {
        BigInt(self.0.duration.to_string())
    }

    /// Expiry after the renewal.
    async fn expiry(&self) -> BigInt {
        BigInt(self.0.expiry.to_string())
    }

    /// Cost in wei, from the controller.
    async fn base(&self) -> Option<BigInt> {
        self.0.base_cost.clone().map(BigInt)
    }

    /// Premium in wei.
    async fn premium(&self) -> Option<BigInt> {
        self.0.premium.clone().map(BigInt)
    }

    /// Referrer.
    async fn referrer(&self) -> Option<Hex> {
        self.0.referrer.clone().map(Hex)
    }

    /// Block timestamp of the renewal.
    async fn timestamp(&self) -> BigInt {
        BigInt(self.0.timestamp.to_string())
    }
}
