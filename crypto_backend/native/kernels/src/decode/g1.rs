//! Batch decompression of G1 points (public keys) with the subgroup check, eight
//! keys per kernel pass, with the verdicts and messages of blst's decode and subgroup
//! check followed by the one-encoding-per-point rule (the fallback the caller passes).
//!
//! Each key is first read on its own (length, flags, identity encodings, x below p:
//! byte rules, no field arithmetic). The keys left are packed eight to a chunk; the
//! kernel computes y = sqrt(x^3 + 4) (a fixed exponentiation), picks the root the
//! sign flag names, and checks membership in G1 by sigma(P) == -[z^2]P, where
//! sigma(x, y) = (beta*x, y) and z is the curve's parameter (the endomorphism test of
//! Scott, eprint 2021/1130, section 6; blst and arkworks check the same property).
//! A lane whose double-and-add chain meets an exceptional case of the incomplete
//! addition formula (the point is then of small order, never in G1) is left
//! undecided and goes to the fallback, and so do chunks too small to be worth a pass.

use super::{read_flags, sign_mask, Counters, Decoded, Decoder, Flags, Lane, Read};
use crate::curve::jacobian;
use crate::dispatch::{Kernel, Path};
use crate::field::fpx8::{self, Fe, Fpx8, Limbs};
use crate::lane::LaneOps;
use crate::points::{G1Words, G1_COMPRESSED};

/// Kernel passes and undecided lanes so far in this process (tests: the lanes ran).
pub static COUNTERS: Counters = Counters::new();

/// 4 in our Montgomery form (the curve is y^2 = x^3 + 4).
const B4: Limbs = [
    0xc203aa3a7e6bb,
    0x99c5b63f91e5d,
    0xec2218e49b9f5,
    0xb47d6b297d25b,
    0x36f29b533dd05,
    0xaac3b92d6d85a,
    0x25d100f5559b6,
    0x5208,
];
/// beta, a cube root of unity in Fp (Montgomery form), the one for which
/// sigma acts on G1 as multiplication by -z^2.
const BETA: Limbs = [
    0xd75aaff33455f,
    0xd095356b7cbb6,
    0x953a2f6fa079f,
    0x1080cf0a3d697,
    0x3f7de3465fe7c,
    0x1f71fd6896ec,
    0xd9dd9cc172747,
    0x7d91,
];
/// |z| for z = -0xd201000000010000 (public: its bits steer the chains). [z^2]P is
/// computed as [|z|]([|z|]P): 126 doublings and 10 mixed additions (z has 6 bits
/// set), where one chain of z^2 (17 bits set) takes 127 and 16.
const Z_ABS: u128 = crate::curve::X_ABS as u128;

const NOT_ON_CURVE: &str = "point not on the curve";
const NOT_IN_GROUP: &str = "point not in the subgroup";
const NOT_IN_G1: &str = "point not in the G1 subgroup";
const BAD_ENCODING: &str = "bad encoding";

/// x and the sign flag of a compressed point that passed the byte rules.
pub(crate) type Candidate = (Limbs, bool);

/// blst_p1_uncompress's byte rules, then our one-encoding-per-point rule.
pub(crate) fn read(data: &[u8]) -> Read<G1Words, Candidate> {
    let Ok(bytes) = <&[u8; G1_COMPRESSED]>::try_from(data) else {
        return Read::Done(Err("a G1 point is 48 bytes"));
    };
    let larger = match read_flags(bytes) {
        Flags::Bad => return Read::Done(Err(BAD_ENCODING)),
        Flags::Identity => return Read::Done(Ok(G1Words::default())),
        Flags::Point { larger } => larger,
    };
    let mut x_bytes = *bytes;
    x_bytes[0] &= 0x1f;
    let x = fpx8::limbs_from_be(&x_bytes);
    if !fpx8::below_modulus(&x) {
        return Read::Done(Err(BAD_ENCODING));
    }
    Read::Candidate((x, larger))
}

pub(crate) struct DecodeChunk {
    pub(crate) xs: [Limbs; 8],
    pub(crate) larger: u8,
}

impl Kernel for DecodeChunk {
    type Output = [Lane<G1Words>; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Lane<G1Words>; 8] {
        decode_kernel(Fpx8::new(o), &self.xs, self.larger)
    }
}

#[inline(always)]
fn decode_kernel<O: LaneOps>(f: Fpx8<O>, xs: &[Limbs; 8], want_larger: u8) -> [Lane<G1Words>; 8] {
    let x = f.to_montgomery(&f.pack(xs));
    let rhs = f.add(&f.mul(&f.sqr(&x), &x), &f.constant(&B4));
    let root = f.pow_public(&rhs, &fpx8::SQRT_EXPONENT);
    let on_curve = f.eq_mask(&f.sqr(&root), &rhs);
    let larger = f.gt_mask(&f.out_of_montgomery(&root), &fpx8::HALF_P);
    let y = f.select(larger ^ want_larger, &root, &f.neg(&root));
    let x_zero = f.is_zero_mask(&x);
    let (in_g1, exceptional) = subgroup_masks(f, &x, &y);
    let x_blst = f.unpack(&f.to_blst_form(&x));
    let y_blst = f.unpack(&f.to_blst_form(&y));
    std::array::from_fn(|lane| {
        let bit = |mask: u8| (mask >> lane) & 1 == 1;
        if !bit(on_curve) {
            Lane::Decided(Err(NOT_ON_CURVE))
        } else if bit(x_zero) {
            Lane::Decided(Err(NOT_IN_GROUP))
        } else if bit(exceptional) {
            Lane::Undecided
        } else if !bit(in_g1) {
            Lane::Decided(Err(NOT_IN_G1))
        } else {
            Lane::Decided(Ok(G1Words {
                x: fpx8::words_from_limbs(&x_blst[lane]),
                y: fpx8::words_from_limbs(&y_blst[lane]),
            }))
        }
    })
}

/// (lanes where sigma(P) == -[z^2]P, lanes left undecided) for affine P on the curve.
#[inline(always)]
fn subgroup_masks<O: LaneOps>(f: Fpx8<O>, x: &Fe<O>, y: &Fe<O>) -> (u8, u8) {
    let (z_p, exceptional_first) = jacobian::multiply(f, x, y, Z_ABS);
    let (q, exceptional_second) = jacobian::multiply_jacobian(f, &z_p, Z_ABS);
    let exceptional = exceptional_first | exceptional_second;
    // -[z^2]P == sigma(P) = (beta x, y)  <=>  [z^2]P == (beta x, -y)
    let in_g1 = jacobian::equals_affine(f, &q, &f.mul(x, &f.constant(&BETA)), &f.neg(y));
    (in_g1, exceptional)
}

/// The fallback's verdict on every key (same verdicts, same messages), on the lane
/// kernels of `path`; `Path::Off` is the fallback for each key.
pub fn decode_many_on(
    keys: &[&[u8]],
    path: Path,
    fallback: &dyn Fn(&[u8]) -> Decoded<G1Words>,
) -> Vec<Decoded<G1Words>> {
    let kernel = |candidates: [Candidate; 8]| DecodeChunk {
        xs: candidates.map(|(x, _)| x),
        larger: sign_mask(candidates.map(|(_, larger)| larger)),
    };
    Decoder { read: &read, kernel: &kernel, fallback, counters: &COUNTERS }
        .decode_many_on(keys, path)
}
