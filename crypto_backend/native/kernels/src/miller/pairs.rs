//! The Miller loop of pairs taken two at a time, spread across the lanes: a single
//! pairing check (`verify`: e(pk, H(m)) against e(g1, sig)) has two pairs, not
//! eight, so the lanes hold the Fp2 values of both pairs' loops side by side
//! (`field::fp2pairs`: pair k's value in lanes 2k, 2k + 1, repeated in lanes 4-7),
//! and each Fp2 product of the two loops is one 8-lane multiplication.
//!
//! The loop, its steps and its lines are the 8-lane loop's (`miller`, written once
//! over `Fp2Ops`); each pair keeps its own accumulated value, in its lanes, and
//! several chunks of two pairs share one accumulator per pair, as chunks of eight
//! share one per lane there. The crate above multiplies the two values together.

use super::{addition_step, doubling_step};
use crate::curve::X_ABS;
use crate::dispatch::{self, Kernel, Path};
use crate::field::fp12x8::{Fe12, Fp12x8};
use crate::field::fp2pairs::Fp2Pairs;
use crate::field::fp6x8::Fp6x8;
use crate::field::fpx8::{Fe, Fpx8, Multiplicative};
use crate::field::stored::{load_fe, pack_fp, store_fe, unpack_fp, Words};
use crate::lane::LaneOps;
use crate::points::{Fp12Words, FpWords, G1Words, G2Words};

/// An Fp12 value of each pair, stored: its twelve Fp2 coefficients, each one vector.
type Words12 = [[Words; 3]; 2];
/// A Jacobian point of each pair, stored.
type WordsPoint = [Words; 3];

#[inline(always)]
fn f12_of<O: LaneOps>(o: O) -> Fp12x8<Fp2Pairs<O>> {
    Fp12x8::new(Fp6x8::new(Fp2Pairs::new(o)))
}

#[inline(always)]
fn store_fe12<O: LaneOps>(o: O, a: &Fe12<Fp2Pairs<O>>) -> Words12 {
    a.map(|half| half.map(|coefficient| store_fe(o, &coefficient)))
}

#[inline(always)]
fn load_fe12<O: LaneOps>(o: O, a: &Words12) -> Fe12<Fp2Pairs<O>> {
    a.map(|half| half.map(|coefficient| load_fe(o, &coefficient)))
}

/// The lanes of one Fp2 coefficient of both pairs (module comment), from blst's words.
#[inline(always)]
fn fp2_lanes(values: [[FpWords; 2]; 2]) -> [FpWords; 8] {
    let [[a0, a1], [b0, b1]] = values;
    [a0, a1, b0, b1, a0, a1, b0, b1]
}

/// Both pairs in our Montgomery form: xP, yP as scalars, xQ, yQ as Fp2 values.
struct Setup {
    ps: [G1Words; 2],
    qs: [G2Words; 2],
}

impl Kernel for Setup {
    type Output = [Words; 4];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Words; 4] {
        let f = Fpx8::new(o);
        let [p0, p1] = self.ps;
        let [q0, q1] = self.qs;
        let scalar =
            |s0: FpWords, s1: FpWords| store_fe(o, &pack_fp(f, &[s0, s0, s1, s1, s0, s0, s1, s1]));
        let fp2 = |values| store_fe(o, &pack_fp(f, &fp2_lanes(values)));
        [scalar(p0.x, p1.x), scalar(p0.y, p1.y), fp2([q0.x, q1.x]), fp2([q0.y, q1.y])]
    }
}

/// One chunk's doubling step with its line multiplied into the accumulator, after
/// squaring the accumulator first where `square` says so (the first chunk of each
/// bit but the top one): one kernel, so that neither goes through memory.
struct Doubling {
    acc: Words12,
    square: bool,
    t: WordsPoint,
    xp: Words,
    yp: Words,
}

impl Kernel for Doubling {
    type Output = (Words12, WordsPoint);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f12 = f12_of(o);
        let mut acc = load_fe12(o, &self.acc);
        if self.square {
            acc = f12.sqr(&acc);
        }
        let t = (load_fe(o, &self.t[0]), load_fe(o, &self.t[1]), load_fe(o, &self.t[2]));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (doubled, line) = doubling_step(f12.f6.f2, &t, &xp, &yp);
        let acc = f12.mul_by_line(&acc, &line);
        (store_fe12(o, &acc), [doubled.0, doubled.1, doubled.2].map(|c| store_fe(o, &c)))
    }
}

