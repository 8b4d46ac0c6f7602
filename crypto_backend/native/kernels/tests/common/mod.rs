//! What the differential tests share: a seeded generator, blst's answers (the
//! oracle), and the layers this host can run.
#![allow(dead_code)] // each test file uses its own part

use bls_lanes::decode::Decoded;
use bls_lanes::dispatch::{self, Path};
use bls_lanes::points::{Fp12Words, G1Words, G2Words};
use blst::*;

/// splitmix64: reproducible inputs from a printed seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// A scalar in [1, r - 1] (four little-endian words): the top word is kept
    /// below r's (0x73ed...), a zero scalar replaced by 1.
    pub fn scalar(&mut self) -> [u64; 4] {
        let mut words = [self.next(), self.next(), self.next(), self.next() >> 2];
        if words == [0; 4] {
            words[0] = 1;
        }
        words
    }

    /// A plain integer below p (six little-endian words): the top word below p's.
    pub fn below_p(&mut self) -> [u64; 6] {
        let mut words = [0u64; 6];
        for word in words.iter_mut() {
            *word = self.next();
        }
        words[5] %= 0x1a0111ea397fe69a;
        words
    }
}

/// The lane layers this host runs: portable always, IFMA where the CPU has it.
pub fn layers() -> Vec<Path> {
    let mut layers = vec![Path::Portable];
    if dispatch::ifma_available() {
        layers.push(Path::Ifma);
    } else {
        eprintln!("this CPU has no AVX-512 IFMA: the IFMA layer is not tested here");
    }
    layers
}

fn scalar_of(words: &[u64; 4]) -> blst_scalar {
    let mut scalar = blst_scalar::default();
    // SAFETY: four words in, one scalar out.
    unsafe { blst_scalar_from_uint64(&mut scalar, words.as_ptr()) };
    scalar
}

pub fn blst_public_key(words: &[u64; 4]) -> [u8; 48] {
    let mut point = blst_p1::default();
    let mut out = [0u8; 48];
    // SAFETY: live values of the right types and sizes.
    unsafe {
        blst_sk_to_pk_in_g1(&mut point, &scalar_of(words));
        blst_p1_compress(out.as_mut_ptr(), &point);
    }
    out
}

pub const DST: &[u8] = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_";

pub fn hash_to_g2(message: &[u8]) -> blst_p2 {
    let mut out = blst_p2::default();
    // SAFETY: live slices with their lengths, no augmentation.
    unsafe {
        blst_hash_to_g2(
            &mut out,
            message.as_ptr(),
            message.len(),
            DST.as_ptr(),
            DST.len(),
            std::ptr::null(),
            0,
        )
    };
    out
}

/// expand_message_xmd of `message` under the ciphersuite's DST: the 256 bytes the
/// hash kernel (`bls_lanes::hash`) starts from.
pub fn expand(message: &[u8]) -> [u8; bls_lanes::hash::EXPANDED_BYTES] {
    let mut out = [0u8; bls_lanes::hash::EXPANDED_BYTES];
    // SAFETY: live slices with their lengths; `out` is as long as it says.
    unsafe {
        blst_expand_message_xmd(
            out.as_mut_ptr(),
            out.len(),
            message.as_ptr(),
            message.len(),
            DST.as_ptr(),
            DST.len(),
        )
    };
    out
}

pub fn serialize_g2(point: &blst_p2) -> [u8; 192] {
    let mut out = [0u8; 192];
    // SAFETY: 192 bytes out.
    unsafe { blst_p2_serialize(out.as_mut_ptr(), point) };
    out
}

pub fn blst_signature(words: &[u64; 4], hashed: &blst_p2) -> [u8; 96] {
    let mut point = blst_p2::default();
    let mut out = [0u8; 96];
    // SAFETY: live values of the right types and sizes.
    unsafe {
        blst_sign_pk_in_g1(&mut point, hashed, &scalar_of(words));
        blst_p2_compress(out.as_mut_ptr(), &point);
    }
    out
}

fn decode_error(status: BLST_ERROR) -> &'static str {
    match status {
        BLST_ERROR::BLST_BAD_ENCODING => "bad encoding",
        BLST_ERROR::BLST_POINT_NOT_ON_CURVE => "point not on the curve",
        BLST_ERROR::BLST_POINT_NOT_IN_GROUP => "point not in the subgroup",
        _ => "invalid point",
    }
}

/// blst's checked decode of a compressed G1 point, then one encoding per point:
/// the fallback the kernels must agree with.
pub fn blst_decode_g1(data: &[u8]) -> Decoded<G1Words> {
    if data.len() != 48 {
        return Err("a G1 point is 48 bytes");
    }
    let mut point = blst_p1_affine::default();
    let mut again = [0u8; 48];
    // SAFETY: 48 bytes in, one live point out and read back.
    unsafe {
        let status = blst_p1_uncompress(&mut point, data.as_ptr());
        if status != BLST_ERROR::BLST_SUCCESS {
            return Err(decode_error(status));
        }
        if !blst_p1_affine_in_g1(&point) {
            return Err("point not in the G1 subgroup");
        }
        blst_p1_affine_compress(again.as_mut_ptr(), &point);
    }
    if again[..] != data[..] {
        return Err("non-canonical G1 encoding");
    }
    Ok(G1Words { x: point.x.l, y: point.y.l })
}

