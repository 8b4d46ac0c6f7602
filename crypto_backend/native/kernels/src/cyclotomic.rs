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
//! g1), vector Y their "b" parts (h1, g2, h2); lanes 6 and 7 start as zero and hold
//! only multiples of p (the lifts of the differences) reduced below 2p: zero in the
//! field, never read back.

use crate::dispatch::{self, Kernel, Path};
use crate::field::fpx8::{self, lent_multiple_of_p, Fe, Fpx8, Limbs, LENT_4P};
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

/// Lent 8p and 16p (`fpx8::lent_multiple_of_p`), for values below 4p and 8p.
const LENT_8P: Limbs = lent_multiple_of_p(8);
const LENT_16P: Limbs = lent_multiple_of_p(16);

/// floor(2^52 / (P7 + 1)), P7 p's limb 7 (`reduce_below_2p`).
const QUOTIENT_FACTOR: u64 = (1 << 52) / (fpx8::P[7] + 1);

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

/// One Granger-Scott squaring on the layout of the module comment, for x, y below 2p
/// (carried), giving the same below 2p. Between the three multiplications and the
/// result nothing is reduced: the sums and differences are formed limb by limb
/// (a difference plus a lent multiple of p, so that no limb goes below zero), carried
/// only where a multiplication or a lent multiple needs it, and each result is
/// brought below 2p once at the end (`reduce_below_2p`). The bounds, in units of p:
/// the factors below 12p (`Fpx8::mul` takes up to 2^390), q0 below 8p, q1 below 10p,
/// xi q1 below 26p, the results before their reduction below 86p.
#[inline(always)]
fn square<O: LaneOps>(f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> (Fe<O>, Fe<O>) {
    let o = f.o;
    let mut sum = *x;
    for j in 0..8 {
        sum[j] = o.add(x[j], y[j]);
    }
    let sum = f.carry(sum);
    let (x2, y2) = (fp2_squares(f, x, &LENT_4P), fp2_squares(f, y, &LENT_4P));
    let sum2 = fp2_squares(f, &sum, &LENT_8P);
    // The Fp4 squares of e0, e1, e2: their "a" parts q0 = x2 + xi y2, their "b"
    // parts q1 = sum2 - x2 - y2 (+ 8p).
    let four_p = f.constant(&LENT_4P);
    let y2_swapped = permute(f, &y2, &y2, SWAP_PAIRS);
    let (mut q0, mut q1) = (x2, sum2);
    for j in 0..8 {
        let difference = o.sub(o.add(y2[j], four_p[j]), y2_swapped[j]);
        let xi_y2 = o.select(ODD, difference, o.add(y2[j], y2_swapped[j]));
        q0[j] = o.add(x2[j], xi_y2);
        let lifted = o.add(sum2[j], o.add(four_p[j], four_p[j]));
        q1[j] = o.sub(o.sub(lifted, x2[j]), y2[j]);
    }
    // Carried for its lent 16p (its limbs at most a carried value's).
    let q1 = f.carry(q1);
    let sixteen_p = f.constant(&LENT_16P);
    let q1_swapped = permute(f, &q1, &q1, SWAP_PAIRS);
    let mut xi_q1 = q1;
    for j in 0..8 {
        let difference = o.sub(o.add(q1[j], sixteen_p[j]), q1_swapped[j]);
        xi_q1[j] = o.select(ODD, difference, o.add(q1[j], q1_swapped[j]));
    }
    // Per Fp4 value of the result, the square it takes three times: e0 from e0^2,
    // e1 from s e2^2 = xi (e2^2's b part) + (e2^2's a part) s, e2 from e1^2.
    let a_parts = permute(f, &q0, &xi_q1, FIRST_SECOND_FIRST);
    let b_parts = permute(f, &q1, &q0, FIRST_SECOND_FIRST);
    // Then twice the conjugate of the value itself: - a + b s for e0 and e2,
    // a - b s for e1.
    let new_x = three_plus_twice(f, &a_parts, x, !MIDDLE);
    let new_y = three_plus_twice(f, &b_parts, y, MIDDLE);
    (new_x, new_y)
}

/// 3a + 2v, with v negated (as 4p - v) in the lanes of `negated`, for a unreduced
/// below 26p (limbs below 2^55) and v below 2p: below 86p, then reduced below 2p.
#[inline(always)]
fn three_plus_twice<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, v: &Fe<O>, negated: u8) -> Fe<O> {
    let o = f.o;
    let four_p = f.constant(&LENT_4P);
    let mut sum = *a;
    for j in 0..8 {
        let signed = o.select(negated, v[j], o.sub(four_p[j], v[j]));
        let triple = o.add(o.add(a[j], a[j]), a[j]);
        sum[j] = o.add(triple, o.add(signed, signed));
    }
    reduce_below_2p(f, f.carry(sum))
}

