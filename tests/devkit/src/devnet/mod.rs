//! A real local ENS chain for tests and the quickstart: anvil (from npm
//! `@foundry-rs/anvil-linux-amd64`) running the real ENS contracts published on npm
//! (`@ensdomains/ethregistrar` 2.0.5, `@ensdomains/resolver` 0.3.1), deployed with alloy,
//! driven through scenarios, and asked for the ground truth with `eth_call`.
//!
//! - [`install`] fetches anvil and the artifacts with `npm pack` into a cache directory;
//! - [`anvil`] runs an anvil process on a free loopback port;
//! - [`driver`] sends batches of transactions per block (automine off, `evm_mine`);
//! - [`deploy`] deploys registry, old registry, base registrar, controller, resolvers and
//!   reverse registrar;
//! - [`bridged`] deploys a Basenames-like registry and registrar under a name (`base.eth`) on
//!   a second anvil, the L2 side of a bridged namespace;
//! - [`scenario`] registers and manipulates hundreds of names;
//! - [`truth`] reads owner, resolver, records and expiry back from the chain;
//! - [`solidity`] compiles the project's own test contracts (`contracts/*.sol`) with npm
//!   `solc`.

pub mod anvil;
pub mod bridged;
pub mod contracts;
pub mod deploy;
pub mod driver;
pub mod ensjs;
pub mod error;
pub mod install;
pub mod scenario;
pub mod solidity;
pub mod truth;

pub use anvil::Anvil;
pub use deploy::Deployment;
pub use driver::Driver;
pub use error::DevnetError;
pub use scenario::{Scenario, ScenarioName};
