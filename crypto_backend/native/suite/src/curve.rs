//! Safe wrappers over blst's raw FFI.
//!
//! Soundness: every blst function called here takes pointers to plain-old-data
//! structs (`blst_p1`, `blst_p2_affine`, `blst_fp12`, ... are arrays of u64 limbs,
//! `Copy`, valid for any bit pattern blst writes) and byte buffers. Each call passes
//! pointers to live, properly sized Rust values or slices whose lengths are checked
//! (or fixed by the array type) before the call, and blst neither keeps the pointers
//! nor writes past the sizes its C prototypes state. blst is thread-safe: it has no
//! global mutable state, so these functions may run on any thread at once.

use bls_lanes::points::{Fp2Words, G1Words, G2Words};
use blst::*;
use std::sync::atomic::{AtomicU64, Ordering};

pub const PUBKEY_LENGTH: usize = 48;
pub const SIGNATURE_LENGTH: usize = 96;
pub const DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

pub type G1Affine = blst_p1_affine;
pub type G2Affine = blst_p2_affine;
pub type G1 = blst_p1;
pub type G2 = blst_p2;

/// How many messages this process hashed to G2 (tests: each distinct message once).
pub static HASHES_TO_G2: AtomicU64 = AtomicU64::new(0);

/// Checked decode of a compressed G1 point: exact length, valid flags, x below the
/// modulus, on the curve, in G1, and re-encoding gives back exactly the input (one
/// accepted encoding per point). The identity is a valid point here.
pub fn decode_g1(data: &[u8]) -> Result<G1Affine, &'static str> {
    if data.len() != PUBKEY_LENGTH {
        return Err("a G1 point is 48 bytes");
    }
    let mut point = G1Affine::default();
    // SAFETY: `data` holds exactly the 48 bytes blst_p1_uncompress reads.
    let status = unsafe { blst_p1_uncompress(&mut point, data.as_ptr()) };
    if status != BLST_ERROR::BLST_SUCCESS {
        return Err(decode_error(status));
    }
    // SAFETY: `point` is a live affine point written by blst.
    if !unsafe { blst_p1_affine_in_g1(&point) } {
        return Err("point not in the G1 subgroup");
    }
    if encode_g1_affine(&point)[..] != data[..] {
        return Err("non-canonical G1 encoding");
    }
    Ok(point)
}

/// Checked decode of a compressed G2 point (a signature), same rules as `decode_g1`.
pub fn decode_g2(data: &[u8]) -> Result<G2Affine, &'static str> {
    let point = uncompress_g2(data)?;
    // SAFETY: `point` is a live affine point written by blst.
    if !unsafe { blst_p2_affine_in_g2(&point) } {
        return Err("point not in the G2 subgroup");
    }
    canonical_g2(point, data)
}

/// `decode_g2` but for the subgroup check: a canonical encoding of a point on the
/// curve, or the identity. Only for callers that check the subgroup themselves
/// (`pairing::pairings_equal_unchecked_signature`).
pub fn decode_g2_on_curve(data: &[u8]) -> Result<G2Affine, &'static str> {
    canonical_g2(uncompress_g2(data)?, data)
}

fn uncompress_g2(data: &[u8]) -> Result<G2Affine, &'static str> {
    if data.len() != SIGNATURE_LENGTH {
        return Err("a G2 point is 96 bytes");
    }
    let mut point = G2Affine::default();
    // SAFETY: `data` holds exactly the 96 bytes blst_p2_uncompress reads.
    let status = unsafe { blst_p2_uncompress(&mut point, data.as_ptr()) };
    if status != BLST_ERROR::BLST_SUCCESS {
        return Err(decode_error(status));
    }
    Ok(point)
}

fn canonical_g2(point: G2Affine, data: &[u8]) -> Result<G2Affine, &'static str> {
    if encode_g2_affine(&point)[..] != data[..] {
        return Err("non-canonical G2 encoding");
    }
    Ok(point)
}

fn decode_error(status: BLST_ERROR) -> &'static str {
    match status {
        BLST_ERROR::BLST_BAD_ENCODING => "bad encoding",
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => "point not on the curve",
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => "point not in the subgroup",
        _ => "invalid point",
    }
}

/// A kernel's point as blst's (the same words).
pub fn g1_from_words(point: &G1Words) -> G1Affine {
    G1Affine { x: blst_fp { l: point.x }, y: blst_fp { l: point.y } }
}

