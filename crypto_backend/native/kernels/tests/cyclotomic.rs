//! The squarings of one cyclotomic-subgroup value spread over the lanes against
//! blst's cyclotomic squaring (and its plain Fp12 squaring), on every layer here.

mod common;

use bls_lanes::cyclotomic;
use bls_lanes::field::fpx8::{self, Limbs};
use bls_lanes::lane::MASK52;
use blst::*;
use common::{cyclotomic_value, fp12_of, fp12_of_words, random_fp12, Rng};

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

/// The lane product of any two Fp12 values (not only the subgroup's) against
/// blst_fp12_mul, and the identities at the edges: times one, times zero.
#[test]
fn products_match_blst() {
    let mut rng = Rng(0x9d0c);
    // blst's default Fp12 value is one.
    let one = fp12_of_words(&blst_fp12::default());
    let zero = [[[[0u64; 6]; 2]; 3]; 2];
    for path in common::layers() {
        for round in 0..24 {
            let (a, b) = (random_fp12(&mut rng), random_fp12(&mut rng));
            let got = cyclotomic::product_on(path, &a, &b).expect("a layer");
            let mut want = blst_fp12::default();
            // SAFETY: live fp12 values in, a distinct one out.
            unsafe { blst_fp12_mul(&mut want, &fp12_of(&a), &fp12_of(&b)) };
            assert_eq!(got, fp12_of_words(&want), "{path:?} round {round}");
            let by_one = cyclotomic::product_on(path, &a, &one).expect("a layer");
            assert_eq!(by_one, a, "{path:?} round {round}: a times one");
            let by_zero = cyclotomic::product_on(path, &zero, &b).expect("a layer");
            assert_eq!(by_zero, zero, "{path:?} round {round}: zero times b");
        }
    }
}

/// value^|x| in one kernel entry (62 squarings, 5 products by the value) against
/// blst's square-and-multiply over the same bits, from values of the subgroup.
#[test]
fn power_by_x_matches_blst() {
    let mut rng = Rng(0x7a11);
    for path in common::layers() {
        for round in 0..6 {
            let value = cyclotomic_value(&mut rng);
            let got = cyclotomic::pow_x_on(path, &fp12_of_words(&value)).expect("a layer");
            let mut want = value;
            for bit in (0..63).rev() {
                let so_far = want;
                // SAFETY: live fp12 values in, a distinct one out.
                unsafe { blst_fp12_cyclotomic_sqr(&mut want, &so_far) };
                if (bls_lanes::curve::X_ABS >> bit) & 1 == 1 {
                    let so_far = want;
                    // SAFETY: live fp12 values in, a distinct one out.
                    unsafe { blst_fp12_mul(&mut want, &so_far, &value) };
                }
            }
            assert_eq!(got, fp12_of_words(&want), "{path:?} round {round}");
        }
    }
}

/// Long runs inside one kernel entry keep every intermediate below its bound (each
/// squaring reduces its results once, from below 86p): a thousand squarings in a
/// row against blst's, from several values.
#[test]
fn long_runs_match_blst() {
    let mut rng = Rng(0x51de);
    for path in common::layers() {
        for round in 0..4 {
            let value = cyclotomic_value(&mut rng);
            let got =
                cyclotomic::squarings_on(path, &fp12_of_words(&value), 1000).expect("a layer");
            let mut want = value;
            for _ in 0..1000 {
                let so_far = want;
                // SAFETY: a live fp12 in, a distinct one out.
                unsafe { blst_fp12_cyclotomic_sqr(&mut want, &so_far) };
            }
            assert_eq!(got, fp12_of_words(&want), "{path:?} round {round}");
        }
    }
}

/// k p + r in carried 52-bit limbs (the top limb takes the rest).
fn multiple_plus(k: u64, r: &Limbs) -> Limbs {
    let mut out = [0u64; 8];
    let mut carry: u128 = 0;
    for j in 0..8 {
        let limb = fpx8::P[j] as u128 * k as u128 + r[j] as u128 + carry;
        out[j] = if j < 7 { (limb as u64) & MASK52 } else { limb as u64 };
        carry = limb >> 52;
    }
    out
}

/// The squaring's reduction at the edges of its range: k p + r for every k up to the
/// bound it is used at (86) and beyond (up to 2^10), r at 0, 1 and p - 1, and random:
/// each result is r or r + p (below 2p, the same residue).
#[test]
fn the_reduction_brings_every_multiple_below_2p() {
    let mut rng = Rng(0x2ed);
    let mut p_minus_one = fpx8::P;
    p_minus_one[0] -= 1;
    for path in common::layers() {
        let mut cases: Vec<(u64, Limbs)> = Vec::new();
        for k in (0..=90).chain([127, 128, 255, 511, 1023]) {
            for r in [[0u64; 8], [1, 0, 0, 0, 0, 0, 0, 0], p_minus_one, random_below_p(&mut rng)] {
                cases.push((k, r));
            }
        }
        for chunk in cases.chunks(8) {
            let mut values = [[0u64; 8]; 8];
            for (slot, (k, r)) in values.iter_mut().zip(chunk) {
                *slot = multiple_plus(*k, r);
            }
            let got = cyclotomic::reduce_below_2p_on(path, &values).expect("a layer");
            for (lane, (k, r)) in chunk.iter().enumerate() {
                let r_plus_p = multiple_plus(1, r);
                assert!(
                    got[lane] == *r || got[lane] == r_plus_p,
                    "{path:?}: {k} p + {r:x?} gave {:x?}",
                    got[lane]
                );
            }
        }
    }
}

/// A value below p, in carried limbs.
fn random_below_p(rng: &mut Rng) -> Limbs {
    loop {
        let mut limbs = [0u64; 8];
        for limb in limbs.iter_mut() {
            *limb = rng.next() & MASK52;
        }
        limbs[7] &= (1 << 17) - 1;
        if fpx8::below_modulus(&limbs) {
            return limbs;
        }
    }
}

#[test]
fn off_runs_no_lanes() {
    let value = fp12_of_words(&cyclotomic_value(&mut Rng(1)));
    assert!(cyclotomic::squarings_on(bls_lanes::dispatch::Path::Off, &value, 1).is_none());
}
