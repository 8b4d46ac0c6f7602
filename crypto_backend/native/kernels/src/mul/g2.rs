//! Eight signatures at once: sk * H for eight secret scalars and one hashed message
//! H, in constant time, by the complete formulas and masked table scans of
//! `curve::complete` (see there why no secret bit steers a branch or an index) on the
//! twist y^2 = x^3 + 4(1 + i) over Fp2.
//!
//! GLS split (Galbraith, Lin and Scott, eprint 2008/194): on G2 the endomorphism psi
//! acts as [z], z = -0xd201000000010000 (the decode's subgroup check rests on the same
//! fact), so [|z|]P = -psi(P). Each scalar k < r < |z|^4 is written in base |z|,
//! k = d0 + d1|z| + d2|z|^2 + d3|z|^3 with 0 <= di < |z| < 2^64, and
//! k*H = d0*H + d1*B1 + d2*B2 + d3*B3, B_i = [|z|^i]H = (-1)^i psi^i(H): 16 windows of
//! four doublings and four additions instead of 64 windows of four doublings and one.
//! The split (`split`) is constant time in k; the four tables of j*B_i (public, H is)
//! are built once per message and shared by every pass. Only the finished signature
//! leaves in a form that code may branch on (its compression: x1 || x0 big-endian,
//! flags 0x80 and 0x20 for the larger y). The valgrind check (tests/ct_check) runs
//! this same code, the split included, with the scalars marked undefined.

use crate::curve::complete::{self, Curve, Projective};
use crate::curve::X_ABS as Z_ABS;
use crate::decode::g2::{PSI_X_C1, PSI_Y_C0, PSI_Y_C1};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fpx8::{self, Limbs};
use crate::lane::LaneOps;

/// table[i][j] = j * [|z|^i]H for j in 0..16, projective (X0, X1, Y0, Y1, Z0, Z1) in
/// our Montgomery form: lane-free, so one table serves every pass of a call on
/// either lane layer.
pub type Table = [[[Limbs; 6]; 16]; 4];

/// G2 (the twist): 3b = 12(1 + i).
#[derive(Clone, Copy)]
pub(crate) struct G2<O: LaneOps>(pub(crate) Fp2x8<O>);

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

/// -psi(P) = [|z|]P on homogeneous projective coordinates: psi(x, y) =
/// (conj(x) PSI_X, conj(y) PSI_Y) with x = X/Z, y = Y/Z gives
/// (conj(X) PSI_X : conj(Y) PSI_Y : conj(Z)); the identity (0 : 1 : 0) goes to
/// (0 : -PSI_Y : 0), the identity still.
#[inline(always)]
fn times_z_abs<O: LaneOps>(f2: Fp2x8<O>, [x, y, z]: &Projective<G2<O>>) -> Projective<G2<O>> {
    let f = f2.f;
    let psi_x = [f.zero(), f.constant(&PSI_X_C1)];
    let psi_y = f2.constant(&PSI_Y_C0, &PSI_Y_C1);
    [f2.mul(&f2.conjugate(x), &psi_x), f2.neg(&f2.mul(&f2.conjugate(y), &psi_y)), f2.conjugate(z)]
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
    let mut points = complete::window_table(G2(f2), &h);
    let mut table: Table = [[[[0; 8]; 6]; 16]; 4];
    for (part, entries) in table.iter_mut().enumerate() {
        if part > 0 {
            // j * [|z|^part]H = [|z|](j * [|z|^(part - 1)]H).
            for point in points.iter_mut() {
                *point = times_z_abs(f2, point);
            }
        }
        for (entry, point) in entries.iter_mut().zip(points.iter()) {
            for (slot, element) in entry.iter_mut().zip(point.iter().flatten()) {
                *slot = f.unpack(element)[0];
            }
        }
    }
    table
}

/// n / |z| and n mod |z| for n < 2^width (width in 64..=256), by restoring long
/// division one bit at a time (Knuth, TAOCP vol. 2, 4.3.1): each step subtracts |z|
/// from the shifted remainder and keeps the difference by a mask where it did not
/// borrow, so the steps and the memory touched are the same for every n. No `/` or
/// `%`: a division instruction or library call may take time that depends on its
/// operands. The top 63 bits need no step: they are below 2^63 < |z|.
fn divide_by_z_abs(n: &[u64; 4], width: usize) -> ([u64; 4], u64) {
    let bit = |index: usize| (n[index / 64] >> (index % 64)) & 1;
    let mut remainder = 0u64;
    for index in (width - 63..width).rev() {
        remainder = (remainder << 1) | bit(index);
    }
    let mut quotient = [0u64; 4];
    for index in (0..width - 63).rev() {
        // 2 remainder + bit < 2|z| < 2^65: `high` is its bit 64.
        let high = remainder >> 63;
        let shifted = (remainder << 1) | bit(index);
        let (difference, borrow) = shifted.overflowing_sub(Z_ABS);
        // 1 where 2 remainder + bit >= |z| (the wrapped difference is then right).
        let take = high | (1 ^ u64::from(borrow));
        let keep_difference = take.wrapping_neg();
        remainder = (difference & keep_difference) | (shifted & !keep_difference);
        quotient[index / 64] |= take << (index % 64);
    }
    (quotient, remainder)
}

/// Each scalar k < |z|^4 (every k < r is) replaced, in place, by its base-|z| digits
/// [d0, d1, d2, d3], k = d0 + d1|z| + d2|z|^2 + d3|z|^3, in constant time (see
/// `divide_by_z_abs`). In place, so that the digits (secret as k is) live only in
/// the caller's buffer, which it zeroes. Not inlined: the one compiled copy serves
/// both lane layers, and it is the copy the valgrind check runs.
#[inline(never)]
pub fn split(scalars: &mut [[u64; 4]; 8]) {
    for scalar in scalars.iter_mut() {
        // k < 2^256, k / |z| < 2^193, k / |z|^2 < 2^130 (|z| > 2^63).
        let (q1, d0) = divide_by_z_abs(scalar, 256);
        let (q2, d1) = divide_by_z_abs(&q1, 193);
        let (q3, d2) = divide_by_z_abs(&q2, 130);
        *scalar = [d0, d1, d2, q3[0]];
    }
}

/// The compressed signatures sk_lane * H (each scalar below |z|^4, as four
/// little-endian words; secret keys are in [1, r - 1], so none is the identity).
/// The scalars are split in place (`split`): the caller's buffer holds their
/// digits afterwards.
#[inline(always)]
pub fn signatures<O: LaneOps>(o: O, table: &Table, scalars: &mut [[u64; 4]; 8]) -> [[u8; 96]; 8] {
    let f2 = Fp2x8::new(o);
    let f = f2.f;
    let curve = G2(f2);
    split(scalars);
    let mut points = [[complete::identity(curve); 16]; 4];
    for (part, entries) in points.iter_mut().enumerate() {
        for (point, entry) in entries.iter_mut().zip(table[part].iter()) {
            for coordinate in 0..3 {
                point[coordinate] =
                    [f.constant(&entry[2 * coordinate]), f.constant(&entry[2 * coordinate + 1])];
            }
        }
    }
    let product = complete::multiply_split(curve, o, &points, scalars);
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
