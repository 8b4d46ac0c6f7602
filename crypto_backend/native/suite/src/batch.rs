//! verify_signature_sets: one random linear combination per chunk,
//!
//!     e(sum w_i S_i, g1) == prod over distinct messages m of e(sum_{i: m_i = m} w_i PK_i, H(m)),
//!
//! with the weights w_i drawn by the caller from the OS (64 bits, never zero). The
//! sets are ordered by message and cut into at most one chunk per thread, of about
//! equal estimated work; each chunk is its own check (its own weights, signature
//! sum and final exponentiation) and the batch is true only if every chunk is.

use crate::cache::KeyCache;
use crate::ciphersuite;
use crate::curve::{self, G1Affine, G2Affine, DST};
use crate::decode;
use crate::hash;
use crate::pairing;
use crate::sums::{self, Keys, Signatures};

pub struct SetRef<'a> {
    pub keys: Vec<&'a [u8]>,
    pub message: &'a [u8],
    pub signature: &'a [u8],
}

// Estimated cost, in µs of blst on one core, of the parts of a chunk.
const COST_PER_SET: u64 = 20; // its share of the two weighted sums
const COST_PER_MESSAGE: u64 = 300; // hash to G2, a Miller loop pair
/// A chunk repeats a final exponentiation and the signature's Miller loop (~0.5 ms):
/// below this much estimated work a chunk is not worth a thread.
const MIN_CHUNK_COST: u64 = 1500;

/// Contiguous chunks (indices into `messages`, in message order) for `threads` threads.
pub fn plan_chunks(messages: &[&[u8]], threads: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by(|a, b| messages[*a].cmp(messages[*b]).then(a.cmp(b)));
    let mut costs = Vec::with_capacity(order.len());
    let mut previous: Option<&[u8]> = None;
    for index in &order {
        let mut cost = COST_PER_SET;
        if previous != Some(messages[*index]) {
            cost += COST_PER_MESSAGE;
            previous = Some(messages[*index]);
        }
        costs.push(cost);
    }
    let total: u64 = costs.iter().sum();
    let parts = threads.min(order.len()).min((total / MIN_CHUNK_COST) as usize);
    if parts <= 1 {
        return vec![order];
    }
    let mut chunks: Vec<Vec<usize>> = vec![Vec::new(); parts];
    let mut done = 0u64;
    for (index, cost) in order.into_iter().zip(costs) {
        // The chunk whose share of the total work this set's midpoint falls in.
        let midpoint = 2 * done + cost;
        let chunk = ((midpoint as u128 * parts as u128) / (2 * total as u128)) as usize;
        chunks[chunk.min(parts - 1)].push(index);
        done += cost;
    }
    chunks.retain(|chunk| !chunk.is_empty());
    chunks
}

struct Checked<'a> {
    key: G1Affine,
    message: &'a [u8],
    signature: G2Affine,
}

pub fn verify_signature_sets(cache: &KeyCache, sets: &[SetRef], weights: &[u64]) -> bool {
    if sets.is_empty() || weights.len() != sets.len() || weights.contains(&0) {
        return false;
    }
    // Every key of every set is validated, and every aggregate, before anything is
    // hashed or paired.
    let all_keys: Vec<&[u8]> = sets.iter().flat_map(|set| set.keys.iter().copied()).collect();
    let resolved = cache.resolve(&all_keys);
    let mut offset = 0;
    let mut key_points = Vec::with_capacity(sets.len());
    for set in sets {
        key_points.push(&resolved[offset..offset + set.keys.len()]);
        offset += set.keys.len();
    }
    let signature_bytes: Vec<&[u8]> = sets.iter().map(|set| set.signature).collect();
    let signatures = decode::g2_all(&signature_bytes);
    let positions: Vec<usize> = (0..sets.len()).collect();
    let checked: Option<Vec<Checked>> = crate::threads::map(&positions, 4, |index| {
        let key = ciphersuite::aggregate_key(key_points[*index])?;
        let signature = signatures[*index].ok()?;
        Some(Checked { key, message: sets[*index].message, signature })
    })
    .into_iter()
    .collect();
    let Some(checked) = checked else {
        return false;
    };
    if checked.len() == 1 {
        let only = &checked[0];
        let hashed = curve::g2_to_affine(&curve::hash_to_g2(only.message, DST));
        return pairing::pairings_equal_signature(&[(only.key, hashed)], &only.signature);
    }
    let messages: Vec<&[u8]> = checked.iter().map(|set| set.message).collect();
    let chunks = plan_chunks(&messages, crate::threads::threads());
    if chunks.len() == 1 {
        return check_chunk(&checked, weights, &chunks[0]);
    }
    let verdicts = crate::threads::map(&chunks, 1, |chunk| check_chunk(&checked, weights, chunk));
    verdicts.iter().all(|verdict| *verdict)
}

/// One random-linear-combination check of the sets at `indices` (sorted by message).
fn check_chunk(sets: &[Checked], weights: &[u64], indices: &[usize]) -> bool {
    crate::test_panic::maybe_panic(crate::test_panic::Site::BatchChunk);
    let signatures: Vec<G2Affine> = indices.iter().map(|i| sets[*i].signature).collect();
    let chunk_weights: Vec<u64> = indices.iter().map(|i| weights[*i]).collect();
    let signature_sum = sums::weighted_sum::<Signatures>(&signatures, &chunk_weights);
    // Could only pass with every key side cancelling too.
    if curve::g2_is_identity(&signature_sum) {
        return false;
    }
    // One key sum per distinct message (the sets are sorted by message), all made
    // affine with one inversion, then every distinct message hashed at once (`hash`:
    // eight a pass on a SIMD path).
    let mut groups = Vec::new();
    let mut start = 0;
    while start < indices.len() {
        let message = sets[indices[start]].message;
        let mut end = start;
        while end < indices.len() && sets[indices[end]].message == message {
            end += 1;
        }
        groups.push(start..end);
        start = end;
    }
    let keys: Vec<G1Affine> = indices.iter().map(|i| sets[*i].key).collect();
    let key_sums_by_group = sums::weighted_sums::<Keys>(&keys, &chunk_weights, &groups);
    let mut key_sums = Vec::with_capacity(groups.len());
    let mut messages = Vec::with_capacity(groups.len());
    for (group, key_sum) in groups.into_iter().zip(key_sums_by_group) {
        if curve::g1_is_identity(&key_sum) {
            return false;
        }
        key_sums.push(key_sum);
        messages.push(sets[indices[group.start]].message);
    }
    let key_sums = curve::g1s_to_affine(&key_sums);
    let hashes = hash::hash_many_to_g2(&messages, DST);
    let pairs: Vec<(G1Affine, G2Affine)> = key_sums.into_iter().zip(hashes).collect();
    pairing::pairings_equal_signature(&pairs, &curve::g2_to_affine(&signature_sum))
}
