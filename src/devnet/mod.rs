//! devnet
