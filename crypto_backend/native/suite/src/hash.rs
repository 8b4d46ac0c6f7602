//! Hashing many messages to G2 at once (RFC 9380's hash_to_curve, as blst_hash_to_g2):
//! on a SIMD path, expand_message_xmd on blst for each message, then eight a pass
//! through the kernel of `bls_lanes::hash`; lanes it leaves undecided, chunks too
//! small for a pass and everything on `Path::Off` go to blst_hash_to_g2. The points
//! are made affine together (blst_p2s_to_affine: one inversion for all of them).
//! Same points either way.

use crate::curve::{self, G2Affine, G2};
use bls_lanes::decode::Counters;
use bls_lanes::dispatch::{self, Path};
use bls_lanes::hash::{self as lanes, EXPANDED_BYTES};
use blst::*;
use std::sync::atomic::Ordering;

/// Kernel passes and lanes left to blst, for the tests.
pub static COUNTERS: Counters = Counters::new();

/// Fewest messages of a chunk worth a kernel pass on each path: a pass of eight
/// lanes costs about two blst hashes on the IFMA hosts measured (docs/performance.md).
/// The portable layer takes even one, so that the tests drive every count through it.
fn min_fill(path: Path) -> usize {
    match path {
        Path::Portable => 1,
        _ => 3,
    }
}

fn expand(message: &[u8], dst: &[u8]) -> [u8; EXPANDED_BYTES] {
    let mut out = [0u8; EXPANDED_BYTES];
    // SAFETY: live slices passed with their lengths; `out` is EXPANDED_BYTES long.
    unsafe {
        blst_expand_message_xmd(
            out.as_mut_ptr(),
            out.len(),
            message.as_ptr(),
            message.len(),
            dst.as_ptr(),
            dst.len(),
        )
    };
    out
}

/// The hash of each message (in order) on `path`.
pub fn hash_many_to_g2_on(messages: &[&[u8]], dst: &[u8], path: Path) -> Vec<G2Affine> {
    let mut points: Vec<G2> = Vec::with_capacity(messages.len());
    for chunk in messages.chunks(8) {
        let hashed = if path == Path::Off || chunk.len() < min_fill(path) {
            None
        } else {
            let mut expanded = [[0u8; EXPANDED_BYTES]; 8];
            for (lane, message) in chunk.iter().enumerate() {
                expanded[lane] = expand(message, dst);
            }
            // Spare lanes repeat the first message.
            for lane in chunk.len()..8 {
                expanded[lane] = expanded[0];
            }
            lanes::hash_chunk_on(path, expanded)
        };
        let Some(hashed) = hashed else {
            points.extend(chunk.iter().map(|message| curve::hash_to_g2(message, dst)));
            continue;
        };
        COUNTERS.passes.fetch_add(1, Ordering::Relaxed);
        for (lane, message) in chunk.iter().enumerate() {
            if (hashed.undecided >> lane) & 1 == 1 {
                COUNTERS.undecided.fetch_add(1, Ordering::Relaxed);
                points.push(curve::hash_to_g2(message, dst));
            } else {
                curve::HASHES_TO_G2.fetch_add(1, Ordering::Relaxed);
                points.push(curve::g2_from_jacobian_words(&hashed.points[lane]));
            }
        }
    }
    curve::g2s_to_affine(&points)
}

/// `hash_many_to_g2_on` on the path of this process's dispatch.
pub fn hash_many_to_g2(messages: &[&[u8]], dst: &[u8]) -> Vec<G2Affine> {
    hash_many_to_g2_on(messages, dst, dispatch::current())
}
