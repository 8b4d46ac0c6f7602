//! The Miller loop of a few pairs (one to four: `verify`'s and
//! `fast_aggregate_verify`'s two) with the lanes holding the parts of one
//! computation: each kernel pass is eight independent Fp2 products, taken from
//! wherever the loop has them (the accumulator's squaring, both points' doublings,
//! the product of their lines), and everything between the products (sums,
//! differences, small multiples, times xi) is done here on single values, unreduced.
//! The pass moves its operands between one value a row and one limb a vector with
//! lane permutes (an 8x8 transpose each way). bls_suite's pairing sends it the
//! loops of two to four pairs, where it beats blst_miller_loop_n (docs/performance.md).
//! `miller_loop_checking_last` also answers whether the last pair's Q (a signature
//! decoded without its subgroup check) is in G2, from the loop's T, which ends as
//! [|z|]Q.
//!
//! The formulas and their lines are those of `miller` (the module above): the same
//! doubling and addition steps, the same sparse lines l0 + l1 v + l4 v w scaled by
//! the same Fp2 factors, which the final exponentiation removes. Two lines are first
//! multiplied together (8 products; their product has no w^0 v^0 part in h), then
//! into the accumulator (17 products); the accumulator's squaring is Karatsuba over
//! w with two Fp6 products (12), in the passes of the doublings' second round. A
//! doubling iteration of two pairs is 63 products in 9 passes.
//!
//! Values between passes are `Lazy`: signed 52-bit-radix limbs, not carried, with
//! an upper bound on the value in units of p, tracked through every operation (a
//! difference adds the subtrahend's bound times p to stay non-negative). A pass
//! takes coordinates below 32p (`Fp2x8::mul_wide_inputs`, asserted here) and
//! carries their limbs itself; its products come back below 2p. The accumulator and
//! the point are brought below 2p after each update (`reduce`), so that bounds never
//! grow across iterations. Inputs are public (verification): nothing here is
//! constant time.

use crate::curve::X_ABS;
use crate::decode::g2;
use crate::dispatch::{Kernel, Path, Runner};
use crate::field::fp2x8::Fp2x8;
use crate::field::fpx8::{self, Fe, Fpx8, Limbs};
use crate::field::stored::{pack_fp, unpack_fp};
use crate::lane::LaneOps;
use crate::points::{Fp12Words, FpWords, G1Words, G2Words};

/// Largest bound (in units of p) of a coordinate entering a pass.
const MAX_INPUT_BOUND: u64 = 32;

/// An Fp element: value = sum of limbs[j] 2^(52 j), in [0, bound p).
#[derive(Clone, Copy, Debug)]
struct Lazy {
    limbs: [i64; 8],
    bound: u64,
}

type Lazy2 = [Lazy; 2];
type Lazy6 = [Lazy2; 3];
type Lazy12 = [Lazy6; 2];

const P_LIMBS: [i64; 8] = {
    let mut out = [0i64; 8];
    let mut j = 0;
    while j < 8 {
        out[j] = fpx8::P[j] as i64;
        j += 1;
    }
    out
};

const ZERO: Lazy = Lazy { limbs: [0; 8], bound: 1 };
const ZERO2: Lazy2 = [ZERO, ZERO];

impl Lazy {
    /// A carried value below 2p (a pass's product, a converted input).
    fn below_2p(limbs: &Limbs) -> Lazy {
        Lazy { limbs: signed(limbs), bound: 2 }
    }

    fn add(&self, b: &Lazy) -> Lazy {
        Lazy {
            limbs: std::array::from_fn(|j| self.limbs[j] + b.limbs[j]),
            bound: self.bound + b.bound,
        }
    }

    /// self - b + (b's bound) p: non-negative.
    fn sub(&self, b: &Lazy) -> Lazy {
        let lift = b.bound as i64;
        Lazy {
            limbs: std::array::from_fn(|j| self.limbs[j] - b.limbs[j] + lift * P_LIMBS[j]),
            bound: self.bound + b.bound,
        }
    }

    fn neg(&self) -> Lazy {
        ZERO.sub(self)
    }

    fn times(&self, k: u64) -> Lazy {
        let mut limbs = self.limbs;
        for limb in limbs.iter_mut() {
            *limb *= k as i64;
        }
        Lazy { limbs, bound: self.bound * k }
    }

    /// The same element below 2p with carried limbs: the carries, then q p off for
    /// q = floor(T / (P7 + 1)), T the carried limb 7 and P7 p's. q <= the value / p
    /// (p < (P7 + 1) 2^364), and the value / p < (T + 1) / P7, so q is short of it
    /// by less than (T + P7 + 1) / (P7 (P7 + 1)) + 1 < 2 (T < 2^26 here, P7 > 2^16):
    /// what is left is below 2p.
    fn reduce(&self) -> Lazy {
        let limbs = carried(self.limbs);
        let q = limbs[7] / (P_LIMBS[7] + 1);
        if q == 0 {
            return Lazy { limbs, bound: 2 };
        }
        Lazy { limbs: carried(std::array::from_fn(|j| limbs[j] - q * P_LIMBS[j])), bound: 2 }
    }
}

