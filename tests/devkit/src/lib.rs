//! Ensemble's tooling, kept out of the service: the local ENS chain the tests and the
//! quickstart run on ([`devnet`]), and the benchmarks ([`bench`]). The `ensemble-devkit`
//! binary runs both from the command line (`ensemble devnet`, `ensemble bench` hand over to
//! it); the integration tests use the library.

pub mod bench;
pub mod devnet;
