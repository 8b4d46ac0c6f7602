//! `crypto_backend._native`: BLS12-381 of the consensus ciphersuite on blst.
//!
//! Every function that computes releases the GIL (`Python::allow_threads`) around
//! its work, so Python threads run BLS calls at the same time, and the batch forms
//! spread over the worker threads (`bls_suite::threads`). A panic anywhere in the
//! work, on the calling thread or a worker, is caught and raised as `RuntimeError`:
//! it never becomes a verdict or a missing signature. The Python modules above this
//! one (`crypto_backend.blst_backend`) coerce input types; this layer still refuses
//! anything malformed on its own.
//!
//! This crate is only the Python boundary: one thin `#[pyfunction]` per public
//! operation, each with its GIL release and panic guard, over `bls_suite`. The
//! hooks of the tests and benchmarks are in the `testing` submodule, not an API.

mod secret;
mod testing;

use bls_lanes::dispatch::{self, Path};
use bls_suite::curve::{self, G1Affine, G2Affine};
use bls_suite::{
    batch, cache, ciphersuite as suite, decode, pairing, sign as signing, sums, test_panic, threads,
};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The blst crate this extension is built on (kept equal to Cargo.lock by a test).
const BLST_VERSION: &str = "0.3.17";

static BLS_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

pub(crate) fn bls_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    let class = BLS_ERROR.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let module = py.import("crypto_backend.errors")?;
        Ok(module.getattr("BlsError")?.downcast_into::<PyType>()?.unbind())
    });
    match class {
        Ok(class) => PyErr::from_type(class.bind(py).clone(), message.into()),
        Err(error) => error,
    }
}

/// Run `work` without the GIL; a panic inside becomes a Python `RuntimeError`.
pub(crate) fn without_gil<R: Send>(py: Python<'_>, work: impl FnOnce() -> R + Send) -> PyResult<R> {
    py.allow_threads(|| catch_unwind(AssertUnwindSafe(work))).map_err(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        PyRuntimeError::new_err(format!("crypto_backend native core failed: {detail}"))
    })
}

pub(crate) fn secret_key(value: &Bound<'_, PyAny>) -> PyResult<curve::SecretScalar> {
    secret::extract(value).map_err(|error| match error {
        secret::SecretError::Type(message) => PyTypeError::new_err(message),
        secret::SecretError::Range => bls_error(value.py(), "a secret key must be in [1, r - 1]"),
    })
}

pub(crate) fn slices<'a>(items: &'a [Bound<'_, PyBytes>]) -> Vec<&'a [u8]> {
    items.iter().map(|item| item.as_bytes()).collect()
}

// -- the key cache ------------------------------------------------------------------

#[pyclass(frozen, name = "KeyCache", module = "crypto_backend._native")]
pub(crate) struct PyKeyCache {
    pub(crate) cache: cache::KeyCache,
}

#[pymethods]
impl PyKeyCache {
    #[new]
    fn new(maxsize: usize) -> PyResult<Self> {
        cache::KeyCache::new(maxsize)
            .map(|cache| PyKeyCache { cache })
            .ok_or_else(|| PyValueError::new_err("key cache size must be at least 1"))
    }

    /// The validated key point, or None when the key is refused.
    fn lookup(&self, py: Python<'_>, pubkey: &[u8]) -> PyResult<Option<G1Point>> {
        let found = without_gil(py, || self.cache.resolve(&[pubkey])[0])?;
        Ok(found.map(|point| G1Point { point }))
    }

    /// (hits, misses, size, maxsize)
    fn stats(&self) -> (u64, u64, usize, usize) {
        self.cache.stats()
    }

    fn clear(&self) {
        self.cache.clear()
    }
}

// -- worker threads ------------------------------------------------------------------

/// How many worker threads the batch forms use (`VALIDATOR_BLS_LANES`).
#[pyfunction]
fn set_lanes(count: usize) -> PyResult<()> {
    if count < 1 {
        return Err(PyValueError::new_err("lanes must be at least 1"));
    }
    threads::set_threads(count);
    Ok(())
}

#[pyfunction]
fn lane_count() -> usize {
    threads::threads()
}

// -- the ciphersuite ------------------------------------------------------------------

#[pyfunction]
fn sk_to_pk<'py>(py: Python<'py>, sk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let secret = secret_key(sk)?;
    let encoded = without_gil(py, || curve::encode_g1(&secret.public_key()))?;
    Ok(PyBytes::new(py, &encoded))
}

#[pyfunction]
fn sign<'py>(
    py: Python<'py>,
    sk: &Bound<'py, PyAny>,
    message: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let secret = secret_key(sk)?;
    let encoded = without_gil(py, || {
        curve::encode_g2(&secret.sign_hashed(&curve::hash_to_g2(message, curve::DST)))
    })?;
    Ok(PyBytes::new(py, &encoded))
}