/// Limbs as the lane words carry them (two's complement).
#[inline(always)]
fn unsigned(limbs: &[i64; 8]) -> [u64; 8] {
    let mut out = [0u64; 8];
    for (word, limb) in out.iter_mut().zip(limbs) {
        *word = *limb as u64;
    }
    out
}

#[inline(always)]
fn signed(words: &[u64; 8]) -> [i64; 8] {
    let mut out = [0i64; 8];
    for (limb, word) in out.iter_mut().zip(words) {
        *limb = *word as i64;
    }
    out
}

/// Limbs 0..6 in [0, 2^52), limb 7 the rest (negative only for a negative whole).
fn carried(mut limbs: [i64; 8]) -> [i64; 8] {
    for j in 0..7 {
        limbs[j + 1] += limbs[j] >> 52;
        limbs[j] &= (1i64 << 52) - 1;
    }
    limbs
}

fn add2(a: &Lazy2, b: &Lazy2) -> Lazy2 {
    [a[0].add(&b[0]), a[1].add(&b[1])]
}

fn sub2(a: &Lazy2, b: &Lazy2) -> Lazy2 {
    [a[0].sub(&b[0]), a[1].sub(&b[1])]
}

fn times2(a: &Lazy2, k: u64) -> Lazy2 {
    [a[0].times(k), a[1].times(k)]
}

/// a * xi, xi = 1 + i: (a0 - a1) + (a0 + a1) i.
fn times_xi(a: &Lazy2) -> Lazy2 {
    [a[0].sub(&a[1]), a[0].add(&a[1])]
}

fn reduce2(a: &Lazy2) -> Lazy2 {
    [a[0].reduce(), a[1].reduce()]
}

fn reduce12(a: &mut Lazy12) {
    for half in a.iter_mut() {
        for coefficient in half.iter_mut() {
            for part in coefficient.iter_mut() {
                *part = part.reduce();
            }
        }
    }
}

fn add6(a: &Lazy6, b: &Lazy6) -> Lazy6 {
    std::array::from_fn(|k| add2(&a[k], &b[k]))
}

/// a * v: (xi a2, a0, a1).
fn times_v(a: &Lazy6) -> Lazy6 {
    [times_xi(&a[2]), a[0], a[1]]
}

// -- passes -----------------------------------------------------------------------

/// The operands of up to eight Fp2 products, `[coordinate][lane]` each one value's
/// eight limbs (signed, not carried; lanes not asked for hold what an earlier pass
/// left), and the products the same way (carried, below 2p). The kernel moves them
/// between this layout and its limb-major one with lane permutes (`transpose`).
struct PassWords {
    a: [[[u64; 8]; 8]; 2],
    b: [[[u64; 8]; 8]; 2],
    product: [[[u64; 8]; 8]; 2],
}

/// One pass: `words.product` = `words.a` * `words.b`, lane by lane. By reference,
/// so that the 3 KB of words are not copied through the dispatch.
struct Products<'a> {
    words: &'a mut PassWords,
}

impl Kernel for Products<'_> {
    type Output = ();

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) {
        let f2 = Fp2x8::new(o);
        let f = f2.f;
        let words = self.words;
        let a = [lanes_in(f, &words.a[0]), lanes_in(f, &words.a[1])];
        let b = [lanes_in(f, &words.b[0]), lanes_in(f, &words.b[1])];
        let product = f2.mul_wide_inputs(&a, &b);
        words.product = [lanes_out(o, &product[0]), lanes_out(o, &product[1])];
    }
}

/// Eight values (one a row) as one carried 8-lane element.
#[inline(always)]
fn lanes_in<O: LaneOps>(f: Fpx8<O>, rows: &[[u64; 8]; 8]) -> Fe<O> {
    let o = f.o;
    let mut vectors = [o.splat(0); 8];
    for (vector, row) in vectors.iter_mut().zip(rows) {
        *vector = o.load(row);
    }
    f.carry(transpose(o, &vectors))
}

/// One 8-lane element as eight values, one a row. A loop, not `map`: a closure's body
/// would not be compiled with the kernel's target features.
#[inline(always)]
fn lanes_out<O: LaneOps>(o: O, a: &Fe<O>) -> [[u64; 8]; 8] {
    let mut rows = [[0u64; 8]; 8];
    for (row, vector) in rows.iter_mut().zip(transpose(o, a)) {
        *row = o.store(vector);
    }
    rows
}

