//! The Miller loop of the optimal ate pairing on 8 lanes: 8 pairs (P in G1, Q in G2,
//! both affine, neither the identity) per kernel pass, one per lane, and the product
//! of many pairs' Miller values with one shared final exponentiation (blst's).
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
//! are public: no constant-time need. Pairs beyond whole chunks of 8 go to blst's
//! own Miller loop (an identity pair cannot pad a lane: the formulas have no
//! identity), and every chunk's 8 values are multiplied together with blst_fp12_mul.

use crate::curve::{self, G1Affine, G2Affine};
use crate::fp12x8::{Fe12, Fp12x8, Line};
use crate::fp2x8::{Fe2, Fp2x8};
use crate::fp6x8::Fp6x8;
use crate::fp8::{self, Fe, Fp8, Limbs};
use crate::jacobian::{self, Jacobian};
use crate::lane::LaneOps;
use crate::simd::{self, Kernel, Path};
use blst::{
    blst_fp, blst_fp12, blst_fp12_mul, blst_fp2, blst_fp6, blst_miller_loop_n,
};
use std::sync::atomic::{AtomicU64, Ordering};

/// 1 in Fp12, in blst's form (its Montgomery one in the first coordinate).
const ONE_FP12: blst_fp12 = blst_fp12 {
    fp6: [
        blst_fp6 {
            fp2: [
                blst_fp2 { fp: [blst_fp { l: BLST_ONE }, blst_fp { l: [0; 6] }] },
                blst_fp2 { fp: [blst_fp { l: [0; 6] }; 2] },
                blst_fp2 { fp: [blst_fp { l: [0; 6] }; 2] },
            ],
        },
        blst_fp6 { fp2: [blst_fp2 { fp: [blst_fp { l: [0; 6] }; 2] }; 3] },
    ],
};
/// 2^384 mod p, blst's Montgomery one.
const BLST_ONE: [u64; 6] = [
    0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba,
    0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493,
];

/// |x| for the BLS12-381 parameter x = -0xd201000000010000.
const X_ABS: u64 = 0xd201000000010000;

/// Kernel passes run (tests check that a path went through the lanes).
pub static PASSES: AtomicU64 = AtomicU64::new(0);

// -- conversions between blst's values and lanes -------------------------------------

#[inline(always)]
pub fn pack_fp<O: LaneOps>(f: Fp8<O>, lanes: &[blst_fp; 8]) -> Fe<O> {
    let limbs: [Limbs; 8] = std::array::from_fn(|lane| fp8::limbs_from_words(&lanes[lane].l));
    f.blst_to_ours(&f.pack(&limbs))
}

#[inline(always)]
pub fn pack_fp2<O: LaneOps>(f: Fp8<O>, lanes: &[blst_fp2; 8]) -> Fe2<O> {
    [pack_fp(f, &lanes.map(|e| e.fp[0])), pack_fp(f, &lanes.map(|e| e.fp[1]))]
}

#[inline(always)]
pub fn pack_fp12<O: LaneOps>(f: Fp8<O>, lanes: &[blst_fp12; 8]) -> Fe12<O> {
    let mut out = [[[f.zero(); 2]; 3]; 2];
    for (half, slot) in out.iter_mut().enumerate() {
        for (index, coefficient) in slot.iter_mut().enumerate() {
            *coefficient = pack_fp2(f, &lanes.map(|e| e.fp6[half].fp2[index]));
        }
    }
    out
}

#[inline(always)]
fn unpack_fp<O: LaneOps>(f: Fp8<O>, a: &Fe<O>) -> [blst_fp; 8] {
    let limbs = f.unpack(&f.to_blst_form(a));
    limbs.map(|element| blst_fp { l: fp8::words_from_limbs(&element) })
}

