//! Sums of many points of G1 (`Keys`) or G2 (`Signatures`), plain or times public
//! 64-bit weights (the batch check's random weights): on the 8-lane kernels of this
//! process's SIMD path (`bls_lanes::mul::weighted`, each lane summing its share of
//! the points) where enough points make it pay, else on blst (its batch addition, its
//! Pippenger). Lanes the kernels leave undecided (a partial sum meeting an
//! exceptional case of the incomplete formulas) are summed on blst.

use crate::curve::{self, G1Affine, G2Affine};
use bls_lanes::dispatch::{self, Path};
use bls_lanes::mul;
use std::sync::atomic::{AtomicU64, Ordering};

/// Kernel passes of the weighted keys, of the weighted signatures, of the plain sums
/// (both groups), and lanes of the sums left to blst (tests check a path went through
/// the lanes, and the fallback).
pub static WEIGHTED_PASSES: AtomicU64 = AtomicU64::new(0);
pub static SIGNATURE_SUM_PASSES: AtomicU64 = AtomicU64::new(0);
pub static PLAIN_SUM_PASSES: AtomicU64 = AtomicU64::new(0);
pub static SUM_UNDECIDED: AtomicU64 = AtomicU64::new(0);

/// From this many points (not the identity) a plain sum goes to the lanes of a SIMD
/// path (one mixed addition a point, eight points at a time); fewer, to blst's batch
/// addition (docs/performance.md).
const LANE_PLAIN_SUM_MIN: usize = 16;

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
    #[allow(clippy::type_complexity)]
    fn lane_plain_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        live: &[u8],
    ) -> Option<([Self::JacobianWords; 8], u8)>;
    fn batch_add(points: &[Self::Affine]) -> Self::Point;
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
    fn lane_plain_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        live: &[u8],
    ) -> Option<([Self::JacobianWords; 8], u8)> {
        mul::key_sums_on(path, rows, live)
    }
    fn batch_add(points: &[G1Affine]) -> curve::G1 {
        curve::g1_sum(points)
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
    fn lane_plain_sums(
        path: Path,
        rows: &[[Self::Words; 8]],
        live: &[u8],
    ) -> Option<([Self::JacobianWords; 8], u8)> {
        mul::signature_sums_on(path, rows, live)
    }
    fn batch_add(points: &[G2Affine]) -> curve::G2 {
        curve::g2_sum(points)
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
    if path == Path::Off {
        return groups.iter().map(pippenger).collect();
    }
    let mut sums = vec![G::Point::default(); groups.len()];
    let mut eligible: Vec<(usize, Vec<usize>)> = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let finite: Vec<usize> = group.clone().filter(|i| !G::is_identity(&points[*i])).collect();
        if finite.len() > LANE_SUM_MAX {
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

/// The sum of the points (the identity for none). On a SIMD path, from
/// `LANE_PLAIN_SUM_MIN` points that are not the identity, point k goes to row k / 8
/// and lane k % 8 and each lane adds up its column; the eight lane sums are added on
/// blst. Otherwise, and for lanes left undecided, blst's batch addition.
pub fn sum<G: LaneGroup>(points: &[G::Affine]) -> G::Point {
    let path = dispatch::current();
    if path == Path::Off {
        return G::batch_add(points);
    }
    let finite: Vec<&G::Affine> = points.iter().filter(|p| !G::is_identity(p)).collect();
    if finite.len() < LANE_PLAIN_SUM_MIN {
        return G::batch_add(points);
    }
    let rows = finite.len().div_ceil(8);
    let slot = |row: usize, lane: usize| finite.get(row * 8 + lane).copied();
    let lane_points: Vec<[G::Words; 8]> = (0..rows)
        .map(|row| std::array::from_fn(|lane| G::words(slot(row, lane).unwrap_or(finite[0]))))
        .collect();
    let live: Vec<u8> = (0..rows)
        .map(|row| (0..8).filter(|lane| slot(row, *lane).is_some()).fold(0u8, |m, l| m | 1 << l))
        .collect();
    let Some((lane_sums, undecided)) = G::lane_plain_sums(path, &lane_points, &live) else {
        return G::batch_add(points);
    };
    PLAIN_SUM_PASSES.fetch_add(1, Ordering::Relaxed);
    let mut total = G::Point::default();
    for (lane, lane_sum) in lane_sums.iter().enumerate() {
        let lane_sum = if (undecided >> lane) & 1 == 1 {
            SUM_UNDECIDED.fetch_add(1, Ordering::Relaxed);
            let column: Vec<G::Affine> = finite.iter().skip(lane).step_by(8).map(|p| **p).collect();
            G::batch_add(&column)
        } else {
            G::from_jacobian(lane_sum)
        };
        total = G::add(&total, &lane_sum);
    }
    total
}