/// Every key is read and range-checked before anything is signed; the message is
/// hashed once; the signing spreads over the worker threads (and, on a SIMD path,
/// over the 8-lane kernel: `bls_suite::sign`).
#[pyfunction]
fn sign_many<'py>(
    py: Python<'py>,
    sks: Vec<Bound<'py, PyAny>>,
    message: &[u8],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    // Sized once: a growing Vec would leave copies of moved scalars in freed memory.
    let mut secrets: Vec<curve::SecretScalar> = Vec::with_capacity(sks.len());
    for sk in &sks {
        secrets.push(secret_key(sk)?);
    }
    if secrets.is_empty() {
        return Ok(Vec::new());
    }
    let signatures = without_gil(py, || signing::sign_many(&secrets, message))?;
    drop(secrets); // zeroed on drop
    Ok(signatures.iter().map(|signature| PyBytes::new(py, signature)).collect())
}

#[pyfunction]
fn key_validate(py: Python<'_>, cache: &Bound<'_, PyKeyCache>, pubkey: &[u8]) -> PyResult<bool> {
    let cache = &cache.get().cache;
    without_gil(py, || suite::key_validate(cache, pubkey))
}

#[pyfunction]
fn key_validate_many(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    pubkeys: Vec<Bound<'_, PyBytes>>,
) -> PyResult<Vec<bool>> {
    let cache = &cache.get().cache;
    let keys = slices(&pubkeys);
    without_gil(py, || {
        test_panic::maybe_panic(test_panic::Site::KeyDecode);
        cache.resolve(&keys).iter().map(Option::is_some).collect()
    })
}

#[pyfunction]
fn verify(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    pubkey: &[u8],
    message: &[u8],
    signature: &[u8],
) -> PyResult<bool> {
    let cache = &cache.get().cache;
    without_gil(py, || {
        test_panic::maybe_panic(test_panic::Site::Verify);
        suite::verify(cache, pubkey, message, signature)
    })
}

#[pyfunction]
fn fast_aggregate_verify(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    pubkeys: Vec<Bound<'_, PyBytes>>,
    message: &[u8],
    signature: &[u8],
) -> PyResult<bool> {
    let cache = &cache.get().cache;
    let keys = slices(&pubkeys);
    without_gil(py, || suite::fast_aggregate_verify(cache, &keys, message, signature))
}

#[pyfunction]
fn eth_fast_aggregate_verify(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    pubkeys: Vec<Bound<'_, PyBytes>>,
    message: &[u8],
    signature: &[u8],
) -> PyResult<bool> {
    let cache = &cache.get().cache;
    let keys = slices(&pubkeys);
    without_gil(py, || suite::eth_fast_aggregate_verify(cache, &keys, message, signature))
}

#[pyfunction]
fn aggregate_verify(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    pubkeys: Vec<Bound<'_, PyBytes>>,
    messages: Vec<Bound<'_, PyBytes>>,
    signature: &[u8],
) -> PyResult<bool> {
    let cache = &cache.get().cache;
    let keys = slices(&pubkeys);
    let texts = slices(&messages);
    without_gil(py, || suite::aggregate_verify(cache, &keys, &texts, signature))
}

#[pyfunction]
fn aggregate<'py>(
    py: Python<'py>,
    signatures: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let items = slices(&signatures);
    match without_gil(py, || suite::aggregate(&items))? {
        Ok(encoded) => Ok(PyBytes::new(py, &encoded)),
        Err(message) => Err(bls_error(py, message)),
    }
}

#[pyfunction]
fn eth_aggregate_pubkeys<'py>(
    py: Python<'py>,
    cache: &Bound<'py, PyKeyCache>,
    pubkeys: Vec<Bound<'py, PyBytes>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let cache = &cache.get().cache;
    let keys = slices(&pubkeys);
    match without_gil(py, || suite::eth_aggregate_pubkeys(cache, &keys))? {
        Ok(encoded) => Ok(PyBytes::new(py, &encoded)),
        Err(message) => Err(bls_error(py, message)),
    }
}

type PySet<'py> = (Vec<Bound<'py, PyBytes>>, Bound<'py, PyBytes>, Bound<'py, PyBytes>);

/// `weights`: one random 64-bit non-zero weight per set, drawn by the caller from
/// the OS at call time.
#[pyfunction]
fn verify_signature_sets(
    py: Python<'_>,
    cache: &Bound<'_, PyKeyCache>,
    sets: Vec<PySet<'_>>,
    weights: Vec<u64>,
) -> PyResult<bool> {
    let cache = &cache.get().cache;
    let refs: Vec<batch::SetRef> = sets
        .iter()
        .map(|(keys, message, signature)| batch::SetRef {
            keys: slices(keys),
            message: message.as_bytes(),
            signature: signature.as_bytes(),
        })
        .collect();
    without_gil(py, || batch::verify_signature_sets(cache, &refs, &weights))
}