/// The 8x8 transpose of 64-bit words (row i, column j to row j, column i), in three
/// rounds of eight two-source permutes: 2x2 blocks, then 4x4, then 8x8.
#[inline(always)]
fn transpose<O: LaneOps>(o: O, r: &[O::V; 8]) -> [O::V; 8] {
    const EVEN_1: [u64; 8] = [0, 8, 2, 10, 4, 12, 6, 14];
    const ODD_1: [u64; 8] = [1, 9, 3, 11, 5, 13, 7, 15];
    const EVEN_2: [u64; 8] = [0, 1, 8, 9, 4, 5, 12, 13];
    const ODD_2: [u64; 8] = [2, 3, 10, 11, 6, 7, 14, 15];
    const EVEN_4: [u64; 8] = [0, 1, 2, 3, 8, 9, 10, 11];
    const ODD_4: [u64; 8] = [4, 5, 6, 7, 12, 13, 14, 15];
    let mut t = *r;
    for pair in 0..4 {
        let (x, y) = (r[2 * pair], r[2 * pair + 1]);
        t[2 * pair] = o.permute2(x, y, EVEN_1);
        t[2 * pair + 1] = o.permute2(x, y, ODD_1);
    }
    // u[half][k]: rows 4 half .. 4 half + 3, columns k and k + 4 (k = 0, 2 from the
    // even words of round 1, 1, 3 from the odd ones).
    let mut u = [[o.splat(0); 4]; 2];
    for (half, columns) in u.iter_mut().enumerate() {
        let base = 4 * half;
        columns[0] = o.permute2(t[base], t[base + 2], EVEN_2);
        columns[2] = o.permute2(t[base], t[base + 2], ODD_2);
        columns[1] = o.permute2(t[base + 1], t[base + 3], EVEN_2);
        columns[3] = o.permute2(t[base + 1], t[base + 3], ODD_2);
    }
    let mut out = *r;
    for k in 0..4 {
        out[k] = o.permute2(u[0][k], u[1][k], EVEN_4);
        out[k + 4] = o.permute2(u[0][k], u[1][k], ODD_4);
    }
    out
}

/// Eight elements in blst's words to ours (carried, below 2p).
struct FromBlst {
    words: [FpWords; 8],
}

impl Kernel for FromBlst {
    type Output = [Limbs; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f = Fpx8::new(o);
        f.unpack_raw(&pack_fp(f, &self.words))
    }
}

/// Eight elements below 2p (carried) to blst's words, canonical.
struct ToBlst {
    limbs: [Limbs; 8],
}

impl Kernel for ToBlst {
    type Output = [FpWords; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f = Fpx8::new(o);
        unpack_fp(f, &f.pack(&self.limbs))
    }
}

/// Fp2 products gathered eight to a pass: each operand pair is written straight
/// into the pass's words, and a full pass runs at once.
struct Batch<'r, R: Runner> {
    runner: &'r mut R,
    words: PassWords,
    filled: usize,
    results: Vec<Lazy2>,
    /// Buffers handed back (`recycle`), so that a round allocates nothing.
    spare: Vec<Vec<Lazy2>>,
    failed: bool,
}

impl<'r, R: Runner> Batch<'r, R> {
    fn new(runner: &'r mut R) -> Self {
        Batch {
            runner,
            words: PassWords {
                a: [[[0; 8]; 8]; 2],
                b: [[[0; 8]; 8]; 2],
                product: [[[0; 8]; 8]; 2],
            },
            filled: 0,
            results: Vec::with_capacity(24),
            spare: Vec::new(),
            failed: false,
        }
    }

    /// Ask for x * y; the products come back from `take` in the order asked. Inlined
    /// (the pass is not), so that an operand is computed straight into the words.
    #[inline(always)]
    fn push(&mut self, x: &Lazy2, y: &Lazy2) {
        let lane = self.filled;
        for part in 0..2 {
            assert!(
                x[part].bound <= MAX_INPUT_BOUND && y[part].bound <= MAX_INPUT_BOUND,
                "a pass input above {MAX_INPUT_BOUND}p"
            );
            self.words.a[part][lane] = unsigned(&x[part].limbs);
            self.words.b[part][lane] = unsigned(&y[part].limbs);
        }
        self.filled += 1;
        if self.filled == 8 {
            self.flush();
        }
    }

    /// `push` for each pair, in order (the point steps' few products a round).
    fn push_all(&mut self, pairs: &[(&Lazy2, &Lazy2)]) {
        for (x, y) in pairs {
            self.push(x, y);
        }
    }

