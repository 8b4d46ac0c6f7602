//! The 8-lane Miller loop against blst's: after the final exponentiation each lane's
//! value equals blst's pairing of the same pair (of the product of its pairs, over
//! several chunks); and the loop's Fp12 products
//! against blst_fp12_mul and blst_fp12_sqr.

mod common;

use bls_lanes::miller::{self, Fp12Op};
use bls_lanes::points::{Fp12Words, G1Words, G2Words};
use blst::*;
use common::{fp12_of, fp12_of_words, random_fp12, Rng};

fn final_exp(value: &blst_fp12) -> blst_fp12 {
    let mut out = blst_fp12::default();
    // SAFETY: one live fp12 in, one out.
    unsafe { blst_final_exp(&mut out, value) };
    out
}

fn affine_g1(words: &[u64; 4]) -> blst_p1_affine {
    let (mut point, mut affine) = (blst_p1::default(), blst_p1_affine::default());
    let mut scalar = blst_scalar::default();
    // SAFETY: live values of the right types.
    unsafe {
        blst_scalar_from_uint64(&mut scalar, words.as_ptr());
        blst_sk_to_pk_in_g1(&mut point, &scalar);
        blst_p1_to_affine(&mut affine, &point);
    }
    affine
}

fn affine_g2(words: &[u64; 4], message: &[u8]) -> blst_p2_affine {
    let hashed = common::hash_to_g2(message);
    let (mut point, mut affine) = (blst_p2::default(), blst_p2_affine::default());
    let mut scalar = blst_scalar::default();
    // SAFETY: live values of the right types.
    unsafe {
        blst_scalar_from_uint64(&mut scalar, words.as_ptr());
        blst_sign_pk_in_g1(&mut point, &hashed, &scalar);
        blst_p2_to_affine(&mut affine, &point);
    }
    affine
}

#[test]
fn each_lane_is_blsts_pairing() {
    let mut rng = Rng(0x6735);
    let ps: [blst_p1_affine; 8] = std::array::from_fn(|_| affine_g1(&rng.scalar()));
    let qs: [blst_p2_affine; 8] =
        std::array::from_fn(|lane| affine_g2(&rng.scalar(), format!("message {lane}").as_bytes()));
    let p_words = ps.map(|p| G1Words { x: p.x.l, y: p.y.l });
    let q_words =
        qs.map(|q| G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] });
    for path in common::layers() {
        let values = miller::miller_loop_on(path, &p_words, &q_words).expect("a layer");
        for lane in 0..8 {
            let mut want = blst_fp12::default();
            // SAFETY: live points in, one fp12 out.
            unsafe { blst_miller_loop(&mut want, &qs[lane], &ps[lane]) };
            let (got, want) = (final_exp(&fp12_of(&values[lane])), final_exp(&want));
            // SAFETY: two live fp12 values.
            assert!(unsafe { blst_fp12_is_equal(&got, &want) }, "{path:?} lane {lane}");
        }
    }
}

#[test]
fn each_lane_accumulates_its_pair_of_every_chunk() {
    let mut rng = Rng(0x6737);
    let chunks = 3;
    let ps: Vec<[blst_p1_affine; 8]> =
        (0..chunks).map(|_| std::array::from_fn(|_| affine_g1(&rng.scalar()))).collect();
    let qs: Vec<[blst_p2_affine; 8]> = (0..chunks)
        .map(|chunk| {
            std::array::from_fn(|lane| {
                affine_g2(&rng.scalar(), format!("chunk {chunk} message {lane}").as_bytes())
            })
        })
        .collect();
    let p_words: Vec<[G1Words; 8]> =
        ps.iter().map(|chunk| chunk.map(|p| G1Words { x: p.x.l, y: p.y.l })).collect();
    let q_words: Vec<[G2Words; 8]> = qs
        .iter()
        .map(|chunk| {
            chunk.map(|q| G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] })
        })
        .collect();
    for path in common::layers() {
        let values = miller::miller_product_on(path, &p_words, &q_words).expect("a layer");
        for lane in 0..8 {
            let mut want = blst_fp12::default();
            // SAFETY: live points and fp12 values in, one fp12 out.
            unsafe {
                blst_miller_loop(&mut want, &qs[0][lane], &ps[0][lane]);
                for chunk in 1..chunks {
                    let mut value = blst_fp12::default();
                    blst_miller_loop(&mut value, &qs[chunk][lane], &ps[chunk][lane]);
                    let so_far = want;
                    blst_fp12_mul(&mut want, &so_far, &value);
                }
            }
            let (got, want) = (final_exp(&fp12_of(&values[lane])), final_exp(&want));
            // SAFETY: two live fp12 values.
            assert!(unsafe { blst_fp12_is_equal(&got, &want) }, "{path:?} lane {lane}");
        }
        // A lane's product is not its first chunk's value alone.
        let first = miller::miller_loop_on(path, &p_words[0], &q_words[0]).expect("a layer");
        assert_ne!(final_exp(&fp12_of(&first[0])), final_exp(&fp12_of(&values[0])));
    }
}