pub fn g1_words(point: &G1Affine) -> G1Words {
    G1Words { x: point.x.l, y: point.y.l }
}

pub fn g2_from_words(point: &G2Words) -> G2Affine {
    let fp2 =
        |words: &Fp2Words| blst_fp2 { fp: [blst_fp { l: words[0] }, blst_fp { l: words[1] }] };
    G2Affine { x: fp2(&point.x), y: fp2(&point.y) }
}

pub fn g2_words(point: &G2Affine) -> G2Words {
    G2Words { x: [point.x.fp[0].l, point.x.fp[1].l], y: [point.y.fp[0].l, point.y.fp[1].l] }
}

pub fn encode_g1_affine(point: &G1Affine) -> [u8; PUBKEY_LENGTH] {
    let mut out = [0u8; PUBKEY_LENGTH];
    // SAFETY: `out` has the 48 bytes blst writes.
    unsafe { blst_p1_affine_compress(out.as_mut_ptr(), point) };
    out
}

pub fn encode_g2_affine(point: &G2Affine) -> [u8; SIGNATURE_LENGTH] {
    let mut out = [0u8; SIGNATURE_LENGTH];
    // SAFETY: `out` has the 96 bytes blst writes.
    unsafe { blst_p2_affine_compress(out.as_mut_ptr(), point) };
    out
}

pub fn encode_g1(point: &G1) -> [u8; PUBKEY_LENGTH] {
    let mut out = [0u8; PUBKEY_LENGTH];
    // SAFETY: as above.
    unsafe { blst_p1_compress(out.as_mut_ptr(), point) };
    out
}

pub fn encode_g2(point: &G2) -> [u8; SIGNATURE_LENGTH] {
    let mut out = [0u8; SIGNATURE_LENGTH];
    // SAFETY: as above.
    unsafe { blst_p2_compress(out.as_mut_ptr(), point) };
    out
}

/// Uncompressed: x1, x0, y1, y0, 48 plain big-endian bytes each (the lane kernels' input).
pub fn serialize_g2(point: &G2) -> [u8; 2 * SIGNATURE_LENGTH] {
    let mut out = [0u8; 2 * SIGNATURE_LENGTH];
    // SAFETY: `out` has the 192 bytes blst writes.
    unsafe { blst_p2_serialize(out.as_mut_ptr(), point) };
    out
}

pub fn g1_affine_is_identity(point: &G1Affine) -> bool {
    // SAFETY: reads one live point.
    unsafe { blst_p1_affine_is_inf(point) }
}

pub fn g2_affine_is_identity(point: &G2Affine) -> bool {
    // SAFETY: reads one live point.
    unsafe { blst_p2_affine_is_inf(point) }
}

pub fn g1_is_identity(point: &G1) -> bool {
    // SAFETY: reads one live point.
    unsafe { blst_p1_is_inf(point) }
}

pub fn g2_is_identity(point: &G2) -> bool {
    // SAFETY: reads one live point.
    unsafe { blst_p2_is_inf(point) }
}

pub fn g1_to_affine(point: &G1) -> G1Affine {
    let mut out = G1Affine::default();
    // SAFETY: one live input, one output of the right type.
    unsafe { blst_p1_to_affine(&mut out, point) };
    out
}

pub fn g2_to_affine(point: &G2) -> G2Affine {
    let mut out = G2Affine::default();
    // SAFETY: as above.
    unsafe { blst_p2_to_affine(&mut out, point) };
    out
}

/// Many points made affine with one shared inversion (blst's batch conversion, which
/// multiplies every Z together: an identity, Z = 0, is left out of it and given
/// blst's all-zero affine identity).
pub fn g1s_to_affine(points: &[G1]) -> Vec<G1Affine> {
    batch_to_affine(points, g1_is_identity, blst_p1s_to_affine)
}

/// `g1s_to_affine` for G2.
pub fn g2s_to_affine(points: &[G2]) -> Vec<G2Affine> {
    batch_to_affine(points, g2_is_identity, blst_p2s_to_affine)
}

