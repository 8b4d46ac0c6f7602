//! Fp2 values held across the lanes of one 8-lane Fp element, an Fp2 value in two
//! adjacent lanes (c0 in the even lane, c1 in the odd one): for the kernels that
//! spread one computation over the lanes instead of running eight
//! (`cyclotomic`, the Miller loop of `miller::pairs`).
//!
//! `Fp2Pairs` is an Fp2 of two values a vector, value k (k = 0, 1) in lanes 2k and
//! 2k + 1, repeated in lanes 4-7: the product of two such elements is one 8-lane
//! multiplication, its eight lanes the four products a0 b0, a1 b1, a0 b1, a1 b0 of
//! each value, so a pairing check's two Miller loops run side by side with every
//! lane of every multiplication used.

use crate::field::fp2x8::Fp2Ops;
use crate::field::fpx8::{Fe, FieldOps, Fpx8, Multiplicative};
use crate::lane::LaneOps;

/// The odd lanes (the c1 halves of the Fp2 values).
pub(crate) const ODD: u8 = 0b1010_1010;
/// Each lane's neighbour (c0 <-> c1 of one Fp2 value).
pub(crate) const SWAP_PAIRS: [u64; 8] = [1, 0, 3, 2, 5, 4, 7, 6];
/// b's halves for the product: b0 b1 in lanes 0-3, b1 b0 in lanes 4-7.
const CROSSED_HIGH: [u64; 8] = [0, 1, 2, 3, 5, 4, 7, 6];
/// From the products a0b0 a1b1 | a0b1 a1b0 (per value): a0b0 and a0b1 side by side.
const FIRST_TERMS: [u64; 8] = [0, 4, 2, 6, 0, 4, 2, 6];
/// The same for a1b1 and a1b0.
const SECOND_TERMS: [u64; 8] = [1, 5, 3, 7, 1, 5, 3, 7];

/// The lanes of (a, b) that `index` names (`LaneOps::permute2`), limb by limb.
#[inline(always)]
pub(crate) fn permute<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>, index: [u64; 8]) -> Fe<O> {
    let mut out = *a;
    for limb in 0..8 {
        out[limb] = f.o.permute2(a[limb], b[limb], index);
    }
    out
}

/// The square of each Fp2 value (lane pairs) of z: (c0 + c1)(c0 - c1) in the even
/// lane, c0 (2 c1) in the odd one, from one 8-lane multiplication.
#[inline(always)]
pub(crate) fn fp2_squares<O: LaneOps>(f: Fpx8<O>, z: &Fe<O>) -> Fe<O> {
    let swapped = permute(f, z, z, SWAP_PAIRS);
    // Factors need only be below 2^390 (`Fpx8::mul`): z + swapped < 4p,
    // z + (4p - swapped) < 6p and z + z < 4p are, unreduced.
    let left = f.select(ODD, &f.add_for_mul(z, &swapped), &swapped);
    let difference = f.add_for_mul(z, &f.neg_for_mul(&swapped));
    let right = f.select(ODD, &difference, &f.add_for_mul(z, z));
    f.mul(&left, &right)
}

/// xi = 1 + i times each Fp2 value of z: (c0 - c1) + (c0 + c1) i.
#[inline(always)]
pub(crate) fn times_xi<O: LaneOps>(f: Fpx8<O>, z: &Fe<O>) -> Fe<O> {
    let swapped = permute(f, z, z, SWAP_PAIRS);
    f.select(ODD, &f.sub(z, &swapped), &f.add(z, &swapped))
}

/// Two Fp2 values a vector (module comment). Lane-wise operations (sums, multiples,
/// masks) act on both values at once; a mask's bits 0-1 are value 0's, 2-3 value 1's.
#[derive(Clone, Copy)]
pub struct Fp2Pairs<O: LaneOps> {
    pub f: Fpx8<O>,
}

impl<O: LaneOps> Fp2Pairs<O> {
    #[inline(always)]
    pub fn new(o: O) -> Self {
        Fp2Pairs { f: Fpx8::new(o) }
    }
}

impl<O: LaneOps> Multiplicative for Fp2Pairs<O> {
    type Element = Fe<O>;

    #[inline(always)]
    fn one(self) -> Fe<O> {
        self.f.select(ODD, &self.f.one(), &self.f.zero())
    }

    /// (a0 b0 - a1 b1) + (a0 b1 + a1 b0) i for both values: one 8-lane product of a
    /// with b's halves crossed in lanes 4-7, then each value's two sums.
    #[inline(always)]
    fn mul(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        let f = self.f;
        let products = f.mul(a, &permute(f, b, b, CROSSED_HIGH));
        let first = permute(f, &products, &products, FIRST_TERMS);
        let second = permute(f, &products, &products, SECOND_TERMS);
        f.select(ODD, &f.sub(&first, &second), &f.add(&first, &second))
    }

    #[inline(always)]
    fn sqr(self, a: &Fe<O>) -> Fe<O> {
        fp2_squares(self.f, a)
    }
}

impl<O: LaneOps> FieldOps for Fp2Pairs<O> {
    #[inline(always)]
    fn add(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        self.f.add(a, b)
    }
    #[inline(always)]
    fn sub(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        self.f.sub(a, b)
    }
    #[inline(always)]
    fn eq_mask(self, a: &Fe<O>, b: &Fe<O>) -> u8 {
        self.f.eq_mask(a, b)
    }
    #[inline(always)]
    fn is_zero_mask(self, a: &Fe<O>) -> u8 {
        self.f.is_zero_mask(a)
    }
    #[inline(always)]
    fn triple(self, a: &Fe<O>) -> Fe<O> {
        self.f.triple(a)
    }
    #[inline(always)]
    fn times4(self, a: &Fe<O>) -> Fe<O> {
        self.f.times4(a)
    }
    #[inline(always)]
    fn times8(self, a: &Fe<O>) -> Fe<O> {
        self.f.times8(a)
    }
}

impl<O: LaneOps> Fp2Ops for Fp2Pairs<O> {
    /// An Fp value per Fp2 value, in both of its lanes (s0 s0 s1 s1, repeated).
    type Scalar = Fe<O>;
    #[inline(always)]
    fn neg(self, a: &Fe<O>) -> Fe<O> {
        self.f.neg(a)
    }
    #[inline(always)]
    fn mul_by_xi(self, a: &Fe<O>) -> Fe<O> {
        times_xi(self.f, a)
    }
    #[inline(always)]
    fn mul_by_scalar(self, a: &Fe<O>, s: &Fe<O>) -> Fe<O> {
        self.f.mul(a, s)
    }
}