    /// Run the pass (lanes beyond `filled` multiply what an earlier pass left there,
    /// and their products are not read).
    #[inline(never)]
    fn flush(&mut self) {
        let filled = std::mem::take(&mut self.filled);
        if filled == 0 || self.failed {
            return;
        }
        if self.runner.run(Products { words: &mut self.words }).is_none() {
            self.failed = true;
            return;
        }
        let [real, imaginary] = &self.words.product;
        for (c0, c1) in real.iter().zip(imaginary).take(filled) {
            let coordinate = |limbs: &[u64; 8]| Lazy { limbs: signed(limbs), bound: 2 };
            self.results.push([coordinate(c0), coordinate(c1)]);
        }
    }

    /// Every product asked for since the last `take`; None where the layer is not
    /// there.
    fn take(&mut self) -> Option<Vec<Lazy2>> {
        self.flush();
        let fresh = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(24));
        let results = std::mem::replace(&mut self.results, fresh);
        (!self.failed).then_some(results)
    }

    /// A buffer from `take`, done with: the next `take` reuses it.
    fn recycle(&mut self, mut spent: Vec<Lazy2>) {
        spent.clear();
        self.spare.push(spent);
    }
}

fn from_blst<R: Runner>(runner: &mut R, words: &[FpWords]) -> Option<Vec<Lazy>> {
    let mut out = Vec::with_capacity(words.len());
    for chunk in words.chunks(8) {
        let mut lanes = [[0u64; 6]; 8];
        lanes[..chunk.len()].copy_from_slice(chunk);
        let limbs = runner.run(FromBlst { words: lanes })?;
        out.extend(limbs[..chunk.len()].iter().map(Lazy::below_2p));
    }
    Some(out)
}

fn to_blst<R: Runner>(runner: &mut R, values: &[Lazy]) -> Option<Vec<FpWords>> {
    let mut out = Vec::with_capacity(values.len());
    for chunk in values.chunks(8) {
        let mut lanes = [[0u64; 8]; 8];
        for (lane, value) in chunk.iter().enumerate() {
            lanes[lane] = unsigned(&value.reduce().limbs);
        }
        let words = runner.run(ToBlst { limbs: lanes })?;
        out.extend_from_slice(&words[..chunk.len()]);
    }
    Some(out)
}

// -- Fp6 and Fp12 products as lists of Fp2 products --------------------------------

/// The six Karatsuba products of a * b in Fp6 (`fp6_from`'s inputs).
fn fp6_products<R: Runner>(a: &Lazy6, b: &Lazy6, out: &mut Batch<'_, R>) {
    out.push(&a[0], &b[0]);
    out.push(&a[1], &b[1]);
    out.push(&a[2], &b[2]);
    out.push(&add2(&a[0], &a[1]), &add2(&b[0], &b[1]));
    out.push(&add2(&a[1], &a[2]), &add2(&b[1], &b[2]));
    out.push(&add2(&a[0], &a[2]), &add2(&b[0], &b[2]));
}

/// a * b from `fp6_products`' six products t0, t1, t2, m01, m12, m02:
/// (t0 + xi (m12 - t1 - t2), m01 - t0 - t1 + xi t2, m02 - t0 - t2 + t1).
fn fp6_from(p: &[Lazy2]) -> Lazy6 {
    let [t0, t1, t2, m01, m12, m02] = [&p[0], &p[1], &p[2], &p[3], &p[4], &p[5]];
    [
        add2(t0, &times_xi(&sub2(&sub2(m12, t1), t2))),
        add2(&sub2(&sub2(m01, t0), t1), &times_xi(t2)),
        add2(&sub2(&sub2(m02, t0), t2), t1),
    ]
}

/// The five products of a * b in Fp6 for b = (0, b1, b2): a1b1, a2b2, (a0 + a1)b1,
/// (a1 + a2)(b1 + b2), (a0 + a2)b2.
fn fp6_products_b0_zero<R: Runner>(a: &Lazy6, b: &Lazy6, out: &mut Batch<'_, R>) {
    out.push(&a[1], &b[1]);
    out.push(&a[2], &b[2]);
    out.push(&add2(&a[0], &a[1]), &b[1]);
    out.push(&add2(&a[1], &a[2]), &add2(&b[1], &b[2]));
    out.push(&add2(&a[0], &a[2]), &b[2]);
}

/// `fp6_from` with t0 = 0.
fn fp6_from_b0_zero(p: &[Lazy2]) -> Lazy6 {
    let [t1, t2, m01, m12, m02] = [&p[0], &p[1], &p[2], &p[3], &p[4]];
    [
        times_xi(&sub2(&sub2(m12, t1), t2)),
        add2(&sub2(m01, t1), &times_xi(t2)),
        add2(&sub2(m02, t2), t1),
    ]
}

