//! The ciphersuite's functions on bytes, with the rules of docs/crypto.md: every key
//! validated (identity refused) and the aggregate key refused when it sums to the
//! identity, all before any hashing or pairing; canonical encodings only.

use crate::cache::KeyCache;
use crate::curve::{self, G1Affine, G2Affine, DST, PUBKEY_LENGTH, SIGNATURE_LENGTH};
use crate::decode;
use crate::hash;
use crate::pairing;
use crate::sums::{self, Keys, Signatures};
use std::collections::HashMap;

/// Keys summed per task when a long key list is summed on the worker threads.
const SUM_CHUNK: usize = 256;

/// The validated sum of `keys`, or None: empty list, a refused key, or an identity sum.
pub fn aggregate_key(points: &[Option<G1Affine>]) -> Option<G1Affine> {
    if points.is_empty() || points.iter().any(Option::is_none) {
        return None;
    }
    if points.len() == 1 {
        return points[0];
    }
    let total = sum_keys(points);
    if curve::g1_is_identity(&total) {
        return None;
    }
    Some(curve::g1_to_affine(&total))
}

pub fn key_validate(cache: &KeyCache, key: &[u8]) -> bool {
    cache.resolve(&[key])[0].is_some()
}

/// The one pairing check of `verify` and `fast_aggregate_verify`, with the
/// signature's subgroup check (the signature is decoded without it: the pairing
/// check reads it off its Miller loop where the lanes run that loop).
fn check(key: &G1Affine, message: &[u8], signature: &[u8]) -> bool {
    let Ok(signature) = curve::decode_g2_on_curve(signature) else {
        return false;
    };
    let hashed = curve::g2_to_affine(&curve::hash_to_g2(message, DST));
    pairing::pairings_equal_unchecked_signature(&[(*key, hashed)], &signature)
}

pub fn verify(cache: &KeyCache, key: &[u8], message: &[u8], signature: &[u8]) -> bool {
    let Some(point) = cache.resolve(&[key])[0] else {
        return false;
    };
    check(&point, message, signature)
}

pub fn fast_aggregate_verify(
    cache: &KeyCache,
    keys: &[&[u8]],
    message: &[u8],
    signature: &[u8],
) -> bool {
    let Some(key) = aggregate_key(&cache.resolve(keys)) else {
        return false;
    };
    check(&key, message, signature)
}

pub fn eth_fast_aggregate_verify(
    cache: &KeyCache,
    keys: &[&[u8]],
    message: &[u8],
    signature: &[u8],
) -> bool {
    if keys.is_empty() {
        return signature.len() == SIGNATURE_LENGTH
            && signature[0] == 0xC0
            && signature[1..].iter().all(|byte| *byte == 0);
    }
    fast_aggregate_verify(cache, keys, message, signature)
}

/// Key i signed message i; keys validated one by one (never summed, as the spec says).
pub fn aggregate_verify(
    cache: &KeyCache,
    keys: &[&[u8]],
    messages: &[&[u8]],
    signature: &[u8],
) -> bool {
    if keys.is_empty() || keys.len() != messages.len() {
        return false;
    }
    let points = cache.resolve(keys);
    if points.iter().any(Option::is_none) {
        return false;
    }
    let Ok(signature) = decode::g2_one(signature) else {
        return false;
    };
    // Each distinct message hashed once, all of them at once (`hash`: eight a pass on
    // a SIMD path).
    let mut distinct: HashMap<&[u8], usize> = HashMap::new();
    let mut order: Vec<&[u8]> = Vec::new();
    for message in messages {
        distinct.entry(message).or_insert_with(|| {
            order.push(message);
            order.len() - 1
        });
    }
    let hashes = hash::hash_many_to_g2(&order, DST);
    let pairs: Vec<(G1Affine, G2Affine)> = points
        .iter()
        .flatten()
        .zip(messages)
        .map(|(point, message)| (*point, hashes[distinct[message]]))
        .collect();
    pairing::pairings_equal_signature(&pairs, &signature)
}

pub fn aggregate(signatures: &[&[u8]]) -> Result<[u8; SIGNATURE_LENGTH], String> {
    if signatures.is_empty() {
        return Err("aggregate needs at least one signature".into());
    }
    let mut points = Vec::with_capacity(signatures.len());
    for (index, decoded) in decode::g2_all(signatures).into_iter().enumerate() {
        match decoded {
            Ok(point) => points.push(point),
            Err(error) => return Err(format!("signature {index}: invalid G2 point: {error}")),
        }
    }
    Ok(curve::encode_g2(&sums::sum::<Signatures>(&points)))
}

pub fn eth_aggregate_pubkeys(
    cache: &KeyCache,
    keys: &[&[u8]],
) -> Result<[u8; PUBKEY_LENGTH], String> {
    if keys.is_empty() {
        return Err("eth_aggregate_pubkeys needs at least one public key".into());
    }
    let points = cache.resolve(keys);
    if let Some(index) = points.iter().position(Option::is_none) {
        return Err(format!("public key {index} is not a valid key"));
    }
    // Keys that cancel give the identity's encoding, as the specification says.
    Ok(curve::encode_g1(&sum_keys(&points)))
}

/// Sum of resolved (all Some) keys, spread over the worker threads for long lists.
pub fn sum_keys(points: &[Option<G1Affine>]) -> curve::G1 {
    let flat = |points: &[Option<G1Affine>]| points.iter().flatten().copied().collect::<Vec<_>>();
    if points.len() < 4 * SUM_CHUNK {
        return sums::sum::<Keys>(&flat(points));
    }
    let chunks: Vec<&[Option<G1Affine>]> = points.chunks(SUM_CHUNK).collect();
    let partial: Vec<G1Affine> = crate::threads::map(&chunks, 1, |chunk| {
        curve::g1_to_affine(&sums::sum::<Keys>(&flat(chunk)))
    });
    curve::g1_sum(partial.iter())
}
