//! The lane type: eight 64-bit lanes and the few operations the field arithmetic
//! above is written in (`fp8.rs`), in two implementations that give bit-identical
//! results: `Portable` (plain u64 code, every host) and `Ifma` (AVX-512 IFMA
//! intrinsics, only where the CPU has them). This is the only module with
//! intrinsics; the kernels above are generic over `LaneOps` and written once.
//!
//! Soundness: the intrinsics need `avx512f` and `avx512ifma` at run time. The only
//! way to get an `Ifma` value is `Ifma::detect()`, which returns one only after
//! `is_x86_feature_detected!` said both features are there, and every intrinsic call
//! takes `self`, so no intrinsic can run on a CPU without them. The loads and stores
//! read and write whole `[u64; 8]` arrays (64 bytes) through their unaligned forms.
//! `Ifma::run` enters a `#[target_feature]` function so that the kernel, whose
//! functions are all `#[inline(always)]`, is compiled with the features and the
//! intrinsics inline into it; it is sound for the same reason (the token exists).

/// Bit mask of the 52 low bits.
pub const MASK52: u64 = (1 << 52) - 1;

/// Eight 64-bit lanes and the operations on them. A mask has one bit per lane
/// (bit i: lane i). Every result is defined for every input (wrapping arithmetic),
/// so the two implementations agree on all inputs, not only on reduced ones.
pub trait LaneOps: Copy {
    type V: Copy;

    /// Whether a field multiplication (fp8.rs) is compiled inline at every use. The
    /// intrinsic layer keeps it inline, inside its feature-enabled entry points. The
    /// portable layer, each of whose operations is a loop over eight words, calls one
    /// copy: inlined everywhere, its Miller-loop steps took rustc most of the build.
    const INLINE_FIELD_MUL: bool = true;

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
    /// Shift left by N (N < 64).
    fn shl<const N: u32>(self, a: Self::V) -> Self::V;
    /// Lanes where a == b.
    fn eq_mask(self, a: Self::V, b: Self::V) -> u8;
    /// Lanes where a < b (unsigned).
    fn lt_mask(self, a: Self::V, b: Self::V) -> u8;
    /// `when_set` in the lanes whose mask bit is set, `when_clear` elsewhere.
    fn select(self, mask: u8, when_clear: Self::V, when_set: Self::V) -> Self::V;
}

/// A computation written once over the lane operations (a decode pass, a field
/// operation of the tests). Implementations mark `run` `#[inline(always)]`, as
/// everything under it is, so that `Ifma::run` compiles it whole with the features.
pub trait Kernel {
    type Output;
    fn run<O: LaneOps>(self, o: O) -> Self::Output;
}

/// Plain 64-bit integer code, on every host.
#[derive(Clone, Copy, Debug, Default)]
pub struct Portable;

#[inline(always)]
fn each(a: [u64; 8], b: [u64; 8], op: impl Fn(u64, u64) -> u64) -> [u64; 8] {
    let mut out = [0u64; 8];
    for lane in 0..8 {
        out[lane] = op(a[lane], b[lane]);
    }
    out
}

#[inline(always)]
fn product52(b: u64, c: u64) -> u128 {
    ((b & MASK52) as u128) * ((c & MASK52) as u128)
}

#[inline(always)]
fn mask_of(a: [u64; 8], b: [u64; 8], test: impl Fn(u64, u64) -> bool) -> u8 {
    let mut mask = 0u8;
    for lane in 0..8 {
        mask |= (test(a[lane], b[lane]) as u8) << lane;
    }
    mask
}

impl LaneOps for Portable {
    type V = [u64; 8];
    const INLINE_FIELD_MUL: bool = false;

