//! The Python boundary of the SIMD layer: the dispatch (`set_simd`, `simd_path`,
//! `ifma_available`) and hooks for the differential tests and bench/crypto.py that
//! run one lane layer by name (`lane_op`, `fp8_op`, `g1_decode_on`, `bench_*`).
//! Values cross as little-endian u64 words (lane ops) or 48-byte big-endian field
//! elements, eight lanes at a time.

use crate::curve;
use crate::fp8::{self, Fp8, Limbs};
use crate::g1_lanes;
use crate::g1_mul_lanes;
use crate::g2_lanes;
use crate::lane::LaneOps;
use crate::sign_lanes;
use crate::simd::{self, Kernel, Path};
use crate::without_gil;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::hint::black_box;
use std::time::Instant;

/// Apply a `VALIDATOR_BLS_SIMD` mode (auto, off, portable, require); the path name.
#[pyfunction]
pub fn set_simd(mode: &str) -> PyResult<&'static str> {
    simd::configure(mode).map(Path::name).map_err(PyValueError::new_err)
}

/// The path the kernels take now: "avx512ifma", "portable" or "none".
#[pyfunction]
pub fn simd_path() -> &'static str {
    simd::current().name()
}

#[pyfunction]
pub fn ifma_available() -> bool {
    simd::ifma_available()
}

/// A lane layer named by a test: "portable" or "avx512ifma" (refused without IFMA).
fn layer(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Portable) => Ok(Path::Portable),
        Some(Path::Ifma) if simd::ifma_available() => Ok(Path::Ifma),
        Some(Path::Ifma) => Err(PyValueError::new_err("this CPU has no AVX-512 IFMA")),
        _ => Err(PyValueError::new_err(format!("no lane layer named {name:?}"))),
    }
}

fn run<K: Kernel>(path: Path, kernel: K) -> K::Output {
    simd::run_on(path, kernel).expect("a lane layer was checked")
}

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

#[derive(Clone, Copy)]
enum LaneOp {
    Madd52Lo,
    Madd52Hi,
    Add,
    Sub,
    And,
    Or,
    Shr52,
    Shr63,
    Shl12,
    Eq,
    Lt,
    Select,
}

struct LaneOps3 {
    op: LaneOp,
    a: Vec<[u64; 8]>,
    b: Vec<[u64; 8]>,
    c: Vec<[u64; 8]>,
}

fn mask_words(mask: u8) -> [u64; 8] {
    std::array::from_fn(|lane| ((mask >> lane) & 1) as u64)
}

impl Kernel for LaneOps3 {
    type Output = Vec<[u64; 8]>;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Vec<[u64; 8]> {
        let mut out = Vec::with_capacity(self.a.len());
        for index in 0..self.a.len() {
            let (a, b, c) = (o.load(&self.a[index]), o.load(&self.b[index]), o.load(&self.c[index]));
            out.push(match self.op {
                LaneOp::Madd52Lo => o.store(o.madd52lo(a, b, c)),
                LaneOp::Madd52Hi => o.store(o.madd52hi(a, b, c)),
                LaneOp::Add => o.store(o.add(a, b)),
                LaneOp::Sub => o.store(o.sub(a, b)),
                LaneOp::And => o.store(o.and(a, b)),
                LaneOp::Or => o.store(o.or(a, b)),
                LaneOp::Shr52 => o.store(o.shr::<52>(a)),
                LaneOp::Shr63 => o.store(o.shr::<63>(a)),
                LaneOp::Shl12 => o.store(o.shl::<12>(a)),
                LaneOp::Eq => mask_words(o.eq_mask(a, b)),
                LaneOp::Lt => mask_words(o.lt_mask(a, b)),
                // The mask: bit 0 of each lane of c.
                LaneOp::Select => {
                    let mask = self.c[index]
                        .iter()
                        .enumerate()
                        .fold(0u8, |bits, (lane, word)| bits | (((word & 1) as u8) << lane));
                    o.store(o.select(mask, a, b))
                }
            });
        }
        out
    }
}

