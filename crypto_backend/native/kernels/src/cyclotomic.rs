//! Squarings of one Fp12 element of the cyclotomic subgroup (the values of a final
//! exponentiation's hard part), and its products by a fixed value (`ProductFactors`),
//! spread across the lanes: a single pairing check has one such value, not eight, so
//! here the lanes hold the parts of one computation. `CyclotomicPowX` runs a whole
//! exponentiation by the curve's x in one kernel entry.
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
//! only multiples of p (the lifts of the differences) reduced below 2p, or zero
//! after a product: zero in the field, never read back.

use crate::curve::X_ABS;
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
        let (mut x, mut y) = spread(f, &self.value);
        for _ in 0..self.count {
            (x, y) = square(f, &x, &y);
        }
        gather(f, &x, &y)
    }
}

/// `value`^|x| for `value` in the cyclotomic subgroup, x the curve's parameter
/// (|x| = `X_ABS`), in blst's words, canonical: the 62 squarings and 5 products of
/// its bits in one kernel entry, each product by `value` through `ProductFactors`.
pub struct CyclotomicPowX {
    pub value: Fp12Words,
}

impl Kernel for CyclotomicPowX {
    type Output = Fp12Words;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Fp12Words {
        let f = Fpx8::new(o);
        let (base_x, base_y) = spread(f, &self.value);
        let factors = ProductFactors::of(f, &base_x, &base_y);
        let (mut x, mut y) = (base_x, base_y);
        for bit in (0..X_ABS_TOP_BIT).rev() {
            (x, y) = square(f, &x, &y);
            if (X_ABS >> bit) & 1 == 1 {
                (x, y) = factors.multiply(f, &x, &y);
            }
        }
        gather(f, &x, &y)
    }
}

/// The product of two Fp12 values (any, not only the subgroup's) on the layout of
/// the module comment: for the tests of `ProductFactors`.
pub struct Fp12Product {
    pub a: Fp12Words,
    pub b: Fp12Words,
}

impl Kernel for Fp12Product {
    type Output = Fp12Words;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Fp12Words {
        let f = Fpx8::new(o);
        let (a_x, a_y) = spread(f, &self.a);
        let (b_x, b_y) = spread(f, &self.b);
        let (x, y) = ProductFactors::of(f, &b_x, &b_y).multiply(f, &a_x, &a_y);
        gather(f, &x, &y)
    }
}

/// The highest set bit of |x|: the chain starts from the value itself there.
const X_ABS_TOP_BIT: u32 = 63 - X_ABS.leading_zeros();

/// A value in blst's words on the layout of the module comment (X, Y), in our form.
#[inline(always)]
fn spread<O: LaneOps>(f: Fpx8<O>, value: &Fp12Words) -> (Fe<O>, Fe<O>) {
    let [g, h] = value;
    let zero: FpWords = [0; 6];
    let x_lanes = [g[0][0], g[0][1], h[0][0], h[0][1], g[1][0], g[1][1], zero, zero];
    let y_lanes = [h[1][0], h[1][1], g[2][0], g[2][1], h[2][0], h[2][1], zero, zero];
    (pack_fp(f, &x_lanes), pack_fp(f, &y_lanes))
}

