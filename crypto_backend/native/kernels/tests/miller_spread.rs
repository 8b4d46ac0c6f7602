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
