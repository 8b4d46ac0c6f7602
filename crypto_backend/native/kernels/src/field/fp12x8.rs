//! Eight elements of Fp12 = Fp6[w]/(w^2 - v) over `fp6x8` (blst's tower: the
//! coefficients map one to one onto blst_fp12): c0 + c1 w. Multiplication, squaring,
//! conjugation, and the sparse product by a Miller-loop line, whose shape
//! (l0 + l1 v) + (l4 v) w is derived in `miller`.

use crate::field::fp2x8::Fe2;
use crate::field::fp6x8::{Fe6, Fp6x8};
use crate::lane::LaneOps;

pub type Fe12<O> = [Fe6<O>; 2];

/// A line function evaluated at P, up to a factor the final exponentiation removes:
/// (l0 + l1 v) + (l4 v) w.
#[derive(Clone, Copy)]
pub struct Line<O: LaneOps> {
    pub l0: Fe2<O>,
    pub l1: Fe2<O>,
    pub l4: Fe2<O>,
}

#[derive(Clone, Copy)]
pub struct Fp12x8<O: LaneOps> {
    pub f6: Fp6x8<O>,
}

impl<O: LaneOps> Fp12x8<O> {
    #[inline(always)]
    pub fn new(f6: Fp6x8<O>) -> Self {
        Fp12x8 { f6 }
    }

    /// Karatsuba: three Fp6 multiplications (w^2 = v).
    #[inline(always)]
    pub fn mul(self, [a0, a1]: &Fe12<O>, [b0, b1]: &Fe12<O>) -> Fe12<O> {
        let f6 = self.f6;
        let t0 = f6.mul(a0, b0);
        let t1 = f6.mul(a1, b1);
        let cross = f6.mul(&f6.add(a0, a1), &f6.add(b0, b1));
        [f6.add(&t0, &f6.mul_by_v(&t1)), f6.sub(&f6.sub(&cross, &t0), &t1)]
    }

    /// (a0 + a1 w)^2 = (a0 + a1)(a0 + v a1) - t - v t + 2t w, t = a0 a1: two Fp6
    /// multiplications.
    #[inline(always)]
    pub fn sqr(self, [a0, a1]: &Fe12<O>) -> Fe12<O> {
        let f6 = self.f6;
        let t = f6.mul(a0, a1);
        let mixed = f6.mul(&f6.add(a0, a1), &f6.add(a0, &f6.mul_by_v(a1)));
        [f6.sub(&f6.sub(&mixed, &t), &f6.mul_by_v(&t)), f6.add(&t, &t)]
    }

    /// a^(p^6): c0 - c1 w.
    #[inline(always)]
    pub fn conjugate(self, [a0, a1]: &Fe12<O>) -> Fe12<O> {
        [*a0, self.f6.neg(a1)]
    }

    /// a * line, with the line's zeros skipped (Karatsuba over w as in `mul`).
    #[inline(always)]
    pub fn mul_by_line(self, [a0, a1]: &Fe12<O>, line: &Line<O>) -> Fe12<O> {
        let f6 = self.f6;
        let t0 = f6.mul_by_01(a0, &line.l0, &line.l1);
        let t1 = f6.mul_by_1(a1, &line.l4);
        let l1_plus_l4 = f6.f2.add(&line.l1, &line.l4);
        let cross = f6.mul_by_01(&f6.add(a0, a1), &line.l0, &l1_plus_l4);
        [f6.add(&t0, &f6.mul_by_v(&t1)), f6.sub(&f6.sub(&cross, &t0), &t1)]
    }
}