/// The 17 products of f * m for m with m.h0 = 0 (a product of two lines, or a line).
fn times_sparse_products<R: Runner>(f: &Lazy12, m: &Lazy12, out: &mut Batch<'_, R>) {
    fp6_products(&f[0], &m[0], out);
    fp6_products_b0_zero(&f[1], &m[1], out);
    fp6_products(&add6(&f[0], &f[1]), &add6(&m[0], &m[1]), out);
}

/// f * m from `times_sparse_products`' 17: (G Mg + v H Mh) + ((G + H)(Mg + Mh) -
/// G Mg - H Mh) w.
fn times_sparse_from(p: &[Lazy2]) -> Lazy12 {
    let gm = fp6_from(&p[0..6]);
    let hm = fp6_from_b0_zero(&p[6..11]);
    let sum = fp6_from(&p[11..17]);
    let c0 = add6(&gm, &times_v(&hm));
    let c1: Lazy6 = std::array::from_fn(|k| sub2(&sub2(&sum[k], &gm[k]), &hm[k]));
    [c0, c1]
}

/// The 12 products of f^2: g h and (g + h)(g + v h).
fn square_products<R: Runner>(f: &Lazy12, out: &mut Batch<'_, R>) {
    let [g, h] = f;
    fp6_products(g, h, out);
    fp6_products(&add6(g, h), &add6(g, &times_v(h)), out);
}

/// f^2 from `square_products`' 12: ((g + h)(g + v h) - g h - v g h) + 2 g h w.
fn square_from(p: &[Lazy2]) -> Lazy12 {
    let gh = fp6_from(&p[0..6]);
    let s = fp6_from(&p[6..12]);
    let v_gh = times_v(&gh);
    let c0: Lazy6 = std::array::from_fn(|k| sub2(&sub2(&s[k], &gh[k]), &v_gh[k]));
    let c1: Lazy6 = std::array::from_fn(|k| times2(&gh[k], 2));
    [c0, c1]
}

/// A line l0 + l1 v + l4 v w as an Fp12 value (g = (l0, l1, 0), h = (0, l4, 0)).
#[derive(Clone, Copy)]
struct Line {
    l0: Lazy2,
    l1: Lazy2,
    l4: Lazy2,
}

impl Line {
    fn as_fp12(&self) -> Lazy12 {
        [[self.l0, self.l1, ZERO2], [ZERO2, self.l4, ZERO2]]
    }
}

/// The 8 products of two lines' product: with a = (a0, a1), b1 of the first and
/// c = (c0, c1), d1 of the second: a0c0, a1c1, (a0 + a1)(c0 + c1), b1d1, a0d1, b1c0,
/// a1d1, b1c1.
fn lines_products<R: Runner>(x: &Line, y: &Line, out: &mut Batch<'_, R>) {
    out.push(&x.l0, &y.l0);
    out.push(&x.l1, &y.l1);
    out.push(&add2(&x.l0, &x.l1), &add2(&y.l0, &y.l1));
    out.push(&x.l4, &y.l4);
    out.push(&x.l0, &y.l4);
    out.push(&x.l4, &y.l0);
    out.push(&x.l1, &y.l4);
    out.push(&x.l4, &y.l1);
}

/// The two lines' product from `lines_products`' 8: g = (a0c0 + xi b1d1,
/// a0c1 + a1c0, a1c1), h = (0, a0d1 + b1c0, a1d1 + b1c1).
fn lines_from(p: &[Lazy2]) -> Lazy12 {
    let [a0c0, a1c1, sum, b1d1, a0d1, b1c0, a1d1, b1c1] =
        [&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7]];
    [
        [add2(a0c0, &times_xi(b1d1)), sub2(&sub2(sum, a0c0), a1c1), *a1c1],
        [ZERO2, add2(a0d1, b1c0), add2(a1d1, b1c1)],
    ]
}

/// Lines paired into values with h0 = 0: two lines' product, or the last one alone.
fn line_values<R: Runner>(batch: &mut Batch<'_, R>, lines: &[Line]) -> Option<Vec<Lazy12>> {
    for pair in lines.chunks_exact(2) {
        lines_products(&pair[0], &pair[1], batch);
    }
    let results = batch.take()?;
    let mut values: Vec<Lazy12> = results.chunks_exact(8).map(lines_from).collect();
    batch.recycle(results);
    if lines.len() % 2 == 1 {
        values.push(lines[lines.len() - 1].as_fp12());
    }
    Some(values)
}

/// f times each value (h0 = 0), one after another, f reduced after each.
fn times_values<R: Runner>(
    batch: &mut Batch<'_, R>,
    f: &mut Lazy12,
    values: &[Lazy12],
) -> Option<()> {
    for value in values {
        times_sparse_products(f, value, batch);
        let products = batch.take()?;
        *f = times_sparse_from(&products);
        batch.recycle(products);
        reduce12(f);
    }
    Some(())
}

