//! Python hooks of the Miller-loop kernel (`miller_lanes.rs`) for the differential
//! tests and bench/crypto.py: 8-lane Fp12 operations against blst's, and the final
//! exponentiation of a Miller product on a named path. Fp12 values cross as 12
//! big-endian 48-byte coordinates (c0.c0.c0, c0.c0.c1, c0.c1.c0, ...) in, and as
//! blst's canonical Montgomery limbs (little-endian bytes) out, so equal values give
//! equal bytes.

use crate::curve::{self, G1Affine, G2Affine};
use crate::miller_lanes::{self, Load, Multiply, Square, Unload};
use crate::simd::{self, Path};
use crate::without_gil;
use blst::{
    blst_final_exp, blst_fp, blst_fp12, blst_fp12_conjugate, blst_fp12_mul, blst_fp12_sqr,
    blst_fp_from_bendian,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

const FP12_BYTES: usize = 12 * 48;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fp12Op {
    Mul,
    Sqr,
    Conjugate,
}

fn path_named(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Ifma) if !simd::ifma_available() => {
            Err(PyValueError::new_err("this CPU has no AVX-512 IFMA"))
        }
        Some(path) => Ok(path),
        None => Err(PyValueError::new_err(format!("no path named {name:?}"))),
    }
}

fn fp12_elements(data: &[u8]) -> PyResult<Vec<blst_fp12>> {
    if !data.len().is_multiple_of(8 * FP12_BYTES) {
        return Err(PyValueError::new_err("Fp12 input is whole groups of 8 elements"));
    }
    let mut out = Vec::with_capacity(data.len() / FP12_BYTES);
    for element in data.chunks(FP12_BYTES) {
        let mut value = blst_fp12::default();
        for (index, bytes) in element.chunks(48).enumerate() {
            let limbs = crate::fp8::limbs_from_be(bytes.try_into().expect("48 bytes"));
            if !crate::fp8::below_modulus(&limbs) {
                return Err(PyValueError::new_err("Fp12 coordinates must be below p"));
            }
            let mut fp = blst_fp::default();
            // SAFETY: 48 bytes in, one field element out.
            unsafe { blst_fp_from_bendian(&mut fp, bytes.as_ptr()) };
            value.fp6[index / 6].fp2[(index / 2) % 3].fp[index % 2] = fp;
        }
        out.push(value);
    }
    Ok(out)
}

fn fp12_bytes(values: &[blst_fp12]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.fp6.iter())
        .flat_map(|fp6| fp6.fp2.iter())
        .flat_map(|fp2| fp2.fp.iter())
        .flat_map(|fp| fp.l.iter())
        .flat_map(|word| word.to_le_bytes())
        .collect()
}

/// The operation on 8 lanes at a time, through the loop's own kernels.
fn lanes_fp12_op(path: Path, op: Fp12Op, a: &[blst_fp12], b: &[blst_fp12]) -> Option<Vec<blst_fp12>> {
    let mut out = Vec::with_capacity(a.len());
    for (a, b) in a.chunks(8).zip(b.chunks(8)) {
        let a = simd::run_on(path, Load { values: a.try_into().expect("8 lanes") })?;
        let b = simd::run_on(path, Load { values: b.try_into().expect("8 lanes") })?;
        let (acc, conjugate) = match op {
            Fp12Op::Mul => (simd::run_on(path, Multiply { a, b })?, false),
            Fp12Op::Sqr => (simd::run_on(path, Square { acc: a })?, false),
            Fp12Op::Conjugate => (a, true),
        };
        out.extend_from_slice(&simd::run_on(path, Unload { acc, conjugate })?);
    }
    Some(out)
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

/// One Fp12 operation (mul, sqr, conjugate) on every element, eight lanes a pass, on
/// a path ("none" is blst's).
#[pyfunction]
pub fn fp12_op<'py>(
    py: Python<'py>,
    op: &str,
    path: &str,
    a: &[u8],
    b: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let path = path_named(path)?;
    let op = match op {
        "mul" => Fp12Op::Mul,
        "sqr" => Fp12Op::Sqr,
        "conjugate" => Fp12Op::Conjugate,
        other => return Err(PyValueError::new_err(format!("no Fp12 operation {other:?}"))),
    };
    let (a, b) = (fp12_elements(a)?, fp12_elements(b)?);
    if a.len() != b.len() {
        return Err(PyValueError::new_err("Fp12 inputs differ in length"));
    }
    let out = without_gil(py, || match path {
        Path::Off => a.iter().zip(&b).map(|(x, y)| blst_fp12_op(op, x, y)).collect(),
        _ => lanes_fp12_op(path, op, &a, &b).expect("a lane layer was checked"),
    })?;
    Ok(PyBytes::new(py, &fp12_bytes(&out)))
}

/// final_exp(prod of the Miller values of the pairs (compressed G1 key, compressed
/// G2 point)) with the Miller product on a path: "none" is blst_miller_loop_n on all
/// of them; a lane layer runs whole chunks of 8 on the kernel and the rest on blst.
#[pyfunction]
pub fn miller_final_on<'py>(
    py: Python<'py>,
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
    path: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let path = path_named(path)?;
    let mut ps: Vec<G1Affine> = Vec::with_capacity(pairs.len());
    let mut qs: Vec<G2Affine> = Vec::with_capacity(pairs.len());
    for (p, q) in &pairs {
        let p = curve::decode_g1(p).map_err(PyValueError::new_err)?;
        let q = curve::decode_g2(q).map_err(PyValueError::new_err)?;
        if curve::g1_affine_is_identity(&p) || curve::g2_affine_is_identity(&q) {
            return Err(PyValueError::new_err("no identity point in a Miller loop"));
        }
        ps.push(p);
        qs.push(q);
    }
    if ps.is_empty() {
        return Err(PyValueError::new_err("no pairs"));
    }
    let result = without_gil(py, || {
        let p_refs: Vec<&G1Affine> = ps.iter().collect();
        let q_refs: Vec<&G2Affine> = qs.iter().collect();
        let product = miller_lanes::miller_product_on(&p_refs, &q_refs, path);
        let mut result = blst_fp12::default();
        // SAFETY: one live fp12 in, one out.
        unsafe { blst_final_exp(&mut result, &product) };
        result
    })?;
    Ok(PyBytes::new(py, &fp12_bytes(&[result])))
}
