//! GraphQL object types, each wrapping a sea-orm model.

pub mod account;
mod domain;
pub mod event;
mod indexing_status;
pub mod name_reference;
pub mod primary_name;
pub mod registration;
mod registry;
pub mod resolve;
pub mod resolver;

pub use account::Account;
pub use domain::{CanonicalName, Domain, DomainCanonical, DomainInterface, DomainResolver, Label};
pub use event::Event;
pub use indexing_status::IndexingStatus;
pub use name_reference::NameReference;
pub use registration::{
    BaseRegistrarRegistration, NameWrapperRegistration, Registration, Renewal,
    ThreeDNSRegistration, WrappedBaseRegistrarRegistration,
};
pub use registry::Registry;
pub use resolver::{
    AccountId, AccountIdInput, AddressRecord, NameOrNodeInput, Resolver, ResolverRecords,
    TextRecord,
};
