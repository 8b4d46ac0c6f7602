//! Hash to G2, eight messages a pass: RFC 9380's BLS12381G2_XMD:SHA-256_SSWU_RO_
//! after expand_message_xmd (the caller's: hashing bytes is not lane work), from the
//! 256 expanded bytes of each message to its point, bit for bit the point blst's
//! blst_hash_to_g2 gives.
//!
//! - hash_to_field: four 64-byte big-endian numbers mod p, u0 = e0 + e1 i and
//!   u1 = e2 + e3 i (each number as h 2^384 + l, two products by constants).
//! - map_to_curve (section 6.6.2, simplified SWU on the 3-isogenous curve E'), written
//!   with x1 = N/D as a fraction so that the only inversion is one for both maps of a
//!   lane: g(x) D^4 = (N (N^2 + A' D^2) + B' D^3) D has the squareness of g(x), and
//!   a root of it over D^2 is y. Which of g(x1), g(x2) is a square is read from the
//!   root of g(x1)'s norm (a square in Fp2 exactly where its norm is one in Fp); where
//!   it is not, g(x2) = Z^3 u^6 g(x1) and the root of g(x2)'s norm is
//!   N(u)^3 s sqrt(-125), from the same exponentiation (N(Z) = 5, and s^2 = -N(g(x1))).
//!   The root of g(x) by the norm (`decode::g2::sqrt_with_norm_root`), checked; y's
//!   sign is u's (sgn0). Five Fp exponentiations for both maps of a lane where an
//!   inversion, a square test and a square root for each take eight.
//! - iso_map (appendix E.3) to homogeneous projective coordinates on E2, no division.
//! - Q0 + Q1 and clear_cofactor by the endomorphism (appendix G.3: h_eff P as
//!   [x^2 - x - 1]P + [x - 1]psi(P) + psi^2(2P) in its sequence of steps), with
//!   the complete formulas of `curve::complete` for the sums and the chains [|x|]
//!   of `curve::jacobian` (63 doublings, 5 mixed additions).
//!
//! Every input is public (a message), so nothing here needs constant time; every
//! lane runs the same steps all the same. The lanes where a formula meets a case it
//! does not cover (an isogeny pole, a chain's exceptional addition, a result that is
//! the identity, a root that does not check: none happens but with negligible
//! probability, and the tests drive the map's own exceptional case, u with
//! Z^2 u^4 + Z u^2 = 0) are left undecided: the caller hashes those messages again on
//! its fallback (blst).

mod constants;

use self::constants::*;
use crate::curve::complete::{self, Projective};
use crate::curve::jacobian;
use crate::decode::g2::{sqrt_with_norm_root, PSI_X_C1, PSI_Y_C0, PSI_Y_C1};
use crate::dispatch::{Kernel, Path, Runner};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fpx8::{self, Fe, Fpx8};
use crate::field::stored::{
    load_fe2, load_point, store_fe2, store_point, unpack_fp, Words2, WordsPoint,
};
use crate::lane::LaneOps;
use crate::mul::g2::G2;

/// The bytes of expand_message_xmd one message needs: two Fp2 elements of two Fp
/// elements of 64 bytes each.
pub const EXPANDED_BYTES: usize = 256;

pub use crate::points::G2JacobianWords;

/// |x| (`curve::X_ABS`), as the chains take it.
const X_ABS: u128 = crate::curve::X_ABS as u128;

/// Each lane's hash, and the lanes left undecided (their points are meaningless).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashed {
    pub points: [G2JacobianWords; 8],
    pub undecided: u8,
}

/// Eight expansions (a short chunk repeats one in the spare lanes) through the
/// stages below on the lane layer of `path`; None for `Path::Off` (the caller hashes
/// on blst) or IFMA on a CPU without it. Each stage is one kernel entry, compiled
/// once per layer and run as often as the sequence needs it (the complete addition
/// six times, the chain twice), its state stored as lane words in between
/// (`field::stored`): the whole sequence inlined into one entry took rustc ten
/// minutes.
pub fn hash_chunk_on(path: Path, expanded: [[u8; EXPANDED_BYTES]; 8]) -> Option<Hashed> {
    hash_chunk_with(&mut { path }, expanded)
}

