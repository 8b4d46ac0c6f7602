//! The BLS ciphersuite of the consensus specs on blst and the 8-lane kernels of
//! `bls_lanes`, on bytes: key validation with its cache, verification (one pair,
//! aggregates, batches of signature sets), aggregation and signing, spread over the
//! worker threads. No Python here; the extension crate above is its boundary.

pub mod baseline;
pub mod batch;
pub mod cache;
pub mod ciphersuite;
pub mod curve;
pub mod decode;
pub mod hash;
pub mod pairing;
pub mod probe;
pub mod sign;
pub mod sums;
pub mod test_panic;
pub mod threads;
