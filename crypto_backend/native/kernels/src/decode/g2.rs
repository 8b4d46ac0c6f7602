//! Batch decompression of G2 points (signatures) with the subgroup check, eight
//! per kernel pass, with the verdicts and messages of the caller's fallback (blst's).
//!
//! The byte rules are blst_p2_uncompress's (flags, identity encodings, both halves
//! of x below p; x = x0 + x1*i, x1 first). The kernel computes
//! y = sqrt(x^3 + 4(1 + i)) in Fp2 (by the norm: two Fp exponentiations, both of
//! its cases computed and one selected per lane, `sqrt_candidate`), checks it,
//! picks the root the sign flag names (the sign of y1, or of y0 when y1 = 0), and
//! checks membership in G2 by psi(P) == [z]P, psi the untwist-Frobenius-twist
//! endomorphism (Scott, eprint 2021/1130, section 4). Undecided lanes and short
//! chunks go to the fallback (`decode`).

use super::{read_flags, sign_mask, Counters, Decoded, Decoder, Flags, Lane, Read};
use crate::curve::jacobian;
use crate::dispatch::{Kernel, Path};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fpx8::{self, Fe, Limbs};
use crate::lane::LaneOps;
use crate::points::{Fp2Words, G2Words, G2_COMPRESSED};

pub static COUNTERS: Counters = Counters::new();

/// 4 in our Montgomery form: the twist is y^2 = x^3 + 4(1 + i).
const FOUR: Limbs = [
    0xc203aa3a7e6bb,
    0x99c5b63f91e5d,
    0xec2218e49b9f5,
    0xb47d6b297d25b,
    0x36f29b533dd05,
    0xaac3b92d6d85a,
    0x25d100f5559b6,
    0x5208,
];
/// psi(x, y) = (conj(x) * PSI_X, conj(y) * PSI_Y); PSI_X = 1/(1+i)^((p-1)/3) = c1 i.
pub(crate) const PSI_X_C1: Limbs = [
    0x18a5500cc654c,
    0x2e1c1e9482fe9,
    0xd5d532d24a460,
    0x23e982695377,
    0x36c99171ef509,
    0x19b0966cc23e1,
    0x44c5fb3cf7304,
    0x1227f,
];
/// PSI_Y = 1/(1+i)^((p-1)/2).
pub(crate) const PSI_Y_C0: Limbs = [
    0x9c1a677c96161,
    0xf16c8708fcef3,
    0x94977d28093e6,
    0xa06b71c927307,
    0xb4fa740f70cc7,
    0x844ca7b844683,
    0x3f2d89b2709bb,
    0x917d,
];
pub(crate) const PSI_Y_C1: Limbs = [
    0x53e598836494a,
    0xd44ccf702cac,
    0xd677e519e1819,
    0x7253f567ab707,
    0xc14d00a8de6bd,
    0x975b0e8b07449,
    0xdf760e4bf908f,
    0x10e93,
];
/// 1/2 in our Montgomery form.
const HALF: Limbs = [
    0xaa4075474b22d,
    0xb213e047f1ff7,
    0xfb31b91640dbe,
    0x26f727afe7f18,
    0xe5cd98bad0b5,
    0x8d8b36a08fe7f,
    0xff89451d47238,
    0x1764f,
];
/// (p - 3) / 4, little-endian words.
const P_MINUS_3_OVER_4: [u64; 6] = [
    0xee7fbfffffffeaaa,
    0x07aaffffac54ffff,
    0xd9cc34a83dac3d89,
    0xd91dd2e13ce144af,
    0x92c6e9ed90d2eb35,
    0x0680447a8e5ff9a6,
];
/// |z| (`curve::X_ABS`), as the chain takes it.
const Z_ABS: u128 = crate::curve::X_ABS as u128;

const BAD_ENCODING: &str = "bad encoding";

/// x0, x1 and the sign flag of a compressed point that passed the byte rules.
pub(crate) type Candidate = ([Limbs; 2], bool);

pub(crate) fn read(data: &[u8]) -> Read<G2Words, Candidate> {
    let Ok(bytes) = <&[u8; G2_COMPRESSED]>::try_from(data) else {
        return Read::Done(Err("a G2 point is 96 bytes"));
    };
    let larger = match read_flags(bytes) {
        Flags::Bad => return Read::Done(Err(BAD_ENCODING)),
        Flags::Identity => return Read::Done(Ok(G2Words::default())),
        Flags::Point { larger } => larger,
    };
    let mut x1_bytes: [u8; 48] = bytes[..48].try_into().expect("48 bytes");
    x1_bytes[0] &= 0x1f;
    let x1 = fpx8::limbs_from_be(&x1_bytes);
    let x0 = fpx8::limbs_from_be(bytes[48..].try_into().expect("48 bytes"));
    if !fpx8::below_modulus(&x1) || !fpx8::below_modulus(&x0) {
        return Read::Done(Err(BAD_ENCODING));
    }
    Read::Candidate(([x0, x1], larger))
}

pub(crate) struct DecodeChunk {
    pub(crate) xs: [[Limbs; 2]; 8],
    pub(crate) larger: u8,
}

impl Kernel for DecodeChunk {
    type Output = [Lane<G2Words>; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Lane<G2Words>; 8] {
        decode_kernel(Fp2x8::new(o), &self.xs, self.larger)
    }
}

