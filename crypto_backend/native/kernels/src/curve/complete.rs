//! Constant-time multiplication of a public point by eight secret scalars, written
//! once for both groups over an 8-lane field (Fp for G1, Fp2 for G2): the complete
//! projective formulas of Renes, Costello and Batina (eprint 2015/1060, algorithm 7
//! for addition and 9 for doubling, a = 0) and fixed 4-bit windows.
//!
//! The formulas are correct for every pair of points of a group of odd order (the
//! identity and equal points included; every point here lies in the order-r
//! subgroup), so no case needs a branch. The secret scalars steer no branch and no
//! memory index: 64 windows whatever the scalar (every scalar is below 2^256), each
//! four doublings and one addition of the table entry chosen by masks over all 16
//! entries. The field arithmetic (`field::fpx8`, `field::fp2x8`) has no
//! data-dependent branch either; the valgrind check (tests/ct_check) runs these
//! kernels with the scalars marked undefined.

use crate::field::fp2x8::Fp2x8;
use crate::field::fpx8::{FieldOps, Fpx8, Multiplicative};
use crate::lane::LaneOps;

/// A curve y^2 = x^3 + b over an 8-lane field, as the formulas need it.
pub trait Curve: Copy {
    type Field: SelectField;
    fn field(self) -> Self::Field;
    /// 3b * a.
    fn mul_b3(self, a: &Elem<Self>) -> Elem<Self>;
}

/// The field element type of a curve.
pub type Elem<C> = <<C as Curve>::Field as Multiplicative>::Element;
/// Homogeneous projective point (X : Y : Z), affine (X/Z, Y/Z); (0 : 1 : 0) is the identity.
pub type Projective<C> = [Elem<C>; 3];

/// The field operations beyond `FieldOps` that the constant-time kernels use.
pub trait SelectField: FieldOps {
    fn zero(self) -> Self::Element;
    /// `when_set` in the lanes whose mask bit is set, `when_clear` elsewhere.
    fn select(
        self,
        mask: u8,
        when_clear: &Self::Element,
        when_set: &Self::Element,
    ) -> Self::Element;
    /// 1/a for a != 0, by a fixed public exponentiation (no branch on a).
    fn invert(self, a: &Self::Element) -> Self::Element;
}

impl<O: LaneOps> SelectField for Fpx8<O> {
    #[inline(always)]
    fn zero(self) -> Self::Element {
        Fpx8::zero(self)
    }
    #[inline(always)]
    fn select(
        self,
        mask: u8,
        when_clear: &Self::Element,
        when_set: &Self::Element,
    ) -> Self::Element {
        Fpx8::select(self, mask, when_clear, when_set)
    }
    #[inline(always)]
    fn invert(self, a: &Self::Element) -> Self::Element {
        Fpx8::invert(self, a)
    }
}

impl<O: LaneOps> SelectField for Fp2x8<O> {
    #[inline(always)]
    fn zero(self) -> Self::Element {
        [self.f.zero(), self.f.zero()]
    }
    #[inline(always)]
    fn select(
        self,
        mask: u8,
        when_clear: &Self::Element,
        when_set: &Self::Element,
    ) -> Self::Element {
        Fp2x8::select(self, mask, when_clear, when_set)
    }
    #[inline(always)]
    fn invert(self, a: &Self::Element) -> Self::Element {
        Fp2x8::invert(self, a)
    }
}

/// 12a by additions (b3 is 12 for G1 and 12(1 + i) for G2): 4(3a).
#[inline(always)]
pub fn times_twelve<F: FieldOps>(f: F, a: &F::Element) -> F::Element {
    f.times4(&f.triple(a))
}

#[inline(always)]
pub fn identity<C: Curve>(c: C) -> Projective<C> {
    let f = c.field();
    [f.zero(), f.one(), f.zero()]
}

/// P + Q for any P, Q (algorithm 7: complete, no exceptional case).
#[inline(always)]
pub fn add<C: Curve>(
    c: C,
    [x1, y1, z1]: &Projective<C>,
    [x2, y2, z2]: &Projective<C>,
) -> Projective<C> {
    let f = c.field();
    let mut t0 = f.mul(x1, x2);
    let mut t1 = f.mul(y1, y2);
    let mut t2 = f.mul(z1, z2);
    let mut t3 = f.mul(&f.add(x1, y1), &f.add(x2, y2));
    let mut t4 = f.add(&t0, &t1);
    t3 = f.sub(&t3, &t4);
    t4 = f.mul(&f.add(y1, z1), &f.add(y2, z2));
    let mut x3 = f.add(&t1, &t2);
    t4 = f.sub(&t4, &x3);
    x3 = f.mul(&f.add(x1, z1), &f.add(x2, z2));
    let mut y3 = f.add(&t0, &t2);
    y3 = f.sub(&x3, &y3);
    t0 = f.triple(&t0);
    t2 = c.mul_b3(&t2);
    let mut z3 = f.add(&t1, &t2);
    t1 = f.sub(&t1, &t2);
    y3 = c.mul_b3(&y3);
    x3 = f.mul(&t4, &y3);
    t2 = f.mul(&t3, &t1);
    x3 = f.sub(&t2, &x3);
    y3 = f.mul(&y3, &t0);
    t1 = f.mul(&t1, &z3);
    y3 = f.add(&t1, &y3);
    t0 = f.mul(&t0, &t3);
    z3 = f.mul(&z3, &t4);
    z3 = f.add(&z3, &t0);
    [x3, y3, z3]
}

