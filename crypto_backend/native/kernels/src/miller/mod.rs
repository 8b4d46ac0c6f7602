//! The Miller loop of the optimal ate pairing on 8 lanes: pairs (P in G1, Q in G2,
//! both affine, neither the identity) in chunks of 8, one pair of each chunk per lane,
//! and one accumulated value per lane for the whole call: lane i ends with the
//! product of the Miller values of pair i of every chunk, so the loop's squarings
//! (about a third of its work for one chunk) are shared by all of its chunks. The
//! crate above multiplies the 8 lanes' values together and runs one shared final
//! exponentiation (blst's).
//!
//! Lines. The twist is E': y^2 = x^3 + 4 xi (xi = 1 + i, w^6 = xi), and
//! psi(x', y') = (x' w^-2, y' w^-3) maps it onto E: y^2 = x^3 + 4 over Fp12. A line
//! of slope lambda on E through psi(T') is lambda' w^-1 for the slope lambda' on the
//! twist, so at P = (xP, yP)
//!     yP - yT - lambda (xP - xT) = yP - lambda' xP w^-1 + (lambda' x' - y') w^-3,
//! and times w^3 (in Fp4, removed by the final exponentiation) it is
//!     (lambda' x' - y') + (-lambda' xP) v + (yP) v w,
//! the sparse shape `fp12x8::Line`. Its coefficients are also scaled by a nonzero
//! Fp2 factor (the denominators of lambda' in Jacobian coordinates), which the final
//! exponentiation removes too.
//!
//! The loop runs over |x| = 0xd201000000010000 (x < 0: the result is conjugated,
//! which after the final exponentiation is the inverse). T stays a multiple [k]Q
//! with 1 < k < r, so neither step meets an exceptional case for Q in G2. Inputs
//! are public: no constant-time need. An identity pair cannot pad a lane (the
//! formulas have no identity): a chunk with fewer than 8 pairs fills its other lanes
//! with copies of one of its pairs and marks them dead (`miller_product_of_pairs_on`),
//! and their lines are computed but never multiplied into the lane's value.

pub mod spread;

use crate::curve::jacobian::{self, Jacobian};
use crate::curve::X_ABS;
use crate::dispatch::{self, Kernel, Path};
use crate::field::fp12x8::{Fe12, Fp12x8, Line};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fp6x8::Fp6x8;
use crate::field::fpx8::{Fe, Fpx8};
use crate::field::stored::{load_fe, load_fe2, pack_fp, store_fe, store_fe2, unpack_fp};
pub use crate::field::stored::{Words, Words2, WordsPoint};
use crate::lane::LaneOps;
use crate::points::{Fp12Words, Fp2Words, G1Words, G2Words};

/// 1 in Fp12, in blst's form (its Montgomery one in the first coordinate).
pub const ONE_FP12: Fp12Words = [[[BLST_ONE, [0; 6]], [[0; 6]; 2], [[0; 6]; 2]], [[[0; 6]; 2]; 3]];
/// 2^384 mod p, blst's Montgomery one.
const BLST_ONE: [u64; 6] = [
    0x760900000002fffd,
    0xebf4000bc40c0002,
    0x5f48985753c758ba,
    0x77ce585370525745,
    0x5c071a97a256ec6d,
    0x15f65ec3fa80e493,
];

// -- conversions between blst's values and lanes -------------------------------------

#[inline(always)]
fn pack_fp2<O: LaneOps>(f: Fpx8<O>, lanes: &[Fp2Words; 8]) -> Fe2<O> {
    [pack_fp(f, &lanes.map(|e| e[0])), pack_fp(f, &lanes.map(|e| e[1]))]
}

#[inline(always)]
fn pack_fp12<O: LaneOps>(f: Fpx8<O>, lanes: &[Fp12Words; 8]) -> Fe12<O> {
    let mut out = [[[f.zero(); 2]; 3]; 2];
    for (half, slot) in out.iter_mut().enumerate() {
        for (index, coefficient) in slot.iter_mut().enumerate() {
            *coefficient = pack_fp2(f, &lanes.map(|e| e[half][index]));
        }
    }
    out
}