// -- the steps ----------------------------------------------------------------------

/// A Jacobian point on the twist, each coordinate below 2p.
type Point = [Lazy2; 3];

/// A pair's G1 side: xP, yP and -xP as Fp2 values with zero c1 (for a pass).
struct G1Side {
    x_neg: Lazy2,
    y: Lazy2,
}

/// 2T and the tangent's line for every pair (`miller::doubling_step`'s formulas), in
/// three rounds of products.
fn doubling<R: Runner>(
    batch: &mut Batch<'_, R>,
    ts: &[Point],
    sides: &[G1Side],
    square: Option<&Lazy12>,
) -> Option<(Vec<Point>, Vec<Line>, Option<Lazy12>)> {
    for [x, y, z] in ts {
        batch.push_all(&[(x, x), (y, y), (z, z), (y, z)]);
    }
    let first = batch.take()?;
    let mut partial = Vec::with_capacity(ts.len());
    for ([x, _, _], r) in ts.iter().zip(first.chunks_exact(4)) {
        let [xx, yy, zz, yz] = [&r[0], &r[1], &r[2], &r[3]];
        let e = times2(xx, 3);
        let z3 = times2(yz, 2);
        batch.push_all(&[(x, yy), (&e, &e), (yy, yy), (&e, x), (&e, zz), (&z3, zz)]);
        partial.push((e, z3, *yy));
    }
    batch.recycle(first);
    // The accumulator's squaring (which needs only the accumulator) shares these
    // passes: 6 products a pair and 12 fill the second round's passes better than
    // either alone (24 in 3 passes for two pairs, where they took 2 and 2).
    if let Some(f) = square {
        square_products(f, batch);
    }
    let second = batch.take()?;
    let squared = square.map(|_| {
        let mut squared = square_from(&second[6 * ts.len()..]);
        reduce12(&mut squared);
        squared
    });
    let mut after_second = Vec::with_capacity(ts.len());
    for (((e, z3, yy), r), side) in partial.iter().zip(second.chunks_exact(6)).zip(sides) {
        let [x_yy, ee, c, ex, ezz, z3zz] = [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]];
        let d = times2(x_yy, 4);
        let x3 = sub2(ee, &times2(&d, 2));
        batch.push_all(&[(e, &sub2(&d, &x3)), (ezz, &side.x_neg), (z3zz, &side.y)]);
        let l0 = sub2(ex, &times2(yy, 2));
        after_second.push((x3, *c, l0, *z3));
    }
    batch.recycle(second);
    let third = batch.take()?;
    let mut points = Vec::with_capacity(ts.len());
    let mut lines = Vec::with_capacity(ts.len());
    for ((x3, c, l0, z3), r) in after_second.iter().zip(third.chunks_exact(3)) {
        let y3 = sub2(&r[0], &times2(c, 8));
        points.push([reduce2(x3), reduce2(&y3), reduce2(z3)]);
        lines.push(Line { l0: *l0, l1: r[1], l4: r[2] });
    }
    batch.recycle(third);
    Some((points, lines, squared))
}

