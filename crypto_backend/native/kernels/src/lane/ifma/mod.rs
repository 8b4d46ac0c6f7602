//! The AVX-512 IFMA lane layer: one `__m512i` holds the eight lanes.
//!
//! Soundness: the intrinsics need `avx512f` and `avx512ifma` at run time. The only
//! way to get an `Ifma` value is `Ifma::detect()`, which returns one only after
//! `is_x86_feature_detected!` said both features are there, and every intrinsic call
//! takes `self`, so no intrinsic can run on a CPU without them. The loads and stores
//! read and write whole `[u64; 8]` arrays (64 bytes) through their unaligned forms.
//! `Ifma::run` enters a `#[target_feature]` function so that the kernel, whose
//! functions are all `#[inline(always)]`, is compiled with the features and the
//! intrinsics inline into it; it is sound for the same reason (the token exists).

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
    fn sra<const N: u32>(self, a: __m512i) -> __m512i {
        unsafe { _mm512_srai_epi64::<N>(a) }
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
    #[inline(always)]
    fn permute2(self, a: __m512i, b: __m512i, index: [u64; 8]) -> __m512i {
        // SAFETY: reads the 64 bytes of `index` (a constant at every call, which LLVM
        // keeps in the constant pool), no alignment needed; vpermt2q reads only the
        // low 4 bits of each index lane.
        unsafe {
            let index = _mm512_loadu_si512(index.as_ptr() as *const __m512i);
            _mm512_permutex2var_epi64(a, index, b)
        }
    }
}
