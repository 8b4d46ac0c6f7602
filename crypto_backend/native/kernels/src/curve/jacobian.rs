//! Jacobian points on y^2 = x^3 + b over any 8-lane field (Fp for G1, Fp2 for G2),
//! for the subgroup checks of the decompression kernels and the batch weights:
//! doubling, mixed and general addition with the lanes where the formula does not
//! apply, multiplication by a public scalar (of an affine or a Jacobian point), and
//! comparison with an affine point.
//! Not constant time in the scalar (its bits are public constants) and incomplete:
//! callers treat flagged lanes as undecided.

use crate::field::fpx8::FieldOps;

/// (X, Y, Z): affine (X/Z^2, Y/Z^3); Z = 0 is the identity.
pub type Jacobian<E> = (E, E, E);

/// 2Q for a = 0 (dbl-2009-l); Y = 0 gives Z = 0, the identity, correctly.
#[inline(always)]
pub fn double<F: FieldOps>(f: F, (x, y, z): &Jacobian<F::Element>) -> Jacobian<F::Element> {
    let a = f.sqr(x);
    let b = f.sqr(y);
    // 2((x + b)^2 - a - b^2) = 4xb: one product for a square, three reduced additions
    // and subtractions fewer (the kernels issue fewer operations in all).
    let d = f.times4(&f.mul(x, &b));
    let e = f.triple(&a);
    let x3 = f.sub(&f.sqr(&e), &f.double(&d));
    let y3 = f.mul_minus_8_sqr(&e, &f.sub(&d, &x3), &b);
    let z3 = f.double(&f.mul(y, z));
    (x3, y3, z3)
}

/// Q + P for affine P (madd-2007-bl), and the lanes where the formula does not
/// apply (Q = +-P or Q = identity), whose result is then meaningless.
#[inline(always)]
pub fn add_affine<F: FieldOps>(
    f: F,
    (x1, y1, z1): &Jacobian<F::Element>,
    x2: &F::Element,
    y2: &F::Element,
) -> (Jacobian<F::Element>, u8) {
    let z1z1 = f.sqr(z1);
    let u2 = f.mul(x2, &z1z1);
    let s2 = f.mul(&f.mul(y2, z1), &z1z1);
    let h = f.sub(&u2, x1);
    let hh = f.sqr(&h);
    let i = f.times4(&hh);
    let j = f.mul(&h, &i);
    let r = f.double(&f.sub(&s2, y1));
    let v = f.mul(x1, &i);
    let x3 = f.sub(&f.sub(&f.sqr(&r), &j), &f.double(&v));
    let y3 = f.sub(&f.mul(&r, &f.sub(&v, &x3)), &f.double(&f.mul(y1, &j)));
    let z3 = f.sub(&f.sub(&f.sqr(&f.add(z1, &h)), &z1z1), &hh);
    let exceptional = f.is_zero_mask(&h) | f.is_zero_mask(z1);
    ((x3, y3, z3), exceptional)
}

/// Q + P for Jacobian P and Q (add-2007-bl), and the lanes where the formula does not
/// apply (Q = +-P, or either the identity), whose result is then meaningless.
#[inline(always)]
pub fn add<F: FieldOps>(
    f: F,
    (x1, y1, z1): &Jacobian<F::Element>,
    (x2, y2, z2): &Jacobian<F::Element>,
) -> (Jacobian<F::Element>, u8) {
    let z1z1 = f.sqr(z1);
    let z2z2 = f.sqr(z2);
    let u1 = f.mul(x1, &z2z2);
    let u2 = f.mul(x2, &z1z1);
    let s1 = f.mul(&f.mul(y1, z2), &z2z2);
    let s2 = f.mul(&f.mul(y2, z1), &z1z1);
    let h = f.sub(&u2, &u1);
    let i = f.sqr(&f.double(&h));
    let j = f.mul(&h, &i);
    let r = f.double(&f.sub(&s2, &s1));
    let v = f.mul(&u1, &i);
    let x3 = f.sub(&f.sub(&f.sqr(&r), &j), &f.double(&v));
    let y3 = f.sub(&f.mul(&r, &f.sub(&v, &x3)), &f.double(&f.mul(&s1, &j)));
    let z3 = f.mul(&f.sub(&f.sub(&f.sqr(&f.add(z1, z2)), &z1z1), &z2z2), &h);
    let exceptional = f.is_zero_mask(&h) | f.is_zero_mask(z1) | f.is_zero_mask(z2);
    ((x3, y3, z3), exceptional)
}

/// [k]P for affine P and a public k >= 1 (left to right), and the lanes left
/// undecided because a step met an exceptional case.
#[inline(always)]
pub fn multiply<F: FieldOps>(
    f: F,
    x: &F::Element,
    y: &F::Element,
    k: u128,
) -> (Jacobian<F::Element>, u8) {
    let mut q: Jacobian<F::Element> = (*x, *y, f.one());
    let mut exceptional = 0u8;
    for bit in (0..127 - k.leading_zeros()).rev() {
        q = double(f, &q);
        if (k >> bit) & 1 == 1 {
            let (sum, odd) = add_affine(f, &q, x, y);
            q = sum;
            exceptional |= odd;
        }
    }
    (q, exceptional)
}

/// [k]Q for a Jacobian Q = (X, Y, Z) at the price of [k] of an affine point: Q is the
/// affine point (X, Y) of the curve y^2 = x^3 + b Z^6, isomorphic by
/// (x, y) -> (Z^2 x, Z^3 y), and the a = 0 formulas never read b, so `multiply`'s
/// chain (mixed additions) runs there; its result (X', Y', Z') is (X', Y', Z' Z)
/// here. Lanes where Q is the identity (Z = 0, where that curve is singular) are
/// flagged with `multiply`'s.
#[inline(always)]
pub fn multiply_jacobian<F: FieldOps>(
    f: F,
    (x, y, z): &Jacobian<F::Element>,
    k: u128,
) -> (Jacobian<F::Element>, u8) {
    let ((x3, y3, z3), exceptional) = multiply(f, x, y, k);
    ((x3, y3, f.mul(&z3, z)), exceptional | f.is_zero_mask(z))
}

/// Lanes where Jacobian Q equals the affine point (x, y) (Q not the identity).
#[inline(always)]
pub fn equals_affine<F: FieldOps>(
    f: F,
    (qx, qy, qz): &Jacobian<F::Element>,
    x: &F::Element,
    y: &F::Element,
) -> u8 {
    let zz = f.sqr(qz);
    let x_matches = f.eq_mask(&f.mul(x, &zz), qx);
    let y_matches = f.eq_mask(&f.mul(&f.mul(y, &zz), qz), qy);
    x_matches & y_matches & !f.is_zero_mask(qz)
}
