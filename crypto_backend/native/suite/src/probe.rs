//! Entry points of the differential tests that need blst beside the kernels: Fp12
//! values read from bytes, one Fp12 operation on blst or on the Miller-loop kernel's
//! lanes, and the final exponentiation of a Miller product on a named path. Nothing
//! in the suite calls them (the final exponentiation of given values is
//! `pairing::final_exp_on` itself).

use crate::curve::{self, G1Affine, G2Affine};
use crate::pairing::{self, fp12_from_words, fp12_words};
use bls_lanes::dispatch::Path;
use bls_lanes::field::fpx8;
use bls_lanes::miller::{self, Fp12Op};
use blst::{
    blst_fp, blst_fp12, blst_fp12_conjugate, blst_fp12_mul, blst_fp12_sqr, blst_fp_from_bendian,
};

pub const FP12_BYTES: usize = 12 * 48;

/// Fp12 values from 12 big-endian 48-byte coordinates each (c0.c0.c0, c0.c0.c1,
/// c0.c1.c0, ...), every coordinate below p; None otherwise.
pub fn fp12_from_bytes(data: &[u8]) -> Option<Vec<blst_fp12>> {
    if !data.len().is_multiple_of(FP12_BYTES) {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() / FP12_BYTES);
    for element in data.chunks(FP12_BYTES) {
        let mut value = blst_fp12::default();
        for (index, bytes) in element.chunks(48).enumerate() {
            let limbs = fpx8::limbs_from_be(bytes.try_into().expect("48 bytes"));
            if !fpx8::below_modulus(&limbs) {
                return None;
            }
            let mut fp = blst_fp::default();
            // SAFETY: 48 bytes in, one field element out.
            unsafe { blst_fp_from_bendian(&mut fp, bytes.as_ptr()) };
            value.fp6[index / 6].fp2[(index / 2) % 3].fp[index % 2] = fp;
        }
        out.push(value);
    }
    Some(out)
}

/// blst's canonical Montgomery limbs as little-endian bytes (equal values, equal bytes).
pub fn fp12_to_bytes(values: &[blst_fp12]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.fp6.iter())
        .flat_map(|fp6| fp6.fp2.iter())
        .flat_map(|fp2| fp2.fp.iter())
        .flat_map(|fp| fp.l.iter())
        .flat_map(|word| word.to_le_bytes())
        .collect()
}

fn blst_fp12_op(op: Fp12Op, a: &blst_fp12, b: &blst_fp12) -> blst_fp12 {
    let mut out = *a;
    // SAFETY: live fp12 values in, one fp12 out (a separate local).
    unsafe {
        match op {
            Fp12Op::Mul => blst_fp12_mul(&mut out, a, b),
            Fp12Op::Sqr => blst_fp12_sqr(&mut out, a),
            Fp12Op::Conjugate => blst_fp12_conjugate(&mut out),
        }
    }
    out
}

/// `op` on each element (a whole number of groups of 8 on a lane layer), on blst for
/// `Path::Off`; None without IFMA for `Path::Ifma`.
pub fn fp12_op_on(
    path: Path,
    op: Fp12Op,
    a: &[blst_fp12],
    b: &[blst_fp12],
) -> Option<Vec<blst_fp12>> {
    if path == Path::Off {
        return Some(a.iter().zip(b).map(|(x, y)| blst_fp12_op(op, x, y)).collect());
    }
    let mut out = Vec::with_capacity(a.len());
    for (a, b) in a.chunks(8).zip(b.chunks(8)) {
        let a: [_; 8] = std::array::from_fn(|lane| fp12_words(&a[lane]));
        let b: [_; 8] = std::array::from_fn(|lane| fp12_words(&b[lane]));
        let values = miller::fp12_op_on(path, op, &a, &b)?;
        out.extend(values.iter().map(fp12_from_words));
    }
    Some(out)
}

/// final_exp(prod of the Miller values of the pairs), the Miller product and the
/// final exponentiation on `path` (`pairing::miller_product_on`,
/// `pairing::final_exp_on`). No pair may hold an identity point.
pub fn miller_final_on(ps: &[G1Affine], qs: &[G2Affine], path: Path) -> blst_fp12 {
    assert!(ps.iter().all(|p| !curve::g1_affine_is_identity(p)), "no identity in a Miller loop");
    let p_refs: Vec<&G1Affine> = ps.iter().collect();
    let q_refs: Vec<&G2Affine> = qs.iter().collect();
    let product = pairing::miller_product_on(&p_refs, &q_refs, path);
    pairing::final_exp_on(&product, path)
}
