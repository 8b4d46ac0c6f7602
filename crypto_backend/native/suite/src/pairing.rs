//! Pairing checks: the product of many pairs' Miller values (blst's Miller loop, or
//! under a SIMD path chunks of 8 pairs on the 8-lane Miller-loop kernel, and the loops
//! of two to four pairs with their products spread over the lanes) and
//! one final exponentiation (blst's, or under a SIMD path its hard part's squarings
//! on the cyclotomic kernel: `final_exp_on`).

use crate::curve::{self, g1_from_affine, g1_to_affine, g2_affine_is_identity, G1Affine, G2Affine};
use bls_lanes::cyclotomic;
use bls_lanes::dispatch::{self, Path};
use bls_lanes::miller::{self, spread};
use bls_lanes::points::{Fp12Words, G1Words, G2Words};
use blst::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many pairing checks this process started; the tests read it to prove that a
/// refusal came before any pairing.
pub static PAIRING_CHECKS: AtomicU64 = AtomicU64::new(0);
/// Chunks of 8 pairs run through the Miller-loop kernel (tests check that a path
/// went through the lanes).
pub static MILLER_PASSES: AtomicU64 = AtomicU64::new(0);
/// Miller loops run by `bls_lanes::miller::spread` (same purpose).
pub static SPREAD_LOOPS: AtomicU64 = AtomicU64::new(0);
/// Exponentiations by x on the cyclotomic kernel (the final exponentiation on a SIMD
/// path), for the same purpose.
pub static CYCLOTOMIC_RUNS: AtomicU64 = AtomicU64::new(0);

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
    let neg_generator = negated_generator();
    // e(-g1, identity) is one, and blst's raw Miller loop must not see the identity:
    // an identity signature simply leaves its pair out.
    let last = (!g2_affine_is_identity(signature)).then_some((&neg_generator, signature));
    let (ps, qs) = pair_lists(pairs, last);
    // The Miller loops: blst_miller_loop_n, or whole chunks of 8 on the lane
    // kernels under a SIMD path.
    let loop_value = miller_product(&ps, &qs);
    let result = final_exp_on(&loop_value, dispatch::current());
    // SAFETY: a live fp12 value.
    unsafe { blst_fp12_is_one(&result) }
}

/// `pairings_equal_signature` for a signature decoded without its subgroup check
/// (`curve::decode_g2_on_curve`): false too where it is not in G2. Where the pairs
/// and the signature make a loop for the spread route (`SPREAD_PAIRS`: `verify`'s
/// and `fast_aggregate_verify`'s two), the check is read off that loop, whose
/// signature pair's T ends as [|z|]Q (`spread::miller_loop_checking_last`), instead
/// of a separate multiplication by z on blst; otherwise it is blst's, first.
pub fn pairings_equal_unchecked_signature(
    pairs: &[(G1Affine, G2Affine)],
    signature: &G2Affine,
) -> bool {
    let path = dispatch::current();
    if path != Path::Off && !pairs.is_empty() && SPREAD_PAIRS.contains(&(pairs.len() + 1)) {
        // e(-g1, S) last: prod e(P_i, Q_i) * e(-g1, S) == 1.
        let neg_generator = negated_generator();
        let (ps, qs) = pair_lists(pairs, Some((&neg_generator, signature)));
        // None for an identity point (an identity signature included): blst below.
        if let Some((p_words, q_words)) = lane_words(&ps, &qs) {
            if let Some((value, in_g2)) =
                spread::miller_loop_checking_last(path, &p_words, &q_words)
            {
                PAIRING_CHECKS.fetch_add(1, Ordering::Relaxed);
                SPREAD_LOOPS.fetch_add(1, Ordering::Relaxed);
                if !in_g2 {
                    return false;
                }
                let result = final_exp_on(&fp12_from_words(&value), path);
                // SAFETY: a live fp12 value.
                return unsafe { blst_fp12_is_one(&result) };
            }
        }
    }
    // SAFETY: a live affine point.
    let in_g2 = unsafe { blst_p2_affine_in_g2(signature) };
    in_g2 && pairings_equal_signature(pairs, signature)
}

/// The pairs' G1 and G2 points as two lists, with `last` appended where given.
fn pair_lists<'a>(
    pairs: &'a [(G1Affine, G2Affine)],
    last: Option<(&'a G1Affine, &'a G2Affine)>,
) -> (Vec<&'a G1Affine>, Vec<&'a G2Affine>) {
    pairs.iter().map(|(p, q)| (p, q)).chain(last).unzip()
}

/// -g1 in affine form.
fn negated_generator() -> G1Affine {
    // SAFETY: blst returns a pointer to its static generator, valid forever.
    let mut point = g1_from_affine(unsafe { &*blst_p1_affine_generator() });
    // SAFETY: negates one live point in place.
    unsafe { blst_p1_cneg(&mut point, true) };
    g1_to_affine(&point)
}

