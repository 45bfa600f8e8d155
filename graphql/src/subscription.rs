//! The subscription root: `domainEvents` streams registry, registrar and NameWrapper events as
//! they are indexed, over the GraphQL websocket protocols.
//!
//! One [`EventFeed`] per schema polls the `events` table (every chain, from where each chain
//! stood when the feed started or its first subscriber after an idle spell arrived) and fans
//! new rows out to every subscriber through a broadcast
//! channel, each with the domain it is about (read for the whole poll in one query), so a
//! subscriber costs no database connection and no query of its own. The feed
//! works the same in an indexing process and in a read-only `serve` process, because it reads
//! the database rather than the pipeline. When a reorg rolls a chain back below what was
//! streamed, the feed rewinds to the chain's checkpoint and streams the re-indexed events;
//! events streamed before the rollback are not retracted.

use std::{
    collections::HashMap,
    sync::{Arc, OnceLock},
    time::Duration,
};

use async_graphql::{Context, Error, InputObject, Object, Subscription};
use entities::{checkpoint, domain, event};
use futures::{Stream, StreamExt};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use tokio::sync::broadcast;

use crate::{
    error::{code, coded},
    name::validate_name,
    scalars::InterpretedName,
    types::{DomainInterface, Event},
};

/// How often the feed looks for new events.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Most rows read per chain per poll; a backlog drains over successive polls.
pub const POLL_BATCH: u64 = 1000;
/// Events buffered per subscriber; a subscriber that falls further behind is told how many
/// it missed and goes on from the newest.
pub const SUBSCRIBER_BUFFER: usize = 4096;
/// Most concurrent subscriptions per process.
pub const MAX_SUBSCRIBERS: usize = 256;

/// The shared poller behind every subscription of one schema.
#[derive(Debug)]
pub struct EventFeed {
    db: DatabaseConnection,
    sender: OnceLock<broadcast::Sender<Arc<FeedItem>>>,
}

/// One streamed event and the domain it is about (none for a resolver event, or a domain
/// event on the root node).
#[derive(Debug)]
pub struct FeedItem {
    event: event::Model,
    domain: Option<domain::Model>,
}

/// Where the feed stands on one chain: the last streamed `(block, log, seq)`.
type Position = (i64, i32, i32);

impl EventFeed {
    /// A feed over `db`. Inside a runtime it starts polling at once, on the runtime that
    /// built the schema (which outlives every request); otherwise at the first subscription.
    /// It queries nothing while nobody subscribes.
    pub fn new(db: DatabaseConnection) -> Self {
        let feed = Self { db, sender: OnceLock::new() };
        if tokio::runtime::Handle::try_current().is_ok() {
            feed.sender();
        }
        feed
    }

    fn sender(&self) -> &broadcast::Sender<Arc<FeedItem>> {
        self.sender.get_or_init(|| {
            let (sender, _) = broadcast::channel(SUBSCRIBER_BUFFER);
            tokio::spawn(poll(self.db.clone(), sender.clone()));
            sender
        })
    }

    fn subscribe(&self) -> Result<broadcast::Receiver<Arc<FeedItem>>, Error> {
        let sender = self.sender();
        if sender.receiver_count() >= MAX_SUBSCRIBERS {
            return Err(coded(code::TOO_MANY_SUBSCRIPTIONS, "too many subscriptions"));
        }
        Ok(sender.subscribe())
    }
}

/// The latest position of every chain, read when the feed starts: only newer events stream.
async fn heads(db: &DatabaseConnection) -> Result<HashMap<i64, Position>, sea_orm::DbErr> {
    let mut heads = HashMap::new();
    for cp in checkpoint::Entity::find().all(db).await? {
        let last = event::Entity::find()
            .filter(event::Column::ChainId.eq(cp.chain_id))
            .order_by_desc(event::Column::BlockNumber)
            .order_by_desc(event::Column::LogIndex)
            .order_by_desc(event::Column::Seq)
            .one(db)
            .await?;
        heads
            .insert(cp.chain_id, last.map_or((-1, 0, 0), |e| (e.block_number, e.log_index, e.seq)));
    }
    Ok(heads)
}

