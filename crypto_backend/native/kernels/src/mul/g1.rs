//! Eight public keys at once: sk * g1 for eight secret scalars, in constant time,
//! by the windowed multiplication and complete formulas of `curve::complete` (see there
//! why no secret bit steers a branch or an index). Only the finished public key
//! leaves in a form that code may branch on (its compression). The valgrind check
//! (tests/ct_check) runs this same code with the scalars marked undefined.

use crate::curve::complete::{self, Curve};
use crate::field::fpx8::{self, Fe, Fpx8, Limbs};
use crate::lane::LaneOps;

/// The G1 generator in our Montgomery form.
const GENERATOR_X: Limbs = [
    0x4472bd744eda5,
    0x4aba9853e1da6,
    0x2f10d1383c67c,
    0xdbae24ad1c42a,
    0x2420588dc26c0,
    0x78fcadba8747f,
    0x723800f7c53f2,
    0x18fc3,
];
const GENERATOR_Y: Limbs = [
    0xf48f35ab57ec8,
    0x607f24155c808,
    0x338ef00eb416a,
    0xc64c4180f80c1,
    0xc9d0871f1722,
    0xaf8a2786d9209,
    0xe3df4113aa2ea,
    0x8d13,
];

/// G1: y^2 = x^3 + 4 over Fp, so 3b = 12.
#[derive(Clone, Copy)]
struct G1<O: LaneOps>(Fpx8<O>);

impl<O: LaneOps> Curve for G1<O> {
    type Field = Fpx8<O>;
    #[inline(always)]
    fn field(self) -> Fpx8<O> {
        self.0
    }
    #[inline(always)]
    fn mul_b3(self, a: &Fe<O>) -> Fe<O> {
        complete::times_twelve(self.0, a)
    }
}

/// The compressed public keys of eight scalars (each below 2^256, as four
/// little-endian words; secret keys are in [1, r - 1], so no key is the identity).
#[inline(always)]
pub fn public_keys<O: LaneOps>(o: O, scalars: &[[u64; 4]; 8]) -> [[u8; 48]; 8] {
    let f = Fpx8::new(o);
    let curve = G1(f);
    let generator = [f.constant(&GENERATOR_X), f.constant(&GENERATOR_Y), f.one()];
    let product = complete::multiply(curve, o, &complete::window_table(curve, &generator), scalars);
    let (x, y) = complete::to_affine(curve, &product);
    let x = f.out_of_montgomery(&x);
    let larger = f.gt_mask(&f.out_of_montgomery(&y), &fpx8::HALF_P);
    let xs = f.unpack(&x);
    // The keys are public from here on.
    std::array::from_fn(|lane| {
        let mut out = fpx8::limbs_to_be(&xs[lane]);
        out[0] |= complete::compressed_flags(larger, lane);
        out
    })
}