/// The final exponentiation, value^((p^12 - 1)/r), the same value as blst_final_exp:
/// blst's for `Path::Off`; on a lane path the easy part on blst and the hard part's
/// five exponentiations by x each in one lane kernel entry, one value spread over
/// the lanes (`bls_lanes::cyclotomic`), the products between them on blst.
pub fn final_exp_on(value: &blst_fp12, path: Path) -> blst_fp12 {
    let mut result = blst_fp12::default();
    if path == Path::Off {
        // SAFETY: one live fp12 in, one out.
        unsafe { blst_final_exp(&mut result, value) };
        return result;
    }
    let easy = easy_part(value);
    match hard_part(&easy, path) {
        Some(result) => result,
        None => {
            // SAFETY: one live fp12 in, one out.
            unsafe { blst_final_exp(&mut result, value) };
            result
        }
    }
}

fn mul(a: &blst_fp12, b: &blst_fp12) -> blst_fp12 {
    let mut out = blst_fp12::default();
    // SAFETY: live fp12 values in, a separate one out.
    unsafe { blst_fp12_mul(&mut out, a, b) };
    out
}

fn conjugate(a: &blst_fp12) -> blst_fp12 {
    let mut out = *a;
    // SAFETY: conjugates one live fp12 in place.
    unsafe { blst_fp12_conjugate(&mut out) };
    out
}

fn frobenius(a: &blst_fp12, power: usize) -> blst_fp12 {
    let mut out = blst_fp12::default();
    // SAFETY: a live fp12 in, a separate one out.
    unsafe { blst_fp12_frobenius_map(&mut out, a, power) };
    out
}

/// f^((p^6 - 1)(p^2 + 1)): conj(f)/f, then its p^2 power times itself. Its values
/// are in the cyclotomic subgroup, where conj is the inverse. 0 (never a Miller
/// value) gives 0, as in blst, whose inverse of 0 is 0.
fn easy_part(f: &blst_fp12) -> blst_fp12 {
    let mut inverse = blst_fp12::default();
    // SAFETY: a live fp12 in, a separate one out.
    unsafe { blst_fp12_inverse(&mut inverse, f) };
    let t = mul(&conjugate(f), &inverse);
    mul(&frobenius(&t, 2), &t)
}

/// a^x for a in the cyclotomic subgroup: a^|x| in one lane kernel entry (its
/// squarings and its products by a), then conjugated (x < 0).
fn cyclotomic_pow_x(a: &blst_fp12, path: Path) -> Option<blst_fp12> {
    let words = cyclotomic::pow_x_on(path, &fp12_words(a))?;
    CYCLOTOMIC_RUNS.fetch_add(1, Ordering::Relaxed);
    Some(conjugate(&fp12_from_words(&words)))
}

fn cyclotomic_square(a: &blst_fp12) -> blst_fp12 {
    let mut out = blst_fp12::default();
    // SAFETY: a live fp12 in, a separate one out.
    unsafe { blst_fp12_cyclotomic_sqr(&mut out, a) };
    out
}