async fn poll(db: DatabaseConnection, sender: broadcast::Sender<Arc<FeedItem>>) {
    let mut positions = loop {
        match heads(&db).await {
            Ok(heads) => break heads,
            Err(err) => {
                tracing::warn!(target: "api::subscription", error = %err, "Event feed cannot start yet");
                tokio::time::sleep(POLL_INTERVAL).await;
            }
        }
    };
    let mut ticker = tokio::time::interval(POLL_INTERVAL);
    loop {
        ticker.tick().await;
        if sender.receiver_count() == 0 {
            // Nobody listens: follow the heads (one indexed read per chain), so a first
            // subscriber gets what is indexed from then on, not the backlog of an idle spell.
            if let Ok(heads) = heads(&db).await {
                positions = heads;
            }
            continue;
        }
        if let Err(err) = poll_once(&db, &sender, &mut positions).await {
            tracing::warn!(target: "api::subscription", error = %err, "Event feed poll failed");
        }
    }
}

async fn poll_once(
    db: &DatabaseConnection,
    sender: &broadcast::Sender<Arc<FeedItem>>,
    positions: &mut HashMap<i64, Position>,
) -> Result<(), sea_orm::DbErr> {
    for cp in checkpoint::Entity::find().all(db).await? {
        let position = positions.entry(cp.chain_id).or_insert((-1, 0, 0));
        // Rolled back below what was streamed: stream the re-indexed blocks again.
        if cp.block_number < position.0 {
            *position = (cp.block_number, i32::MAX, i32::MAX);
        }
        let (block, log, seq) = *position;
        let beyond = Condition::any()
            .add(event::Column::BlockNumber.gt(block))
            .add(
                Condition::all()
                    .add(event::Column::BlockNumber.eq(block))
                    .add(event::Column::LogIndex.gt(log)),
            )
            .add(
                Condition::all()
                    .add(event::Column::BlockNumber.eq(block))
                    .add(event::Column::LogIndex.eq(log))
                    .add(event::Column::Seq.gt(seq)),
            );
        let rows = event::Entity::find()
            .filter(event::Column::ChainId.eq(cp.chain_id))
            .filter(event::Column::DomainSeq.is_not_null())
            .filter(beyond)
            .order_by_asc(event::Column::BlockNumber)
            .order_by_asc(event::Column::LogIndex)
            .order_by_asc(event::Column::Seq)
            .limit(POLL_BATCH)
            .all(db)
            .await?;
        let seqs: Vec<i64> = rows.iter().filter_map(|r| r.domain_seq).collect();
        let domains: HashMap<i64, domain::Model> = domain::Entity::find()
            .filter(domain::Column::Seq.is_in(seqs))
            .all(db)
            .await?
            .into_iter()
            .map(|d| (d.seq, d))
            .collect();
        for event in rows {
            *position = (event.block_number, event.log_index, event.seq);
            // Several events of a poll may be about one domain: each gets the row.
            let domain = event.domain_seq.and_then(|s| domains.get(&s).cloned());
            // No receivers left is not an error: the next poll skips.
            let _ = sender.send(Arc::new(FeedItem { event, domain }));
        }
    }
    Ok(())
}

/// Which events to stream.
#[derive(Debug, Default, InputObject)]
pub struct DomainEventsWhereInput {
    /// Only events about this domain.
    pub name: Option<InterpretedName>,
}

/// An event about a domain.
#[derive(Debug, Clone)]
pub struct DomainEvent(Arc<FeedItem>);

#[Object]
impl DomainEvent {
    /// The event.
    async fn event(&self) -> Event {
        Event(self.0.event.clone())
    }

    /// The domain it is about; null when the event names a node no domain was indexed for
    /// (the root).
    async fn domain(&self) -> Option<DomainInterface> {
        self.0.domain.clone().map(DomainInterface::from)
    }
}

/// The subscription root.
#[derive(Debug)]
pub struct Subscription;

#[Subscription]
impl Subscription {
    /// Registry, registrar and NameWrapper events as they are indexed, optionally of one
    /// domain. A subscriber too slow to keep up skips what it missed.
    async fn domain_events(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "where")] filter: Option<DomainEventsWhereInput>,
    ) -> Result<impl Stream<Item = DomainEvent> + use<>, Error> {
        let feed = ctx.data::<Arc<EventFeed>>()?;
        let node = match filter.and_then(|f| f.name) {
            Some(InterpretedName(name)) => {
                validate_name(&name)?;
                Some(alloy::ens::namehash(&name).to_vec())
            }
            None => None,
        };
        let receiver = feed.subscribe()?;
        let stream = futures::stream::unfold(receiver, |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(row) => return Some((row, receiver)),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(target: "api::subscription", missed, "Subscriber lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        Ok(stream
            .filter(move |row| {
                let keep = node.as_ref().is_none_or(|n| {
                    row.domain.as_ref().is_some_and(|d| d.id.node() == n.as_slice())
                });
                async move { keep }
            })
            .map(DomainEvent))
    }
}