/// T + Q and the line through them for every pair (`miller::addition_step`'s
/// formulas), in five rounds of products.
fn addition<R: Runner>(
    batch: &mut Batch<'_, R>,
    ts: &[Point],
    qs: &[[Lazy2; 2]],
    sides: &[G1Side],
) -> Option<(Vec<Point>, Vec<Line>)> {
    let count = ts.len();
    for ([_, _, z], [_, yq]) in ts.iter().zip(qs) {
        batch.push_all(&[(z, z), (yq, z)]);
    }
    let first = batch.take()?;
    for (r, [xq, _]) in first.chunks_exact(2).zip(qs) {
        let [zz, yq_z] = [&r[0], &r[1]];
        batch.push_all(&[(xq, zz), (yq_z, zz)]);
    }
    let second = batch.take()?;
    let mut state = Vec::with_capacity(count);
    for ((([x, y, z], r), zz), ([xq, _], side)) in
        ts.iter().zip(second.chunks_exact(2)).zip(first.iter().step_by(2)).zip(qs.iter().zip(sides))
    {
        let [u2, s2] = [&r[0], &r[1]];
        let h = sub2(u2, x);
        let rr = times2(&sub2(s2, y), 2);
        let z_plus_h = add2(z, &h);
        batch.push_all(&[
            (&h, &h),
            (&z_plus_h, &z_plus_h),
            (&rr, &rr),
            (&rr, xq),
            (&rr, &side.x_neg),
        ]);
        state.push((h, rr, *zz));
    }
    batch.recycle(first);
    batch.recycle(second);
    let third = batch.take()?;
    let mut after_third = Vec::with_capacity(count);
    for ((([x, _, _], (h, rr, zz)), r), ([_, yq], side)) in
        ts.iter().zip(&state).zip(third.chunks_exact(5)).zip(qs.iter().zip(sides))
    {
        let [hh, z_plus_h_sq, r_sq, r_xq, l1] = [&r[0], &r[1], &r[2], &r[3], &r[4]];
        let i = times2(hh, 4);
        let z3 = sub2(&sub2(z_plus_h_sq, zz), hh);
        batch.push_all(&[(h, &i), (x, &i), (yq, &z3), (&z3, &side.y)]);
        after_third.push((*r_sq, *r_xq, *l1, z3, *rr));
    }
    batch.recycle(third);
    let fourth = batch.take()?;
    let mut after_fourth = Vec::with_capacity(count);
    for (([_, y, _], (r_sq, r_xq, l1, z3, rr)), r) in
        ts.iter().zip(&after_third).zip(fourth.chunks_exact(4))
    {
        let [j, v, yq_z3, l4] = [&r[0], &r[1], &r[2], &r[3]];
        let x3 = sub2(&sub2(r_sq, j), &times2(v, 2));
        batch.push_all(&[(rr, &sub2(v, &x3)), (y, j)]);
        let l0 = sub2(r_xq, yq_z3);
        after_fourth.push((x3, *z3, Line { l0, l1: *l1, l4: *l4 }));
    }
    batch.recycle(fourth);
    let fifth = batch.take()?;
    let mut points = Vec::with_capacity(count);
    let mut lines = Vec::with_capacity(count);
    for ((x3, z3, line), r) in after_fourth.iter().zip(fifth.chunks_exact(2)) {
        let y3 = sub2(&r[0], &times2(&r[1], 2));
        points.push([reduce2(x3), reduce2(&y3), reduce2(z3)]);
        lines.push(*line);
    }
    batch.recycle(fifth);
    Some((points, lines))
}

/// Most pairs this route takes (the 8-lane Miller kernel is for more).
pub const MAX_PAIRS: usize = 4;

/// prod_i f_{Q_i}(P_i) (conjugated for x < 0), in blst's form: the same value as
/// blst_miller_loop_n after the final exponentiation. Pairs: 1 to `MAX_PAIRS`,
/// neither point the identity, Q in G2. None for `Path::Off` or a layer not there.
pub fn miller_loop_on<R: Runner>(
    runner: &mut R,
    ps: &[G1Words],
    qs: &[G2Words],
) -> Option<Fp12Words> {
    let state = run_loop(runner, ps, qs)?;
    in_blst_form(runner, &state.f)
}

/// `miller_loop_on` for pairs whose last Q is only known to be on the curve (a
/// signature decoded without its subgroup check), with whether that Q is in G2:
/// psi(Q) == [z]Q (Scott's test, the one the decode kernels run), read off the loop,
/// whose T ends as [|z|]Q. The steps' formulas are exact but where T + Q or 2T would
/// be the identity (T = Q, T = -Q, or a point of order two), which can happen only
/// for a Q outside G2: there they give Z = 0, every later step keeps it, and a zero
/// Z fails the test. So a non-zero Z means every step was the group operation, and
/// the test is exactly Scott's. The Miller value is meaningless where the answer is
/// false.
pub fn miller_loop_checking_last_on<R: Runner>(
    runner: &mut R,
    ps: &[G1Words],
    qs: &[G2Words],
) -> Option<(Fp12Words, bool)> {
    let state = run_loop(runner, ps, qs)?;
    let last = ps.len() - 1;
    let in_g2 = psi_is_z_times(runner, &state.affine_qs[last], &state.ts[last])?;
    Some((in_blst_form(runner, &state.f)?, in_g2))
}

/// What the loop leaves: the accumulator, each pair's T (= [|z|]Q) and Q.
struct LoopState {
    f: Lazy12,
    ts: Vec<Point>,
    affine_qs: Vec<[Lazy2; 2]>,
}