    #[inline(always)]
    fn splat(self, value: u64) -> [u64; 8] {
        [value; 8]
    }
    #[inline(always)]
    fn load(self, lanes: &[u64; 8]) -> [u64; 8] {
        *lanes
    }
    #[inline(always)]
    fn store(self, vector: [u64; 8]) -> [u64; 8] {
        vector
    }
    #[inline(always)]
    fn add(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, u64::wrapping_add)
    }
    #[inline(always)]
    fn sub(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, u64::wrapping_sub)
    }
    #[inline(always)]
    fn and(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn or(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn madd52lo(self, acc: [u64; 8], b: [u64; 8], c: [u64; 8]) -> [u64; 8] {
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let low = (product52(b[lane], c[lane]) as u64) & MASK52;
            out[lane] = acc[lane].wrapping_add(low);
        }
        out
    }
    #[inline(always)]
    fn madd52hi(self, acc: [u64; 8], b: [u64; 8], c: [u64; 8]) -> [u64; 8] {
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let high = (product52(b[lane], c[lane]) >> 52) as u64;
            out[lane] = acc[lane].wrapping_add(high);
        }
        out
    }
    #[inline(always)]
    fn shr<const N: u32>(self, a: [u64; 8]) -> [u64; 8] {
        a.map(|x| x >> N)
    }
    #[inline(always)]
    fn shl<const N: u32>(self, a: [u64; 8]) -> [u64; 8] {
        a.map(|x| x << N)
    }
    #[inline(always)]
    fn eq_mask(self, a: [u64; 8], b: [u64; 8]) -> u8 {
        mask_of(a, b, |x, y| x == y)
    }
    #[inline(always)]
    fn lt_mask(self, a: [u64; 8], b: [u64; 8]) -> u8 {
        mask_of(a, b, |x, y| x < y)
    }
    #[inline(always)]
    fn select(self, mask: u8, when_clear: [u64; 8], when_set: [u64; 8]) -> [u64; 8] {
        // Branch-free: the mask may come from secret data (constant-time callers).
        // black_box hides where the mask came from: without it LLVM turns a scan of
        // a table by one-hot masks back into a table index (a secret memory index,
        // as valgrind showed in tests/crypto_backend/test_constant_time.py).
        let mask = std::hint::black_box(mask);
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let all = 0u64.wrapping_sub(((mask >> lane) & 1) as u64);
            out[lane] = (when_clear[lane] & !all) | (when_set[lane] & all);
        }
        out
    }
}

/// One lane in plain u64 code: the portable layer's field multiplication runs the
/// generic algorithm (fp8.rs) once per lane through it, so that a lane's nine
/// accumulators stay in registers instead of going through memory as eight-word
/// arrays; the operations are the same, lane by lane, so the results are too. Only
/// bit 0 of a mask means anything; `load` takes lane 0 and `store` fills lane 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneLane;

impl LaneOps for OneLane {
    type V = u64;

    #[inline(always)]
    fn splat(self, value: u64) -> u64 {
        value
    }
    #[inline(always)]
    fn load(self, lanes: &[u64; 8]) -> u64 {
        lanes[0]
    }
    #[inline(always)]
    fn store(self, vector: u64) -> [u64; 8] {
        let mut out = [0u64; 8];
        out[0] = vector;
        out
    }
    #[inline(always)]
    fn add(self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn sub(self, a: u64, b: u64) -> u64 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn and(self, a: u64, b: u64) -> u64 {
        a & b
    }
    #[inline(always)]
    fn or(self, a: u64, b: u64) -> u64 {
        a | b
    }
    #[inline(always)]
    fn madd52lo(self, acc: u64, b: u64, c: u64) -> u64 {
        acc.wrapping_add((product52(b, c) as u64) & MASK52)
    }
    #[inline(always)]
    fn madd52hi(self, acc: u64, b: u64, c: u64) -> u64 {
        acc.wrapping_add((product52(b, c) >> 52) as u64)
    }
    #[inline(always)]
    fn shr<const N: u32>(self, a: u64) -> u64 {
        a >> N
    }
    #[inline(always)]
    fn shl<const N: u32>(self, a: u64) -> u64 {
        a << N
    }
    #[inline(always)]
    fn eq_mask(self, a: u64, b: u64) -> u8 {
        (a == b) as u8
    }
    #[inline(always)]
    fn lt_mask(self, a: u64, b: u64) -> u8 {
        (a < b) as u8
    }
    #[inline(always)]
    fn select(self, mask: u8, when_clear: u64, when_set: u64) -> u64 {
        // Branch-free, as in `Portable::select`.
        let all = 0u64.wrapping_sub((std::hint::black_box(mask) & 1) as u64);
        (when_clear & !all) | (when_set & all)
    }
}

#[cfg(target_arch = "x86_64")]
pub use ifma::Ifma;

#[cfg(target_arch = "x86_64")]
mod ifma {
    use super::{Kernel, LaneOps};
    use std::arch::x86_64::*;

