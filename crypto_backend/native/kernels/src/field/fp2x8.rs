//! Eight elements of Fp2 = Fp[i]/(i^2 + 1) at once, over the 8-lane Fp of `fpx8`
//! (so over the lane type, written once): c0 + c1*i, each coordinate in [0, 2p) as
//! `fpx8` keeps it.

use crate::field::fpx8::{self, Fe, FieldOps, Fpx8, Limbs, Multiplicative, Wide};
use crate::lane::{LaneOps, OneLane};

pub type Fe2<O> = [Fe<O>; 2];

#[derive(Clone, Copy)]
pub struct Fp2x8<O: LaneOps> {
    pub f: Fpx8<O>,
}

impl<O: LaneOps> Fp2x8<O> {
    #[inline(always)]
    pub fn new(o: O) -> Self {
        Fp2x8 { f: Fpx8::new(o) }
    }

    #[inline(always)]
    pub fn constant(self, c0: &Limbs, c1: &Limbs) -> Fe2<O> {
        [self.f.constant(c0), self.f.constant(c1)]
    }

    #[inline(always)]
    pub fn one(self) -> Fe2<O> {
        [self.f.one(), self.f.zero()]
    }

    /// (a0 b0 - a1 b1) + (a0 b1 + a1 b0) i: three 8x8 products and two reductions,
    /// no reduced addition or subtraction (`mul_inline`).
    #[inline(always)]
    pub fn mul(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        if O::INLINE_FIELD_OPS {
            self.mul_inline(a, b)
        } else {
            mul_outlined(self, a, b)
        }
    }

    /// Karatsuba on unreduced products: a0b0, a1b1 and (a0 + a1)(b0 + b1), three
    /// products where two sums of two products take four (the multiply-adds are
    /// what the IFMA kernels are bound by: docs/performance.md's cost report), then
    /// a0b0 - a1b1 + 4p^2 and (a0 + a1)(b0 + b1) - a0b0 - a1b1 (exactly
    /// a0b1 + a1b0: the sums are not reduced) formed column by column, each reduced
    /// once. Columns of a difference may be negative; the reduction's carries are
    /// arithmetic shifts, and both wholes are in [0, 8p^2) for coordinates below 2p.
    /// In place, so that at most two wide values are live: with three, the spills
    /// made the G2 decode kernel 60% slower on an Intel IFMA host.
    #[inline(always)]
    fn mul_inline(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        self.karatsuba::<0>(a, b)
    }

    /// `mul` for coordinates below 32p, not only 2p (limbs carried, below 2^52):
    /// `miller::spread` feeds it unreduced sums and differences. The same three
    /// products and two reductions, with 1024p^2 in place of 4p^2 keeping
    /// a0b0 - a1b1 non-negative (a1b1 < 1024p^2). Both wholes stay below
    /// 4096p^2 < 2^774 (so each reduction ends below 2p: fpx8's bound), the
    /// Karatsuba sums below 64p < 2^390, and the bias's columns below 2^60.
    #[inline(always)]
    pub fn mul_wide_inputs(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        self.karatsuba::<8>(a, b)
    }

    /// `mul_inline` with the real part's bias 4p^2 * 2^BIAS_SHIFT.
    #[inline(always)]
    fn karatsuba<const BIAS_SHIFT: u32>(self, [a0, a1]: &Fe2<O>, [b0, b1]: &Fe2<O>) -> Fe2<O> {
        let f = self.f;
        let (t0, mut t1) = self.karatsuba_columns::<BIAS_SHIFT>(a0, a1, b0, b1);
        let real = f.montgomery_reduce(t0);
        f.add_product(&mut t1, &f.add_for_mul(a0, a1), &f.add_for_mul(b0, b1));
        [real, f.montgomery_reduce(t1)]
    }

    /// `mul_inline`'s first half: the column sums of a0b0 - a1b1 + 4p^2 (the real
    /// part, whole) and of -(a0b0 + a1b1) (the imaginary part's start, to which
    /// (a0 + a1)(b0 + b1) is added).
    #[inline(always)]
    fn karatsuba_columns<const BIAS_SHIFT: u32>(
        self,
        a0: &Fe<O>,
        a1: &Fe<O>,
        b0: &Fe<O>,
        b1: &Fe<O>,
    ) -> (Wide<O>, Wide<O>) {
        let (f, o) = (self.f, self.f.o);
        let bias = fpx8::FOUR_P_SQUARED;
        let mut t0 = [o.splat(0); 16];
        f.add_product(&mut t0, a0, b0);
        let mut t1 = [o.splat(0); 16];
        f.add_product(&mut t1, a1, b1);
        for k in 0..16 {
            let sum = o.add(t0[k], t1[k]);
            t0[k] = o.add(o.sub(t0[k], t1[k]), o.splat(bias[k] << BIAS_SHIFT));
            t1[k] = o.sub(o.splat(0), sum);
        }
        (t0, t1)
    }