/// The finite points through blst's batch conversion `convert`, the identities as
/// the all-zero default.
fn batch_to_affine<P, A: Default + Clone>(
    points: &[P],
    is_identity: fn(&P) -> bool,
    convert: unsafe extern "C" fn(*mut A, *const *const P, usize),
) -> Vec<A> {
    let finite: Vec<usize> = (0..points.len()).filter(|i| !is_identity(&points[*i])).collect();
    let pointers: Vec<*const P> = finite.iter().map(|i| &points[*i] as *const _).collect();
    let mut affine = vec![A::default(); finite.len()];
    if !finite.is_empty() {
        // SAFETY: `convert` is blst's batch conversion for P and A; `pointers` holds
        // `finite.len()` pointers to live points and `affine` has room for as many
        // affine points.
        unsafe { convert(affine.as_mut_ptr(), pointers.as_ptr(), pointers.len()) };
    }
    let mut out = vec![A::default(); points.len()];
    for (index, point) in finite.into_iter().zip(affine) {
        out[index] = point;
    }
    out
}

/// A kernel's Jacobian point in blst's words as blst's blst_p1.
pub fn g1_from_jacobian_words(words: &[[u64; 6]; 3]) -> G1 {
    G1 { x: blst_fp { l: words[0] }, y: blst_fp { l: words[1] }, z: blst_fp { l: words[2] } }
}

/// A kernel's Jacobian point in blst's words as blst's blst_p2.
pub fn g2_from_jacobian_words(words: &[Fp2Words; 3]) -> G2 {
    let fp2 = |c: &Fp2Words| blst_fp2 { fp: c.map(|l| blst_fp { l }) };
    G2 { x: fp2(&words[0]), y: fp2(&words[1]), z: fp2(&words[2]) }
}

/// weight * point for a public 64-bit weight, on blst.
pub fn g1_times_u64(point: &G1Affine, weight: u64) -> G1 {
    let mut out = G1::default();
    let scalar = weight.to_le_bytes();
    // SAFETY: one live point in, one out; the scalar is 8 little-endian bytes, 64 bits.
    unsafe { blst_p1_mult(&mut out, &g1_from_affine(point), scalar.as_ptr(), 64) };
    out
}

pub fn g1_from_affine(point: &G1Affine) -> G1 {
    let mut out = G1::default();
    // SAFETY: as above.
    unsafe { blst_p1_from_affine(&mut out, point) };
    out
}

pub fn g2_from_affine(point: &G2Affine) -> G2 {
    let mut out = G2::default();
    // SAFETY: as above.
    unsafe { blst_p2_from_affine(&mut out, point) };
    out
}

/// Sum of affine G1 points (the identity for none), by blst's batch addition: a tree
/// of affine additions sharing one inversion per level. 512 points took 0.6x the
/// time of one mixed addition after another (docs/performance.md). It handles the
/// identity (blst's all-zero affine), doublings and P + (-P).
pub fn g1_sum<'a>(points: impl IntoIterator<Item = &'a G1Affine>) -> G1 {
    let pointers: Vec<*const G1Affine> = points.into_iter().map(|p| p as *const _).collect();
    let mut total = G1::default();
    // SAFETY: `pointers` holds `len` pointers to live points, none null (a null one
    // would make blst read past the previous point).
    unsafe { blst_p1s_add(&mut total, pointers.as_ptr(), pointers.len()) };
    total
}

/// Sum of affine G2 points (the identity for none), as `g1_sum`.
pub fn g2_sum<'a>(points: impl IntoIterator<Item = &'a G2Affine>) -> G2 {
    let pointers: Vec<*const G2Affine> = points.into_iter().map(|p| p as *const _).collect();
    let mut total = G2::default();
    // SAFETY: as in `g1_sum`.
    unsafe { blst_p2s_add(&mut total, pointers.as_ptr(), pointers.len()) };
    total
}

/// a + b (either may be the identity, or equal to the other).
pub fn g1_add(a: &G1, b: &G1) -> G1 {
    let mut out = G1::default();
    // SAFETY: two live points in, one out.
    unsafe { blst_p1_add_or_double(&mut out, a, b) };
    out
}

/// a + b (either may be the identity, or equal to the other).
pub fn g2_add(a: &G2, b: &G2) -> G2 {
    let mut out = G2::default();
    // SAFETY: two live points in, one out.
    unsafe { blst_p2_add_or_double(&mut out, a, b) };
    out
}