/// A square root of a where there is one (the caller checks it), by the norm
/// (a is a square in Fp2 exactly where its norm is one in Fp): `sqrt_with_norm_root`
/// with s = sqrt(a0^2 + a1^2) in Fp. Two Fp exponentiations instead of two in Fp2.
#[inline(always)]
fn sqrt_candidate<O: LaneOps>(f2: Fp2x8<O>, [a0, a1]: &Fe2<O>) -> Fe2<O> {
    let f = f2.f;
    let norm = f.add(&f.sqr(a0), &f.sqr(a1));
    let s = f.pow_public(&norm, &fpx8::SQRT_EXPONENT);
    sqrt_with_norm_root(f2, &[*a0, *a1], &s)
}

/// A square root of a = a0 + a1 i where there is one, given a square root s of its
/// norm a0^2 + a1^2 (either sign): u = (a0 + s)/2 (or (a0 - s)/2 where that is zero,
/// which needs a1 = 0), t = u^((p-3)/4), so that u t^2 = +-1. Where u t^2 = 1, u is a
/// square and the root is u t + (a1 t/2) i; else t^2 = -1/u and the root is
/// (a1 t/2) - (u t) i. One Fp exponentiation; the caller checks the root.
#[inline(always)]
pub(crate) fn sqrt_with_norm_root<O: LaneOps>(
    f2: Fp2x8<O>,
    [a0, a1]: &Fe2<O>,
    s: &Fe<O>,
) -> Fe2<O> {
    let f = f2.f;
    let half = f.constant(&HALF);
    let plus = f.mul(&f.add(a0, s), &half);
    let minus = f.mul(&f.sub(a0, s), &half);
    let u = f.select(f.is_zero_mask(&plus), &plus, &minus);
    let t = f.pow_public(&u, &P_MINUS_3_OVER_4);
    let ut = f.mul(&u, &t);
    let u_is_square = f.eq_mask(&f.mul(&ut, &t), &f.one());
    let a1_t_half = f.mul(&f.mul(a1, &t), &half);
    f2.select(u_is_square, &[a1_t_half, f.neg(&ut)], &[ut, a1_t_half])
}

#[inline(always)]
fn decode_kernel<O: LaneOps>(
    f2: Fp2x8<O>,
    xs: &[[Limbs; 2]; 8],
    want_larger: u8,
) -> [Lane<G2Words>; 8] {
    let f = f2.f;
    let x =
        [f.to_montgomery(&f.pack(&xs.map(|x| x[0]))), f.to_montgomery(&f.pack(&xs.map(|x| x[1])))];
    let rhs = f2.add(&f2.mul(&f2.sqr(&x), &x), &f2.constant(&FOUR, &FOUR));
    let root = sqrt_candidate(f2, &rhs);
    let on_curve = f2.eq_mask(&f2.sqr(&root), &rhs);
    let larger = f2.larger_mask(&f2.out_of_montgomery(&root));
    let y = f2.select(larger ^ want_larger, &root, &f2.neg(&root));
    // psi(P) == [z]P = -[|z|]P  <=>  [|z|]P == (psi_x, -psi_y)
    let (q, exceptional) = jacobian::multiply(f2, &x, &y, Z_ABS);
    let psi_x = f2.mul(&f2.conjugate(&x), &[f.zero(), f.constant(&PSI_X_C1)]);
    let psi_y = f2.mul(&f2.conjugate(&y), &f2.constant(&PSI_Y_C0, &PSI_Y_C1));
    let in_g2 = jacobian::equals_affine(f2, &q, &psi_x, &f2.neg(&psi_y));
    // No closure over lane values here: a closure would be compiled without the
    // IFMA features (`lane::Ifma::run`).
    let x_blst = [f.unpack(&f.to_blst_form(&x[0])), f.unpack(&f.to_blst_form(&x[1]))];
    let y_blst = [f.unpack(&f.to_blst_form(&y[0])), f.unpack(&f.to_blst_form(&y[1]))];
    let fp2 = |limbs: &[[Limbs; 8]; 2], lane: usize| -> Fp2Words {
        [fpx8::words_from_limbs(&limbs[0][lane]), fpx8::words_from_limbs(&limbs[1][lane])]
    };
    std::array::from_fn(|lane| {
        let bit = |mask: u8| (mask >> lane) & 1 == 1;
        if !bit(on_curve) {
            Lane::Decided(Err("point not on the curve"))
        } else if bit(exceptional) {
            Lane::Undecided
        } else if !bit(in_g2) {
            Lane::Decided(Err("point not in the G2 subgroup"))
        } else {
            Lane::Decided(Ok(G2Words { x: fp2(&x_blst, lane), y: fp2(&y_blst, lane) }))
        }
    })
}

/// The fallback's verdict on every input (same verdicts, same messages), on the
/// lane kernels of `path`; `Path::Off` is the fallback for each.
pub fn decode_many_on(
    signatures: &[&[u8]],
    path: Path,
    fallback: &dyn Fn(&[u8]) -> Decoded<G2Words>,
) -> Vec<Decoded<G2Words>> {
    let kernel = |candidates: [Candidate; 8]| DecodeChunk {
        xs: candidates.map(|(x, _)| x),
        larger: sign_mask(candidates.map(|(_, larger)| larger)),
    };
    Decoder { read: &read, kernel: &kernel, fallback, counters: &COUNTERS }
        .decode_many_on(signatures, path)
}