#[inline(always)]
fn unpack_fp12<O: LaneOps>(f: Fpx8<O>, a: &Fe12<O>) -> [Fp12Words; 8] {
    let mut out = [ONE_FP12; 8];
    for half in 0..2 {
        for index in 0..3 {
            for part in 0..2 {
                let values = unpack_fp(f, &a[half][index][part]);
                for lane in 0..8 {
                    out[lane][half][index][part] = values[lane];
                }
            }
        }
    }
    out
}

// -- the loop -------------------------------------------------------------------------

/// a * s for a in Fp2, s in Fp.
#[inline(always)]
fn mul_by_fp<O: LaneOps>(f2: Fp2x8<O>, a: &Fe2<O>, s: &Fe<O>) -> Fe2<O> {
    [f2.f.mul(&a[0], s), f2.f.mul(&a[1], s)]
}

/// 2T and the tangent at T, for T = (X, Y, Z) Jacobian: lambda' = 3X^2 / (2YZ), and
/// the line scaled by 2YZ^3: (3X^3 - 2Y^2) + (-3X^2 Z^2 xP) v + (2YZ^3 yP) v w
/// (2YZ is the doubled point's Z).
#[inline(always)]
fn doubling_step<O: LaneOps>(
    f2: Fp2x8<O>,
    t: &Jacobian<Fe2<O>>,
    xp: &Fe<O>,
    yp: &Fe<O>,
) -> (Jacobian<Fe2<O>>, Line<O>) {
    let (x, y, z) = t;
    let xx = f2.sqr(x);
    let yy = f2.sqr(y);
    let zz = f2.sqr(z);
    let doubled = jacobian::double(f2, t);
    let three_xx = f2.add(&f2.add(&xx, &xx), &xx);
    let l0 = f2.sub(&f2.mul(&three_xx, x), &f2.add(&yy, &yy));
    let l1 = mul_by_fp(f2, &f2.neg(&f2.mul(&three_xx, &zz)), xp);
    let l4 = mul_by_fp(f2, &f2.mul(&doubled.2, &zz), yp);
    (doubled, Line { l0, l1, l4 })
}

/// T + Q for affine Q = (xQ, yQ) and the line through them: lambda' = R / (ZH) with
/// H = xQ Z^2 - X, R = yQ Z^3 - Y, taken through Q and scaled by 2ZH (the sum's Z):
/// (2R xQ - 2ZH yQ) + (-2R xP) v + (2ZH yP) v w.
#[inline(always)]
fn addition_step<O: LaneOps>(
    f2: Fp2x8<O>,
    t: &Jacobian<Fe2<O>>,
    xq: &Fe2<O>,
    yq: &Fe2<O>,
    xp: &Fe<O>,
    yp: &Fe<O>,
) -> (Jacobian<Fe2<O>>, Line<O>) {
    let (_, y, z) = t;
    let zz = f2.sqr(z);
    let r = f2.sub(&f2.mul(&f2.mul(yq, z), &zz), y);
    let r2 = f2.add(&r, &r);
    // Never exceptional here (module comment): the flag is not needed.
    let (sum, _) = jacobian::add_affine(f2, t, xq, yq);
    let l0 = f2.sub(&f2.mul(&r2, xq), &f2.mul(yq, &sum.2));
    let l1 = mul_by_fp(f2, &f2.neg(&r2), xp);
    let l4 = mul_by_fp(f2, &sum.2, yp);
    (sum, Line { l0, l1, l4 })
}

// -- the loop as kernel steps ---------------------------------------------------------
//
// Each step is its own kernel (one compiled function per layer, entered through
// `dispatch::run_on`), with its state stored as plain lane words in between: the whole
// loop inlined into one function took the compiler over a quarter of an hour on the
// portable layer, whose every Fp multiplication unrolls to thousands of
// instructions. Loads and stores of the state cost little next to a step.

