//! The lane type: eight 64-bit SIMD lanes and the few operations the field
//! arithmetic above is written in (`field::fpx8`), in two implementations that give
//! bit-identical results: `portable` (plain u64 code, every host) and `ifma`
//! (AVX-512 IFMA intrinsics, only where the CPU has them). Only `ifma` has
//! intrinsics; the kernels above are generic over `LaneOps` and written once.

/// Bit mask of the 52 low bits.
pub const MASK52: u64 = (1 << 52) - 1;

/// Eight 64-bit lanes and the operations on them. A mask has one bit per lane
/// (bit i: lane i). Every result is defined for every input (wrapping arithmetic),
/// so the two implementations agree on all inputs, not only on reduced ones.
pub trait LaneOps: Copy {
    type V: Copy;

    /// Whether the field's multiplication, addition and subtraction (`field::fpx8`)
    /// are compiled inline at every use. The intrinsic layer keeps them inline,
    /// inside its feature-enabled entry points. The portable layer, each of whose
    /// operations is a loop over eight words, calls one copy of each: inlined
    /// everywhere, its kernels took rustc most of the build.
    const INLINE_FIELD_OPS: bool = true;

    /// Where `INLINE_FIELD_OPS` is off: whether that one copy of the multiplications
    /// runs lane by lane on `OneLane` (the portable layer: faster than its eight-word
    /// loops) or on this layer itself (the counting layer, which must see every
    /// operation; outlined, its cost-report binary builds in a fraction of the time).
    const OUTLINED_LANE_BY_LANE: bool = true;

    fn splat(self, value: u64) -> Self::V;
    fn load(self, lanes: &[u64; 8]) -> Self::V;
    fn store(self, vector: Self::V) -> [u64; 8];
    /// a + b, wrapping.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// a - b, wrapping.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// acc + low 52 bits of (b mod 2^52) * (c mod 2^52), wrapping.
    fn madd52lo(self, acc: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// acc + high 52 bits of (b mod 2^52) * (c mod 2^52) (bits 52..103), wrapping.
    fn madd52hi(self, acc: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// Logical shift right by N (N < 64).
    fn shr<const N: u32>(self, a: Self::V) -> Self::V;
    /// Arithmetic shift right by N (N < 64): the sign bit fills in, so a lane read as
    /// a signed 64-bit number is divided by 2^N rounding down.
    fn sra<const N: u32>(self, a: Self::V) -> Self::V;
    /// Shift left by N (N < 64).
    fn shl<const N: u32>(self, a: Self::V) -> Self::V;
    /// Lanes where a == b.
    fn eq_mask(self, a: Self::V, b: Self::V) -> u8;
    /// Lanes where a < b (unsigned).
    fn lt_mask(self, a: Self::V, b: Self::V) -> u8;
    /// `when_set` in the lanes whose mask bit is set, `when_clear` elsewhere.
    fn select(self, mask: u8, when_clear: Self::V, when_set: Self::V) -> Self::V;
    /// Lanes moved across: lane k of the result is lane `index[k] & 7` of `a` where
    /// bit 3 of `index[k]` is clear, of `b` where it is set (the other bits are
    /// ignored). For the kernels that spread one computation over the lanes (the
    /// final exponentiation's squarings); the index is public, never data.
    fn permute2(self, a: Self::V, b: Self::V, index: [u64; 8]) -> Self::V;
}

/// A computation written once over the lane operations (a decode pass, a field
/// operation of the tests). Implementations mark `run` `#[inline(always)]`, as
/// everything under it is, so that `Ifma::run` compiles it whole with the features.
pub trait Kernel {
    type Output;
    fn run<O: LaneOps>(self, o: O) -> Self::Output;
}

pub mod counting;
mod portable;
pub use counting::Counting;
pub use portable::{OneLane, Portable};

#[cfg(target_arch = "x86_64")]
mod ifma;
#[cfg(target_arch = "x86_64")]
pub use ifma::Ifma;