/// One lane operation over whole vectors of u64 words (little-endian bytes); masks
/// come back as one word per lane, 0 or 1.
#[pyfunction]
pub fn lane_op<'py>(
    py: Python<'py>,
    op: &str,
    path: &str,
    a: &[u8],
    b: &[u8],
    c: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let path = layer(path)?;
    let op = match op {
        "madd52lo" => LaneOp::Madd52Lo,
        "madd52hi" => LaneOp::Madd52Hi,
        "add" => LaneOp::Add,
        "sub" => LaneOp::Sub,
        "and" => LaneOp::And,
        "or" => LaneOp::Or,
        "shr52" => LaneOp::Shr52,
        "shr63" => LaneOp::Shr63,
        "shl12" => LaneOp::Shl12,
        "eq" => LaneOp::Eq,
        "lt" => LaneOp::Lt,
        "select" => LaneOp::Select,
        other => return Err(PyValueError::new_err(format!("no lane operation {other:?}"))),
    };
    let (a, b, c) = (vectors_of_words(a)?, vectors_of_words(b)?, vectors_of_words(c)?);
    if a.len() != b.len() || a.len() != c.len() {
        return Err(PyValueError::new_err("lane inputs differ in length"));
    }
    let out = without_gil(py, || run(path, LaneOps3 { op, a, b, c }))?;
    let bytes: Vec<u8> = out.iter().flatten().flat_map(|word| word.to_le_bytes()).collect();
    Ok(PyBytes::new(py, &bytes))
}

#[derive(Clone, Copy)]
enum FieldOp {
    Mul,
    Sqr,
    Add,
    Sub,
    Neg,
    ToMontgomery,
    FromMontgomery,
    ToBlst,
    FromBlst,
    SqrtPow,
}

struct FieldOps {
    op: FieldOp,
    a: Vec<[Limbs; 8]>,
    b: Vec<[Limbs; 8]>,
}

impl Kernel for FieldOps {
    type Output = Vec<[Limbs; 8]>;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Vec<[Limbs; 8]> {
        let f = Fp8::new(o);
        let mut out = Vec::with_capacity(self.a.len());
        for (a, b) in self.a.iter().zip(self.b.iter()) {
            let (a, b) = (f.pack(a), f.pack(b));
            let result = match self.op {
                FieldOp::Mul => f.mul(&a, &b),
                FieldOp::Sqr => f.sqr(&a),
                FieldOp::Add => f.add(&a, &b),
                FieldOp::Sub => f.sub(&a, &b),
                FieldOp::Neg => f.neg(&a),
                FieldOp::ToMontgomery => f.to_montgomery(&a),
                FieldOp::FromMontgomery => f.out_of_montgomery(&a),
                FieldOp::ToBlst => f.to_blst_form(&a),
                FieldOp::FromBlst => f.blst_to_ours(&a),
                FieldOp::SqrtPow => f.pow_public(&a, &fp8::SQRT_EXPONENT),
            };
            out.push(f.unpack(&result));
        }
        out
    }
}