pub type Words12 = [[Words2; 3]; 2];

#[inline(always)]
fn store_fe12<O: LaneOps>(o: O, a: &Fe12<O>) -> Words12 {
    let mut out = [[[[[0u64; 8]; 8]; 2]; 3]; 2];
    for half in 0..2 {
        for index in 0..3 {
            out[half][index] = store_fe2(o, &a[half][index]);
        }
    }
    out
}

#[inline(always)]
fn load_fe12<O: LaneOps>(o: O, a: &Words12) -> Fe12<O> {
    let zero = [o.splat(0); 8];
    let mut out = [[[zero; 2]; 3]; 2];
    for half in 0..2 {
        for index in 0..3 {
            out[half][index] = load_fe2(o, &a[half][index]);
        }
    }
    out
}

#[inline(always)]
fn store_three<O: LaneOps>(o: O, a: &Fe2<O>, b: &Fe2<O>, c: &Fe2<O>) -> [Words2; 3] {
    [store_fe2(o, a), store_fe2(o, b), store_fe2(o, c)]
}

#[inline(always)]
fn f12_of<O: LaneOps>(o: O) -> Fp12x8<O> {
    Fp12x8::new(Fp6x8::new(Fp2x8::new(o)))
}

/// The 8 pairs in our Montgomery form: xP, yP, xQ, yQ.
pub(crate) struct Setup {
    pub(crate) ps: [G1Words; 8],
    pub(crate) qs: [G2Words; 8],
}

impl Kernel for Setup {
    type Output = (Words, Words, Words2, Words2);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f = Fpx8::new(o);
        let xp = pack_fp(f, &self.ps.map(|p| p.x));
        let yp = pack_fp(f, &self.ps.map(|p| p.y));
        let xq = pack_fp2(f, &self.qs.map(|q| q.x));
        let yq = pack_fp2(f, &self.qs.map(|q| q.y));
        (store_fe(o, &xp), store_fe(o, &yp), store_fe2(o, &xq), store_fe2(o, &yq))
    }
}

/// acc * line in the `live` lanes, acc unchanged in the others (the padding of a
/// partial chunk).
#[inline(always)]
fn times_line_where_live<O: LaneOps>(o: O, acc: &Fe12<O>, line: &Line<O>, live: u8) -> Fe12<O> {
    let product = f12_of(o).mul_by_line(acc, line);
    if live == 0xff {
        return product;
    }
    let f = Fpx8::new(o);
    let mut out = product;
    for half in 0..2 {
        for index in 0..3 {
            for part in 0..2 {
                let (kept, new) = (&acc[half][index][part], &product[half][index][part]);
                out[half][index][part] = f.select(live, kept, new);
            }
        }
    }
    out
}

/// One chunk's doubling step with its line multiplied into the accumulator: one
/// kernel, so that the line never goes through memory.
pub(crate) struct Doubling {
    pub(crate) acc: Words12,
    /// The lanes whose pair of this chunk counts; the others keep their value.
    pub(crate) live: u8,
    pub(crate) t: WordsPoint,
    pub(crate) xp: Words,
    pub(crate) yp: Words,
}

impl Kernel for Doubling {
    type Output = (Words12, WordsPoint);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f2 = Fp2x8::new(o);
        let t = (load_fe2(o, &self.t[0]), load_fe2(o, &self.t[1]), load_fe2(o, &self.t[2]));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (doubled, line) = doubling_step(f2, &t, &xp, &yp);
        let acc = times_line_where_live(o, &load_fe12(o, &self.acc), &line, self.live);
        (store_fe12(o, &acc), store_three(o, &doubled.0, &doubled.1, &doubled.2))
    }
}

