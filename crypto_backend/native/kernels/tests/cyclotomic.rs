//! The squarings of one cyclotomic-subgroup value spread over the lanes against
//! blst's cyclotomic squaring (and its plain Fp12 squaring), on every layer here.

mod common;

use bls_lanes::cyclotomic;
use blst::*;
use common::{cyclotomic_value, fp12_of_words, Rng};

#[test]
fn squarings_match_blst_cyclotomic_squaring() {
    let mut rng = Rng(0xc7c1);
    for round in 0..6 {
        let value = cyclotomic_value(&mut rng);
        for path in common::layers() {
            for count in [0u32, 1, 2, 3, 9, 16, 32, 63] {
                let got =
                    cyclotomic::squarings_on(path, &fp12_of_words(&value), count).expect("a layer");
                let mut want = value;
                for _ in 0..count {
                    let so_far = want;
                    // SAFETY: a live fp12 in, a distinct one out.
                    unsafe { blst_fp12_cyclotomic_sqr(&mut want, &so_far) };
                }
                assert_eq!(got, fp12_of_words(&want), "{path:?} round {round} count {count}");
            }
            // On the subgroup the formula is the square itself.
            let mut square = blst_fp12::default();
            // SAFETY: a live fp12 in, a distinct one out.
            unsafe { blst_fp12_sqr(&mut square, &value) };
            let got = cyclotomic::squarings_on(path, &fp12_of_words(&value), 1).expect("a layer");
            assert_eq!(got, fp12_of_words(&square), "{path:?} round {round}");
        }
    }
}

#[test]
fn off_runs_no_lanes() {
    let value = fp12_of_words(&cyclotomic_value(&mut Rng(1)));
    assert!(cyclotomic::squarings_on(bls_lanes::dispatch::Path::Off, &value, 1).is_none());
}
