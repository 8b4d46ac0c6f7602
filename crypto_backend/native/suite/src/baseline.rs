//! blst called directly, with none of the suite's rules: the benchmark's baselines
//! (crypto_backend.baseline, bench/crypto.py). Nothing in the product calls them.

use crate::curve::{G1Affine, G2Affine, DST, SIGNATURE_LENGTH};
use blst::*;

/// The bare blst core_verify on a decoded key and signature bytes (the benchmark's
/// baseline): blst's own signature decode and subgroup check, hash, pairing.
pub fn bare_core_verify(pubkey: &G1Affine, message: &[u8], signature: &[u8]) -> bool {
    let mut signature_point = G2Affine::default();
    if signature.len() != SIGNATURE_LENGTH {
        return false;
    }
    // SAFETY: 96 bytes in, one affine point out.
    let status = unsafe { blst_p2_uncompress(&mut signature_point, signature.as_ptr()) };
    if status != BLST_ERROR::BLST_SUCCESS || !unsafe { blst_p2_affine_in_g2(&signature_point) } {
        return false;
    }
    // SAFETY: live points, slices with their lengths, no augmentation.
    let status = unsafe {
        blst_core_verify_pk_in_g1(
            pubkey,
            &signature_point,
            true,
            message.as_ptr(),
            message.len(),
            DST.as_ptr(),
            DST.len(),
            std::ptr::null(),
            0,
        )
    };
    status == BLST_ERROR::BLST_SUCCESS
}

/// `rounds` rounds of eight independent blst multiplications (mul_mont_384) of
/// Montgomery-form values: the baseline of bench/crypto.py's 8-lane multiplication.
pub fn fp_mul_rounds(rounds: usize) -> [blst_fp; 8] {
    let factor = blst_fp { l: [3, 0, 0, 0, 0, 0] };
    let mut values: [blst_fp; 8] =
        std::array::from_fn(|i| blst_fp { l: [i as u64 + 1, 0, 0, 0, 0, 0] });
    for _ in 0..rounds {
        for value in values.iter_mut() {
            let previous = std::hint::black_box(*value);
            // SAFETY: three live field elements, the output distinct from the inputs.
            unsafe { blst_fp_mul(value, &previous, &factor) };
        }
    }
    values
}