/// One chunk's addition step with its line multiplied into the accumulator.
struct Addition {
    acc: Words12,
    t: WordsPoint,
    xq: Words,
    yq: Words,
    xp: Words,
    yp: Words,
}

impl Kernel for Addition {
    type Output = (Words12, WordsPoint);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f12 = f12_of(o);
        let t = (load_fe(o, &self.t[0]), load_fe(o, &self.t[1]), load_fe(o, &self.t[2]));
        let (xq, yq) = (load_fe(o, &self.xq), load_fe(o, &self.yq));
        let (xp, yp) = (load_fe(o, &self.xp), load_fe(o, &self.yp));
        let (sum, line) = addition_step(f12.f6.f2, &t, &xq, &yq, &xp, &yp);
        let acc = f12.mul_by_line(&load_fe12(o, &self.acc), &line);
        (store_fe12(o, &acc), [sum.0, sum.1, sum.2].map(|c| store_fe(o, &c)))
    }
}

/// The accumulators' start, 1 for both pairs, and Z = 1 of a point.
struct Ones;

impl Kernel for Ones {
    type Output = (Words12, Words);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        let f2 = Fp2Pairs::new(o);
        let (one, zero) = (f2.one(), f2.f.zero());
        let acc = [[one, zero, zero], [zero; 3]];
        (store_fe12(o, &acc), store_fe(o, &one))
    }
}

/// The two accumulated values out as blst values, conjugated (x < 0).
struct Unload {
    acc: Words12,
}

impl Kernel for Unload {
    type Output = [Fp12Words; 2];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Fp12Words; 2] {
        let f12 = f12_of(o);
        let acc = f12.conjugate(&load_fe12(o, &self.acc));
        let f = Fpx8::new(o);
        let lanes: [[[FpWords; 8]; 3]; 2] =
            acc.map(|half| half.map(|coefficient: Fe<O>| unpack_fp(f, &coefficient)));
        std::array::from_fn(|pair| {
            lanes.map(|half| half.map(|words| [words[2 * pair], words[2 * pair + 1]]))
        })
    }
}

/// Per pair slot, the product over the chunks of the Miller values of the slot's
/// pairs (chunk c's pair k in slot k), in blst's form and conjugated for x < 0, as
/// `miller::miller_product_on`'s lanes; None on `Path::Off` or without IFMA, and for
/// no chunk. Points must not be the identity (the caller runs such pairs on blst).
pub fn miller_product_on(
    path: Path,
    ps: &[[G1Words; 2]],
    qs: &[[G2Words; 2]],
) -> Option<[Fp12Words; 2]> {
    assert_eq!(ps.len(), qs.len());
    if ps.is_empty() {
        return None;
    }
    let mut chunks = Vec::with_capacity(ps.len());
    for (chunk_ps, chunk_qs) in ps.iter().zip(qs) {
        chunks.push(dispatch::run_on(path, Setup { ps: *chunk_ps, qs: *chunk_qs })?);
    }
    let (mut acc, z_one) = dispatch::run_on(path, Ones)?;
    let mut ts: Vec<WordsPoint> = chunks.iter().map(|[_, _, xq, yq]| [*xq, *yq, z_one]).collect();
    // As the 8-lane loop: the top bit is T = Q; each lower bit squares once (not
    // the first time, 1^2), doubles each chunk's T, and adds its Q where set.
    for bit in (0..63).rev() {
        for (index, ([xp, yp, _, _], t)) in chunks.iter().zip(ts.iter_mut()).enumerate() {
            let square = index == 0 && bit != 62;
            let step = Doubling { acc, square, t: *t, xp: *xp, yp: *yp };
            (acc, *t) = dispatch::run_on(path, step)?;
        }
        if (X_ABS >> bit) & 1 == 1 {
            for ([xp, yp, xq, yq], t) in chunks.iter().zip(ts.iter_mut()) {
                let step = Addition { acc, t: *t, xq: *xq, yq: *yq, xp: *xp, yp: *yp };
                (acc, *t) = dispatch::run_on(path, step)?;
            }
        }
    }
    dispatch::run_on(path, Unload { acc })
}
