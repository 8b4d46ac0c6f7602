//! Pairing checks: the product of many pairs' Miller values (blst's Miller loop, or
//! whole chunks of 8 pairs on the 8-lane Miller-loop kernel under a SIMD path) and
//! one final exponentiation (blst's).

use crate::curve::{self, g1_from_affine, g1_to_affine, g2_affine_is_identity, G1Affine, G2Affine};
use bls_lanes::dispatch::{self, Path};
use bls_lanes::miller;
use bls_lanes::points::{Fp12Words, G1Words, G2Words};
use blst::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many pairing checks this process started; the tests read it to prove that a
/// refusal came before any pairing.
pub static PAIRING_CHECKS: AtomicU64 = AtomicU64::new(0);
/// Chunks of 8 pairs run through the Miller-loop kernel (tests check that a path
/// went through the lanes).
pub static MILLER_PASSES: AtomicU64 = AtomicU64::new(0);

/// Whether prod e(P_i, Q_i) == e(g1, signature), with one final exponentiation.
///
/// Callers never pass an identity P_i (refused before this point) nor an identity
/// Q_i (a hash to G2 never is). An empty list of pairs is a caller bug, answered false.
pub fn pairings_equal_signature(pairs: &[(G1Affine, G2Affine)], signature: &G2Affine) -> bool {
    PAIRING_CHECKS.fetch_add(1, Ordering::Relaxed);
    if pairs.is_empty() {
        return false;
    }
    // e(-g1, S) on the same Miller loop: prod e(P_i, Q_i) * e(-g1, S) == 1.
    // SAFETY: blst returns a pointer to its static generator, valid forever.
    let mut neg_generator = g1_from_affine(unsafe { &*blst_p1_affine_generator() });
    // SAFETY: negates one live point in place.
    unsafe { blst_p1_cneg(&mut neg_generator, true) };
    let neg_generator = g1_to_affine(&neg_generator);
    let mut ps: Vec<&G1Affine> = pairs.iter().map(|(p, _)| p).collect();
    let mut qs: Vec<&G2Affine> = pairs.iter().map(|(_, q)| q).collect();
    // e(-g1, identity) is one, and blst's raw Miller loop must not see the identity:
    // an identity signature simply leaves its pair out.
    if !g2_affine_is_identity(signature) {
        ps.push(&neg_generator);
        qs.push(signature);
    }
    // The Miller loops: blst_miller_loop_n, or whole chunks of 8 on the lane
    // kernels under a SIMD path.
    let loop_value = miller_product(&ps, &qs);
    // SAFETY: the fp12 output is plain limbs, fully written by blst before being read.
    unsafe {
        let mut result: blst_fp12 = std::mem::zeroed();
        blst_final_exp(&mut result, &loop_value);
        blst_fp12_is_one(&result)
    }
}

/// A kernel's Fp12 value as blst's (the same words).
pub fn fp12_from_words(value: &Fp12Words) -> blst_fp12 {
    let fp2 = |words: &[[u64; 6]; 2]| blst_fp2 { fp: words.map(|l| blst_fp { l }) };
    blst_fp12 { fp6: value.map(|fp6| blst_fp6 { fp2: fp6.each_ref().map(fp2) }) }
}

pub fn fp12_words(value: &blst_fp12) -> Fp12Words {
    std::array::from_fn(|half| {
        std::array::from_fn(|index| {
            std::array::from_fn(|part| value.fp6[half].fp2[index].fp[part].l)
        })
    })
}

/// prod_i f_{Q_i}(P_i) before the final exponentiation: whole chunks of 8 through the
/// Miller-loop kernel on the lane layer of `path`, the rest (and everything on `Path::Off`, or with fewer
/// than 8 pairs) through blst_miller_loop_n exactly as before. A pair with an
/// identity point (which callers leave out, as blst's raw loop needs) never goes to
/// the lanes, whose formulas have no identity.
pub fn miller_product_on(ps: &[&G1Affine], qs: &[&G2Affine], path: Path) -> blst_fp12 {
    assert_eq!(ps.len(), qs.len());
    if path == Path::Off || ps.len() < 8 {
        return blst_miller_product(ps, qs);
    }
    let (mut lane_ps, mut lane_qs, mut rest_ps, mut rest_qs) = (vec![], vec![], vec![], vec![]);
    for (p, q) in ps.iter().zip(qs) {
        if !curve::g1_affine_is_identity(p) && !curve::g2_affine_is_identity(q) {
            lane_ps.push(**p);
            lane_qs.push(**q);
        } else {
            rest_ps.push(*p as *const G1Affine);
            rest_qs.push(*q as *const G2Affine);
        }
    }
    // The lanes take whole chunks of 8 only.
    let whole = lane_ps.len() / 8 * 8;
    for (p, q) in lane_ps[whole..].iter().zip(&lane_qs[whole..]) {
        rest_ps.push(p as *const G1Affine);
        rest_qs.push(q as *const G2Affine);
    }
    let mut product = fp12_from_words(&miller::ONE_FP12);
    if whole > 0 {
        let chunk_ps: Vec<[G1Words; 8]> = lane_ps[..whole]
            .chunks_exact(8)
            .map(|chunk| std::array::from_fn(|lane| curve::g1_words(&chunk[lane])))
            .collect();
        let chunk_qs: Vec<[G2Words; 8]> = lane_qs[..whole]
            .chunks_exact(8)
            .map(|chunk| std::array::from_fn(|lane| curve::g2_words(&chunk[lane])))
            .collect();
        // One pass over the loop for all the chunks: each lane accumulates its pair
        // of every chunk.
        let Some(values) = miller::miller_product_on(path, &chunk_ps, &chunk_qs) else {
            return miller_product_on(ps, qs, Path::Off);
        };
        MILLER_PASSES.fetch_add(chunk_ps.len() as u64, Ordering::Relaxed);
        for value in &values {
            let so_far = product;
            // SAFETY: live fp12 values in, one out (a separate local).
            unsafe { blst_fp12_mul(&mut product, &so_far, &fp12_from_words(value)) };
        }
    }
    if !rest_ps.is_empty() {
        let mut value = blst_fp12::default();
        // SAFETY: both pointer arrays hold `rest_ps.len()` pointers to live points
        // (into `ps`, `qs` or `lane_ps`, `lane_qs`, alive until the end); `value` is
        // fully written before it is read.
        unsafe {
            blst_miller_loop_n(&mut value, rest_qs.as_ptr(), rest_ps.as_ptr(), rest_ps.len());
            if whole == 0 {
                return value;
            }
            let so_far = product;
            blst_fp12_mul(&mut product, &so_far, &value);
        }
    }
    product
}

/// blst_miller_loop_n of all the pairs: the blst path, unchanged.
fn blst_miller_product(ps: &[&G1Affine], qs: &[&G2Affine]) -> blst_fp12 {
    let ps: Vec<*const G1Affine> = ps.iter().map(|p| *p as *const _).collect();
    let qs: Vec<*const G2Affine> = qs.iter().map(|q| *q as *const _).collect();
    let mut value = blst_fp12::default();
    // SAFETY: both pointer arrays hold `ps.len()` pointers to live points; `value` is
    // fully written before it is read.
    unsafe { blst_miller_loop_n(&mut value, qs.as_ptr(), ps.as_ptr(), ps.len()) };
    value
}

/// `miller_product_on` on the path of this process's dispatch.
pub fn miller_product(ps: &[&G1Affine], qs: &[&G2Affine]) -> blst_fp12 {
    miller_product_on(ps, qs, dispatch::current())
}