// -- group primitives (the backend protocol of crypto_backend/backend.py) ---------------

#[pyclass(frozen, name = "G1Point", module = "crypto_backend._native")]
#[derive(Clone)]
pub(crate) struct G1Point {
    pub(crate) point: G1Affine,
}

#[pyclass(frozen, name = "G2Point", module = "crypto_backend._native")]
#[derive(Clone)]
pub(crate) struct G2Point {
    pub(crate) point: G2Affine,
}

#[pymethods]
impl G1Point {
    fn __eq__(&self, other: &Self) -> bool {
        curve::encode_g1_affine(&self.point) == curve::encode_g1_affine(&other.point)
    }
    fn __repr__(&self) -> String {
        let encoded = curve::encode_g1_affine(&self.point);
        format!("G1Point({})", encoded.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

#[pymethods]
impl G2Point {
    fn __eq__(&self, other: &Self) -> bool {
        curve::encode_g2_affine(&self.point)[..] == curve::encode_g2_affine(&other.point)[..]
    }
    fn __repr__(&self) -> String {
        let encoded = curve::encode_g2_affine(&self.point);
        format!("G2Point({})", encoded.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }
}

#[pyfunction]
fn decode_g1(py: Python<'_>, data: &[u8]) -> PyResult<G1Point> {
    match without_gil(py, || decode::g1_many(&[data])[0])? {
        Ok(point) => Ok(G1Point { point }),
        Err(error) => Err(bls_error(py, format!("invalid G1 point: {error}"))),
    }
}

#[pyfunction]
fn decode_g2(py: Python<'_>, data: &[u8]) -> PyResult<G2Point> {
    match without_gil(py, || decode::g2_one(data))? {
        Ok(point) => Ok(G2Point { point }),
        Err(error) => Err(bls_error(py, format!("invalid G2 point: {error}"))),
    }
}

#[pyfunction]
fn encode_g1<'py>(py: Python<'py>, point: &G1Point) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &curve::encode_g1_affine(&point.point))
}

#[pyfunction]
fn encode_g2<'py>(py: Python<'py>, point: &G2Point) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &curve::encode_g2_affine(&point.point))
}

#[pyfunction]
fn g1_is_identity(point: &G1Point) -> bool {
    curve::g1_affine_is_identity(&point.point)
}

#[pyfunction]
fn g2_is_identity(point: &G2Point) -> bool {
    curve::g2_affine_is_identity(&point.point)
}

#[pyfunction]
fn g1_generator_times(py: Python<'_>, scalar: &Bound<'_, PyAny>) -> PyResult<G1Point> {
    let secret = secret_key(scalar)?;
    let point = without_gil(py, || curve::g1_to_affine(&secret.public_key()))?;
    Ok(G1Point { point })
}

#[pyfunction]
fn g2_times(py: Python<'_>, point: &G2Point, scalar: &Bound<'_, PyAny>) -> PyResult<G2Point> {
    let secret = secret_key(scalar)?;
    let base = curve::g2_from_affine(&point.point);
    let point = without_gil(py, || curve::g2_to_affine(&secret.sign_hashed(&base)))?;
    Ok(G2Point { point })
}

#[pyfunction]
fn hash_to_g2(py: Python<'_>, message: &[u8], dst: &[u8]) -> PyResult<G2Point> {
    let point = without_gil(py, || curve::g2_to_affine(&curve::hash_to_g2(message, dst)))?;
    Ok(G2Point { point })
}

#[pyfunction]
fn g1_sum(points: Vec<G1Point>) -> G1Point {
    let affine: Vec<G1Affine> = points.iter().map(|p| p.point).collect();
    G1Point { point: curve::g1_to_affine(&sums::sum::<sums::Keys>(&affine)) }
}

#[pyfunction]
fn g2_sum(points: Vec<G2Point>) -> G2Point {
    let affine: Vec<G2Affine> = points.iter().map(|p| p.point).collect();
    G2Point { point: curve::g2_to_affine(&sums::sum::<sums::Signatures>(&affine)) }
}

fn check_weights(count: usize, weights: &[u64]) -> PyResult<()> {
    if count == 0 || count != weights.len() {
        return Err(PyValueError::new_err(
            "weighted_sum needs as many weights as points, at least one",
        ));
    }
    if weights.contains(&0) {
        return Err(PyValueError::new_err("weights must be positive"));
    }
    Ok(())
}

