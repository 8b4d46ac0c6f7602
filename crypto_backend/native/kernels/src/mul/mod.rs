//! Constant-time multiplication of a public point by eight secret scalars at once:
//! public keys (`g1`, sk * g1) and signatures (`g2`, sk * H(m)), on the formulas of
//! `curve::complete`; and public points by public weights (`weighted`, the batch
//! check's random weights: eight keys at a time, or the sum of many signatures).
//! The secret-scalar entry points below borrow the scalars: the kernel reads them
//! where the caller keeps them (and zeroes them), never from a copy of its own; the
//! signatures' kernel splits them there in place (`g2::split`).

pub mod g1;
pub mod g2;
pub mod weighted;

use crate::dispatch::{self, Kernel, Path};
use crate::lane::LaneOps;
pub use g2::Table;

pub(crate) struct PublicKeys<'a> {
    pub(crate) scalars: &'a [[u64; 4]; 8],
}

impl Kernel for PublicKeys<'_> {
    type Output = [[u8; 48]; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [[u8; 48]; 8] {
        g1::public_keys(o, self.scalars)
    }
}

/// The compressed public keys of eight scalars (each in [1, r - 1], four
/// little-endian words) on `path`; None on `Path::Off` or without IFMA.
pub fn public_keys_on(path: Path, scalars: &[[u64; 4]; 8]) -> Option<[[u8; 48]; 8]> {
    dispatch::run_on(path, PublicKeys { scalars })
}

pub(crate) struct WindowTable<'a> {
    pub(crate) uncompressed: &'a [u8; 192],
}

impl Kernel for WindowTable<'_> {
    type Output = Table;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Table {
        g2::window_table(o, self.uncompressed)
    }
}

/// The tables of k * [|z|^i]H (i < 4, k < 16) for a hashed message H (uncompressed: x1, x0, y1, y0) on
/// `path`; None on `Path::Off` or without IFMA.
pub fn window_table_on(path: Path, uncompressed: &[u8; 192]) -> Option<Table> {
    dispatch::run_on(path, WindowTable { uncompressed })
}

pub(crate) struct Signatures<'a> {
    pub(crate) table: &'a Table,
    pub(crate) scalars: &'a mut [[u64; 4]; 8],
}

impl Kernel for Signatures<'_> {
    type Output = [[u8; 96]; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [[u8; 96]; 8] {
        g2::signatures(o, self.table, self.scalars)
    }
}

/// The compressed signatures scalar_lane * H of the message whose table this is,
/// on `path`; None on `Path::Off` or without IFMA. The kernel splits the scalars
/// in place (`g2::split`): where it ran, `scalars` holds their digits afterwards.
pub fn signatures_on(
    path: Path,
    table: &Table,
    scalars: &mut [[u64; 4]; 8],
) -> Option<[[u8; 96]; 8]> {
    dispatch::run_on(path, Signatures { table, scalars })
}

/// Each lane's sum of its column of keys (`points[j][lane]`, affine, never the
/// identity) times their weights (`weights[j][lane]`, zero for a slot left empty), in
/// blst's Jacobian words; the lanes with a nonzero weight; and the lanes left
/// undecided (the caller computes those on blst). On `path`; None on `Path::Off` or
/// without IFMA.
pub fn weighted_keys_on(
    path: Path,
    points: &[[crate::points::G1Words; 8]],
    weights: &[[u64; 8]],
) -> Option<([weighted::G1JacobianWords; 8], u8, u8)> {
    dispatch::run_on(path, weighted::WeightedKeys { points, weights })
}

/// Each lane's sum of its column of signatures (`points[j][lane]`, affine, never the
/// identity) times their weights (`weights[j][lane]`, zero for a slot left empty), in
/// blst's Jacobian words; the lanes with a nonzero weight (the others' sum is the
/// identity); and the lanes left undecided (the caller sums those on blst). On
/// `path`; None on `Path::Off` or without IFMA.
pub fn weighted_signatures_on(
    path: Path,
    points: &[[crate::points::G2Words; 8]],
    weights: &[[u64; 8]],
) -> Option<([weighted::G2JacobianWords; 8], u8, u8)> {
    dispatch::run_on(path, weighted::WeightedSignatures { points, weights })
}

/// Each lane's plain sum of its column of keys (`points[j][lane]` for the rows j whose
/// `live[j]` has the lane; row 0 has every lane), in blst's Jacobian words, and the
/// lanes left undecided (the caller sums those on blst). On `path`; None on
/// `Path::Off` or without IFMA.
pub fn key_sums_on(
    path: Path,
    points: &[[crate::points::G1Words; 8]],
    live: &[u8],
) -> Option<([weighted::G1JacobianWords; 8], u8)> {
    dispatch::run_on(path, weighted::KeySums { points, live })
}

/// `key_sums_on` for signatures.
pub fn signature_sums_on(
    path: Path,
    points: &[[crate::points::G2Words; 8]],
    live: &[u8],
) -> Option<([weighted::G2JacobianWords; 8], u8)> {
    dispatch::run_on(path, weighted::SignatureSums { points, live })
}