/// A carried value t below 2^10 p (the squaring's are below 86p) brought below 2p by
/// one subtraction of q p, for
/// q = floor(T C / 2^52), T its limb 7 and C = floor(2^52 / (P7 + 1)), P7 p's.
/// Write p = P7 2^364 + L, t = T 2^364 + W (L, W < 2^364) and T = m (P7 + 1) + s
/// (s <= P7): t - m p = m (2^364 - L) + s 2^364 + W is in [0, p + (m + 1) 2^364).
/// q is m, or m - 1 where T C / 2^52 falls below m, which needs s < T (P7 + 1) /
/// 2^52 < 1: s = 0, and t - m p < (m + 1) 2^364. Either way t - q p is in [0, 2p)
/// (m < 2^10, so (m + 1) 2^364 < p - 2^364).
#[inline(always)]
fn reduce_below_2p<O: LaneOps>(f: Fpx8<O>, t: Fe<O>) -> Fe<O> {
    let o = f.o;
    let zero = o.splat(0);
    let q = o.madd52hi(zero, t[7], o.splat(QUOTIENT_FACTOR));
    let mut out = t;
    for j in 0..8 {
        let p_limb = o.splat(fpx8::P[j]);
        out[j] = o.sub(out[j], o.madd52lo(zero, q, p_limb));
        // q P7 < 2^52: its high half is zero. Limbs may go below zero here; the
        // whole does not, and the carry is arithmetic.
        if j < 7 {
            out[j + 1] = o.sub(out[j + 1], o.madd52hi(zero, q, p_limb));
        }
    }
    f.carry(out)
}

/// The square of each Fp2 value (lane pairs) of z: (c0 + c1)(c0 - c1) in the even
/// lane, c0 (2 c1) in the odd one, from one 8-lane multiplication. `lent` is a
/// multiple of p at least twice z's bound (`lent_multiple_of_p`); each factor is
/// formed limb by limb and carried once.
#[inline(always)]
fn fp2_squares<O: LaneOps>(f: Fpx8<O>, z: &Fe<O>, lent: &Limbs) -> Fe<O> {
    let o = f.o;
    let swapped = permute(f, z, z, SWAP_PAIRS);
    let multiple = f.constant(lent);
    let (mut left, mut right) = (*z, *z);
    for j in 0..8 {
        left[j] = o.select(ODD, o.add(z[j], swapped[j]), swapped[j]);
        let difference = o.sub(o.add(z[j], multiple[j]), swapped[j]);
        right[j] = o.select(ODD, difference, o.add(z[j], z[j]));
    }
    f.mul(&f.carry(left), &f.carry(right))
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

/// `reduce_below_2p` of eight carried values (below 2^10 p), for the tests of its
/// bounds: each result as it is, carried, not made canonical.
struct ReduceBelow2p {
    values: [Limbs; 8],
}

impl Kernel for ReduceBelow2p {
    type Output = [Limbs; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Limbs; 8] {
        let f = Fpx8::new(o);
        f.unpack_raw(&reduce_below_2p(f, f.pack(&self.values)))
    }
}

/// The squaring's final reduction on the lane layer of `path` (tests only).
pub fn reduce_below_2p_on(path: Path, values: &[Limbs; 8]) -> Option<[Limbs; 8]> {
    dispatch::run_on(path, ReduceBelow2p { values: *values })
}