/// 2P for any P, the identity included (algorithm 9).
#[inline(always)]
pub fn double<C: Curve>(c: C, [x, y, z]: &Projective<C>) -> Projective<C> {
    let f = c.field();
    let mut t0 = f.sqr(y);
    let mut z3 = f.times8(&t0);
    let mut t1 = f.mul(y, z);
    let mut t2 = c.mul_b3(&f.sqr(z));
    let mut x3 = f.mul(&t2, &z3);
    let mut y3 = f.add(&t0, &t2);
    z3 = f.mul(&t1, &z3);
    t2 = f.triple(&t2);
    t0 = f.sub(&t0, &t2);
    y3 = f.mul(&t0, &y3);
    y3 = f.add(&x3, &y3);
    t1 = f.mul(x, y);
    x3 = f.double(&f.mul(&t0, &t1));
    [x3, y3, z3]
}

/// k * base for k in 0..16 (public: the base point is).
#[inline(always)]
pub fn window_table<C: Curve>(c: C, base: &Projective<C>) -> [Projective<C>; 16] {
    let mut table = [identity(c); 16];
    for k in 1..16 {
        table[k] = add(c, &table[k - 1], base);
    }
    table
}

/// The entry of `table` each lane's digit (0..16, a lane vector) names, by a mask
/// over all 16 entries: the digit is secret, so it steers no index.
#[inline(always)]
fn select_entry<C: Curve, O: LaneOps>(
    c: C,
    o: O,
    table: &[Projective<C>; 16],
    digits: O::V,
) -> Projective<C> {
    let f = c.field();
    let mut entry = identity(c);
    for (k, point) in table.iter().enumerate() {
        let hit = o.eq_mask(digits, o.splat(k as u64));
        for coordinate in 0..3 {
            entry[coordinate] = f.select(hit, &entry[coordinate], &point[coordinate]);
        }
    }
    entry
}

/// scalar_lane * table[1] in each lane, for scalars below 2^256 (four little-endian
/// words each): see the module comment for why no secret bit steers anything.
#[inline(always)]
pub fn multiply<C: Curve, O: LaneOps>(
    c: C,
    o: O,
    table: &[Projective<C>; 16],
    scalars: &[[u64; 4]; 8],
) -> Projective<C> {
    let mut acc = identity(c);
    for window in (0..64).rev() {
        for _ in 0..4 {
            acc = double(c, &acc);
        }
        // The window's digit of each lane, by shifts and masks of the secret words.
        let digits: [u64; 8] =
            std::array::from_fn(|lane| (scalars[lane][window / 16] >> (4 * (window % 16))) & 0xf);
        acc = add(c, &acc, &select_entry(c, o, table, o.load(&digits)));
    }
    acc
}

/// sum over i of digit_lane_i * tables[i][1] in each lane, for four 64-bit digits a
/// lane (a scalar split by an endomorphism, `mul::g2`): 16 windows from the top, each
/// four doublings and one addition per table, the entries chosen as in `multiply`
/// (Galbraith, Lin and Scott, eprint 2008/194: the split shares the doublings). The
/// top window starts from the identity, so its doublings are left out: that skips
/// by the window's public index, never by a digit.
#[inline(always)]
pub fn multiply_split<C: Curve, O: LaneOps>(
    c: C,
    o: O,
    tables: &[[Projective<C>; 16]; 4],
    digits: &[[u64; 4]; 8],
) -> Projective<C> {
    let mut acc = identity(c);
    for window in (0..16).rev() {
        if window != 15 {
            for _ in 0..4 {
                acc = double(c, &acc);
            }
        }
        for (part, table) in tables.iter().enumerate() {
            let nibbles: [u64; 8] =
                std::array::from_fn(|lane| (digits[lane][part] >> (4 * window)) & 0xf);
            acc = add(c, &acc, &select_entry(c, o, table, o.load(&nibbles)));
        }
    }
    acc
}

/// Affine (x, y) of a point that is not the identity, in Montgomery form.
#[inline(always)]
pub fn to_affine<C: Curve>(c: C, [x, y, z]: &Projective<C>) -> (Elem<C>, Elem<C>) {
    let f = c.field();
    let z_inverse = f.invert(z);
    (f.mul(x, &z_inverse), f.mul(y, &z_inverse))
}

/// The first byte's flags of a compressed point in `lane`: 0x80 (compressed), and
/// 0x20 where `larger` (a lane mask) says y is the larger root. For public output only.
pub fn compressed_flags(larger: u8, lane: usize) -> u8 {
    0x80 | (((larger >> lane) & 1) << 5)
}