#[inline(always)]
pub fn unpack_fp12<O: LaneOps>(f: Fp8<O>, a: &Fe12<O>) -> [blst_fp12; 8] {
    let mut out = [blst_fp12::default(); 8];
    for half in 0..2 {
        for index in 0..3 {
            for part in 0..2 {
                let values = unpack_fp(f, &a[half][index][part]);
                for lane in 0..8 {
                    out[lane].fp6[half].fp2[index].fp[part] = values[lane];
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
// `simd::run_on`), with its state stored as plain lane words in between: the whole
// loop inlined into one function took the compiler over a quarter of an hour on the
// portable layer, whose every Fp multiplication unrolls to thousands of
// instructions. Loads and stores of the state cost little next to a step.

/// One 8-lane Fp element as stored words: `[limb][lane]`.
type Words = [[u64; 8]; 8];
type Words2 = [Words; 2];
type Words12 = [[Words2; 3]; 2];
type WordsPoint = [Words2; 3];
type WordsLine = [Words2; 3];

#[inline(always)]
fn store_fe<O: LaneOps>(o: O, a: &Fe<O>) -> Words {
    let mut out = [[0u64; 8]; 8];
    for limb in 0..8 {
        out[limb] = o.store(a[limb]);
    }
    out
}

#[inline(always)]
fn load_fe<O: LaneOps>(o: O, a: &Words) -> Fe<O> {
    let mut out = [o.splat(0); 8];
    for limb in 0..8 {
        out[limb] = o.load(&a[limb]);
    }
    out
}

#[inline(always)]
fn store_fe2<O: LaneOps>(o: O, a: &Fe2<O>) -> Words2 {
    [store_fe(o, &a[0]), store_fe(o, &a[1])]
}

#[inline(always)]
fn load_fe2<O: LaneOps>(o: O, a: &Words2) -> Fe2<O> {
    [load_fe(o, &a[0]), load_fe(o, &a[1])]
}

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
fn store_line<O: LaneOps>(o: O, line: &Line<O>) -> WordsLine {
    store_three(o, &line.l0, &line.l1, &line.l4)
}

#[inline(always)]
fn load_line<O: LaneOps>(o: O, line: &WordsLine) -> Line<O> {
    Line { l0: load_fe2(o, &line[0]), l1: load_fe2(o, &line[1]), l4: load_fe2(o, &line[2]) }
}

#[inline(always)]
fn f12_of<O: LaneOps>(o: O) -> Fp12x8<O> {
    Fp12x8::new(Fp6x8::new(Fp2x8::new(o)))
}

/// The 8 pairs in our Montgomery form: xP, yP, xQ, yQ.
struct Setup {
    ps: [G1Affine; 8],
    qs: [G2Affine; 8],
}

impl Kernel for Setup {
    type Output = (Words, Words, Words2, Words2);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f = Fp8::new(o);
        let xp = pack_fp(f, &self.ps.map(|p| p.x));
        let yp = pack_fp(f, &self.ps.map(|p| p.y));
        let xq = pack_fp2(f, &self.qs.map(|q| q.x));
        let yq = pack_fp2(f, &self.qs.map(|q| q.y));
        (store_fe(o, &xp), store_fe(o, &yp), store_fe2(o, &xq), store_fe2(o, &yq))
    }
}

struct Doubling {
    t: WordsPoint,
    xp: Words,
    yp: Words,
}

impl Kernel for Doubling {
    type Output = (WordsPoint, WordsLine);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f2 = Fp2x8::new(o);
        let t = (load_fe2(o, &self.t[0]), load_fe2(o, &self.t[1]), load_fe2(o, &self.t[2]));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (doubled, line) = doubling_step(f2, &t, &xp, &yp);
        (store_three(o, &doubled.0, &doubled.1, &doubled.2), store_line(o, &line))
    }
}

struct Addition {
    t: WordsPoint,
    xq: Words2,
    yq: Words2,
    xp: Words,
    yp: Words,
}

impl Kernel for Addition {
    type Output = (WordsPoint, WordsLine);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f2 = Fp2x8::new(o);
        let t = (load_fe2(o, &self.t[0]), load_fe2(o, &self.t[1]), load_fe2(o, &self.t[2]));
        let (xq, yq) = (load_fe2(o, &self.xq), load_fe2(o, &self.yq));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (sum, line) = addition_step(f2, &t, &xq, &yq, &xp, &yp);
        (store_three(o, &sum.0, &sum.1, &sum.2), store_line(o, &line))
    }
}

/// acc^2 (the loop's doubling of the accumulated value).
pub(crate) struct Square {
    pub acc: Words12,
}

impl Kernel for Square {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        let f12 = f12_of(o);
        store_fe12(o, &f12.sqr(&load_fe12(o, &self.acc)))
    }
}

/// acc * line.
struct TimesLine {
    acc: Words12,
    line: WordsLine,
}

impl Kernel for TimesLine {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        let f12 = f12_of(o);
        let acc = load_fe12(o, &self.acc);
        store_fe12(o, &f12.mul_by_line(&acc, &load_line(o, &self.line)))
    }
}

/// a * b (the tests' hook; the loop multiplies by lines only).
pub(crate) struct Multiply {
    pub a: Words12,
    pub b: Words12,
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
    pub values: [blst_fp12; 8],
}

impl Kernel for Load {
    type Output = Words12;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Words12 {
        store_fe12(o, &pack_fp12(Fp8::new(o), &self.values))
    }
}

/// The stored words of 8 lanes out as blst values, conjugated or not.
pub(crate) struct Unload {
    pub acc: Words12,
    pub conjugate: bool,
}