    /// ab - 8c^2 (the doubling's Y3), with `mul_inline`'s three products for ab and
    /// c^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 i as two more, in the same two reductions:
    /// real a0b0 - a1b1 + 4p^2 + u(c0 - c1) for u = -8(c0 + c1), imaginary
    /// a0b1 + a1b0 + w c1 for w = -16 c0 (u, w in (2p, 4p] by `neg_for_mul`), both
    /// wholes in [0, 16p^2) for inputs below 2p. 891 multiply-adds where `mul` and
    /// `sqr` took 1,147 (the cost report: 256 fewer a doubling).
    #[inline(always)]
    pub fn mul_minus_8_sqr(self, a: &Fe2<O>, b: &Fe2<O>, c: &Fe2<O>) -> Fe2<O> {
        if O::INLINE_FIELD_OPS {
            self.mul_minus_8_sqr_inline(a, b, c)
        } else {
            mul_minus_8_sqr_outlined(self, a, b, c)
        }
    }

    #[inline(always)]
    fn mul_minus_8_sqr_inline(
        self,
        [a0, a1]: &Fe2<O>,
        [b0, b1]: &Fe2<O>,
        [c0, c1]: &Fe2<O>,
    ) -> Fe2<O> {
        let f = self.f;
        let u = f.neg_for_mul(&f.times8(&f.add(c0, c1)));
        let w = f.neg_for_mul(&f.times8(&f.double(c0)));
        let (mut t0, mut t1) = self.karatsuba_columns::<0>(a0, a1, b0, b1);
        f.add_product(&mut t0, &u, &f.sub(c0, c1));
        let real = f.montgomery_reduce(t0);
        f.add_product(&mut t1, &f.add_for_mul(a0, a1), &f.add_for_mul(b0, b1));
        f.add_product(&mut t1, &w, c1);
        [real, f.montgomery_reduce(t1)]
    }

    /// (a0 + a1)(a0 - a1) + (2 a0) a1 i: two Fp multiplications, the sums that only
    /// feed them left unreduced (`Fpx8::add_for_mul`).
    #[inline(always)]
    pub fn sqr(self, [a0, a1]: &Fe2<O>) -> Fe2<O> {
        let f = self.f;
        [f.mul(&f.add_for_mul(a0, a1), &f.sub(a0, a1)), f.mul(&f.add_for_mul(a0, a0), a1)]
    }

    #[inline(always)]
    pub fn add(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        [self.f.add(&a[0], &b[0]), self.f.add(&a[1], &b[1])]
    }

    #[inline(always)]
    pub fn sub(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        [self.f.sub(&a[0], &b[0]), self.f.sub(&a[1], &b[1])]
    }

    #[inline(always)]
    pub fn neg(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.neg(&a[0]), self.f.neg(&a[1])]
    }

    #[inline(always)]
    pub fn conjugate(self, a: &Fe2<O>) -> Fe2<O> {
        [a[0], self.f.neg(&a[1])]
    }

    /// a * i = -a1 + a0 i.
    #[inline(always)]
    pub fn mul_by_i(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.neg(&a[1]), a[0]]
    }

    #[inline(always)]
    pub fn eq_mask(self, a: &Fe2<O>, b: &Fe2<O>) -> u8 {
        self.f.eq_mask(&a[0], &b[0]) & self.f.eq_mask(&a[1], &b[1])
    }

    #[inline(always)]
    pub fn is_zero_mask(self, a: &Fe2<O>) -> u8 {
        self.f.is_zero_mask(&a[0]) & self.f.is_zero_mask(&a[1])
    }

    #[inline(always)]
    pub fn select(self, mask: u8, when_clear: &Fe2<O>, when_set: &Fe2<O>) -> Fe2<O> {
        [
            self.f.select(mask, &when_clear[0], &when_set[0]),
            self.f.select(mask, &when_clear[1], &when_set[1]),
        ]
    }

    /// 1/a = conj(a) / (a0^2 + a1^2) for a != 0: one Fp inversion, by a fixed
    /// exponentiation (no branch on a).
    #[inline(always)]
    pub fn invert(self, [a0, a1]: &Fe2<O>) -> Fe2<O> {
        let f = self.f;
        let norm_inverse = f.invert(&f.add(&f.sqr(a0), &f.sqr(a1)));
        [f.mul(a0, &norm_inverse), f.neg(&f.mul(a1, &norm_inverse))]
    }

    #[inline(always)]
    pub fn out_of_montgomery(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.out_of_montgomery(&a[0]), self.f.out_of_montgomery(&a[1])]
    }

    /// Lanes where the plain (non-Montgomery) canonical a is the "larger" of a and -a
    /// in the compressed-point rule: a1 > (p - 1)/2, or a1 = 0 and a0 > (p - 1)/2.
    #[inline(always)]
    pub fn larger_mask(self, plain: &Fe2<O>) -> u8 {
        let f = self.f;
        let c1_zero = f.is_zero_mask(&plain[1]);
        (c1_zero & f.gt_mask(&plain[0], &fpx8::HALF_P))
            | (!c1_zero & f.gt_mask(&plain[1], &fpx8::HALF_P))
    }

    /// a^e for a public exponent (little-endian words), sliding windows (`fpx8::pow_public`).
    #[inline(always)]
    pub fn pow_public(self, a: &Fe2<O>, exponent: &[u64]) -> Fe2<O> {
        fpx8::pow_public(self, a, exponent)
    }
}