/// As `blst_decode_g1`, for a compressed G2 point.
pub fn blst_decode_g2(data: &[u8]) -> Decoded<G2Words> {
    if data.len() != 96 {
        return Err("a G2 point is 96 bytes");
    }
    let mut point = blst_p2_affine::default();
    let mut again = [0u8; 96];
    // SAFETY: 96 bytes in, one live point out and read back.
    unsafe {
        let status = blst_p2_uncompress(&mut point, data.as_ptr());
        if status != BLST_ERROR::BLST_SUCCESS {
            return Err(decode_error(status));
        }
        if !blst_p2_affine_in_g2(&point) {
            return Err("point not in the G2 subgroup");
        }
        blst_p2_affine_compress(again.as_mut_ptr(), &point);
    }
    if again[..] != data[..] {
        return Err("non-canonical G2 encoding");
    }
    Ok(G2Words { x: [point.x.fp[0].l, point.x.fp[1].l], y: [point.y.fp[0].l, point.y.fp[1].l] })
}

/// Valid encodings and their corruptions: flipped bits and flags, the identity's
/// encodings, x at and above p, the negated point.
pub fn corruptions<const N: usize>(valid: &[[u8; N]], rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    for encoding in valid {
        out.push(encoding.to_vec());
        let mut negated = encoding.to_vec();
        negated[0] ^= 0x20;
        out.push(negated);
        let mut flipped = encoding.to_vec();
        let bit = (rng.next() % (8 * N as u64 - 3)) as usize + 3;
        flipped[bit / 8] ^= 0x80 >> (bit % 8);
        out.push(flipped);
        let mut uncompressed = encoding.to_vec();
        uncompressed[0] &= 0x7f;
        out.push(uncompressed);
        out.push(encoding[..N - 1].to_vec());
    }
    let mut identity = vec![0u8; N];
    identity[0] = 0xc0;
    out.push(identity.clone());
    identity[N - 1] = 1;
    out.push(identity);
    // x = p and x = p + 1 (the first field element's bytes), and x = 0.
    let p_be: [u8; 48] = [
        0x1a, 0x01, 0x11, 0xea, 0x39, 0x7f, 0xe6, 0x9a, 0x4b, 0x1b, 0xa7, 0xb6, 0x43, 0x4b, 0xac,
        0xd7, 0x64, 0x77, 0x4b, 0x84, 0xf3, 0x85, 0x12, 0xbf, 0x67, 0x30, 0xd2, 0xa0, 0xf6, 0xb0,
        0xf6, 0x24, 0x1e, 0xab, 0xff, 0xfe, 0xb1, 0x53, 0xff, 0xff, 0xb9, 0xfe, 0xff, 0xff, 0xff,
        0xff, 0xaa, 0xab,
    ];
    for add in [0u8, 1] {
        let mut at_p = vec![0u8; N];
        at_p[..48].copy_from_slice(&p_be);
        at_p[47] += add;
        at_p[0] |= 0x80;
        out.push(at_p);
    }
    let mut zero = vec![0u8; N];
    zero[0] = 0x80;
    out.push(zero);
    out
}

/// blst's Fp12 value of a kernel's words (the same words).
pub fn fp12_of(words: &Fp12Words) -> blst_fp12 {
    let fp2 = |words: &[[u64; 6]; 2]| blst_fp2 { fp: words.map(|l| blst_fp { l }) };
    blst_fp12 { fp6: words.map(|fp6| blst_fp6 { fp2: fp6.each_ref().map(fp2) }) }
}

pub fn fp12_of_words(value: &blst_fp12) -> Fp12Words {
    std::array::from_fn(|half| {
        std::array::from_fn(|index| {
            std::array::from_fn(|part| value.fp6[half].fp2[index].fp[part].l)
        })
    })
}

/// An Fp12 value of random canonical coefficients, in blst's Montgomery words.
pub fn random_fp12(rng: &mut Rng) -> Fp12Words {
    std::array::from_fn(|_| {
        std::array::from_fn(|_| {
            std::array::from_fn(|_| {
                let plain = rng.below_p();
                let mut montgomery = blst_fp::default();
                // SAFETY: six words in, one field element out.
                unsafe { blst_fp_from_uint64(&mut montgomery, plain.as_ptr()) };
                montgomery.l
            })
        })
    })
}

/// f^((p^6 - 1)(p^2 + 1)) for a random f: the easy part of a final exponentiation,
/// whose values are in the cyclotomic subgroup.
pub fn cyclotomic_value(rng: &mut Rng) -> blst_fp12 {
    let f = fp12_of(&random_fp12(rng));
    let (mut inverse, mut easy, mut frobenius, mut out) =
        (blst_fp12::default(), f, blst_fp12::default(), blst_fp12::default());
    // SAFETY: live fp12 values in, distinct ones out.
    unsafe {
        blst_fp12_inverse(&mut inverse, &f);
        blst_fp12_conjugate(&mut easy);
        let conjugate = easy;
        blst_fp12_mul(&mut easy, &conjugate, &inverse);
        blst_fp12_frobenius_map(&mut frobenius, &easy, 2);
        blst_fp12_mul(&mut out, &frobenius, &easy);
    }
    out
}
