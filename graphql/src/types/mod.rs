//! GraphQL object types, each wrapping a sea-orm model.

mod account;
mod domain;
mod indexing_status;
mod name_reference;
mod registration;
mod registry;
mod resolver;

pub use account::Account;
pub use domain::{CanonicalName, Domain, DomainCanonical, DomainResolver, Label};
pub use indexing_status::IndexingStatus;
pub use name_reference::NameReference;
pub use registration::{Registration, Renewal};
pub use registry::Registry;
pub use resolver::{
    AccountId, AccountIdInput, AddressRecord, NameOrNodeInput, Resolver, ResolverRecords,
    TextRecord,
};
