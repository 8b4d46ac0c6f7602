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
use bls_lanes::dispatch::{self, Path};
use bls_lanes::mul;
use std::sync::atomic::{AtomicU64, Ordering};

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
    let signature_sum = weighted_sum::<Signatures>(&signatures, &chunk_weights);
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
    let lane_products = weighted_keys_on_lanes(&keys, &chunk_weights, &groups);
    let mut key_sums = Vec::with_capacity(groups.len());
    let mut messages = Vec::with_capacity(groups.len());
    for group in groups {
        let key_sum = match &lane_products {
            Some(products) if group.len() < LANE_SUM_MIN => curve::g1_sum(&products[group.clone()]),
            _ => weighted_sum::<Keys>(&keys[group.clone()], &chunk_weights[group.clone()]),
        };
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

/// Kernel passes of the weighted keys, of the weighted signatures, and lanes of the
/// sums left to blst (tests check a path went through the lanes, and the fallback).
pub static WEIGHTED_PASSES: AtomicU64 = AtomicU64::new(0);
pub static SIGNATURE_SUM_PASSES: AtomicU64 = AtomicU64::new(0);
pub static SUM_UNDECIDED: AtomicU64 = AtomicU64::new(0);

/// From this many points (not the identity) a SIMD path forms a weighted sum on the
/// lanes (`bls_lanes::mul::weighted`: each lane sums its share, the doublings shared);
/// below it, or beyond `LANE_SUM_MAX`, on blst's Pippenger. `lane_bench` on Zen 4, the
/// lanes' time over Pippenger's for signatures: 8 of them 0.92x, 16 0.57x, 64 0.64x,
/// 256 0.75x (docs/performance.md).
const LANE_SUM_MIN: usize = 8;
const LANE_SUM_MAX: usize = 256;
/// Points a kernel pass takes (16 a lane): its tables stay in the core's L2.
const LANE_SUM_PASS: usize = 128;

/// Weighted key multiplications of small groups a SIMD path hands the lanes: fewer go
/// to blst.
const MIN_LANE_WEIGHTED: usize = 4;

/// A group whose weighted sums the lanes form: blst's types and the kernel's entry.
pub trait LaneGroup {
    type Affine: Copy;
    type Point: Copy + Default;
    type Words: Copy;
    type JacobianWords;
    const PASSES: &'static AtomicU64;
    fn is_identity(point: &Self::Affine) -> bool;
    fn words(point: &Self::Affine) -> Self::Words;
    #[allow(clippy::type_complexity)]
    fn lane_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        weights: &[[u64; 8]],
    ) -> Option<([Self::JacobianWords; 8], u8, u8)>;
    fn from_jacobian(words: &Self::JacobianWords) -> Self::Point;
    fn add(a: &Self::Point, b: &Self::Point) -> Self::Point;
    fn pippenger(points: &[Self::Affine], weights: &[u64]) -> Self::Point;
}

/// Public keys (G1).
pub enum Keys {}
/// Signatures (G2).
pub enum Signatures {}

impl LaneGroup for Keys {
    type Affine = G1Affine;
    type Point = curve::G1;
    type Words = bls_lanes::points::G1Words;
    type JacobianWords = bls_lanes::points::G1JacobianWords;
    const PASSES: &'static AtomicU64 = &WEIGHTED_PASSES;
    fn is_identity(point: &G1Affine) -> bool {
        curve::g1_affine_is_identity(point)
    }
    fn words(point: &G1Affine) -> Self::Words {
        curve::g1_words(point)
    }
    fn lane_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        weights: &[[u64; 8]],
    ) -> Option<([Self::JacobianWords; 8], u8, u8)> {
        mul::weighted_keys_on(path, rows, weights)
    }
    fn from_jacobian(words: &Self::JacobianWords) -> curve::G1 {
        curve::g1_from_jacobian_words(words)
    }
    fn add(a: &curve::G1, b: &curve::G1) -> curve::G1 {
        curve::g1_add(a, b)
    }
    fn pippenger(points: &[G1Affine], weights: &[u64]) -> curve::G1 {
        curve::g1_weighted_sum(points, weights)
    }
}

impl LaneGroup for Signatures {
    type Affine = G2Affine;
    type Point = curve::G2;
    type Words = bls_lanes::points::G2Words;
    type JacobianWords = bls_lanes::points::G2JacobianWords;
    const PASSES: &'static AtomicU64 = &SIGNATURE_SUM_PASSES;
    fn is_identity(point: &G2Affine) -> bool {
        curve::g2_affine_is_identity(point)
    }
    fn words(point: &G2Affine) -> Self::Words {
        curve::g2_words(point)
    }
    fn lane_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        weights: &[[u64; 8]],
    ) -> Option<([Self::JacobianWords; 8], u8, u8)> {
        mul::weighted_signatures_on(path, rows, weights)
    }
    fn from_jacobian(words: &Self::JacobianWords) -> curve::G2 {
        curve::g2_from_jacobian_words(words)
    }
    fn add(a: &curve::G2, b: &curve::G2) -> curve::G2 {
        curve::g2_add(a, b)
    }
    fn pippenger(points: &[G2Affine], weights: &[u64]) -> curve::G2 {
        curve::g2_weighted_sum(points, weights)
    }
}

