//! Decoding many points: blst's checked decode of each (`Path::Off`), or the 8-lane
//! decode kernels with blst's decode as their fallback for what the lanes leave
//! undecided; the same verdicts and messages either way.

use crate::curve::{self, G1Affine, G2Affine};
use crate::threads;
use bls_lanes::decode::{g1, g2, Decoded};
use bls_lanes::dispatch::{self, Path};

fn blst_g1(key: &[u8]) -> Decoded<bls_lanes::points::G1Words> {
    curve::decode_g1(key).map(|point| curve::g1_words(&point))
}

fn blst_g2(signature: &[u8]) -> Decoded<bls_lanes::points::G2Words> {
    curve::decode_g2(signature).map(|point| curve::g2_words(&point))
}

/// `curve::decode_g1` of every key (same verdicts, same messages) on `path`.
pub fn g1_many_on(keys: &[&[u8]], path: Path) -> Vec<Decoded<G1Affine>> {
    if path == Path::Off {
        return keys.iter().map(|key| curve::decode_g1(key)).collect();
    }
    g1::decode_many_on(keys, path, &blst_g1)
        .into_iter()
        .map(|decoded| decoded.map(|point| curve::g1_from_words(&point)))
        .collect()
}

/// `g1_many_on` on the path of this process's dispatch.
pub fn g1_many(keys: &[&[u8]]) -> Vec<Decoded<G1Affine>> {
    g1_many_on(keys, dispatch::current())
}

/// `curve::decode_g2` of every input (same verdicts, same messages) on `path`.
pub fn g2_many_on(signatures: &[&[u8]], path: Path) -> Vec<Decoded<G2Affine>> {
    if path == Path::Off {
        return signatures.iter().map(|signature| curve::decode_g2(signature)).collect();
    }
    g2::decode_many_on(signatures, path, &blst_g2)
        .into_iter()
        .map(|decoded| decoded.map(|point| curve::g2_from_words(&point)))
        .collect()
}

/// `g2_many_on` on the path of this process's dispatch.
pub fn g2_many(signatures: &[&[u8]]) -> Vec<Decoded<G2Affine>> {
    g2_many_on(signatures, dispatch::current())
}

/// Signatures per task when many are decoded on the worker threads.
const SIGNATURES_PER_TASK: usize = 64;

/// `g2_many`, spread over the worker threads for long lists.
pub fn g2_all(signatures: &[&[u8]]) -> Vec<Decoded<G2Affine>> {
    if signatures.len() < 2 * SIGNATURES_PER_TASK {
        return g2_many(signatures);
    }
    let tasks: Vec<&[&[u8]]> = signatures.chunks(SIGNATURES_PER_TASK).collect();
    threads::map(&tasks, 1, |task| g2_many(task)).concat()
}

/// One signature on the dispatch's path.
pub fn g2_one(signature: &[u8]) -> Decoded<G2Affine> {
    g2_many(&[signature])[0]
}