#[test]
fn fp12_products_match_blst() {
    let mut rng = Rng(0x6736);
    for _ in 0..4 {
        let a: [Fp12Words; 8] = std::array::from_fn(|_| random_fp12(&mut rng));
        let b: [Fp12Words; 8] = std::array::from_fn(|_| random_fp12(&mut rng));
        for path in common::layers() {
            let product = miller::fp12_op_on(path, Fp12Op::Mul, &a, &b).expect("a layer");
            let square = miller::fp12_op_on(path, Fp12Op::Sqr, &a, &b).expect("a layer");
            for lane in 0..8 {
                let (x, y) = (fp12_of(&a[lane]), fp12_of(&b[lane]));
                let (mut want_product, mut want_square) = (x, x);
                // SAFETY: live fp12 values in and out.
                unsafe {
                    blst_fp12_mul(&mut want_product, &x, &y);
                    blst_fp12_sqr(&mut want_square, &x);
                }
                assert_eq!(product[lane], fp12_of_words(&want_product), "{path:?} lane {lane}");
                assert_eq!(square[lane], fp12_of_words(&want_square), "{path:?} lane {lane}");
            }
        }
    }
}

/// A partial chunk: dead lanes (copies of a live pair) count for nothing, in a chunk
/// alone and after a whole one; a lane dead in every chunk ends as 1.
#[test]
fn dead_lanes_count_for_nothing() {
    let mut rng = Rng(0x6739);
    let ps: Vec<blst_p1_affine> = (0..13).map(|_| affine_g1(&rng.scalar())).collect();
    let qs: Vec<blst_p2_affine> =
        (0..13).map(|k| affine_g2(&rng.scalar(), format!("partial {k}").as_bytes())).collect();
    let p_words: Vec<G1Words> = ps.iter().map(|p| G1Words { x: p.x.l, y: p.y.l }).collect();
    let q_words: Vec<G2Words> = qs
        .iter()
        .map(|q| G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] })
        .collect();
    for count in [5, 13] {
        let mut want = blst_fp12::default();
        let p_refs: Vec<*const blst_p1_affine> =
            ps[..count].iter().map(|p| p as *const _).collect();
        let q_refs: Vec<*const blst_p2_affine> =
            qs[..count].iter().map(|q| q as *const _).collect();
        // SAFETY: `count` pointers to live points each; `want` is written before read.
        unsafe { blst_miller_loop_n(&mut want, q_refs.as_ptr(), p_refs.as_ptr(), count) };
        // The same chunks with every lane live (the copies counted), to show the
        // mask matters.
        let all_live_ps: Vec<[G1Words; 8]> = padded(&p_words[..count]);
        let all_live_qs: Vec<[G2Words; 8]> = padded(&q_words[..count]);
        for path in common::layers() {
            let values =
                miller::miller_product_of_pairs_on(path, &p_words[..count], &q_words[..count])
                    .expect("a layer");
            let mut got = fp12_of(&values[0]);
            for value in &values[1..] {
                let so_far = got;
                // SAFETY: live fp12 values in, a separate one out.
                unsafe { blst_fp12_mul(&mut got, &so_far, &fp12_of(value)) };
            }
            assert_eq!(final_exp(&got), final_exp(&want), "{path:?} {count} pairs");
            // Lanes 5-7 hold only dead pairs in the 5-pair case: exactly 1.
            if count == 5 {
                for (lane, value) in values.iter().enumerate().skip(5) {
                    assert_eq!(*value, miller::ONE_FP12, "{path:?} lane {lane}");
                }
            }
            let counted =
                miller::miller_product_on(path, &all_live_ps, &all_live_qs).expect("a layer");
            assert_ne!(counted, values, "{path:?} {count} pairs");
        }
    }
}

/// Chunks of 8, the last one's missing lanes filled with copies of its first item.
fn padded<T: Copy>(items: &[T]) -> Vec<[T; 8]> {
    items
        .chunks(8)
        .map(|chunk| std::array::from_fn(|lane| *chunk.get(lane).unwrap_or(&chunk[0])))
        .collect()
}