/// `spread`'s inverse: blst's words, canonical.
#[inline(always)]
fn gather<O: LaneOps>(f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> Fp12Words {
    let (x, y) = (unpack_fp(f, x), unpack_fp(f, y));
    [[[x[0], x[1]], [x[4], x[5]], [y[2], y[3]]], [[x[2], x[3]], [y[0], y[1]], [y[4], y[5]]]]
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
    let xi_y2 = times_xi_unreduced(f, &y2, &LENT_4P);
    let (mut q0, mut q1) = (x2, sum2);
    for j in 0..8 {
        q0[j] = o.add(x2[j], xi_y2[j]);
        let lifted = o.add(sum2[j], o.add(four_p[j], four_p[j]));
        q1[j] = o.sub(o.sub(lifted, x2[j]), y2[j]);
    }
    // Carried for its lent 16p (its limbs at most a carried value's).
    let q1 = f.carry(q1);
    let xi_q1 = times_xi_unreduced(f, &q1, &LENT_16P);
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

/// The product by a fixed Fp12 value g on the layout of the module comment. For
/// f = e0 + e1 w + e2 w^2 (e_k = a_k + b_k s: a_k in X's slot k, b_k in Y's) and g's
/// e'_j = c_j + d_j s, with w^3 = s and s (a + b s) = xi b + a s:
///
///   (f g)_k = sum_j R_j[k] e'_j,   R_j[k] = e_{k-j}, or s e_{k-j+3} where k < j.
///
/// Put U_j[k] = a_{k-j} (b_{k-j+3} where k < j) and V_j[k] = b_{k-j} (a_{k-j+3}
/// where k < j), lane permutations of (X, Y) (`SOURCES`); moving each xi onto g's
/// side, slot by slot:
///
///   a parts: sum_j U_j c'_j + V_j (xi d_j),   c'_j = c_j, or xi c_j where k < j;
///   b parts: sum_j U_j d'_j + V_j c_j,        d'_j = d_j, or xi d_j where k < j.
///
/// Twelve Fp2 products by factors of g alone, built once (`of`). An Fp2 product
/// u k of lane pairs is u0 (k0, k1) + u1 (-k1, k0) lane by lane: two 8-lane
/// products, of u's halves each copied into both lanes of its pair, by the two
/// forms of k kept here. Each part's twelve products are summed unreduced and
/// reduced once: for factors below 2p the sum is below 48p^2 < pR (so the result is
/// below 2p, as `Fpx8::mul`'s) and its column sums below 2^61. Lanes 6 and 7 of
/// the factors are zero or multiples of p, so the results' are too.
pub(crate) struct ProductFactors<O: LaneOps> {
    /// By source (`SOURCES`), then by half (the even halves' factor, the odd's).
    a_parts: [[Fe<O>; 2]; 6],
    b_parts: [[Fe<O>; 2]; 6],
}

/// U_0, V_0, U_1, V_1, U_2, V_2 of `ProductFactors` as lanes of (X, Y) (Y's are 8 to
/// 15); lanes 6 and 7 keep X's.
const SOURCES: [[u64; 8]; 6] = [
    [0, 1, 2, 3, 4, 5, 6, 7],
    [8, 9, 10, 11, 12, 13, 6, 7],
    [12, 13, 0, 1, 2, 3, 6, 7],
    [4, 5, 8, 9, 10, 11, 6, 7],
    [10, 11, 12, 13, 0, 1, 6, 7],
    [2, 3, 4, 5, 8, 9, 6, 7],
];

/// Each source's even lanes (its c0 halves) copied into both lanes of their pair,
/// then its odd lanes (c1).
const HALVES: [[[u64; 8]; 2]; 6] = {
    let mut out = [[[0u64; 8]; 2]; 6];
    let mut source = 0;
    while source < 6 {
        let mut lane = 0;
        while lane < 8 {
            out[source][0][lane] = SOURCES[source][lane & !1];
            out[source][1][lane] = SOURCES[source][lane | 1];
            lane += 1;
        }
        source += 1;
    }
    out
};

/// The lanes of the slots below j (where R_j wraps), for j = 0, 1, 2.
const WRAPPED: [u8; 3] = [0, 0b0000_0011, 0b0000_1111];

impl<O: LaneOps> ProductFactors<O> {
    /// The factors of the product by g = (x, y) on the layout (below 2p, carried).
    #[inline(always)]
    pub(crate) fn of(f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> Self {
        // Functions, not closures: a closure is compiled without the kernel's
        // target features.
        let zero = f.zero();
        let mut a_parts = [[zero; 2]; 6];
        let mut b_parts = [[zero; 2]; 6];
        for j in 0..3 {
            let slot = 2 * j as u64;
            let broadcast = [slot, slot + 1, slot, slot + 1, slot, slot + 1, 8, 8];
            let c = permute(f, x, &zero, broadcast);
            let d = permute(f, y, &zero, broadcast);
            let (xi_c, xi_d) = (times_xi(f, &c), times_xi(f, &d));
            let c_wrapped = f.select(WRAPPED[j], &c, &xi_c);
            let d_wrapped = f.select(WRAPPED[j], &d, &xi_d);
            a_parts[2 * j] = both_forms(f, c_wrapped);
            a_parts[2 * j + 1] = both_forms(f, xi_d);
            b_parts[2 * j] = both_forms(f, d_wrapped);
            b_parts[2 * j + 1] = both_forms(f, c);
        }
        ProductFactors { a_parts, b_parts }
    }

    /// (x, y) times g, for x, y below 2p (carried): below 2p, carried.
    #[inline(always)]
    pub(crate) fn multiply(&self, f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> (Fe<O>, Fe<O>) {
        let o = f.o;
        let mut a_sum = [o.splat(0); 16];
        let mut b_sum = [o.splat(0); 16];
        for (source, halves) in HALVES.iter().enumerate() {
            for (half, index) in halves.iter().enumerate() {
                let factor = permute(f, x, y, *index);
                f.add_product(&mut a_sum, &factor, &self.a_parts[source][half]);
                f.add_product(&mut b_sum, &factor, &self.b_parts[source][half]);
            }
        }
        (f.montgomery_reduce(a_sum), f.montgomery_reduce(b_sum))
    }
}

/// xi v for each Fp2 value (lane pairs) of a carried v, not reduced: (v0 - v1 +
/// lent, v0 + v1), `lent` a lent multiple of p at least twice v's bound
/// (`lent_multiple_of_p`), so that no limb goes below zero.
#[inline(always)]
fn times_xi_unreduced<O: LaneOps>(f: Fpx8<O>, v: &Fe<O>, lent: &Limbs) -> Fe<O> {
    let o = f.o;
    let swapped = permute(f, v, v, SWAP_PAIRS);
    let multiple = f.constant(lent);
    let mut out = *v;
    for j in 0..8 {
        let difference = o.sub(o.add(v[j], multiple[j]), swapped[j]);
        out[j] = o.select(ODD, difference, o.add(v[j], swapped[j]));
    }
    out
}

/// xi k for each Fp2 value (lane pairs) of k: (k0 - k1, k0 + k1), reduced.
#[inline(always)]
fn times_xi<O: LaneOps>(f: Fpx8<O>, k: &Fe<O>) -> Fe<O> {
    let swapped = permute(f, k, k, SWAP_PAIRS);
    f.select(ODD, &f.sub(k, &swapped), &f.add(k, &swapped))
}

/// k, and (-k1, k0) in each lane pair: the factors of u0 and of u1 in u k.
#[inline(always)]
fn both_forms<O: LaneOps>(f: Fpx8<O>, k: Fe<O>) -> [Fe<O>; 2] {
    let swapped = permute(f, &k, &k, SWAP_PAIRS);
    [k, f.select(ODD, &f.neg(&swapped), &swapped)]
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

/// `value`^|x| on the lane layer of `path` (see `CyclotomicPowX`); None on
/// `Path::Off` or without IFMA. `value` must be in the cyclotomic subgroup.
pub fn pow_x_on(path: Path, value: &Fp12Words) -> Option<Fp12Words> {
    dispatch::run_on(path, CyclotomicPowX { value: *value })
}

/// a b for any Fp12 values on the lane layer of `path` (tests of the product).
pub fn product_on(path: Path, a: &Fp12Words, b: &Fp12Words) -> Option<Fp12Words> {
    dispatch::run_on(path, Fp12Product { a: *a, b: *b })
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
