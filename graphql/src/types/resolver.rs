//! `Resolver` and its records.

use async_graphql::{
    Context, Error, InputObject, Object, OneofObject, SimpleObject, dataloader::DataLoader,
};
use entities::{
    contract, event, resolver_address, resolver_record, resolver_record_key::ResolverRecordKey,
    resolver_text,
};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};

use super::event::{EventConnection, EventsWhereInput, list_events};
use crate::{
    connection::Paging,
    keyset::{KeyKind, KeyPart, Keyset, key_columns, keyset_connection},
    loaders::{AddressesLoader, RecordLoader, TextsLoader, load_row, loader_error},
    name,
    scalars::{
        Address, ChainId, CoinType, Hex, InterpretedName, Node, ResolverId, ResolverRecordsId,
    },
};

keyset_connection!(
    /// A page of record sets.
    ResolverRecordsConnection,
    ResolverRecords,
    resolver_record::Entity
);

/// A contract on a chain.
#[derive(Clone, Debug, SimpleObject)]
pub struct AccountId {
    /// Chain id.
    pub chain_id: ChainId,
    /// Address.
    pub address: Address,
}

impl AccountId {
    /// The contract at `address` on `chain_id`.
    pub fn new(chain_id: i64, address: &str) -> Self {
        Self { chain_id: ChainId(chain_id), address: Address(address.to_owned()) }
    }
}

/// A contract on a chain, as input.
#[derive(Clone, Debug, InputObject)]
pub struct AccountIdInput {
    /// Chain id.
    pub chain_id: ChainId,
    /// Address.
    pub address: Address,
}

/// Which records: by name or by node.
#[derive(Debug, OneofObject)]
pub enum NameOrNodeInput {
    /// An interpreted name.
    Name(InterpretedName),
    /// A namehash.
    Node(Node),
}

/// A resolver contract.
#[derive(Clone, Debug)]
pub struct Resolver {
    /// Chain id.
    pub chain_id: i64,
    /// Address (lowercase hex).
    pub address: String,
}

#[Object]
impl Resolver {
    /// `${chainId}-${address}`.
    async fn id(&self) -> ResolverId {
        ResolverId(format!("{}-{}", self.chain_id, self.address))
    }

    /// The contract.
    async fn contract(&self) -> AccountId {
        AccountId::new(self.chain_id, &self.address)
    }

    /// Every record set this resolver holds, one per node, by id.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn records(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<ResolverRecordsConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        // Record keys are (chain, resolver, node) bytes: one resolver's records are one range
        // of the primary key.
        let select = match self.key_parts() {
            Some((chain, address)) => {
                let (first, last) = ResolverRecordKey::range_of(chain, &address);
                resolver_record::Entity::find()
                    .filter(resolver_record::Column::Id.between(first, last))
            }
            None => resolver_record::Entity::find()
                .filter(resolver_record::Column::Id.is_in(Vec::<ResolverRecordKey>::new())),
        };
        let keyset = Keyset::<resolver_record::Entity> {
            // Not "records": that listing's cursors held the text id, and are refused now.
            of: "resolver_records",
            columns: key_columns([resolver_record::Column::Id]),
            key: |r| vec![KeyPart::Bytes(r.id.as_bytes().to_vec())],
            kinds: &[KeyKind::Bytes],
            index_prefix: None,
        };
        let paging = Paging { first, after, last, before };
        let page = keyset.page(db, select.clone(), &paging).await?.map(ResolverRecords);
        Ok(ResolverRecordsConnection { page, select })
    }

    /// Record events this resolver emitted, oldest first.
    #[graphql(complexity = "crate::connection::page_complexity(first, last, child_complexity)")]
    async fn events(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<EventsWhereInput>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<EventConnection, Error> {
        let db = ctx.data::<DatabaseConnection>()?;
        // Events name their contract by its code on the chain: one lookup by address (a
        // resolver with no recorded events has no code, and lists nothing).
        let code: Option<i32> = contract::Entity::find()
            .select_only()
            .column(contract::Column::Code)
            .filter(contract::Column::ChainId.eq(self.chain_id))
            .filter(contract::Column::Address.eq(super::event::hex_bytes(&self.address)))
            .into_tuple()
            .one(db)
            .await
            .map_err(crate::error::internal)?;
        let subject = Condition::all()
            .add(event::Column::ChainId.eq(self.chain_id))
            .add(event::Column::Contract.eq(code.unwrap_or(0)))
            .add(event::Column::DomainSeq.is_null());
        list_events(db, subject, filter, Paging { first, after, last, before }).await
    }

    /// The records this resolver holds for one name or node.
    #[graphql(name = "records_")]
    async fn records_by(
        &self,
        ctx: &Context<'_>,
        by: NameOrNodeInput,
    ) -> Result<Option<ResolverRecords>, Error> {
        // Any resolver may hold records for any node, indexed domain or not: the node is
        // computed from the name, never looked up.
        let node = match by {
            NameOrNodeInput::Node(node) => name::parse_node_hash(&node.0)?,
            NameOrNodeInput::Name(InterpretedName(text)) => {
                name::validate_name(&text)?;
                name::interpreted_namehash(&text)
            }
        };
        let Some((chain, address)) = self.key_parts() else { return Ok(None) };
        let id = ResolverRecordKey::new(chain, &address, &node.0);
        let loader = ctx.data::<DataLoader<RecordLoader>>()?;
        Ok(load_row(loader, id).await?.map(ResolverRecords))
    }
}