/// The one copy of the Fp2 multiplication that layers with `INLINE_FIELD_OPS` off
/// call: the same algorithm lane by lane (as `fpx8`'s outlined multiplication).
#[inline(never)]
fn mul_outlined<O: LaneOps>(field: Fp2x8<O>, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
    if !O::OUTLINED_LANE_BY_LANE {
        return field.mul_inline(a, b);
    }
    let f = field.f;
    let lanes = |x: &Fe2<O>| [f.unpack_raw(&x[0]), f.unpack_raw(&x[1])];
    let (a_lanes, b_lanes) = (lanes(a), lanes(b));
    let one_lane = Fp2x8::new(OneLane);
    let mut out = [[[0u64; 8]; 8]; 2];
    for lane in 0..8 {
        let product = one_lane.mul_inline(
            &[a_lanes[0][lane], a_lanes[1][lane]],
            &[b_lanes[0][lane], b_lanes[1][lane]],
        );
        out[0][lane] = product[0];
        out[1][lane] = product[1];
    }
    [f.pack(&out[0]), f.pack(&out[1])]
}

/// The one copy of `mul_minus_8_sqr` that layers with `INLINE_FIELD_OPS` off call,
/// lane by lane as `mul_outlined`.
#[inline(never)]
fn mul_minus_8_sqr_outlined<O: LaneOps>(
    field: Fp2x8<O>,
    a: &Fe2<O>,
    b: &Fe2<O>,
    c: &Fe2<O>,
) -> Fe2<O> {
    if !O::OUTLINED_LANE_BY_LANE {
        return field.mul_minus_8_sqr_inline(a, b, c);
    }
    let f = field.f;
    let lanes = |x: &Fe2<O>| [f.unpack_raw(&x[0]), f.unpack_raw(&x[1])];
    let (a_lanes, b_lanes, c_lanes) = (lanes(a), lanes(b), lanes(c));
    let one_lane = Fp2x8::new(OneLane);
    let mut out = [[[0u64; 8]; 8]; 2];
    for lane in 0..8 {
        let value = one_lane.mul_minus_8_sqr_inline(
            &[a_lanes[0][lane], a_lanes[1][lane]],
            &[b_lanes[0][lane], b_lanes[1][lane]],
            &[c_lanes[0][lane], c_lanes[1][lane]],
        );
        out[0][lane] = value[0];
        out[1][lane] = value[1];
    }
    [f.pack(&out[0]), f.pack(&out[1])]
}

impl<O: LaneOps> Multiplicative for Fp2x8<O> {
    type Element = Fe2<O>;
    #[inline(always)]
    fn one(self) -> Fe2<O> {
        Fp2x8::one(self)
    }
    #[inline(always)]
    fn mul(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        Fp2x8::mul(self, a, b)
    }
    #[inline(always)]
    fn sqr(self, a: &Fe2<O>) -> Fe2<O> {
        Fp2x8::sqr(self, a)
    }
}

impl<O: LaneOps> FieldOps for Fp2x8<O> {
    #[inline(always)]
    fn add(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        Fp2x8::add(self, a, b)
    }
    #[inline(always)]
    fn sub(self, a: &Fe2<O>, b: &Fe2<O>) -> Fe2<O> {
        Fp2x8::sub(self, a, b)
    }
    #[inline(always)]
    fn eq_mask(self, a: &Fe2<O>, b: &Fe2<O>) -> u8 {
        Fp2x8::eq_mask(self, a, b)
    }
    #[inline(always)]
    fn is_zero_mask(self, a: &Fe2<O>) -> u8 {
        Fp2x8::is_zero_mask(self, a)
    }
    #[inline(always)]
    fn triple(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.triple(&a[0]), self.f.triple(&a[1])]
    }
    #[inline(always)]
    fn times4(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.times4(&a[0]), self.f.times4(&a[1])]
    }
    #[inline(always)]
    fn times8(self, a: &Fe2<O>) -> Fe2<O> {
        [self.f.times8(&a[0]), self.f.times8(&a[1])]
    }
    #[inline(always)]
    fn mul_minus_8_sqr(self, a: &Fe2<O>, b: &Fe2<O>, c: &Fe2<O>) -> Fe2<O> {
        Fp2x8::mul_minus_8_sqr(self, a, b, c)
    }
}