/// sum(w_i * P_i) for public 64-bit weights (batch verification), by blst's Pippenger.
pub fn g1_weighted_sum(points: &[G1Affine], weights: &[u64]) -> G1 {
    assert_eq!(points.len(), weights.len());
    let mut out = G1::default();
    if points.is_empty() {
        return out;
    }
    let scalars: Vec<[u8; 8]> = weights.iter().map(|w| w.to_le_bytes()).collect();
    let point_ptrs: Vec<*const G1Affine> = points.iter().map(|p| p as *const _).collect();
    let scalar_ptrs: Vec<*const u8> = scalars.iter().map(|s| s.as_ptr()).collect();
    // SAFETY: blst reads `npoints` pointers to live points and to 8-byte (64-bit,
    // little-endian) scalars; the scratch has the size blst asks for, in limbs.
    unsafe {
        let size = blst_p1s_mult_pippenger_scratch_sizeof(points.len());
        let mut scratch = vec![0u64; size.div_ceil(8)];
        blst_p1s_mult_pippenger(
            &mut out,
            point_ptrs.as_ptr(),
            points.len(),
            scalar_ptrs.as_ptr(),
            64,
            scratch.as_mut_ptr(),
        );
    }
    out
}

/// sum(w_i * Q_i) for public 64-bit weights, by blst's Pippenger.
pub fn g2_weighted_sum(points: &[G2Affine], weights: &[u64]) -> G2 {
    assert_eq!(points.len(), weights.len());
    let mut out = G2::default();
    if points.is_empty() {
        return out;
    }
    let scalars: Vec<[u8; 8]> = weights.iter().map(|w| w.to_le_bytes()).collect();
    let point_ptrs: Vec<*const G2Affine> = points.iter().map(|p| p as *const _).collect();
    let scalar_ptrs: Vec<*const u8> = scalars.iter().map(|s| s.as_ptr()).collect();
    // SAFETY: as in g1_weighted_sum.
    unsafe {
        let size = blst_p2s_mult_pippenger_scratch_sizeof(points.len());
        let mut scratch = vec![0u64; size.div_ceil(8)];
        blst_p2s_mult_pippenger(
            &mut out,
            point_ptrs.as_ptr(),
            points.len(),
            scalar_ptrs.as_ptr(),
            64,
            scratch.as_mut_ptr(),
        );
    }
    out
}

/// hash_to_curve (RFC 9380, SSWU, random oracle) onto G2.
pub fn hash_to_g2(message: &[u8], dst: &[u8]) -> G2 {
    HASHES_TO_G2.fetch_add(1, Ordering::Relaxed);
    let mut out = G2::default();
    // SAFETY: message and dst are live slices passed with their lengths; no augmentation.
    unsafe {
        blst_hash_to_g2(
            &mut out,
            message.as_ptr(),
            message.len(),
            dst.as_ptr(),
            dst.len(),
            std::ptr::null(),
            0,
        )
    };
    out
}

/// A secret scalar in [1, r - 1], zeroed when dropped.
pub struct SecretScalar(blst_scalar);

impl SecretScalar {
    /// From 32 big-endian bytes; None unless 0 < value < r.
    pub fn from_be_bytes(bytes: &[u8; 32]) -> Option<SecretScalar> {
        let mut scalar = SecretScalar(blst_scalar::default());
        // SAFETY: reads exactly 32 bytes into a 32-byte scalar.
        unsafe { blst_scalar_from_bendian(&mut scalar.0, bytes.as_ptr()) };
        // SAFETY: reads one live scalar.
        if unsafe { blst_sk_check(&scalar.0) } {
            Some(scalar)
        } else {
            None // dropped, so zeroed
        }
    }

    /// The scalar as four little-endian 64-bit words (for the lane kernels; the
    /// caller zeroes its copy).
    pub fn le_words(&self) -> [u64; 4] {
        std::array::from_fn(|word| {
            u64::from_le_bytes(self.0.b[8 * word..8 * word + 8].try_into().expect("8 bytes"))
        })
    }

    pub fn public_key(&self) -> G1 {
        let mut out = G1::default();
        // SAFETY: one live scalar in, one point out (blst's constant-time path).
        unsafe { blst_sk_to_pk_in_g1(&mut out, &self.0) };
        out
    }

    /// sk * H(m), blst's constant-time multiplication.
    pub fn sign_hashed(&self, hashed: &G2) -> G2 {
        let mut out = G2::default();
        // SAFETY: as above.
        unsafe { blst_sign_pk_in_g1(&mut out, hashed, &self.0) };
        out
    }
}

impl Drop for SecretScalar {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0.b);
    }
}