#[pyfunction]
fn g1_weighted_sum(py: Python<'_>, points: Vec<G1Point>, weights: Vec<u64>) -> PyResult<G1Point> {
    check_weights(points.len(), &weights)?;
    let affine: Vec<G1Affine> = points.iter().map(|p| p.point).collect();
    let point = without_gil(py, || {
        curve::g1_to_affine(&sums::weighted_sum::<sums::Keys>(&affine, &weights))
    })?;
    Ok(G1Point { point })
}

#[pyfunction]
fn g2_weighted_sum(py: Python<'_>, points: Vec<G2Point>, weights: Vec<u64>) -> PyResult<G2Point> {
    check_weights(points.len(), &weights)?;
    let affine: Vec<G2Affine> = points.iter().map(|p| p.point).collect();
    let point = without_gil(py, || {
        curve::g2_to_affine(&sums::weighted_sum::<sums::Signatures>(&affine, &weights))
    })?;
    Ok(G2Point { point })
}

#[pyfunction]
fn pairings_equal_signature(
    py: Python<'_>,
    pairs: Vec<(G1Point, G2Point)>,
    signature: &G2Point,
) -> PyResult<bool> {
    if pairs.is_empty() {
        return Err(PyValueError::new_err("a pairing check needs at least one pair"));
    }
    let pairs: Vec<(G1Affine, G2Affine)> = pairs.iter().map(|(p, q)| (p.point, q.point)).collect();
    let signature = signature.point;
    without_gil(py, || pairing::pairings_equal_signature(&pairs, &signature))
}

// -- the SIMD dispatch ------------------------------------------------------------------

/// Apply a `VALIDATOR_BLS_SIMD` mode (auto, off, portable, require); the path name.
#[pyfunction]
fn set_simd(mode: &str) -> PyResult<&'static str> {
    dispatch::configure(mode).map(Path::name).map_err(PyValueError::new_err)
}

/// The path the kernels take now: "avx512ifma", "portable" or "none".
#[pyfunction]
fn simd_path() -> &'static str {
    dispatch::current().name()
}

#[pyfunction]
fn ifma_available() -> bool {
    dispatch::ifma_available()
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    module.add("BLST_VERSION", BLST_VERSION)?;
    module.add_class::<PyKeyCache>()?;
    module.add_class::<G1Point>()?;
    module.add_class::<G2Point>()?;
    module.add_function(wrap_pyfunction!(set_lanes, module)?)?;
    module.add_function(wrap_pyfunction!(lane_count, module)?)?;
    module.add_function(wrap_pyfunction!(sk_to_pk, module)?)?;
    module.add_function(wrap_pyfunction!(sign, module)?)?;
    module.add_function(wrap_pyfunction!(sign_many, module)?)?;
    module.add_function(wrap_pyfunction!(key_validate, module)?)?;
    module.add_function(wrap_pyfunction!(key_validate_many, module)?)?;
    module.add_function(wrap_pyfunction!(verify, module)?)?;
    module.add_function(wrap_pyfunction!(fast_aggregate_verify, module)?)?;
    module.add_function(wrap_pyfunction!(eth_fast_aggregate_verify, module)?)?;
    module.add_function(wrap_pyfunction!(aggregate_verify, module)?)?;
    module.add_function(wrap_pyfunction!(aggregate, module)?)?;
    module.add_function(wrap_pyfunction!(eth_aggregate_pubkeys, module)?)?;
    module.add_function(wrap_pyfunction!(verify_signature_sets, module)?)?;
    module.add_function(wrap_pyfunction!(decode_g1, module)?)?;
    module.add_function(wrap_pyfunction!(decode_g2, module)?)?;
    module.add_function(wrap_pyfunction!(encode_g1, module)?)?;
    module.add_function(wrap_pyfunction!(encode_g2, module)?)?;
    module.add_function(wrap_pyfunction!(g1_is_identity, module)?)?;
    module.add_function(wrap_pyfunction!(g2_is_identity, module)?)?;
    module.add_function(wrap_pyfunction!(g1_generator_times, module)?)?;
    module.add_function(wrap_pyfunction!(g2_times, module)?)?;
    module.add_function(wrap_pyfunction!(hash_to_g2, module)?)?;
    module.add_function(wrap_pyfunction!(g1_sum, module)?)?;
    module.add_function(wrap_pyfunction!(g2_sum, module)?)?;
    module.add_function(wrap_pyfunction!(g1_weighted_sum, module)?)?;
    module.add_function(wrap_pyfunction!(g2_weighted_sum, module)?)?;
    module.add_function(wrap_pyfunction!(pairings_equal_signature, module)?)?;
    module.add_function(wrap_pyfunction!(set_simd, module)?)?;
    module.add_function(wrap_pyfunction!(simd_path, module)?)?;
    module.add_function(wrap_pyfunction!(ifma_available, module)?)?;
    testing::add_to(module)?;
    Ok(())
}
