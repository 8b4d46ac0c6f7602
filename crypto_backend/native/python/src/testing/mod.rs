//! `crypto_backend._native.testing`: hooks of the tests and benchmarks, not an API.
//! Counters of the work done, a one-shot panic at a named site, the batch planner,
//! each lane layer by name (`lanes`), the Miller-loop kernel's parts (`miller`), and
//! blst called bare, the baselines of bench/crypto.py (through crypto_backend.baseline).

mod lanes;
mod miller;

use crate::{secret_key, slices, without_gil, G1Point, G2Point};
use bls_lanes::decode::{g1, g2};
use bls_suite::{baseline, batch, curve, hash, pairing, sign, sums, test_panic};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::atomic::Ordering;

/// Pairing checks, hashes to G2 and lane-kernel passes so far in this process.
#[pyfunction]
fn counters(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("pairing_checks", pairing::PAIRING_CHECKS.load(Ordering::SeqCst))?;
    dict.set_item("hashes_to_g2", curve::HASHES_TO_G2.load(Ordering::SeqCst))?;
    dict.set_item("sign_lane_passes", sign::PASSES.load(Ordering::SeqCst))?;
    for (name, counters) in [("g1", &g1::COUNTERS), ("g2", &g2::COUNTERS)] {
        dict.set_item(format!("{name}_lane_passes"), counters.passes.load(Ordering::SeqCst))?;
        dict.set_item(
            format!("{name}_undecided_lanes"),
            counters.undecided.load(Ordering::SeqCst),
        )?;
    }
    dict.set_item("miller_lane_passes", pairing::MILLER_PASSES.load(Ordering::SeqCst))?;
    dict.set_item("cyclotomic_lane_runs", pairing::CYCLOTOMIC_RUNS.load(Ordering::SeqCst))?;
    dict.set_item("spread_miller_loops", pairing::SPREAD_LOOPS.load(Ordering::SeqCst))?;
    dict.set_item("weighted_lane_passes", sums::WEIGHTED_PASSES.load(Ordering::SeqCst))?;
    dict.set_item("signature_sum_lane_passes", sums::SIGNATURE_SUM_PASSES.load(Ordering::SeqCst))?;
    dict.set_item("plain_sum_lane_passes", sums::PLAIN_SUM_PASSES.load(Ordering::SeqCst))?;
    dict.set_item("sum_undecided_lanes", sums::SUM_UNDECIDED.load(Ordering::SeqCst))?;
    dict.set_item("hash_lane_passes", hash::COUNTERS.passes.load(Ordering::SeqCst))?;
    dict.set_item("hash_undecided_lanes", hash::COUNTERS.undecided.load(Ordering::SeqCst))?;
    Ok(dict)
}

/// Arm a one-shot panic at a named site.
#[pyfunction]
fn arm_test_panic(site: &str) -> PyResult<()> {
    let site = test_panic::parse(site).ok_or_else(|| PyValueError::new_err("unknown site"))?;
    test_panic::arm(site);
    Ok(())
}

/// The chunks (set indices, in message order) a batch with these messages is cut
/// into on `threads` worker threads.
#[pyfunction]
fn plan_chunks(messages: Vec<Bound<'_, PyBytes>>, threads: usize) -> Vec<Vec<usize>> {
    batch::plan_chunks(&slices(&messages), threads)
}

/// blst's own decode and subgroup check of a public key, nothing else.
#[pyfunction]
fn baseline_decode_pubkey(py: Python<'_>, data: &[u8]) -> PyResult<G1Point> {
    match without_gil(py, || curve::decode_g1(data))? {
        Ok(point) => Ok(G1Point { point }),
        Err(error) => Err(crate::bls_error(py, format!("invalid G1 point: {error}"))),
    }
}

/// A bare blst core_verify (blst_core_verify_pk_in_g1 after blst's signature decode and
/// subgroup check) on an already decoded key.
#[pyfunction]
fn baseline_core_verify(
    py: Python<'_>,
    pubkey: &G1Point,
    message: &[u8],
    signature: &[u8],
) -> PyResult<bool> {
    let key = pubkey.point;
    without_gil(py, || baseline::bare_core_verify(&key, message, signature))
}

/// A bare multiplication: blst_sign_pk_in_g1 of an already hashed message, compressed.
#[pyfunction]
fn baseline_sign_hashed<'py>(
    py: Python<'py>,
    sk: &Bound<'py, PyAny>,
    hashed: &G2Point,
) -> PyResult<Bound<'py, PyBytes>> {
    let secret = secret_key(sk)?;
    let base = curve::g2_from_affine(&hashed.point);
    let encoded = without_gil(py, || curve::encode_g2(&secret.sign_hashed(&base)))?;
    Ok(PyBytes::new(py, &encoded))
}

/// Adds the `testing` submodule to the extension, importable by its dotted name.
pub fn add_to(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = parent.py();
    let module = PyModule::new(py, "testing")?;
    module.add_function(wrap_pyfunction!(counters, &module)?)?;
    module.add_function(wrap_pyfunction!(arm_test_panic, &module)?)?;
    module.add_function(wrap_pyfunction!(plan_chunks, &module)?)?;
    module.add_function(wrap_pyfunction!(baseline_decode_pubkey, &module)?)?;
    module.add_function(wrap_pyfunction!(baseline_core_verify, &module)?)?;
    module.add_function(wrap_pyfunction!(baseline_sign_hashed, &module)?)?;
    lanes::add_to(&module)?;
    miller::add_to(&module)?;
    parent.add_submodule(&module)?;
    // `import crypto_backend._native.testing` looks in sys.modules first.
    py.import("sys")?.getattr("modules")?.set_item("crypto_backend._native.testing", &module)?;
    Ok(())
}