    /// Proof that this CPU runs AVX-512F and AVX-512 IFMA (see the module comment).
    #[derive(Clone, Copy, Debug)]
    pub struct Ifma(());

    impl Ifma {
        pub fn detect() -> Option<Ifma> {
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma") {
                Some(Ifma(()))
            } else {
                None
            }
        }

        /// Run `kernel` compiled with the IFMA features enabled. No closure in
        /// between: a closure is a function of its own, compiled without the
        /// features, and the intrinsics inside it would stay calls.
        #[inline(always)]
        pub fn run<K: Kernel>(self, kernel: K) -> K::Output {
            #[target_feature(enable = "avx512f,avx512ifma")]
            fn with_features<K: Kernel>(token: Ifma, kernel: K) -> K::Output {
                kernel.run(token)
            }
            // SAFETY: `self` exists, so the CPU has both features.
            unsafe { with_features(self, kernel) }
        }
    }

    // SAFETY (every block below): `self` is an `Ifma`, so the features are present.
    impl LaneOps for Ifma {
        type V = __m512i;

        #[inline(always)]
        fn splat(self, value: u64) -> __m512i {
            unsafe { _mm512_set1_epi64(value as i64) }
        }
        #[inline(always)]
        fn load(self, lanes: &[u64; 8]) -> __m512i {
            // SAFETY: reads the 64 bytes of `lanes`, no alignment needed.
            unsafe { _mm512_loadu_si512(lanes.as_ptr() as *const __m512i) }
        }
        #[inline(always)]
        fn store(self, vector: __m512i) -> [u64; 8] {
            let mut out = [0u64; 8];
            // SAFETY: writes the 64 bytes of `out`, no alignment needed.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr() as *mut __m512i, vector) };
            out
        }
        #[inline(always)]
        fn add(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi64(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi64(a, b) }
        }
        #[inline(always)]
        fn and(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_and_si512(a, b) }
        }
        #[inline(always)]
        fn or(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_or_si512(a, b) }
        }
        #[inline(always)]
        fn madd52lo(self, acc: __m512i, b: __m512i, c: __m512i) -> __m512i {
            unsafe { _mm512_madd52lo_epu64(acc, b, c) }
        }
        #[inline(always)]
        fn madd52hi(self, acc: __m512i, b: __m512i, c: __m512i) -> __m512i {
            unsafe { _mm512_madd52hi_epu64(acc, b, c) }
        }
        #[inline(always)]
        fn shr<const N: u32>(self, a: __m512i) -> __m512i {
            unsafe { _mm512_srli_epi64::<N>(a) }
        }
        #[inline(always)]
        fn shl<const N: u32>(self, a: __m512i) -> __m512i {
            unsafe { _mm512_slli_epi64::<N>(a) }
        }
        #[inline(always)]
        fn eq_mask(self, a: __m512i, b: __m512i) -> u8 {
            unsafe { _mm512_cmpeq_epu64_mask(a, b) }
        }
        #[inline(always)]
        fn lt_mask(self, a: __m512i, b: __m512i) -> u8 {
            unsafe { _mm512_cmplt_epu64_mask(a, b) }
        }
        #[inline(always)]
        fn select(self, mask: u8, when_clear: __m512i, when_set: __m512i) -> __m512i {
            unsafe { _mm512_mask_blend_epi64(mask, when_clear, when_set) }
        }
    }
}