impl Resolver {
    /// The chain id and raw address as a record key holds them; `None` for a chain id no key
    /// can hold (no configured chain has one, so such a resolver holds no records).
    fn key_parts(&self) -> Option<(u64, [u8; 20])> {
        let chain =
            u64::try_from(self.chain_id).ok().filter(|c| ResolverRecordKey::holds_chain(*c))?;
        let address: entities::raw_hex::RawAddress = self.address.parse().ok()?;
        Some((chain, address.as_bytes().try_into().ok()?))
    }
}

/// An address record.
#[derive(Debug, SimpleObject)]
pub struct AddressRecord {
    /// Coin type.
    pub coin_type: CoinType,
    /// Address bytes, hex.
    pub address: Hex,
}

/// A text record.
#[derive(Debug, SimpleObject)]
pub struct TextRecord {
    /// Key.
    pub key: String,
    /// Value; null when the resolver emitted no value and the chain could not be asked.
    pub value: Option<String>,
}

/// The records of one (resolver, node).
#[derive(Clone, Debug)]
pub struct ResolverRecords(pub resolver_record::Model);

#[Object]
impl ResolverRecords {
    /// `${chainId}-${resolver}-${node}`.
    async fn id(&self) -> ResolverRecordsId {
        ResolverRecordsId(self.0.id.to_string())
    }

    /// The node.
    async fn node(&self) -> Node {
        Node(self.0.node())
    }

    /// The `name` record (reverse records).
    async fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }

    /// Raw contenthash, hex.
    async fn contenthash(&self) -> Option<Hex> {
        self.0.contenthash.clone().map(Hex)
    }

    /// Text keys that have records.
    async fn keys(&self, ctx: &Context<'_>) -> Result<Vec<String>, Error> {
        Ok(self.text_rows(ctx).await?.into_iter().map(|t| t.key).collect())
    }

    /// Coin types that have address records.
    async fn coin_types(&self, ctx: &Context<'_>) -> Result<Vec<CoinType>, Error> {
        Ok(self.address_rows(ctx).await?.into_iter().map(|a| CoinType(a.coin_type)).collect())
    }

    /// Address records, optionally only these coin types. Empty values (cleared records)
    /// are left out.
    async fn addresses(
        &self,
        ctx: &Context<'_>,
        coin_types: Option<Vec<CoinType>>,
    ) -> Result<Vec<AddressRecord>, Error> {
        Ok(self
            .address_rows(ctx)
            .await?
            .into_iter()
            .filter(|a| a.address != "0x")
            .filter(|a| coin_types.as_ref().is_none_or(|c| c.contains(&CoinType(a.coin_type))))
            .map(|a| AddressRecord { coin_type: CoinType(a.coin_type), address: Hex(a.address) })
            .collect())
    }

    /// Text records, optionally only these keys.
    async fn texts(
        &self,
        ctx: &Context<'_>,
        keys: Option<Vec<String>>,
    ) -> Result<Vec<TextRecord>, Error> {
        Ok(self
            .text_rows(ctx)
            .await?
            .into_iter()
            .filter(|t| keys.as_ref().is_none_or(|k| k.contains(&t.key)))
            .map(|t| TextRecord { key: t.key, value: t.value })
            .collect())
    }
}

impl ResolverRecords {
    async fn address_rows(&self, ctx: &Context<'_>) -> Result<Vec<resolver_address::Model>, Error> {
        let loader = ctx.data::<DataLoader<AddressesLoader>>()?;
        Ok(loader.load_one(self.0.id.clone()).await.map_err(loader_error)?.unwrap_or_default())
    }

    async fn text_rows(&self, ctx: &Context<'_>) -> Result<Vec<resolver_text::Model>, Error> {
        let loader = ctx.data::<DataLoader<TextsLoader>>()?;
        Ok(loader.load_one(self.0.id.clone()).await.map_err(loader_error)?.unwrap_or_default())
    }
}