/// `hash_chunk_on`'s stages on any runner (the cost report counts them).
pub fn hash_chunk_with<R: Runner>(
    runner: &mut R,
    expanded: [[u8; EXPANDED_BYTES]; 8],
) -> Option<Hashed> {
    let first = runner.run(MapFraction { expanded, index: 0 })?;
    let second = runner.run(MapFraction { expanded, index: 1 })?;
    let (points, mut undecided) = runner.run(FinishMaps { maps: [first, second] })?;
    let p = runner.run(Add { a: points[0], b: points[1], negate_b: false })?;
    // Clearing the cofactor (RFC 9380, appendix G.3's steps).
    let (t1, exceptional) = runner.run(TimesX { point: p })?;
    undecided |= exceptional;
    let [psi_p, psi2_2p] = runner.run(PsiAndPsi2Double { point: p })?;
    let t3 = runner.run(Add { a: psi2_2p, b: psi_p, negate_b: true })?;
    let t1_psi_p = runner.run(Add { a: t1, b: psi_p, negate_b: false })?;
    let (t2, exceptional) = runner.run(TimesX { point: t1_psi_p })?;
    undecided |= exceptional;
    let t3 = runner.run(Add { a: t3, b: t2, negate_b: false })?;
    let t3 = runner.run(Add { a: t3, b: t1, negate_b: true })?;
    let q = runner.run(Add { a: t3, b: p, negate_b: true })?;
    let (points, identity) = runner.run(ToBlstJacobian { point: q })?;
    Some(Hashed { points, undecided: undecided | identity })
}

/// Stage 1, for u0 (index 0) or u1 (1): u from the expansion, and its map up to the
/// division (`sswu_fraction`).
struct MapFraction {
    expanded: [[u8; EXPANDED_BYTES]; 8],
    index: usize,
}

/// u, then x = numerator/denominator and y = +-root/denominator^2, and the lanes
/// whose root checked.
#[derive(Clone, Copy)]
struct StoredFraction {
    u: Words2,
    numerator: Words2,
    denominator: Words2,
    root: Words2,
    checked: u8,
}

impl Kernel for MapFraction {
    type Output = StoredFraction;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> StoredFraction {
        let f2 = Fp2x8::new(o);
        let u = [
            field_element(f2.f, &self.expanded, 2 * self.index),
            field_element(f2.f, &self.expanded, 2 * self.index + 1),
        ];
        let fraction = sswu_fraction(f2, &u);
        StoredFraction {
            u: store_fe2(o, &u),
            numerator: store_fe2(o, &fraction.numerator),
            denominator: store_fe2(o, &fraction.denominator),
            root: store_fe2(o, &fraction.root),
            checked: fraction.checked,
        }
    }
}

/// Stage 2: both maps' division by one inversion, y's sign, the isogeny; the two
/// points on E2 and the lanes left undecided so far.
struct FinishMaps {
    maps: [StoredFraction; 2],
}

