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
    let sums = weighted_sums::<Keys>(&keys, &chunk_weights, &groups);
    let mut key_sums = Vec::with_capacity(groups.len());
    let mut messages = Vec::with_capacity(groups.len());
    for (group, key_sum) in groups.into_iter().zip(sums) {
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

/// Weighted sums of at most this many points (not the identity) go to the lanes of a
/// SIMD path (`bls_lanes::mul::weighted`: each lane sums its share, the doublings
/// shared), where `LaneGroup::LANE_MIN` points at least go there in all; a larger
/// one, on blst's Pippenger. `lane_bench` on Zen 4, the lanes' time over Pippenger's
/// for one sum of signatures: 8 of them 0.92x, 16 0.57x, 64 0.64x, 256 0.75x
/// (docs/performance.md).
const LANE_SUM_MAX: usize = 256;
/// Points a lane takes in one pass: a pass's tables (8 points' worth of 8 multiples
/// a row) stay in the core's L2.
const LANE_SUM_ROWS: usize = 16;

/// A group whose weighted sums the lanes form: blst's types and the kernel's entry.
pub trait LaneGroup {
    type Affine: Copy;
    type Point: Copy + Default;
    type Words: Copy;
    type JacobianWords;
    const PASSES: &'static AtomicU64;
    /// Fewer points than this in all stay on blst.
    const LANE_MIN: usize;
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
    const LANE_MIN: usize = 4;
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
    // lane_bench: 8 signatures in one pass 0.92x of Pippenger's; 4 cost a pass too.
    const LANE_MIN: usize = 8;
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
/// weights (`weighted_sums` of one group).
pub fn weighted_sum<G: LaneGroup>(points: &[G::Affine], weights: &[u64]) -> G::Point {
    let whole = std::iter::once(0..points.len()).collect::<Vec<_>>();
    weighted_sums::<G>(points, weights, &whole).remove(0)
}

/// sum over i in group of w_i P_i, for each group (ranges of `points`). On a SIMD path
/// the groups of at most `LANE_SUM_MAX` points (the identity left out) are cut into
/// pieces of at most `rows` points, `rows` the eighth of their total (at most
/// `LANE_SUM_ROWS`), and a pass gives each of its 8 lanes one piece, longest first,
/// so that the lanes share one chain of doublings: 4 messages of 16 keys are one pass
/// of 8 rows, 64 messages of one key 8 passes of one row. Each lane's sum is added to
/// its group's on blst. Larger groups, fewer than `LANE_MIN` points in all, and
/// `Path::Off` go to blst's Pippenger.
pub fn weighted_sums<G: LaneGroup>(
    points: &[G::Affine],
    weights: &[u64],
    groups: &[std::ops::Range<usize>],
) -> Vec<G::Point> {
    let path = dispatch::current();
    let pippenger = |group: &std::ops::Range<usize>| {
        G::pippenger(&points[group.clone()], &weights[group.clone()])
    };
    let mut sums = vec![G::Point::default(); groups.len()];
    let mut eligible: Vec<(usize, Vec<usize>)> = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let finite: Vec<usize> = group.clone().filter(|i| !G::is_identity(&points[*i])).collect();
        if path == Path::Off || finite.len() > LANE_SUM_MAX {
            sums[index] = pippenger(group);
        } else if !finite.is_empty() {
            eligible.push((index, finite));
        }
    }
    let total: usize = eligible.iter().map(|(_, finite)| finite.len()).sum();
    let on_blst = |sums: &mut Vec<G::Point>| {
        for (index, _) in &eligible {
            sums[*index] = pippenger(&groups[*index]);
        }
    };
    if total < G::LANE_MIN {
        on_blst(&mut sums);
        return sums;
    }
    let rows = total.div_ceil(8).min(LANE_SUM_ROWS);
    let mut pieces: Vec<(usize, &[usize])> = eligible
        .iter()
        .flat_map(|(index, finite)| finite.chunks(rows).map(move |piece| (*index, piece)))
        .collect();
    pieces.sort_by_key(|(_, piece)| std::cmp::Reverse(piece.len()));
    for pass in pieces.chunks(8) {
        // Lane l holds piece l, row r its r-th point; empty slots repeat a point of
        // the pass with weight 0 (added nowhere).
        let slot = |lane: usize, row: usize| pass.get(lane).and_then(|(_, piece)| piece.get(row));
        let filler = pass[0].1[0];
        let lane_points: Vec<[G::Words; 8]> = (0..pass[0].1.len())
            .map(|row| {
                std::array::from_fn(|lane| G::words(&points[*slot(lane, row).unwrap_or(&filler)]))
            })
            .collect();
        let lane_weights: Vec<[u64; 8]> = (0..pass[0].1.len())
            .map(|row| std::array::from_fn(|lane| slot(lane, row).map_or(0, |i| weights[*i])))
            .collect();
        let Some((lane_sums, started, undecided)) = G::lane_sums(path, &lane_points, &lane_weights)
        else {
            on_blst(&mut sums);
            return sums;
        };
        G::PASSES.fetch_add(1, Ordering::Relaxed);
        for (lane, (index, piece)) in pass.iter().enumerate() {
            let lane_sum = if (undecided >> lane) & 1 == 1 {
                // A partial sum met an exceptional case of the formulas: blst sums
                // this lane's piece.
                SUM_UNDECIDED.fetch_add(1, Ordering::Relaxed);
                let piece_points: Vec<G::Affine> = piece.iter().map(|i| points[*i]).collect();
                let piece_weights: Vec<u64> = piece.iter().map(|i| weights[*i]).collect();
                G::pippenger(&piece_points, &piece_weights)
            } else if (started >> lane) & 1 == 1 {
                G::from_jacobian(&lane_sums[lane])
            } else {
                continue;
            };
            sums[*index] = G::add(&sums[*index], &lane_sum);
        }
    }
    sums
}