/// sum w_i P_i over points of G1 (`Keys`) or G2 (`Signatures`) and their public
/// weights: on the lanes of this process's SIMD path for `LANE_SUM_MIN` to
/// `LANE_SUM_MAX` points, else on blst's Pippenger.
pub fn weighted_sum<G: LaneGroup>(points: &[G::Affine], weights: &[u64]) -> G::Point {
    let path = dispatch::current();
    let finite: Vec<usize> = (0..points.len()).filter(|i| !G::is_identity(&points[*i])).collect();
    if path == Path::Off || finite.len() < LANE_SUM_MIN || finite.len() > LANE_SUM_MAX {
        return G::pippenger(points, weights);
    }
    let mut total = G::Point::default();
    for pass in finite.chunks(LANE_SUM_PASS) {
        // Position k of the pass is row k / 8, lane k % 8; empty slots repeat the
        // first point with weight 0 (added nowhere).
        let rows = pass.len().div_ceil(8);
        let slot = |k: usize| pass.get(k).copied();
        let lane_points: Vec<[G::Words; 8]> = (0..rows)
            .map(|row| {
                std::array::from_fn(|lane| {
                    G::words(&points[slot(row * 8 + lane).unwrap_or(pass[0])])
                })
            })
            .collect();
        let lane_weights: Vec<[u64; 8]> = (0..rows)
            .map(|row| std::array::from_fn(|lane| slot(row * 8 + lane).map_or(0, |i| weights[i])))
            .collect();
        let Some((sums, started, undecided)) = G::lane_sums(path, &lane_points, &lane_weights)
        else {
            return G::pippenger(points, weights);
        };
        G::PASSES.fetch_add(1, Ordering::Relaxed);
        for (lane, sum) in sums.iter().enumerate() {
            let lane_sum = if (undecided >> lane) & 1 == 1 {
                // A partial sum met an exceptional case of the formulas: blst sums
                // this lane's share.
                SUM_UNDECIDED.fetch_add(1, Ordering::Relaxed);
                let column: Vec<usize> = pass.iter().skip(lane).step_by(8).copied().collect();
                let column_points: Vec<G::Affine> = column.iter().map(|i| points[*i]).collect();
                let column_weights: Vec<u64> = column.iter().map(|i| weights[*i]).collect();
                G::pippenger(&column_points, &column_weights)
            } else if (started >> lane) & 1 == 1 {
                G::from_jacobian(sum)
            } else {
                continue;
            };
            total = G::add(&total, &lane_sum);
        }
    }
    total
}

/// Each key times its weight, affine, for the keys of the groups of fewer than
/// `LANE_SUM_MIN` sets (the others' entries are left the identity, unread), eight
/// keys of any groups a pass, on the lanes of this process's SIMD path; None on
/// `Path::Off` or where too few keys would go to the lanes. Lanes the kernel leaves
/// undecided are multiplied on blst.
fn weighted_keys_on_lanes(
    keys: &[G1Affine],
    weights: &[u64],
    groups: &[std::ops::Range<usize>],
) -> Option<Vec<G1Affine>> {
    let path = dispatch::current();
    let positions: Vec<usize> = groups
        .iter()
        .filter(|group| group.len() < LANE_SUM_MIN)
        .flat_map(|group| group.clone())
        .collect();
    if path == Path::Off || positions.len() < MIN_LANE_WEIGHTED {
        return None;
    }
    let mut products = Vec::with_capacity(positions.len());
    for chunk in positions.chunks(8) {
        // Spare lanes repeat the chunk's last key and weight.
        let lanes: [usize; 8] = std::array::from_fn(|lane| chunk[lane.min(chunk.len() - 1)]);
        let points = lanes.map(|index| curve::g1_words(&keys[index]));
        let (words, started, undecided) =
            mul::weighted_keys_on(path, &[points], &[lanes.map(|i| weights[i])])?;
        WEIGHTED_PASSES.fetch_add(1, Ordering::Relaxed);
        for (lane, index) in chunk.iter().enumerate() {
            products.push(if ((undecided | !started) >> lane) & 1 == 1 {
                curve::g1_times_u64(&keys[*index], weights[*index])
            } else {
                curve::g1_from_jacobian_words(&words[lane])
            });
        }
    }
    let mut out = vec![G1Affine::default(); keys.len()];
    for (index, product) in positions.into_iter().zip(curve::g1s_to_affine(&products)) {
        out[index] = product;
    }
    Some(out)
}
