//! Each lane layer by name, for the differential tests and bench/crypto.py: one lane
//! operation or field operation over whole vectors, a decode, sk_to_pk or sign_many
//! on a named layer, and the timed chains of field multiplications. Values cross as
//! little-endian u64 words (lane operations) or 48-byte big-endian field elements,
//! eight lanes at a time.

use crate::{secret_key, without_gil};
use bls_lanes::dispatch::{self, Path};
use bls_lanes::field::fpx8::{self, Limbs};
use bls_lanes::mul;
use bls_lanes::probe::{self, FieldOp, LaneOp};
use bls_suite::{baseline, decode, sign};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::hint::black_box;
use std::time::Instant;
use zeroize::Zeroizing;

/// A lane layer named by a test: "portable" or "avx512ifma" (refused without IFMA).
fn layer(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Portable) => Ok(Path::Portable),
        Some(Path::Ifma) if dispatch::ifma_available() => Ok(Path::Ifma),
        Some(Path::Ifma) => Err(PyValueError::new_err("this CPU has no AVX-512 IFMA")),
        _ => Err(PyValueError::new_err(format!("no lane layer named {name:?}"))),
    }
}

/// A lane layer, or "none" for blst's own code.
fn layer_or_blst(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Off) => Ok(Path::Off),
        _ => layer(name),
    }
}

const CHECKED: &str = "a lane layer was checked";

fn vectors_of_words(data: &[u8]) -> PyResult<Vec<[u64; 8]>> {
    if !data.len().is_multiple_of(64) {
        return Err(PyValueError::new_err("lane input is whole vectors of 8 u64 words"));
    }
    Ok(data
        .chunks(64)
        .map(|vector| {
            std::array::from_fn(|lane| {
                u64::from_le_bytes(vector[8 * lane..8 * lane + 8].try_into().expect("8 bytes"))
            })
        })
        .collect())
}

/// One lane operation over whole vectors of u64 words (little-endian bytes); masks
/// come back as one word per lane, 0 or 1.
#[pyfunction]
fn lane_op<'py>(
    py: Python<'py>,
    op: &str,
    path: &str,
    a: &[u8],
    b: &[u8],
    c: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let path = layer(path)?;
    let op = LaneOp::from_name(op)
        .ok_or_else(|| PyValueError::new_err(format!("no lane operation {op:?}")))?;
    let (a, b, c) = (vectors_of_words(a)?, vectors_of_words(b)?, vectors_of_words(c)?);
    if a.len() != b.len() || a.len() != c.len() {
        return Err(PyValueError::new_err("lane inputs differ in length"));
    }
    let out = without_gil(py, || probe::lane_op_on(path, op, a, b, c).expect(CHECKED))?;
    let bytes: Vec<u8> = out.iter().flatten().flat_map(|word| word.to_le_bytes()).collect();
    Ok(PyBytes::new(py, &bytes))
}

fn elements(data: &[u8]) -> PyResult<Vec<[Limbs; 8]>> {
    if !data.len().is_multiple_of(8 * 48) {
        return Err(PyValueError::new_err("field input is whole groups of 8 48-byte elements"));
    }
    let mut out = Vec::with_capacity(data.len() / (8 * 48));
    for group in data.chunks(8 * 48) {
        let mut lanes = [[0u64; 8]; 8];
        for (lane, bytes) in group.chunks(48).enumerate() {
            let limbs = fpx8::limbs_from_be(bytes.try_into().expect("48 bytes"));
            if !fpx8::below_modulus(&limbs) {
                return Err(PyValueError::new_err("field input must be below p"));
            }
            lanes[lane] = limbs;
        }
        out.push(lanes);
    }
    Ok(out)
}

/// One 8-lane field operation on raw lane values (the Montgomery forms themselves,
/// each below p): `mul` is a*b/2^416 mod p, `to_blst` a*2^384/2^416, and so on.
#[pyfunction]
fn fpx8_op<'py>(
    py: Python<'py>,
    op: &str,
    path: &str,
    a: &[u8],
    b: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let path = layer(path)?;
    let op = FieldOp::from_name(op)
        .ok_or_else(|| PyValueError::new_err(format!("no field operation {op:?}")))?;
    let (a, b) = (elements(a)?, elements(b)?);
    if a.len() != b.len() {
        return Err(PyValueError::new_err("field inputs differ in length"));
    }
    let out = without_gil(py, || probe::field_op_on(path, op, a, b).expect(CHECKED))?;
    let bytes: Vec<u8> = out.iter().flatten().flat_map(fpx8::limbs_to_be).collect();
    Ok(PyBytes::new(py, &bytes))
}

/// A decoded point's blst limbs as little-endian bytes (equal points, equal bytes),
/// or the refusal's message.
fn point_or_message<T>(
    py: Python<'_>,
    decoded: Result<T, &str>,
    words: impl Fn(&T) -> Vec<u64>,
) -> PyResult<PyObject> {
    Ok(match decoded {
        Ok(point) => {
            let bytes: Vec<u8> = words(&point).iter().flat_map(|w| w.to_le_bytes()).collect();
            PyBytes::new(py, &bytes).into_any().unbind()
        }
        Err(message) => message.into_pyobject(py)?.into_any().unbind(),
    })
}

