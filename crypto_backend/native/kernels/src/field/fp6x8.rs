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

    /// Schoolbook over the three coefficients, each a sum of three Fp2 products
    /// reduced once per Fp coordinate (`Fp2x8::sum_of_products`), v^3 = xi folded
    /// into b: c0 = a0 b0 + a1 (xi b2) + a2 (xi b1), c1 = a0 b1 + a1 b0 + a2 (xi b2),
    /// c2 = a0 b2 + a1 b1 + a2 b0. Nine Fp2 products but six reductions and no
    /// reduced additions but xi's: fewer operations on this IFMA host than
    /// Karatsuba's six Fp2 multiplications with their fifteen additions.
    #[inline(always)]
    pub fn mul(self, a: &Fe6<O>, b: &Fe6<O>) -> Fe6<O> {
        let f2 = self.f2;
        let (xi_b1, xi_b2) = (self.mul_by_xi(&b[1]), self.mul_by_xi(&b[2]));
        [
            f2.sum_of_products(&[(a[0], b[0]), (a[1], xi_b2), (a[2], xi_b1)]),
            f2.sum_of_products(&[(a[0], b[1]), (a[1], b[0]), (a[2], xi_b2)]),
            f2.sum_of_products(&[(a[0], b[2]), (a[1], b[1]), (a[2], b[0])]),
        ]
    }

    /// a * (b0 + b1 v): the shape of a line's first half, as `mul` with b2 = 0.
    #[inline(always)]
    pub fn mul_by_01(self, a: &Fe6<O>, b0: &Fe2<O>, b1: &Fe2<O>) -> Fe6<O> {
        let f2 = self.f2;
        let xi_b1 = self.mul_by_xi(b1);
        [
            f2.sum_of_products(&[(a[0], *b0), (a[2], xi_b1)]),
            f2.sum_of_products(&[(a[0], *b1), (a[1], *b0)]),
            f2.sum_of_products(&[(a[1], *b1), (a[2], *b0)]),
        ]
    }

    /// a * (b1 v): the shape of a line's second half.
    #[inline(always)]
    pub fn mul_by_1(self, a: &Fe6<O>, b1: &Fe2<O>) -> Fe6<O> {
        let f2 = self.f2;
        [self.mul_by_xi(&f2.mul(&a[2], b1)), f2.mul(&a[0], b1), f2.mul(&a[1], b1)]
    }
}
