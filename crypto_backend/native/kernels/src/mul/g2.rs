//! Eight signatures at once: sk * H for eight secret scalars and one hashed message
//! H, in constant time, by the windowed multiplication and complete formulas of
//! `curve::complete` (see there why no secret bit steers a branch or an index) on the
//! twist y^2 = x^3 + 4(1 + i) over Fp2. The table of k * H (public, H is) is built
//! once per message and shared by every pass. Only the finished signature leaves in
//! a form that code may branch on (its compression: x1 || x0 big-endian, flags
//! 0x80 and 0x20 for the larger y). The valgrind check (tests/ct_check) runs this
//! same code with the scalars marked undefined.

use crate::curve::complete::{self, Curve};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fpx8::{self, Limbs};
use crate::lane::LaneOps;

/// k * H for k in 0..16, projective (X0, X1, Y0, Y1, Z0, Z1) in our Montgomery form:
/// lane-free, so one table serves every pass of a call on either lane layer.
pub type Table = [[Limbs; 6]; 16];

/// G2 (the twist): 3b = 12(1 + i).
#[derive(Clone, Copy)]
struct G2<O: LaneOps>(Fp2x8<O>);

impl<O: LaneOps> Curve for G2<O> {
    type Field = Fp2x8<O>;
    #[inline(always)]
    fn field(self) -> Fp2x8<O> {
        self.0
    }
    /// 12(1 + i)(a0 + a1 i) = 12(a0 - a1) + 12(a0 + a1) i.
    #[inline(always)]
    fn mul_b3(self, [a0, a1]: &Fe2<O>) -> Fe2<O> {
        let f = self.0.f;
        [complete::times_twelve(f, &f.sub(a0, a1)), complete::times_twelve(f, &f.add(a0, a1))]
    }
}

/// The table for H given uncompressed (192 bytes: x1, x0, y1, y0, plain big-endian;
/// H is a hashed message, never the identity). The caller checked H is in G2.
#[inline(always)]
pub fn window_table<O: LaneOps>(o: O, uncompressed: &[u8; 192]) -> Table {
    let f2 = Fp2x8::new(o);
    let f = f2.f;
    let coordinate = |index: usize| {
        let bytes: &[u8; 48] =
            uncompressed[48 * index..48 * index + 48].try_into().expect("48 bytes");
        fpx8::limbs_from_be(bytes)
    };
    // No closure over lane values: see `lane::Ifma::run`.
    let plain = [coordinate(1), coordinate(0), coordinate(3), coordinate(2)];
    let h = [
        [f.to_montgomery(&f.constant(&plain[0])), f.to_montgomery(&f.constant(&plain[1]))],
        [f.to_montgomery(&f.constant(&plain[2])), f.to_montgomery(&f.constant(&plain[3]))],
        f2.one(),
    ];
    let points = complete::window_table(G2(f2), &h);
    let mut table: Table = [[[0; 8]; 6]; 16];
    for (entry, point) in table.iter_mut().zip(points.iter()) {
        for (slot, element) in entry.iter_mut().zip(point.iter().flatten()) {
            *slot = f.unpack(element)[0];
        }
    }
    table
}

/// The compressed signatures sk_lane * H (each scalar below 2^256, as four
/// little-endian words; secret keys are in [1, r - 1], so none is the identity).
#[inline(always)]
pub fn signatures<O: LaneOps>(o: O, table: &Table, scalars: &[[u64; 4]; 8]) -> [[u8; 96]; 8] {
    let f2 = Fp2x8::new(o);
    let f = f2.f;
    let curve = G2(f2);
    let mut points = [complete::identity(curve); 16];
    for (point, entry) in points.iter_mut().zip(table.iter()) {
        for coordinate in 0..3 {
            point[coordinate] =
                [f.constant(&entry[2 * coordinate]), f.constant(&entry[2 * coordinate + 1])];
        }
    }
    let product = complete::multiply(curve, o, &points, scalars);
    let (x, y) = complete::to_affine(curve, &product);
    let x = f2.out_of_montgomery(&x);
    let larger = f2.larger_mask(&f2.out_of_montgomery(&y));
    let (x0, x1) = (f.unpack(&x[0]), f.unpack(&x[1]));
    // The signatures are public from here on.
    std::array::from_fn(|lane| {
        let mut out = [0u8; 96];
        out[..48].copy_from_slice(&fpx8::limbs_to_be(&x1[lane]));
        out[48..].copy_from_slice(&fpx8::limbs_to_be(&x0[lane]));
        out[0] |= complete::compressed_flags(larger, lane);
        out
    })
}