impl Kernel for Unload {
    type Output = [blst_fp12; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [blst_fp12; 8] {
        let f12 = f12_of(o);
        let mut acc = load_fe12(o, &self.acc);
        if self.conjugate {
            acc = f12.conjugate(&acc);
        }
        unpack_fp12(Fp8::new(o), &acc)
    }
}

/// The Miller values f_{x,Q}(P) of 8 pairs, in blst's form (before the final
/// exponentiation, conjugated for x < 0); None on `Path::Off` or without IFMA.
pub fn miller_loop_on(path: Path, ps: &[G1Affine; 8], qs: &[G2Affine; 8]) -> Option<[blst_fp12; 8]> {
    let (xp, yp, xq, yq) = simd::run_on(path, Setup { ps: *ps, qs: *qs })?;
    let one = simd::run_on(path, Load { values: [ONE_FP12; 8] })?;
    let z_one = one[0][0];
    let mut t: WordsPoint = [xq, yq, z_one];
    let mut acc = one;
    // The top bit is T = Q itself; each lower bit squares, doubles, and adds Q where
    // it is set (the first squaring, of 1, is skipped).
    for bit in (0..63).rev() {
        if bit != 62 {
            acc = simd::run_on(path, Square { acc })?;
        }
        let (doubled, line) = simd::run_on(path, Doubling { t, xp, yp })?;
        acc = simd::run_on(path, TimesLine { acc, line })?;
        t = doubled;
        if (X_ABS >> bit) & 1 == 1 {
            let (sum, line) = simd::run_on(path, Addition { t, xq, yq, xp, yp })?;
            acc = simd::run_on(path, TimesLine { acc, line })?;
            t = sum;
        }
    }
    simd::run_on(path, Unload { acc, conjugate: true })
}

/// prod_i f_{Q_i}(P_i) before the final exponentiation: whole chunks of 8 through the
/// lane kernels of `path`, the rest (and everything on `Path::Off`, or with fewer
/// than 8 pairs) through blst_miller_loop_n exactly as before. A pair with an
/// identity point (which callers leave out, as blst's raw loop needs) never goes to
/// the lanes, whose formulas have no identity.
pub fn miller_product_on(ps: &[&G1Affine], qs: &[&G2Affine], path: Path) -> blst_fp12 {
    assert_eq!(ps.len(), qs.len());
    if path == Path::Off || ps.len() < 8 {
        return blst_miller_product(ps, qs);
    }
    let (mut lane_ps, mut lane_qs, mut rest_ps, mut rest_qs) = (vec![], vec![], vec![], vec![]);
    for (p, q) in ps.iter().zip(qs) {
        if !curve::g1_affine_is_identity(p) && !curve::g2_affine_is_identity(q) {
            lane_ps.push(**p);
            lane_qs.push(**q);
        } else {
            rest_ps.push(*p as *const G1Affine);
            rest_qs.push(*q as *const G2Affine);
        }
    }
    // The lanes take whole chunks of 8 only.
    let whole = lane_ps.len() / 8 * 8;
    for (p, q) in lane_ps[whole..].iter().zip(&lane_qs[whole..]) {
        rest_ps.push(p as *const G1Affine);
        rest_qs.push(q as *const G2Affine);
    }
    let mut product = ONE_FP12;
    for start in (0..whole).step_by(8) {
        let chunk_ps: &[G1Affine; 8] = lane_ps[start..start + 8].try_into().expect("8 pairs");
        let chunk_qs: &[G2Affine; 8] = lane_qs[start..start + 8].try_into().expect("8 pairs");
        let Some(values) = miller_loop_on(path, chunk_ps, chunk_qs) else {
            return miller_product_on(ps, qs, Path::Off);
        };
        PASSES.fetch_add(1, Ordering::Relaxed);
        for value in &values {
            let so_far = product;
            // SAFETY: live fp12 values in, one out (a separate local).
            unsafe { blst_fp12_mul(&mut product, &so_far, value) };
        }
    }
    if !rest_ps.is_empty() {
        let mut value = blst_fp12::default();
        // SAFETY: both pointer arrays hold `rest_ps.len()` pointers to live points
        // (into `ps`, `qs` or `lane_ps`, `lane_qs`, alive until the end); `value` is
        // fully written before it is read.
        unsafe {
            blst_miller_loop_n(&mut value, rest_qs.as_ptr(), rest_ps.as_ptr(), rest_ps.len());
            if whole == 0 {
                return value;
            }
            let so_far = product;
            blst_fp12_mul(&mut product, &so_far, &value);
        }
    }
    product
}

/// blst_miller_loop_n of all the pairs: the blst path, unchanged.
fn blst_miller_product(ps: &[&G1Affine], qs: &[&G2Affine]) -> blst_fp12 {
    let ps: Vec<*const G1Affine> = ps.iter().map(|p| *p as *const _).collect();
    let qs: Vec<*const G2Affine> = qs.iter().map(|q| *q as *const _).collect();
    let mut value = blst_fp12::default();
    // SAFETY: both pointer arrays hold `ps.len()` pointers to live points; `value` is
    // fully written before it is read.
    unsafe { blst_miller_loop_n(&mut value, qs.as_ptr(), ps.as_ptr(), ps.len()) };
    value
}

/// `miller_product_on` on the path of this process's dispatch.
pub fn miller_product(ps: &[&G1Affine], qs: &[&G2Affine]) -> blst_fp12 {
    miller_product_on(ps, qs, simd::current())
}
