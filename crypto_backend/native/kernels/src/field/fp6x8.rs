//! Eight elements of Fp6 = Fp2[v]/(v^3 - xi), xi = 1 + i, over the 8-lane Fp2 of
//! `fp2x8` (blst's tower, so the coefficients map one to one onto blst_fp6):
//! c0 + c1 v + c2 v^2. What the Miller loop of `miller` needs: the full
//! product and the sparse ones of its line functions.

use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::lane::LaneOps;

pub type Fe6<O> = [Fe2<O>; 3];

#[derive(Clone, Copy)]
pub struct Fp6x8<O: LaneOps> {
    pub f2: Fp2x8<O>,
}

impl<O: LaneOps> Fp6x8<O> {
    #[inline(always)]
    pub fn new(f2: Fp2x8<O>) -> Self {
        Fp6x8 { f2 }
    }

    /// a * xi = (a0 - a1) + (a0 + a1) i.
    #[inline(always)]
    pub fn mul_by_xi(self, a: &Fe2<O>) -> Fe2<O> {
        let f = self.f2.f;
        [f.sub(&a[0], &a[1]), f.add(&a[0], &a[1])]
    }

    #[inline(always)]
    pub fn add(self, a: &Fe6<O>, b: &Fe6<O>) -> Fe6<O> {
        let f2 = self.f2;
        [f2.add(&a[0], &b[0]), f2.add(&a[1], &b[1]), f2.add(&a[2], &b[2])]
    }

    #[inline(always)]
    pub fn sub(self, a: &Fe6<O>, b: &Fe6<O>) -> Fe6<O> {
        let f2 = self.f2;
        [f2.sub(&a[0], &b[0]), f2.sub(&a[1], &b[1]), f2.sub(&a[2], &b[2])]
    }

    #[inline(always)]
    pub fn neg(self, a: &Fe6<O>) -> Fe6<O> {
        let f2 = self.f2;
        [f2.neg(&a[0]), f2.neg(&a[1]), f2.neg(&a[2])]
    }

    /// a * v = xi a2 + a0 v + a1 v^2.
    #[inline(always)]
    pub fn mul_by_v(self, a: &Fe6<O>) -> Fe6<O> {
        [self.mul_by_xi(&a[2]), a[0], a[1]]
    }

    /// Karatsuba over the three coefficients: six Fp2 multiplications.
    #[inline(always)]
    pub fn mul(self, a: &Fe6<O>, b: &Fe6<O>) -> Fe6<O> {
        let f2 = self.f2;
        let t0 = f2.mul(&a[0], &b[0]);
        let t1 = f2.mul(&a[1], &b[1]);
        let t2 = f2.mul(&a[2], &b[2]);
        // (a1 + a2)(b1 + b2) - t1 - t2 = a1 b2 + a2 b1, the v^3 = xi part of c0.
        let m12 = f2.sub(&f2.sub(&f2.mul(&f2.add(&a[1], &a[2]), &f2.add(&b[1], &b[2])), &t1), &t2);
        let m01 = f2.sub(&f2.sub(&f2.mul(&f2.add(&a[0], &a[1]), &f2.add(&b[0], &b[1])), &t0), &t1);
        let m02 = f2.sub(&f2.sub(&f2.mul(&f2.add(&a[0], &a[2]), &f2.add(&b[0], &b[2])), &t0), &t2);
        [f2.add(&t0, &self.mul_by_xi(&m12)), f2.add(&m01, &self.mul_by_xi(&t2)), f2.add(&m02, &t1)]
    }

    /// a * (b0 + b1 v): the shape of a line's first half.
    #[inline(always)]
    pub fn mul_by_01(self, a: &Fe6<O>, b0: &Fe2<O>, b1: &Fe2<O>) -> Fe6<O> {
        let f2 = self.f2;
        [
            f2.add(&f2.mul(&a[0], b0), &self.mul_by_xi(&f2.mul(&a[2], b1))),
            f2.add(&f2.mul(&a[0], b1), &f2.mul(&a[1], b0)),
            f2.add(&f2.mul(&a[1], b1), &f2.mul(&a[2], b0)),
        ]
    }

    /// a * (b1 v): the shape of a line's second half.
    #[inline(always)]
    pub fn mul_by_1(self, a: &Fe6<O>, b1: &Fe2<O>) -> Fe6<O> {
        let f2 = self.f2;
        [self.mul_by_xi(&f2.mul(&a[2], b1)), f2.mul(&a[0], b1), f2.mul(&a[1], b1)]
    }
}
