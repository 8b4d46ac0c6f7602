//! The Miller loop of one to four pairs with the lanes holding one computation's
//! products (`miller::spread`) against blst_miller_loop_n: equal after the final
//! exponentiation, on every layer here; and a changed pair changes the value.

mod common;

use bls_lanes::miller::spread;
use bls_lanes::points::{G1Words, G2Words};
use blst::*;
use common::{fp12_of, Rng};

fn final_exp(value: &blst_fp12) -> blst_fp12 {
    let mut out = blst_fp12::default();
    // SAFETY: one live fp12 in, one out.
    unsafe { blst_final_exp(&mut out, value) };
    out
}

fn random_g1(rng: &mut Rng) -> blst_p1_affine {
    let (mut point, mut affine) = (blst_p1::default(), blst_p1_affine::default());
    let mut scalar = blst_scalar::default();
    let words = rng.scalar();
    // SAFETY: live values of the right types.
    unsafe {
        blst_scalar_from_uint64(&mut scalar, words.as_ptr());
        blst_sk_to_pk_in_g1(&mut point, &scalar);
        blst_p1_to_affine(&mut affine, &point);
    }
    affine
}

fn random_g2(rng: &mut Rng, message: &[u8]) -> blst_p2_affine {
    let hashed = common::hash_to_g2(message);
    let (mut point, mut affine) = (blst_p2::default(), blst_p2_affine::default());
    let mut scalar = blst_scalar::default();
    let words = rng.scalar();
    // SAFETY: live values of the right types.
    unsafe {
        blst_scalar_from_uint64(&mut scalar, words.as_ptr());
        blst_sign_pk_in_g1(&mut point, &hashed, &scalar);
        blst_p2_to_affine(&mut affine, &point);
    }
    affine
}

fn blst_loop(ps: &[blst_p1_affine], qs: &[blst_p2_affine]) -> blst_fp12 {
    let p_refs: Vec<*const blst_p1_affine> = ps.iter().map(|p| p as *const _).collect();
    let q_refs: Vec<*const blst_p2_affine> = qs.iter().map(|q| q as *const _).collect();
    let mut value = blst_fp12::default();
    // SAFETY: `ps.len()` pointers to live points each; `value` is written before read.
    unsafe { blst_miller_loop_n(&mut value, q_refs.as_ptr(), p_refs.as_ptr(), ps.len()) };
    value
}

fn words(ps: &[blst_p1_affine], qs: &[blst_p2_affine]) -> (Vec<G1Words>, Vec<G2Words>) {
    (
        ps.iter().map(|p| G1Words { x: p.x.l, y: p.y.l }).collect(),
        qs.iter()
            .map(|q| G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] })
            .collect(),
    )
}

#[test]
fn equals_blsts_loop_after_the_final_exponentiation() {
    let mut rng = Rng(0x5b7e);
    for round in 0..3 {
        let ps: Vec<blst_p1_affine> = (0..spread::MAX_PAIRS).map(|_| random_g1(&mut rng)).collect();
        let qs: Vec<blst_p2_affine> = (0..spread::MAX_PAIRS)
            .map(|k| random_g2(&mut rng, format!("spread {round} {k}").as_bytes()))
            .collect();
        let (p_words, q_words) = words(&ps, &qs);
        for count in 1..=spread::MAX_PAIRS {
            let want = final_exp(&blst_loop(&ps[..count], &qs[..count]));
            for path in common::layers() {
                let got = spread::miller_loop(path, &p_words[..count], &q_words[..count])
                    .expect("a layer");
                assert_eq!(final_exp(&fp12_of(&got)), want, "{path:?} {count} pairs");
            }
        }
    }
}

#[test]
fn the_verify_shape_checks_out_and_a_wrong_signature_does_not() {
    // e(pk, H) * e(-g1, sk H) == 1 for pk = sk g1, as `verify` asks.
    let mut rng = Rng(0x5b7f);
    let scalar_words = rng.scalar();
    let mut scalar = blst_scalar::default();
    let (mut pk, mut sig, mut neg_g1) =
        (blst_p1::default(), blst_p2::default(), blst_p1::default());
    let hashed = common::hash_to_g2(b"verify shape");
    let (mut pk_affine, mut sig_affine, mut neg_g1_affine, mut h_affine) = (
        blst_p1_affine::default(),
        blst_p2_affine::default(),
        blst_p1_affine::default(),
        blst_p2_affine::default(),
    );
    // SAFETY: live values of the right types.
    unsafe {
        blst_scalar_from_uint64(&mut scalar, scalar_words.as_ptr());
        blst_sk_to_pk_in_g1(&mut pk, &scalar);
        blst_sign_pk_in_g1(&mut sig, &hashed, &scalar);
        blst_p1_from_affine(&mut neg_g1, blst_p1_affine_generator());
        blst_p1_cneg(&mut neg_g1, true);
        blst_p1_to_affine(&mut pk_affine, &pk);
        blst_p2_to_affine(&mut sig_affine, &sig);
        blst_p1_to_affine(&mut neg_g1_affine, &neg_g1);
        blst_p2_to_affine(&mut h_affine, &hashed);
    }
    let other = random_g2(&mut rng, b"another message");
    for path in common::layers() {
        let (p_words, q_words) = words(&[pk_affine, neg_g1_affine], &[h_affine, sig_affine]);
        let value = spread::miller_loop(path, &p_words, &q_words).expect("a layer");
        // SAFETY: a live fp12.
        assert!(unsafe { blst_fp12_is_one(&final_exp(&fp12_of(&value))) }, "{path:?}");
        let (p_words, q_words) = words(&[pk_affine, neg_g1_affine], &[h_affine, other]);
        let value = spread::miller_loop(path, &p_words, &q_words).expect("a layer");
        // SAFETY: a live fp12.
        assert!(!unsafe { blst_fp12_is_one(&final_exp(&fp12_of(&value))) }, "{path:?}");
    }
}