fn run_loop<R: Runner>(runner: &mut R, ps: &[G1Words], qs: &[G2Words]) -> Option<LoopState> {
    assert!(!ps.is_empty() && ps.len() <= MAX_PAIRS && ps.len() == qs.len());
    let mut words = Vec::with_capacity(6 * ps.len());
    for (p, q) in ps.iter().zip(qs) {
        words.extend_from_slice(&[p.x, p.y, q.x[0], q.x[1], q.y[0], q.y[1]]);
    }
    let ours = from_blst(runner, &words)?;
    let mut sides = Vec::with_capacity(ps.len());
    let mut affine_qs = Vec::with_capacity(ps.len());
    let mut ts = Vec::with_capacity(ps.len());
    let one = Lazy::below_2p(&fpx8::ONE);
    for v in ours.chunks_exact(6) {
        sides.push(G1Side { x_neg: [v[0].neg(), ZERO], y: [v[1], ZERO] });
        let (xq, yq) = ([v[2], v[3]], [v[4], v[5]]);
        affine_qs.push([xq, yq]);
        ts.push([xq, yq, [one, ZERO]]);
    }
    let mut batch = Batch::new(runner);
    // The first iteration's f^2 is 1: f starts as its lines' product.
    let mut f: Lazy12 = [[[one, ZERO], ZERO2, ZERO2], [ZERO2; 3]];
    for bit in (0..63).rev() {
        let first = bit == 62;
        let (doubled, lines, squared) =
            doubling(&mut batch, &ts, &sides, if first { None } else { Some(&f) })?;
        ts = doubled;
        let values = line_values(&mut batch, &lines)?;
        match squared {
            Some(squared) => {
                f = squared;
                times_values(&mut batch, &mut f, &values)?;
            }
            None => {
                f = values[0];
                reduce12(&mut f);
                times_values(&mut batch, &mut f, &values[1..])?;
            }
        }
        if (X_ABS >> bit) & 1 == 1 {
            let (sum, lines) = addition(&mut batch, &ts, &affine_qs, &sides)?;
            ts = sum;
            let values = line_values(&mut batch, &lines)?;
            times_values(&mut batch, &mut f, &values)?;
        }
    }
    Some(LoopState { f, ts, affine_qs })
}

/// The accumulator in blst's words; x < 0: the conjugate, g - h w.
fn in_blst_form<R: Runner>(runner: &mut R, f: &Lazy12) -> Option<Fp12Words> {
    let [g, h] = f;
    let h: Lazy6 = h.map(|c| [c[0].neg(), c[1].neg()]);
    let coefficients: Vec<Lazy> =
        [*g, h].iter().flat_map(|half| half.iter().flat_map(|c| c.iter().copied())).collect();
    let words = to_blst(runner, &coefficients)?;
    let mut out = [[[[0u64; 6]; 2]; 3]; 2];
    for (index, value) in words.iter().enumerate() {
        out[index / 6][(index / 2) % 3][index % 2] = *value;
    }
    Some(out)
}

/// psi(Q) == -T for T = (X, Y, Z) Jacobian, with Z != 0: X == psi_x Z^2 and
/// -Y == psi_y Z^3, psi(x, y) = (conj(x) PSI_X, conj(y) PSI_Y) (`decode::g2`).
fn psi_is_z_times<R: Runner>(runner: &mut R, q: &[Lazy2; 2], t: &Point) -> Option<bool> {
    let constant = |limbs: &Limbs| Lazy { limbs: signed(limbs), bound: 1 };
    let psi_x_factor = [ZERO, constant(&g2::PSI_X_C1)];
    let psi_y_factor = [constant(&g2::PSI_Y_C0), constant(&g2::PSI_Y_C1)];
    let conjugate = |a: &Lazy2| [a[0], a[1].neg()];
    let [x, y, z] = t;
    let mut batch = Batch::new(runner);
    batch.push(&conjugate(&q[0]), &psi_x_factor);
    batch.push(&conjugate(&q[1]), &psi_y_factor);
    batch.push(z, z);
    let first = batch.take()?;
    let [psi_x, psi_y, zz] = [&first[0], &first[1], &first[2]];
    batch.push(psi_x, zz);
    batch.push(zz, z);
    let second = batch.take()?;
    batch.push(psi_y, &second[1]);
    let third = batch.take()?;
    // Both differences and Z, canonical: the first two must be zero, Z must not.
    let x_difference = sub2(x, &second[0]);
    let y_sum = add2(y, &third[0]);
    let values = [x_difference[0], x_difference[1], y_sum[0], y_sum[1], z[0], z[1]];
    let words = to_blst(runner, &values)?;
    let zero = |value: &FpWords| value.iter().all(|word| *word == 0);
    Some(words[..4].iter().all(zero) && !(zero(&words[4]) && zero(&words[5])))
}

/// `miller_loop_on` on the layer of `path`.
pub fn miller_loop(path: Path, ps: &[G1Words], qs: &[G2Words]) -> Option<Fp12Words> {
    if path == Path::Off {
        return None;
    }
    miller_loop_on(&mut { path }, ps, qs)
}

/// `miller_loop_checking_last_on` on the layer of `path`.
pub fn miller_loop_checking_last(
    path: Path,
    ps: &[G1Words],
    qs: &[G2Words],
) -> Option<(Fp12Words, bool)> {
    if path == Path::Off {
        return None;
    }
    miller_loop_checking_last_on(&mut { path }, ps, qs)
}
