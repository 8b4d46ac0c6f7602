//! The pairing checks' lane kernels for the differential tests and bench/crypto.py:
//! 8-lane Fp12 operations against blst's, the final exponentiation of a Miller
//! product or of given values on a named path, and the hash to G2 of many messages on a named path.
//! Fp12 values cross as 12 big-endian 48-byte coordinates
//! (c0.c0.c0, c0.c0.c1, c0.c1.c0, ...) in, and as blst's canonical Montgomery limbs
//! (little-endian bytes) out, so equal values give equal bytes.

use crate::without_gil;
use bls_lanes::dispatch::{self, Path};
use bls_lanes::miller::Fp12Op;
use bls_suite::curve::{self, G1Affine, G2Affine};
use bls_suite::hash;
use bls_suite::pairing;
use bls_suite::probe::{self, FP12_BYTES};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn path_named(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Ifma) if !dispatch::ifma_available() => {
            Err(PyValueError::new_err("this CPU has no AVX-512 IFMA"))
        }
        Some(path) => Ok(path),
        None => Err(PyValueError::new_err(format!("no path named {name:?}"))),
    }
}

/// One Fp12 operation (mul, sqr, conjugate) on every element, eight lanes a pass, on
/// a path ("none" is blst's).
#[pyfunction]
fn fp12_op<'py>(
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
    if !a.len().is_multiple_of(8 * FP12_BYTES) || !b.len().is_multiple_of(8 * FP12_BYTES) {
        return Err(PyValueError::new_err("Fp12 input is whole groups of 8 elements"));
    }
    let bad = || PyValueError::new_err("Fp12 coordinates must be below p");
    let (a, b) =
        (probe::fp12_from_bytes(a).ok_or_else(bad)?, probe::fp12_from_bytes(b).ok_or_else(bad)?);
    if a.len() != b.len() {
        return Err(PyValueError::new_err("Fp12 inputs differ in length"));
    }
    let out = without_gil(py, || probe::fp12_op_on(path, op, &a, &b).expect("a path was checked"))?;
    Ok(PyBytes::new(py, &probe::fp12_to_bytes(&out)))
}

/// final_exp(prod of the Miller values of the pairs (compressed G1 key, compressed
/// G2 point)) with the Miller product on a path: "none" is blst_miller_loop_n on all
/// of them; a lane layer runs whole chunks of 8 on the kernel and the rest on blst.
#[pyfunction]
fn miller_final_on<'py>(
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
    let result = without_gil(py, || probe::miller_final_on(&ps, &qs, path))?;
    Ok(PyBytes::new(py, &probe::fp12_to_bytes(&[result])))
}

/// The final exponentiation of each Fp12 value on a path ("none" is
/// blst_final_exp; a lane layer runs the hard part's squarings on the cyclotomic
/// kernel, `pairing::final_exp_on`).
#[pyfunction]
fn final_exp_on<'py>(py: Python<'py>, values: &[u8], path: &str) -> PyResult<Bound<'py, PyBytes>> {
    let path = path_named(path)?;
    let values = probe::fp12_from_bytes(values)
        .ok_or_else(|| PyValueError::new_err("Fp12 values of coordinates below p"))?;
    let out = without_gil(py, || {
        values.iter().map(|value| pairing::final_exp_on(value, path)).collect::<Vec<_>>()
    })?;
    Ok(PyBytes::new(py, &probe::fp12_to_bytes(&out)))
}

/// The compressed hash to G2 of each message under `dst`, on a path ("none" is
/// blst_hash_to_g2 for each; a lane layer hashes eight a pass, the rest on blst).
#[pyfunction]
fn hash_to_g2_on<'py>(
    py: Python<'py>,
    messages: Vec<Vec<u8>>,
    dst: &[u8],
    path: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let path = path_named(path)?;
    let points = without_gil(py, || {
        let messages: Vec<&[u8]> = messages.iter().map(Vec::as_slice).collect();
        hash::hash_many_to_g2_on(&messages, dst, path)
    })?;
    Ok(points.iter().map(|point| PyBytes::new(py, &curve::encode_g2_affine(point))).collect())
}

pub fn add_to(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(hash_to_g2_on, module)?)?;
    module.add_function(wrap_pyfunction!(fp12_op, module)?)?;
    module.add_function(wrap_pyfunction!(miller_final_on, module)?)?;
    module.add_function(wrap_pyfunction!(final_exp_on, module)?)?;
    Ok(())
}