/// x^3 + 4(1 + i) on the twist, a square root of it where there is one: a point of
/// the twist's whole group, almost never in G2.
fn twist_point(rng: &mut Rng) -> blst_p2_affine {
    loop {
        let mut point = blst_p2_affine::default();
        let (mut four, mut rhs, mut square) =
            (blst_fp::default(), blst_fp2::default(), blst_fp2::default());
        // SAFETY: live values of the right types.
        let found = unsafe {
            blst_fp_from_uint64(&mut point.x.fp[0], rng.below_p().as_ptr());
            blst_fp_from_uint64(&mut point.x.fp[1], rng.below_p().as_ptr());
            blst_fp_from_uint64(&mut four, [4u64, 0, 0, 0, 0, 0].as_ptr());
            blst_fp2_sqr(&mut square, &point.x);
            blst_fp2_mul(&mut rhs, &square, &point.x);
            rhs.fp[0] = {
                let mut sum = blst_fp::default();
                blst_fp_add(&mut sum, &rhs.fp[0], &four);
                sum
            };
            rhs.fp[1] = {
                let mut sum = blst_fp::default();
                blst_fp_add(&mut sum, &rhs.fp[1], &four);
                sum
            };
            blst_fp2_sqrt(&mut point.y, &rhs)
        };
        // SAFETY: a live point.
        if found && unsafe { blst_p2_affine_on_curve(&point) } {
            return point;
        }
    }
}

/// A point of order 13 of the twist: the twist has h2 r points, 13^2 dividing h2.
fn point_of_order_13(rng: &mut Rng) -> blst_p2_affine {
    // h2 / 13^2, then r, little-endian.
    let h2_without_13 =
        "08d5fc7522f6c4d5a3c5663541d68b60a5f9bdc250555d81be2a9b0c6483045a5b213dcb71\
                         085945e0aef29c5e8629edf4046db800a8373336b3150941cfdd";
    let r = "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001";
    let little_endian = |hex: &str| -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .rev()
            .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
            .collect()
    };
    let multiply = |point: &blst_p2, scalar: &[u8]| {
        let mut out = blst_p2::default();
        // SAFETY: live values; `scalar` holds 8 * len bits.
        unsafe { blst_p2_mult(&mut out, point, scalar.as_ptr(), 8 * scalar.len()) };
        out
    };
    loop {
        let mut point = blst_p2::default();
        // SAFETY: a live affine point in, one out.
        unsafe { blst_p2_from_affine(&mut point, &twist_point(rng)) };
        // Order a power of 13, then the last multiple before the identity.
        let mut point =
            multiply(&multiply(&point, &little_endian(h2_without_13)), &little_endian(r));
        // SAFETY: live points.
        if unsafe { blst_p2_is_inf(&point) } {
            continue;
        }
        while !unsafe { blst_p2_is_inf(&multiply(&point, &[13])) } {
            point = multiply(&point, &[13]);
        }
        let mut affine = blst_p2_affine::default();
        // SAFETY: a live point in, one out.
        unsafe { blst_p2_to_affine(&mut affine, &point) };
        return affine;
    }
}

#[test]
fn the_loop_reads_the_signatures_subgroup_check_right() {
    // The verify shape with the signature's membership in G2 read off the loop
    // (`miller_loop_checking_last`): true with the same value for a signature in
    // G2; false for points of the twist outside it, for a point of order 13 (whose
    // T reaches -Q at the addition of k = 13, the formulas' exceptional case) and
    // for a signature plus that point.
    let mut rng = Rng(0x5b80);
    let pk = random_g1(&mut rng);
    let mut neg_g1 = blst_p1::default();
    let mut neg_g1_affine = blst_p1_affine::default();
    // SAFETY: live values of the right types.
    unsafe {
        blst_p1_from_affine(&mut neg_g1, blst_p1_affine_generator());
        blst_p1_cneg(&mut neg_g1, true);
        blst_p1_to_affine(&mut neg_g1_affine, &neg_g1);
    }
    let hashed = random_g2(&mut rng, b"checked");
    let signature = random_g2(&mut rng, b"checked signature");
    let torsion = point_of_order_13(&mut rng);
    let mut sum = blst_p2::default();
    let mut sum_affine = blst_p2_affine::default();
    // SAFETY: live values of the right types.
    unsafe {
        blst_p2_from_affine(&mut sum, &signature);
        blst_p2_add_or_double_affine(&mut sum, &sum, &torsion);
        blst_p2_to_affine(&mut sum_affine, &sum);
    }
    let mut outside = vec![torsion, sum_affine];
    outside.extend((0..4).map(|_| twist_point(&mut rng)));
    for point in &outside {
        // SAFETY: live points.
        assert!(unsafe { blst_p2_affine_on_curve(point) && !blst_p2_affine_in_g2(point) });
    }
    for path in common::layers() {
        let (p_words, q_words) = words(&[pk, neg_g1_affine], &[hashed, signature]);
        let (value, in_g2) =
            spread::miller_loop_checking_last(path, &p_words, &q_words).expect("a layer");
        assert!(in_g2, "{path:?}");
        assert_eq!(Some(value), spread::miller_loop(path, &p_words, &q_words), "{path:?}");
        for (index, point) in outside.iter().enumerate() {
            let (p_words, q_words) = words(&[pk, neg_g1_affine], &[hashed, *point]);
            let (_, in_g2) =
                spread::miller_loop_checking_last(path, &p_words, &q_words).expect("a layer");
            assert!(!in_g2, "{path:?}, point {index}");
        }
    }
}