/// Each key decoded on a path ("none" is blst's decode): x then y as blst limbs, or
/// the refusal's message.
#[pyfunction]
fn g1_decode_on(
    py: Python<'_>,
    keys: Vec<Bound<'_, PyBytes>>,
    path: &str,
) -> PyResult<Vec<PyObject>> {
    let path = layer_or_blst(path)?;
    let refs: Vec<&[u8]> = keys.iter().map(|key| key.as_bytes()).collect();
    let decoded = without_gil(py, || decode::g1_many_on(&refs, path))?;
    decoded
        .into_iter()
        .map(|item| point_or_message(py, item, |p| [p.x.l, p.y.l].concat()))
        .collect()
}

/// Each signature decoded on a path, as `g1_decode_on` (x0, x1, y0, y1).
#[pyfunction]
fn g2_decode_on(
    py: Python<'_>,
    signatures: Vec<Bound<'_, PyBytes>>,
    path: &str,
) -> PyResult<Vec<PyObject>> {
    let path = layer_or_blst(path)?;
    let refs: Vec<&[u8]> = signatures.iter().map(|item| item.as_bytes()).collect();
    let decoded = without_gil(py, || decode::g2_many_on(&refs, path))?;
    decoded
        .into_iter()
        .map(|item| {
            point_or_message(py, item, |p| {
                [p.x.fp[0].l, p.x.fp[1].l, p.y.fp[0].l, p.y.fp[1].l].concat()
            })
        })
        .collect()
}

/// Seconds for `iterations` dependent 8-lane Montgomery multiplications on a layer.
#[pyfunction]
fn bench_fpx8_mul(py: Python<'_>, path: &str, iterations: usize) -> PyResult<f64> {
    let path = layer(path)?;
    without_gil(py, || {
        let start = Instant::now();
        black_box(probe::mul_chain_on(path, iterations).expect(CHECKED));
        start.elapsed().as_secs_f64()
    })
}

/// Seconds per 8-lane multiplication over `iterations` rounds of independent chains
/// on a lane layer (the throughput beside `bench_fpx8_mul`'s latency).
#[pyfunction]
fn bench_fpx8_mul_independent(py: Python<'_>, path: &str, iterations: usize) -> PyResult<f64> {
    let path = layer(path)?;
    without_gil(py, || {
        let start = Instant::now();
        black_box(probe::mul_independent_on(path, iterations).expect(CHECKED));
        start.elapsed().as_secs_f64() / probe::INDEPENDENT_CHAINS as f64
    })
}

/// Seconds for `iterations` rounds of 8 blst multiplications (mul_mont_384).
#[pyfunction]
fn bench_blst_fp_mul(py: Python<'_>, iterations: usize) -> PyResult<f64> {
    without_gil(py, || {
        let start = Instant::now();
        black_box(baseline::fp_mul_rounds(iterations));
        start.elapsed().as_secs_f64()
    })
}

/// sign_many of the keys on a lane layer ("portable", "avx512ifma"), or on blst's
/// multiplication ("none"), whatever the dispatch says.
#[pyfunction]
fn sign_many_lanes<'py>(
    py: Python<'py>,
    sks: Vec<Bound<'py, PyAny>>,
    message: &[u8],
    path: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let path = layer_or_blst(path)?;
    let mut secrets = Vec::with_capacity(sks.len());
    for sk in &sks {
        secrets.push(secret_key(sk)?);
    }
    let signatures = without_gil(py, || sign::sign_many_on(&secrets, message, path))?;
    Ok(signatures.iter().map(|signature| PyBytes::new(py, signature)).collect())
}

/// sk_to_pk of each key on a lane layer, eight keys a pass (the constant-time
/// kernel of `bls_lanes::mul::g1`; not behind a public call).
#[pyfunction]
fn sk_to_pk_lanes<'py>(
    py: Python<'py>,
    sks: Vec<Bound<'py, PyAny>>,
    path: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let path = layer(path)?;
    let mut secrets = Vec::with_capacity(sks.len());
    for sk in &sks {
        secrets.push(secret_key(sk)?);
    }
    let keys: Vec<[u8; 48]> = without_gil(py, || {
        let mut keys = Vec::with_capacity(secrets.len());
        for chunk in secrets.chunks(8) {
            let scalars = Zeroizing::new(std::array::from_fn(|lane| {
                chunk[lane.min(chunk.len() - 1)].le_words()
            }));
            let chunk_keys = mul::public_keys_on(path, &scalars).expect(CHECKED);
            keys.extend_from_slice(&chunk_keys[..chunk.len()]);
        }
        keys
    })?;
    Ok(keys.iter().map(|key| PyBytes::new(py, key)).collect())
}

pub fn add_to(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(lane_op, module)?)?;
    module.add_function(wrap_pyfunction!(fpx8_op, module)?)?;
    module.add_function(wrap_pyfunction!(g1_decode_on, module)?)?;
    module.add_function(wrap_pyfunction!(g2_decode_on, module)?)?;
    module.add_function(wrap_pyfunction!(bench_fpx8_mul, module)?)?;
    module.add_function(wrap_pyfunction!(bench_fpx8_mul_independent, module)?)?;
    module.add_function(wrap_pyfunction!(bench_blst_fp_mul, module)?)?;
    module.add_function(wrap_pyfunction!(sign_many_lanes, module)?)?;
    module.add_function(wrap_pyfunction!(sk_to_pk_lanes, module)?)?;
    Ok(())
}
