//! Squarings of one Fp12 element of the cyclotomic subgroup (the values of a final
//! exponentiation's hard part), spread across the lanes: a single pairing check has
//! one such value, not eight, so here the lanes hold the parts of one computation.
//!
//! The squaring is Granger and Scott's (PKC 2010, "Faster squaring in the cyclotomic
//! subgroup of sixth degree extensions"). With the tower of blst and the
//! specification, f = g + h w, g = g0 + g1 v + g2 v^2, h = h0 + h1 v + h2 v^2,
//! w^2 = v, v^3 = xi = 1 + i. Put s = w^3 (s^2 = xi) and read f over
//! Fp4 = Fp2[s] as e0 + e1 w + e2 w^2 with e0 = g0 + h1 s, e1 = h0 + g2 s,
//! e2 = g1 + h2 s. For f with f^(p^6 + 1) = 1:
//!
//!   f^2 = (3 e0^2 - 2 conj(e0)) + (3 s e2^2 + 2 conj(e1)) w + (3 e1^2 - 2 conj(e2)) w^2
//!
//! where conj(a + b s) = a - b s, and (a + b s)^2 = (a^2 + xi b^2) + ((a + b)^2 - a^2 - b^2) s.
//! Nine Fp2 squarings, eighteen Fp products, all independent: three 8-lane
//! multiplications, six lanes each.
//!
//! Layout: an Fp2 value takes two adjacent lanes (c0 in the even lane, c1 in the odd
//! one); vector X holds the "a" parts of e0, e1, e2 in lanes 0-1, 2-3, 4-5 (g0, h0,
//! g1), vector Y their "b" parts (h1, g2, h2); lanes 6 and 7 hold zero throughout
//! (0 squares to 0 and every combination of zeros is zero).

use crate::dispatch::{self, Kernel, Path};
use crate::field::fpx8::{Fe, Fpx8};
use crate::field::stored::{pack_fp, unpack_fp};
use crate::lane::LaneOps;
use crate::points::{Fp12Words, FpWords};

/// The odd lanes (the c1 halves of the Fp2 values).
const ODD: u8 = 0b1010_1010;
/// Lanes 2 and 3: the Fp2 value of e1.
const MIDDLE: u8 = 0b0000_1100;
/// Each lane's neighbour (c0 <-> c1 of one Fp2 value).
const SWAP_PAIRS: [u64; 8] = [1, 0, 3, 2, 5, 4, 7, 6];
/// From (first, second): lanes 0-1 of first, lanes 4-5 of second, lanes 2-3 of
/// first, then first's (zero) lanes 6-7.
const FIRST_SECOND_FIRST: [u64; 8] = [0, 1, 8 + 4, 8 + 5, 2, 3, 6, 7];

/// `value`^(2^count) for `value` in the cyclotomic subgroup, in blst's words (its
/// Montgomery form), canonical.
pub struct CyclotomicSquarings {
    pub value: Fp12Words,
    pub count: u32,
}

impl Kernel for CyclotomicSquarings {
    type Output = Fp12Words;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Fp12Words {
        let f = Fpx8::new(o);
        let [g, h] = self.value;
        let zero: FpWords = [0; 6];
        let x_lanes = [g[0][0], g[0][1], h[0][0], h[0][1], g[1][0], g[1][1], zero, zero];
        let y_lanes = [h[1][0], h[1][1], g[2][0], g[2][1], h[2][0], h[2][1], zero, zero];
        let (mut x, mut y) = (pack_fp(f, &x_lanes), pack_fp(f, &y_lanes));
        for _ in 0..self.count {
            (x, y) = square(f, &x, &y);
        }
        let (x, y) = (unpack_fp(f, &x), unpack_fp(f, &y));
        [[[x[0], x[1]], [x[4], x[5]], [y[2], y[3]]], [[x[2], x[3]], [y[0], y[1]], [y[4], y[5]]]]
    }
}

/// One Granger-Scott squaring on the layout of the module comment.
#[inline(always)]
fn square<O: LaneOps>(f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> (Fe<O>, Fe<O>) {
    let (x2, y2) = (fp2_squares(f, x), fp2_squares(f, y));
    let sum2 = fp2_squares(f, &f.add(x, y));
    // The Fp4 squares of e0, e1, e2: their "a" parts q0, their "b" parts q1.
    let q0 = f.add(&x2, &times_xi(f, &y2));
    let q1 = f.sub(&f.sub(&sum2, &x2), &y2);
    // Per Fp4 value of the result, the square it takes three times: e0 from e0^2,
    // e1 from s e2^2 = xi (e2^2's b part) + (e2^2's a part) s, e2 from e1^2.
    let a_parts = permute(f, &q0, &times_xi(f, &q1), FIRST_SECOND_FIRST);
    let b_parts = permute(f, &q1, &q0, FIRST_SECOND_FIRST);
    // Then twice the conjugate of the value itself: - a + b s for e0 and e2,
    // a - b s for e1; -2v taken as 2(4p - v).
    let new_x = three_plus_twice(f, &a_parts, &f.select(MIDDLE, &f.neg_for_mul(x), x));
    let new_y = three_plus_twice(f, &b_parts, &f.select(MIDDLE, y, &f.neg_for_mul(y)));
    (new_x, new_y)
}

/// 3a + 2b for a < 2p and b <= 4p, in [0, 2p): summed unreduced (below 14p), then
/// reduced once.
#[inline(always)]
fn three_plus_twice<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
    let o = f.o;
    let mut sum = *a;
    for limb in 0..8 {
        sum[limb] = o.add(o.add(o.add(a[limb], a[limb]), o.add(a[limb], b[limb])), b[limb]);
    }
    f.reduce_lazy(&f.carry(sum))
}

/// The square of each Fp2 value (lane pairs) of z: (c0 + c1)(c0 - c1) in the even
/// lane, c0 (2 c1) in the odd one, from one 8-lane multiplication.
#[inline(always)]
fn fp2_squares<O: LaneOps>(f: Fpx8<O>, z: &Fe<O>) -> Fe<O> {
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
fn times_xi<O: LaneOps>(f: Fpx8<O>, z: &Fe<O>) -> Fe<O> {
    let swapped = permute(f, z, z, SWAP_PAIRS);
    f.select(ODD, &f.sub(z, &swapped), &f.add(z, &swapped))
}

/// The lanes of (a, b) that `index` names (`LaneOps::permute2`), limb by limb.
#[inline(always)]
fn permute<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>, index: [u64; 8]) -> Fe<O> {
    let mut out = *a;
    for limb in 0..8 {
        out[limb] = f.o.permute2(a[limb], b[limb], index);
    }
    out
}

/// `value`^(2^count) on the lane layer of `path` (see `CyclotomicSquarings`); None
/// on `Path::Off` or without IFMA. `value` must be in the cyclotomic subgroup (after
/// a final exponentiation's easy part): the squaring formula holds there only.
pub fn squarings_on(path: Path, value: &Fp12Words, count: u32) -> Option<Fp12Words> {
    dispatch::run_on(path, CyclotomicSquarings { value: *value, count })
}