/// One chunk's addition step with its line multiplied into the accumulator.
pub(crate) struct Addition {
    pub(crate) acc: Words12,
    /// The lanes whose pair of this chunk counts; the others keep their value.
    pub(crate) live: u8,
    pub(crate) t: WordsPoint,
    pub(crate) xq: Words2,
    pub(crate) yq: Words2,
    pub(crate) xp: Words,
    pub(crate) yp: Words,
}

impl Kernel for Addition {
    type Output = (Words12, WordsPoint);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f2 = Fp2x8::new(o);
        let t = (load_fe2(o, &self.t[0]), load_fe2(o, &self.t[1]), load_fe2(o, &self.t[2]));
        let (xq, yq) = (load_fe2(o, &self.xq), load_fe2(o, &self.yq));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (sum, line) = addition_step(f2, &t, &xq, &yq, &xp, &yp);
        let acc = times_line_where_live(o, &load_fe12(o, &self.acc), &line, self.live);
        (store_fe12(o, &acc), store_three(o, &sum.0, &sum.1, &sum.2))
    }
}

/// acc^2 (the loop's doubling of the accumulated value).
pub(crate) struct Square {
    pub(crate) acc: Words12,
}

impl Kernel for Square {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        let f12 = f12_of(o);
        store_fe12(o, &f12.sqr(&load_fe12(o, &self.acc)))
    }
}

/// a * b (the tests' hook; the loop multiplies by lines only).
struct Multiply {
    a: Words12,
    b: Words12,
}

impl Kernel for Multiply {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        let f12 = f12_of(o);
        store_fe12(o, &f12.mul(&load_fe12(o, &self.a), &load_fe12(o, &self.b)))
    }
}

/// blst values in: the stored words of 8 lanes.
pub(crate) struct Load {
    pub(crate) values: [Fp12Words; 8],
}

impl Kernel for Load {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        store_fe12(o, &pack_fp12(Fpx8::new(o), &self.values))
    }
}

/// The stored words of 8 lanes out as blst values, conjugated or not.
struct Unload {
    acc: Words12,
    conjugate: bool,
}

impl Kernel for Unload {
    type Output = [Fp12Words; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Fp12Words; 8] {
        let f12 = f12_of(o);
        let mut acc = load_fe12(o, &self.acc);
        if self.conjugate {
            acc = f12.conjugate(&acc);
        }
        unpack_fp12(Fpx8::new(o), &acc)
    }
}

/// The Miller values f_{x,Q}(P) of 8 pairs, in blst's form (before the final
/// exponentiation, conjugated for x < 0); None on `Path::Off` or without IFMA.
pub fn miller_loop_on(path: Path, ps: &[G1Words; 8], qs: &[G2Words; 8]) -> Option<[Fp12Words; 8]> {
    miller_product_on(path, std::slice::from_ref(ps), std::slice::from_ref(qs))
}

/// Per lane, the product over the chunks of the Miller values of the lane's pairs
/// (chunk c's pair i in lane i), in blst's form and conjugated as `miller_loop_on`'s;
/// None on `Path::Off` or without IFMA, and for no chunk.
pub fn miller_product_on(
    path: Path,
    ps: &[[G1Words; 8]],
    qs: &[[G2Words; 8]],
) -> Option<[Fp12Words; 8]> {
    miller_product_live_on(path, ps, qs, &vec![0xff; ps.len()])
}

