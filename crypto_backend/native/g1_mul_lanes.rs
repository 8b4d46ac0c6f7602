//! Eight public keys at once: sk * g1 for eight secret scalars, in constant time.
//!
//! The secret scalars steer no branch and no memory index: fixed 4-bit windows
//! from the top (64 windows for any scalar below 2^256), each window four doublings
//! and one addition of a table entry chosen by masks over all 16 entries, all with
//! the complete addition formula of Renes, Costello and Batina (eprint 2015/1060,
//! algorithm 7, a = 0), which is correct for every pair of points of this odd-order
//! curve, the identity and equal points included, so no case needs a branch. The
//! field arithmetic below (`fp8.rs`) has no data-dependent branch either, and the
//! conversion to affine inverts Z by a fixed exponentiation (Fermat). Only the
//! finished public key leaves in a form that code may branch on (its compression).
//! Depends on the lane layer and fp8 only, so the valgrind check
//! (tests/ct_check) builds this same file into a test binary.

use crate::fp8::{self, Fe, Fp8, Limbs};
use crate::lane::LaneOps;

/// The G1 generator in our Montgomery form.
const GENERATOR_X: Limbs = [
    0x4472bd744eda5, 0x4aba9853e1da6, 0x2f10d1383c67c, 0xdbae24ad1c42a,
    0x2420588dc26c0, 0x78fcadba8747f, 0x723800f7c53f2, 0x18fc3,
];
const GENERATOR_Y: Limbs = [
    0xf48f35ab57ec8, 0x607f24155c808, 0x338ef00eb416a, 0xc64c4180f80c1,
    0xc9d0871f1722, 0xaf8a2786d9209, 0xe3df4113aa2ea, 0x8d13,
];
/// 3 * b = 12 in Montgomery form (the formula's b3).
const B3: Limbs = [
    0x460afeaf7b431, 0xcd5122beb5b19, 0xc4664aadd2de0, 0x1d78417c77713,
    0xa4d7d1f9b9711, 0x4b2b884890e, 0x717302e000d24, 0xf618,
];
/// p - 2, little-endian words: z^(p-2) = 1/z.
const INVERSE_EXPONENT: [u64; 6] = [
    0xb9feffffffffaaa9, 0x1eabfffeb153ffff, 0x6730d2a0f6b0f624,
    0x64774b84f38512bf, 0x4b1ba7b6434bacd7, 0x1a0111ea397fe69a,
];

/// Homogeneous projective point (X : Y : Z), affine (X/Z, Y/Z); (0 : 1 : 0) is the identity.
type Projective<O> = [Fe<O>; 3];

/// P + Q for any P, Q on y^2 = x^3 + 4 (complete: no exceptional case).
#[inline(always)]
fn add<O: LaneOps>(f: Fp8<O>, [x1, y1, z1]: &Projective<O>, [x2, y2, z2]: &Projective<O>) -> Projective<O> {
    let b3 = f.constant(&B3);
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
    x3 = f.add(&t0, &t0);
    t0 = f.add(&x3, &t0);
    t2 = f.mul(&b3, &t2);
    let mut z3 = f.add(&t1, &t2);
    t1 = f.sub(&t1, &t2);
    y3 = f.mul(&b3, &y3);
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

/// The compressed public keys of eight scalars (each below 2^256, as four
/// little-endian words; secret keys are in [1, r - 1], so no key is the identity).
#[inline(always)]
pub fn public_keys<O: LaneOps>(o: O, scalars: &[[u64; 4]; 8]) -> [[u8; 48]; 8] {
    let f = Fp8::new(o);
    let identity: Projective<O> = [f.zero(), f.one(), f.zero()];
    let generator: Projective<O> =
        [f.constant(&GENERATOR_X), f.constant(&GENERATOR_Y), f.one()];
    // table[k] = k * g1, the same in every lane (public).
    let mut table = [identity; 16];
    for k in 1..16 {
        table[k] = add(f, &table[k - 1], &generator);
    }
    let mut acc = identity;
    for window in (0..64).rev() {
        for _ in 0..4 {
            acc = add(f, &acc, &acc);
        }
        // The window's digit of each lane, by shifts and masks of the secret words.
        let digits: [u64; 8] = std::array::from_fn(|lane| {
            (scalars[lane][window / 16] >> (4 * (window % 16))) & 0xf
        });
        let digits = o.load(&digits);
        let mut entry = identity;
        for (k, point) in table.iter().enumerate() {
            let hit = o.eq_mask(digits, o.splat(k as u64));
            for coordinate in 0..3 {
                entry[coordinate] = f.select(hit, &entry[coordinate], &point[coordinate]);
            }
        }
        acc = add(f, &acc, &entry);
    }
    let z_inverse = f.pow_public(&acc[2], &INVERSE_EXPONENT);
    let x = f.out_of_montgomery(&f.mul(&acc[0], &z_inverse));
    let y = f.out_of_montgomery(&f.mul(&acc[1], &z_inverse));
    let larger = f.gt_mask(&y, &fp8::HALF_P);
    let xs = f.unpack(&x);
    // The keys are public from here on.
    std::array::from_fn(|lane| {
        let mut out = fp8::limbs_to_be(&xs[lane]);
        out[0] |= 0x80 | if (larger >> lane) & 1 == 1 { 0x20 } else { 0 };
        out
    })
}