impl Kernel for FinishMaps {
    type Output = ([WordsPoint; 2], u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([WordsPoint; 2], u8) {
        let f2 = Fp2x8::new(o);
        let [first, second] = self.maps;
        let denominators = [load_fe2(o, &first.denominator), load_fe2(o, &second.denominator)];
        // Neither denominator is zero: A' t with t != 0, or Z A'.
        let inverse = f2.invert(&f2.mul(&denominators[0], &denominators[1]));
        let inverses = [f2.mul(&denominators[1], &inverse), f2.mul(&denominators[0], &inverse)];
        let mut undecided = !(first.checked & second.checked);
        let mut points = [[[[[0u64; 8]; 8]; 2]; 3]; 2];
        for (index, map) in self.maps.iter().enumerate() {
            let x = f2.mul(&load_fe2(o, &map.numerator), &inverses[index]);
            let y = f2.mul(&load_fe2(o, &map.root), &f2.sqr(&inverses[index]));
            let flip = sgn0_mask(f2, &load_fe2(o, &map.u)) ^ sgn0_mask(f2, &y);
            let y = f2.select(flip, &y, &f2.neg(&y));
            let (point, pole) = iso_map(f2, &x, &y);
            undecided |= pole;
            points[index] = store_point(o, &point);
        }
        (points, undecided)
    }
}

/// a + b, or a - b, by the complete formula.
struct Add {
    a: WordsPoint,
    b: WordsPoint,
    negate_b: bool,
}

impl Kernel for Add {
    type Output = WordsPoint;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> WordsPoint {
        let f2 = Fp2x8::new(o);
        let mut b = load_point(o, &self.b);
        if self.negate_b {
            b[1] = f2.neg(&b[1]);
        }
        store_point(o, &complete::add(G2(f2), &load_point(o, &self.a), &b))
    }
}

/// [x]P = -[|x|]P, and the lanes whose chain met an exceptional case.
struct TimesX {
    point: WordsPoint,
}

impl Kernel for TimesX {
    type Output = (WordsPoint, u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> (WordsPoint, u8) {
        let f2 = Fp2x8::new(o);
        let (point, exceptional) = times_x(f2, &load_point(o, &self.point));
        (store_point(o, &point), exceptional)
    }
}

/// psi(P) and psi^2(2P).
struct PsiAndPsi2Double {
    point: WordsPoint,
}

impl Kernel for PsiAndPsi2Double {
    type Output = [WordsPoint; 2];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [WordsPoint; 2] {
        let f2 = Fp2x8::new(o);
        let p = load_point(o, &self.point);
        let psi2_2p = psi(f2, &psi(f2, &complete::double(G2(f2), &p)));
        [store_point(o, &psi(f2, &p)), store_point(o, &psi2_2p)]
    }
}

/// The result as blst's Jacobian words (XZ, YZ^2, Z), and the lanes where it is the
/// identity (Z = 0).
struct ToBlstJacobian {
    point: WordsPoint,
}

impl Kernel for ToBlstJacobian {
    type Output = ([G2JacobianWords; 8], u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G2JacobianWords; 8], u8) {
        let f2 = Fp2x8::new(o);
        let f = f2.f;
        let [x, y, z] = load_point(o, &self.point);
        let jacobian = [f2.mul(&x, &z), f2.mul(&y, &f2.sqr(&z)), z];
        let mut points = [[[[0u64; 6]; 2]; 3]; 8];
        for (coordinate, value) in jacobian.iter().enumerate() {
            for (part, element) in value.iter().enumerate() {
                for (lane, words) in unpack_fp(f, element).iter().enumerate() {
                    points[lane][coordinate][part] = *words;
                }
            }
        }
        (points, f2.is_zero_mask(&z))
    }
}

#[inline(always)]
fn constant2<O: LaneOps>(f2: Fp2x8<O>, c: &Fp2Limbs) -> Fe2<O> {
    f2.constant(&c[0], &c[1])
}

/// OS2IP of the 64 bytes at `index` of each lane's expansion, mod p, in Montgomery
/// form: h 2^384 + l with h < 2^128 and l < 2^384 (below 2^390, as a product's
/// inputs may be), l R and h 2^384 R each by one product.
#[inline(always)]
fn field_element<O: LaneOps>(
    f: Fpx8<O>,
    expanded: &[[u8; EXPANDED_BYTES]; 8],
    index: usize,
) -> Fe<O> {
    let mut high = [[0u64; 8]; 8];
    let mut low = [[0u64; 8]; 8];
    for lane in 0..8 {
        let bytes = &expanded[lane][64 * index..64 * index + 64];
        let mut high_bytes = [0u8; 48];
        high_bytes[32..].copy_from_slice(&bytes[..16]);
        high[lane] = fpx8::limbs_from_be(&high_bytes);
        low[lane] = fpx8::limbs_from_be(bytes[16..].try_into().expect("48 bytes"));
    }
    f.add(&f.to_montgomery(&f.pack(&low)), &f.mul(&f.pack(&high), &f.constant(&TWO_384_R2)))
}

/// sgn0 of RFC 9380 (section 4.1) for Fp2: the parity of c0, or of c1 where c0 = 0,
/// of the canonical plain values, as a lane mask.
#[inline(always)]
fn sgn0_mask<O: LaneOps>(f2: Fp2x8<O>, a: &Fe2<O>) -> u8 {
    let (f, o) = (f2.f, f2.f.o);
    let plain = f2.out_of_montgomery(a);
    let one = o.splat(1);
    let odd0 = o.eq_mask(o.and(plain[0][0], one), one);
    let odd1 = o.eq_mask(o.and(plain[1][0], one), one);
    odd0 | (f.is_zero_mask(&plain[0]) & odd1)
}

/// One map's state before its division: x = numerator/denominator, y = root /
/// denominator^2 up to sign, and the lanes whose root checked.
struct Fraction<O: LaneOps> {
    numerator: Fe2<O>,
    denominator: Fe2<O>,
    root: Fe2<O>,
    checked: u8,
}

/// Simplified SWU on E' up to its division (see the module comment).
#[inline(always)]
fn sswu_fraction<O: LaneOps>(f2: Fp2x8<O>, u: &Fe2<O>) -> Fraction<O> {
    let f = f2.f;
    let (a, b, z) = (constant2(f2, &A), constant2(f2, &B), constant2(f2, &Z));
    let zu2 = f2.mul(&z, &f2.sqr(u));
    // x1 = -B'(t + 1)/(A' t) for t = Z^2 u^4 + Z u^2, or B'/(Z A') where t = 0.
    let t = f2.add(&f2.sqr(&zu2), &zu2);
    let t_zero = f2.is_zero_mask(&t);
    let n1 = f2.select(t_zero, &f2.mul(&constant2(f2, &MINUS_B), &f2.add(&t, &f2.one())), &b);
    let denominator = f2.select(t_zero, &f2.mul(&a, &t), &constant2(f2, &Z_A));
    // x2 = Z u^2 x1.
    let n2 = f2.mul(&zu2, &n1);
    let d2 = f2.sqr(&denominator);
    let a_d2 = f2.mul(&a, &d2);
    let b_d3 = f2.mul(&b, &f2.mul(&d2, &denominator));
    // No closure over lane values: see `lane::Ifma::run`.
    let g1 = scaled_g(f2, &n1, &a_d2, &b_d3, &denominator);
    let g2 = scaled_g(f2, &n2, &a_d2, &b_d3, &denominator);
    let norm1 = f.add(&f.sqr(&g1[0]), &f.sqr(&g1[1]));
    let s1 = f.pow_public(&norm1, &fpx8::SQRT_EXPONENT);
    let g1_square = f.eq_mask(&f.sqr(&s1), &norm1);
    let norm_u = f.add(&f.sqr(&u[0]), &f.sqr(&u[1]));
    let norm_u3 = f.mul(&f.sqr(&norm_u), &norm_u);
    let s2 = f.mul(&f.mul(&norm_u3, &s1), &f.constant(&SQRT_MINUS_125));
    let g = f2.select(g1_square, &g2, &g1);
    let s = f.select(g1_square, &s2, &s1);
    let root = sqrt_with_norm_root(f2, &g, &s);
    Fraction {
        numerator: f2.select(g1_square, &n2, &n1),
        denominator,
        root,
        checked: f2.eq_mask(&f2.sqr(&root), &g),
    }
}

/// g(N/D) D^4 = (N (N^2 + A' D^2) + B' D^3) D.
#[inline(always)]
fn scaled_g<O: LaneOps>(
    f2: Fp2x8<O>,
    n: &Fe2<O>,
    a_d2: &Fe2<O>,
    b_d3: &Fe2<O>,
    denominator: &Fe2<O>,
) -> Fe2<O> {
    f2.mul(&f2.add(&f2.mul(&f2.add(&f2.sqr(n), a_d2), n), b_d3), denominator)
}

/// The polynomial with coefficients `low_first` (and a leading 1 where `monic`) at x,
/// by Horner's rule.
#[inline(always)]
fn polynomial<O: LaneOps>(f2: Fp2x8<O>, low_first: &[Fp2Limbs], monic: bool, x: &Fe2<O>) -> Fe2<O> {
    let top = low_first.len() - 1;
    let mut value = constant2(f2, &low_first[top]);
    if monic {
        value = f2.add(x, &value);
    }
    for coefficient in low_first[..top].iter().rev() {
        value = f2.add(&f2.mul(&value, x), &constant2(f2, coefficient));
    }
    value
}

/// The 3-isogeny E' -> E2 at the affine (x, y), as homogeneous projective
/// (x_num y_den : y y_num x_den : x_den y_den); lanes at a pole (Z = 0) flagged.
#[inline(always)]
fn iso_map<O: LaneOps>(f2: Fp2x8<O>, x: &Fe2<O>, y: &Fe2<O>) -> (Projective<G2<O>>, u8) {
    let x_num = polynomial(f2, &X_NUM, false, x);
    let x_den = polynomial(f2, &X_DEN, true, x);
    let y_num = polynomial(f2, &Y_NUM, false, x);
    let y_den = polynomial(f2, &Y_DEN, true, x);
    let z = f2.mul(&x_den, &y_den);
    let pole = f2.is_zero_mask(&z);
    ([f2.mul(&x_num, &y_den), f2.mul(&f2.mul(y, &y_num), &x_den), z], pole)
}

/// psi on homogeneous coordinates: (conj(X) PSI_X : conj(Y) PSI_Y : conj(Z)).
#[inline(always)]
fn psi<O: LaneOps>(f2: Fp2x8<O>, [x, y, z]: &Projective<G2<O>>) -> Projective<G2<O>> {
    let f = f2.f;
    let psi_x = [f.zero(), f.constant(&PSI_X_C1)];
    let psi_y = f2.constant(&PSI_Y_C0, &PSI_Y_C1);
    [f2.mul(&f2.conjugate(x), &psi_x), f2.mul(&f2.conjugate(y), &psi_y), f2.conjugate(z)]
}

/// [x]P = -[|x|]P, by `jacobian::multiply_jacobian` ((X : Y : Z) is the Jacobian
/// (XZ, YZ^2, Z); back, (X, Y, Z) is (XZ : Y : Z^3)); its exceptional lanes flagged.
#[inline(always)]
fn times_x<O: LaneOps>(f2: Fp2x8<O>, [x, y, z]: &Projective<G2<O>>) -> (Projective<G2<O>>, u8) {
    let jacobian_in = (f2.mul(x, z), f2.mul(y, &f2.sqr(z)), *z);
    let ((x3, y3, z3), exceptional) = jacobian::multiply_jacobian(f2, &jacobian_in, X_ABS);
    ([f2.mul(&x3, &z3), f2.neg(&y3), f2.mul(&f2.sqr(&z3), &z3)], exceptional)
}