/// Per lane, the product of the Miller values of any number of pairs taken in chunks
/// of 8 (pair j in lane j mod 8), as `miller_product_on`'s lanes: the last chunk's
/// missing lanes repeat its first pair and are dead (`miller_product_live_on`), so
/// the product of the 8 values is that of the pairs. None on `Path::Off` or without
/// IFMA, and for no pair.
pub fn miller_product_of_pairs_on(
    path: Path,
    ps: &[G1Words],
    qs: &[G2Words],
) -> Option<[Fp12Words; 8]> {
    assert_eq!(ps.len(), qs.len());
    let (mut chunk_ps, mut chunk_qs, mut live) = (vec![], vec![], vec![]);
    for (p_chunk, q_chunk) in ps.chunks(8).zip(qs.chunks(8)) {
        chunk_ps.push(std::array::from_fn(|lane| *p_chunk.get(lane).unwrap_or(&p_chunk[0])));
        chunk_qs.push(std::array::from_fn(|lane| *q_chunk.get(lane).unwrap_or(&q_chunk[0])));
        live.push((0xffu16 >> (8 - p_chunk.len())) as u8);
    }
    miller_product_live_on(path, &chunk_ps, &chunk_qs, &live)
}

/// `miller_product_on` where only the pairs of the lanes set in `live[c]` count in
/// chunk c (`live` has a mask per chunk): a dead lane's pair is run but contributes
/// nothing, so that a partial chunk can fill its other lanes with copies of one of its
/// pairs (never with the identity, which the formulas do not handle). A lane dead in
/// every chunk ends as 1.
fn miller_product_live_on(
    path: Path,
    ps: &[[G1Words; 8]],
    qs: &[[G2Words; 8]],
    live: &[u8],
) -> Option<[Fp12Words; 8]> {
    assert_eq!(ps.len(), qs.len());
    assert_eq!(ps.len(), live.len());
    if ps.is_empty() {
        return None;
    }
    let mut chunks = Vec::with_capacity(ps.len());
    for (chunk_ps, chunk_qs) in ps.iter().zip(qs) {
        chunks.push(dispatch::run_on(path, Setup { ps: *chunk_ps, qs: *chunk_qs })?);
    }
    let one = dispatch::run_on(path, Load { values: [ONE_FP12; 8] })?;
    let z_one = one[0][0];
    let mut ts: Vec<WordsPoint> = chunks.iter().map(|(_, _, xq, yq)| [*xq, *yq, z_one]).collect();
    let mut acc = one;
    // The top bit is T = Q itself; each lower bit squares once for every chunk,
    // doubles each chunk's T, and adds its Q where the bit is set (the first
    // squaring, of 1, is skipped).
    for bit in (0..63).rev() {
        if bit != 62 {
            acc = dispatch::run_on(path, Square { acc })?;
        }
        for (((xp, yp, _, _), t), &live) in chunks.iter().zip(ts.iter_mut()).zip(live) {
            let step = Doubling { acc, live, t: *t, xp: *xp, yp: *yp };
            (acc, *t) = dispatch::run_on(path, step)?;
        }
        if (X_ABS >> bit) & 1 == 1 {
            for (((xp, yp, xq, yq), t), &live) in chunks.iter().zip(ts.iter_mut()).zip(live) {
                let step = Addition { acc, live, t: *t, xq: *xq, yq: *yq, xp: *xp, yp: *yp };
                (acc, *t) = dispatch::run_on(path, step)?;
            }
        }
    }
    dispatch::run_on(path, Unload { acc, conjugate: true })
}

/// An Fp12 operation of the differential tests, on the loop's own kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp12Op {
    Mul,
    Sqr,
    Conjugate,
}

/// `op` on 8 lanes (`b` is read by `Mul` only); None on `Path::Off` or without IFMA.
pub fn fp12_op_on(
    path: Path,
    op: Fp12Op,
    a: &[Fp12Words; 8],
    b: &[Fp12Words; 8],
) -> Option<[Fp12Words; 8]> {
    let a = dispatch::run_on(path, Load { values: *a })?;
    let (acc, conjugate) = match op {
        Fp12Op::Mul => {
            let b = dispatch::run_on(path, Load { values: *b })?;
            (dispatch::run_on(path, Multiply { a, b })?, false)
        }
        Fp12Op::Sqr => (dispatch::run_on(path, Square { acc: a })?, false),
        Fp12Op::Conjugate => (a, true),
    };
    dispatch::run_on(path, Unload { acc, conjugate })
}