/// f^(3 (p^4 - p^2 + 1)/r) for f in the cyclotomic subgroup, by
/// 3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p) (x^2 + p^2 - 1) + 3 (Hayashida,
/// Hayasaka and Teruya, eprint 2020/875): five exponentiations by x. The cube of the
/// exponentiation by (p^4 - p^2 + 1)/r; 3 is prime to r, so it is 1 exactly where
/// that is.
fn hard_part(f: &blst_fp12, path: Path) -> Option<blst_fp12> {
    // a = f^(x - 1)^2
    let a = mul(&cyclotomic_pow_x(f, path)?, &conjugate(f));
    let a = mul(&cyclotomic_pow_x(&a, path)?, &conjugate(&a));
    // b = a^(x + p)
    let b = mul(&cyclotomic_pow_x(&a, path)?, &frobenius(&a, 1));
    // c = b^(x^2 + p^2 - 1)
    let b_x2 = cyclotomic_pow_x(&cyclotomic_pow_x(&b, path)?, path)?;
    let c = mul(&mul(&b_x2, &frobenius(&b, 2)), &conjugate(&b));
    // times f^3
    Some(mul(&c, &mul(&cyclotomic_square(f), f)))
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

/// The pairs beyond whole chunks of 8 go to the lanes as one more chunk, its other
/// lanes dead (copies of one of its pairs that count for nothing), from this many
/// when no whole chunk runs, and from `MIN_PARTIAL_BESIDE_WHOLE` when whole chunks
/// run anyway (it then shares their squarings); fewer go to blst. Measured on a Zen 4
/// IFMA host (docs/performance.md): a lone chunk takes about what blst's Miller loop
/// of 4 pairs takes (0.76 ms); beside whole chunks a chunk adds about 0.5 ms, between
/// blst's 3 pairs and 4. A batch of 64 sets over 11 messages (12 pairs) took 6.06 ms
/// against 6.23 ms with its last 4 pairs on blst; over 4 messages (5 pairs) 4.93 ms
/// against 4.97 ms.
const MIN_PARTIAL_ALONE: usize = 5;
const MIN_PARTIAL_BESIDE_WHOLE: usize = 4;

/// prod_i f_{Q_i}(P_i) before the final exponentiation: on the lane layer of `path`,
/// two to four pairs through the spread loop (`SPREAD_PAIRS`), more in chunks of 8
/// through the Miller-loop kernel (the last one partial where it has enough pairs:
/// `MIN_PARTIAL_ALONE`), the rest (and everything on `Path::Off`, or with other
/// counts) through blst_miller_loop_n exactly as before. A pair with an
/// identity point (which callers leave out, as blst's raw loop needs) never goes to
/// the lanes, whose formulas have no identity.
pub fn miller_product_on(ps: &[&G1Affine], qs: &[&G2Affine], path: Path) -> blst_fp12 {
    assert_eq!(ps.len(), qs.len());
    if path == Path::Off {
        return blst_miller_product(ps, qs);
    }
    if SPREAD_PAIRS.contains(&ps.len()) {
        if let Some(value) = spread_miller_product(ps, qs, path) {
            return value;
        }
    }
    if ps.len() < MIN_PARTIAL_ALONE {
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
    let whole = lane_ps.len() / 8 * 8;
    let partial = lane_ps.len() - whole;
    let min_partial = if whole > 0 { MIN_PARTIAL_BESIDE_WHOLE } else { MIN_PARTIAL_ALONE };
    let in_lanes = if partial >= min_partial { lane_ps.len() } else { whole };
    for (p, q) in lane_ps[in_lanes..].iter().zip(&lane_qs[in_lanes..]) {
        rest_ps.push(p as *const G1Affine);
        rest_qs.push(q as *const G2Affine);
    }
    let mut product = fp12_from_words(&miller::ONE_FP12);
    if in_lanes > 0 {
        let p_words: Vec<G1Words> = lane_ps[..in_lanes].iter().map(curve::g1_words).collect();
        let q_words: Vec<G2Words> = lane_qs[..in_lanes].iter().map(curve::g2_words).collect();
        // One pass over the loop for all the chunks of 8: each lane accumulates its
        // pair of every chunk (a partial chunk's missing lanes dead).
        let Some(values) = miller::miller_product_of_pairs_on(path, &p_words, &q_words) else {
            return miller_product_on(ps, qs, Path::Off);
        };
        MILLER_PASSES.fetch_add(in_lanes.div_ceil(8) as u64, Ordering::Relaxed);
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
            if in_lanes == 0 {
                return value;
            }
            let so_far = product;
            blst_fp12_mul(&mut product, &so_far, &value);
        }
    }
    product
}

/// The pair counts whose Miller loop runs with one computation's Fp2 products
/// across the lanes (`bls_lanes::miller::spread`): `verify`'s and
/// `fast_aggregate_verify`'s two, three and four. `lane_bench` on an Intel IFMA host
/// (family 6 model 207, a VM whose speed wandered) against blst_miller_loop_n, three
/// runs: 1 pair 0.80-1.05x (it stays on blst: it pays only on the slow runs), 2 pairs
/// 0.66-0.75x, 3 pairs 0.76-0.83x (an odd count multiplies its last line in alone,
/// with a full product), 4 pairs 0.63-0.72x.
const SPREAD_PAIRS: std::ops::RangeInclusive<usize> = 2..=spread::MAX_PAIRS;

/// The spread loop of the pairs, in blst's form; None where a point is the identity
/// (the formulas have none) or the layer is not there.
fn spread_miller_product(ps: &[&G1Affine], qs: &[&G2Affine], path: Path) -> Option<blst_fp12> {
    let (p_words, q_words) = lane_words(ps, qs)?;
    let value = spread::miller_loop(path, &p_words, &q_words)?;
    SPREAD_LOOPS.fetch_add(1, Ordering::Relaxed);
    Some(fp12_from_words(&value))
}

/// The pairs in the kernels' words; None where a point is the identity, which the
/// lane formulas have no case for.
fn lane_words(ps: &[&G1Affine], qs: &[&G2Affine]) -> Option<(Vec<G1Words>, Vec<G2Words>)> {
    if ps.iter().any(|p| curve::g1_affine_is_identity(p))
        || qs.iter().any(|q| g2_affine_is_identity(q))
    {
        return None;
    }
    let p_words = ps.iter().map(|p| curve::g1_words(p)).collect();
    let q_words = qs.iter().map(|q| curve::g2_words(q)).collect();
    Some((p_words, q_words))
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
