//! `Account`: any address; never checked for existence.

use std::collections::HashMap;

use async_graphql::{Context, Error, InputObject, Object};
use entities::{resolver_address, resolver_record, resolver_record_key::ResolverRecordKey};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

use super::{
    NameReference,
    event::{AccountEventsWhereInput, EventConnection, list_account_events},
};
use crate::{
    connection::{DomainConnection, DomainFilter, DomainsOrderInput, Paging},
    error::internal,
    keyset::{KeyKind, KeyPart, Keyset, Page, key_columns, keyset_connection},
    query::{DomainsNameFilter, EnsProtocolVersion, with_name, with_version},
    scalars::{Address, CoinType},
};

/// An account (lowercase hex address).
#[derive(Clone, Debug)]
pub struct Account(pub String);

#[Object]
impl Account {
    /// The address.
    async fn id(&self) -> Address {
        Address(self.0.clone())
    }

    /// The address.
    async fn address(&self) -> Address {
        Address(self.0.clone())
    }

    /// Reverse resolution: the account's primary names (ENSIP-19), each verified forward
    /// (normalized, and its address for the coin type is this account). With `accelerate`
    /// (the default) answered from the index where it knows the answer exactly.
    async fn resolve(
        &self,
        #[graphql(default = true)] accelerate: bool,
        #[graphql(default = false)] trace: bool,
    ) -> super::resolve::VerifiedReverseResolve {
        super::resolve::VerifiedReverseResolve {
            account: self.0.clone(),
            options: crate::resolution::ResolveOptions { accelerate, trace },
        }
    }

    /// The account's reverse records as indexed (ENSIP-19's names per coin type, the default
    /// registrar's as fallback), not verified forward.
    async fn reverse_records(&self) -> super::primary_name::ReverseRecords {
        super::primary_name::ReverseRecords { account: self.0.clone() }
    }

    /// Domains this account effectively owns (by name unless `order` says otherwise).
    #[allow(clippy::too_many_arguments)]
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn domains(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<AccountDomainsWhereInput>,
        order: Option<DomainsOrderInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<DomainConnection, Error> {
        let paging = Paging { first, after, last, before };
        let owned = DomainFilter::owner(&self.0);
        let filter = match filter {
            Some(AccountDomainsWhereInput { name, version, canonical }) => {
                let filter = with_version(with_name(owned, name)?, version);
                match canonical {
                    None => filter,
                    Some(canonical) => {
                        let links = crate::namegraph::namegraph(ctx).await?.links();
                        let by_link = if canonical {
                            DomainFilter::Links(links)
                        } else {
                            DomainFilter::NotLinks(links)
                        };
                        DomainFilter::And(Box::new(filter), Box::new(by_link))
                    }
                }
            }
            None => owned,
        };
        DomainConnection::load(ctx, filter, order, paging).await
    }

    /// Events of transactions this account sent, oldest first.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn events(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<AccountEventsWhereInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<EventConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let sender = super::event::hex_bytes(&self.0);
        let paging = Paging { first, after, last, before };
        list_account_events(db, sender, filter.map(Into::into), paging).await
    }

    /// Address records that point at this account (names resolving to it), by record.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn name_references(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<AccountNameReferencesWhereInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<NameReferenceConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        let mut select = resolver_address::Entity::find()
            .filter(resolver_address::Column::Address.eq(self.0.clone()));
        if let Some(CoinType(coin)) = filter.and_then(|f| f.coin_type) {
            select = select.filter(resolver_address::Column::CoinType.eq(coin));
        }
        let keyset = Keyset::<resolver_address::Entity> {
            // Not "nameReferences": that listing's cursors held the text record id, and are
            // refused now.
            of: "account_name_references",
            columns: key_columns([
                resolver_address::Column::RecordId,
                resolver_address::Column::CoinType,
            ]),
            key: |a| {
                vec![KeyPart::Bytes(a.record_id.as_bytes().to_vec()), KeyPart::Int(a.coin_type)]
            },
            kinds: &[KeyKind::Bytes, KeyKind::Int],
            index_prefix: None,
        };
        let paging = Paging { first, after, last, before };
        let page = keyset.page(db, select.clone(), &paging).await?;
        // One query for the page's record rows, not one per reference.
        let ids: Vec<ResolverRecordKey> =
            page.rows.iter().map(|(_, a)| a.record_id.clone()).collect();
        let records: HashMap<ResolverRecordKey, resolver_record::Model> =
            resolver_record::Entity::find()
                .filter(resolver_record::Column::Id.is_in(ids))
                .all(db)
                .await
                .map_err(internal)?
                .into_iter()
                .map(|r| (r.id.clone(), r))
                .collect();
        let page = Page {
            rows: page
                .rows
                .into_iter()
                .filter_map(|(cursor, address)| {
                    let record = records.get(&address.record_id)?.clone();
                    Some((cursor, NameReference { address, record, account: self.0.clone() }))
                })
                .collect(),
            has_next_page: page.has_next_page,
            has_previous_page: page.has_previous_page,
        };
        Ok(NameReferenceConnection { page, select })
    }
}

/// Filter of `Account.domains`.
#[derive(Debug, InputObject)]
pub struct AccountDomainsWhereInput {
    /// Only canonical (true) or only non-canonical (false) domains.
    pub canonical: Option<bool>,
    /// By canonical name.
    pub name: Option<DomainsNameFilter>,
    /// Only domains of this protocol version.
    pub version: Option<EnsProtocolVersion>,
}

/// Filter of `Account.nameReferences`.
#[derive(Debug, InputObject)]
pub struct AccountNameReferencesWhereInput {
    /// Only records of this coin type.
    pub coin_type: Option<CoinType>,
}

keyset_connection!(
    /// A page of name references.
    NameReferenceConnection,
    NameReference,
    resolver_address::Entity
);