fn elements(data: &[u8]) -> PyResult<Vec<[Limbs; 8]>> {
    if !data.len().is_multiple_of(8 * 48) {
        return Err(PyValueError::new_err("field input is whole groups of 8 48-byte elements"));
    }
    let mut out = Vec::with_capacity(data.len() / (8 * 48));
    for group in data.chunks(8 * 48) {
        let mut lanes = [[0u64; 8]; 8];
        for (lane, bytes) in group.chunks(48).enumerate() {
            let limbs = fp8::limbs_from_be(bytes.try_into().expect("48 bytes"));
            if !fp8::below_modulus(&limbs) {
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
pub fn fp8_op<'py>(
    py: Python<'py>,
    op: &str,
    path: &str,
    a: &[u8],
    b: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let path = layer(path)?;
    let op = match op {
        "mul" => FieldOp::Mul,
        "sqr" => FieldOp::Sqr,
        "add" => FieldOp::Add,
        "sub" => FieldOp::Sub,
        "neg" => FieldOp::Neg,
        "to_montgomery" => FieldOp::ToMontgomery,
        "from_montgomery" => FieldOp::FromMontgomery,
        "to_blst" => FieldOp::ToBlst,
        "from_blst" => FieldOp::FromBlst,
        "sqrt_pow" => FieldOp::SqrtPow,
        other => return Err(PyValueError::new_err(format!("no field operation {other:?}"))),
    };
    let (a, b) = (elements(a)?, elements(b)?);
    if a.len() != b.len() {
        return Err(PyValueError::new_err("field inputs differ in length"));
    }
    let out = without_gil(py, || run(path, FieldOps { op, a, b }))?;
    let bytes: Vec<u8> = out.iter().flatten().flat_map(fp8::limbs_to_be).collect();
    Ok(PyBytes::new(py, &bytes))
}

fn decode_path(name: &str) -> PyResult<Path> {
    match Path::from_name(name) {
        Some(Path::Off) => Ok(Path::Off),
        _ => layer(name),
    }
}

/// A decoded point's blst limbs as little-endian bytes (equal points, equal bytes),
/// or the refusal's message.
fn point_or_message<T>(py: Python<'_>, decoded: Result<T, &str>, words: impl Fn(&T) -> Vec<u64>) -> PyResult<PyObject> {
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
pub fn g1_decode_on(
    py: Python<'_>,
    keys: Vec<Bound<'_, PyBytes>>,
    path: &str,
) -> PyResult<Vec<PyObject>> {
    let path = decode_path(path)?;
    let refs: Vec<&[u8]> = keys.iter().map(|key| key.as_bytes()).collect();
    let decoded = without_gil(py, || g1_lanes::decode_many_on(&refs, path))?;
    decoded
        .into_iter()
        .map(|item| point_or_message(py, item, |p| [p.x.l, p.y.l].concat()))
        .collect()
}

/// Each signature decoded on a path, as `g1_decode_on` (x0, x1, y0, y1).
#[pyfunction]
pub fn g2_decode_on(
    py: Python<'_>,
    signatures: Vec<Bound<'_, PyBytes>>,
    path: &str,
) -> PyResult<Vec<PyObject>> {
    let path = decode_path(path)?;
    let refs: Vec<&[u8]> = signatures.iter().map(|item| item.as_bytes()).collect();
    let decoded = without_gil(py, || g2_lanes::decode_many_on(&refs, path))?;
    decoded
        .into_iter()
        .map(|item| {
            point_or_message(py, item, |p| {
                [p.x.fp[0].l, p.x.fp[1].l, p.y.fp[0].l, p.y.fp[1].l].concat()
            })
        })
        .collect()
}

struct MulChain {
    iterations: usize,
}

impl Kernel for MulChain {
    type Output = [Limbs; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Limbs; 8] {
        let f = Fp8::new(o);
        let mut acc = f.one();
        let factor = f.to_montgomery(&f.constant(&[3, 0, 0, 0, 0, 0, 0, 0]));
        for _ in 0..self.iterations {
            acc = f.mul(&black_box(acc), &factor);
        }
        f.unpack(&acc)
    }
}

/// Seconds for `iterations` 8-lane Montgomery multiplications on a layer.
#[pyfunction]
pub fn bench_fp8_mul(py: Python<'_>, path: &str, iterations: usize) -> PyResult<f64> {
    let path = layer(path)?;
    without_gil(py, || {
        let start = Instant::now();
        black_box(run(path, MulChain { iterations }));
        start.elapsed().as_secs_f64()
    })
}

/// Seconds for `iterations` rounds of 8 blst multiplications (mul_mont_384).
#[pyfunction]
pub fn bench_blst_fp_mul(py: Python<'_>, iterations: usize) -> PyResult<f64> {
    without_gil(py, || {
        let start = Instant::now();
        black_box(curve::fp_mul_rounds(iterations));
        start.elapsed().as_secs_f64()
    })
}

/// sign_many of the keys on a lane layer ("portable", "avx512ifma"), or on blst's
/// multiplication ("none"), whatever the dispatch says.
#[pyfunction]
pub fn sign_many_lanes<'py>(
    py: Python<'py>,
    sks: Vec<Bound<'py, PyAny>>,
    message: &[u8],
    path: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let path = match Path::from_name(path) {
        Some(Path::Off) => Path::Off,
        _ => layer(path)?,
    };
    let mut secrets = Vec::with_capacity(sks.len());
    for sk in &sks {
        secrets.push(crate::secret_key(sk)?);
    }
    let signatures = without_gil(py, || sign_lanes::sign_many_on(&secrets, message, path))?;
    Ok(signatures.iter().map(|signature| PyBytes::new(py, signature)).collect())
}

struct PublicKeys {
    scalars: [[u64; 4]; 8],
}

impl Kernel for PublicKeys {
    type Output = [[u8; 48]; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [[u8; 48]; 8] {
        g1_mul_lanes::public_keys(o, &self.scalars)
    }
}

impl Drop for PublicKeys {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.scalars);
    }
}

/// sk_to_pk of each key on a lane layer, eight keys a pass (the constant-time
/// kernel of g1_mul_lanes.rs; not yet behind a public call).
#[pyfunction]
pub fn sk_to_pk_lanes<'py>(
    py: Python<'py>,
    sks: Vec<Bound<'py, PyAny>>,
    path: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let path = layer(path)?;
    let mut secrets = Vec::with_capacity(sks.len());
    for sk in &sks {
        secrets.push(crate::secret_key(sk)?);
    }
    let keys: Vec<[u8; 48]> = without_gil(py, || {
        let mut keys = Vec::with_capacity(secrets.len());
        for chunk in secrets.chunks(8) {
            let kernel = PublicKeys {
                scalars: std::array::from_fn(|lane| chunk[lane.min(chunk.len() - 1)].le_words()),
            };
            keys.extend_from_slice(&run(path, kernel)[..chunk.len()]);
        }
        keys
    })?;
    Ok(keys.iter().map(|key| PyBytes::new(py, key)).collect())
}
