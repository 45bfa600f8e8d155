//! Pure ENS domain logic: what the events are ([`abi`], [`event`], [`decode`]), how names and
//! labels work ([`name`], [`labels`]), and one handler per contract that turns an event into
//! entity changes through the [`EntityStore`](crate::store::EntityStore):
//! [`registry`], [`base_registrar`], [`controller`], [`resolver`], [`name_wrapper`],
//! [`reverse_registrar`], [`three_dns`], with
//! [`registration`] and [`token`] holding what the registrar and NameWrapper share.
//! [`apply`] dispatches an event to its handler; [`prefetch`] lists the rows a batch will read;
//! [`canonical`] decides which link (canonicality across chains) a new domain takes. Nothing
//! here speaks RPC or SQL.

pub mod abi;
pub mod apply;
pub mod base_registrar;
pub mod canonical;
pub mod context;
pub mod controller;
pub mod decode;
pub mod error;
pub mod event;
pub mod heal;
pub mod history;
pub mod labels;
pub mod name;
pub mod name_wrapper;
pub mod namespace;
pub mod ownership;
pub mod prefetch;
pub mod registration;
pub mod registry;
pub mod resolver;
pub mod reverse_registrar;
pub mod role;
pub mod three_dns;
pub mod token;

#[cfg(test)]
mod rewind_tests;

pub use apply::apply_event;
pub use context::IndexContext;
pub use error::HandlerError;
pub use event::{DecodedEvent, EnsEvent, EventMeta};
