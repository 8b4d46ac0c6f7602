//! Public points times public 64-bit weights, a different weight in each lane: the
//! random weights of batch verification (`verify_signature_sets`), on the incomplete
//! Jacobian formulas of `curve::jacobian`, over Fp (the keys) or Fp2 (the
//! signatures). Neither points nor weights are secret, so this is not constant time
//! (a window no lane needs is skipped); every lane still runs the same steps.
//!
//! `sum_by_lane` gives each lane the plain sum of the points it holds (every weight
//! 1: one mixed addition a point, no table), for the sums of `aggregate`,
//! `eth_aggregate_pubkeys` and a set's keys; its lanes are flagged where a partial
//! sum meets ±the next point (or is the identity), and the caller sums those on blst.
//!
//! `sum_by_weights` gives each lane the sum of [w_j]P_j over the points it holds,
//! Straus' interleaving: one chain of doublings shared by all of a lane's points.
//! Signed 4-bit windows (digits -8..7 and a top digit 0 or 1): a table of [d]P for
//! d = 1..8 per point, then per window four doublings and, per point, one addition
//! of the entry the lane's digit names (a masked scan), negated for a negative digit.
//! A lane takes its first nonzero digit's entry as it is and adds nothing for a zero
//! digit, so no addition meets the identity. For one point of prime order r, no
//! addition meets +-its other operand: the table's [k]P + P has k in 2..7, and a
//! window adds [d]P (|d| <= 8) to [16 m]P with m >= 1, all far below r. With several
//! points in a lane a partial sum can equal +-an entry (equal points, or a chance
//! relation); such lanes, and lanes holding a point not in the group, are flagged,
//! and the caller computes them on blst.

use crate::curve::complete::SelectField;
use crate::curve::jacobian::{self, Jacobian};
use crate::field::fp2x8::{Fe2, Fp2x8};
use crate::field::fpx8::Fpx8;
use crate::field::stored::{pack_fp, unpack_fp};
use crate::lane::LaneOps;
use crate::points::{Fp2Words, G1Words, G2Words};
pub use crate::points::{G1JacobianWords, G2JacobianWords};

/// Windows of a 64-bit weight in signed 4-bit digits: 16 and the carry out of the top.
const WINDOWS: usize = 17;

/// The signed 4-bit digits of eight weights, window by window from the bottom: the
/// magnitudes (0..=8) and the lanes whose digit is negative.
fn signed_digits(weights: &[u64; 8]) -> [([u64; 8], u8); WINDOWS] {
    let mut out = [([0u64; 8], 0u8); WINDOWS];
    for (lane, weight) in weights.iter().enumerate() {
        let mut carry = 0u64;
        for (window, (magnitudes, negative)) in out.iter_mut().enumerate() {
            let digit = if window < 16 { ((weight >> (4 * window)) & 0xf) + carry } else { carry };
            if digit >= 8 && window < 16 {
                magnitudes[lane] = 16 - digit;
                *negative |= 1 << lane;
                carry = 1;
            } else {
                magnitudes[lane] = digit;
                carry = 0;
            }
        }
    }
    out
}

/// Per lane, the sum of the affine points `points[j]` (none the identity) over the
/// rows whose `live` mask has the lane (row 0 must have every lane), and the lanes
/// left undecided.
#[inline(always)]
pub fn sum_by_lane<F: SelectField>(
    f: F,
    points: &[(F::Element, F::Element)],
    live: &[u8],
) -> (Jacobian<F::Element>, u8) {
    assert!(!points.is_empty() && points.len() == live.len() && live[0] == 0xff);
    let (x0, y0) = &points[0];
    let mut acc: Jacobian<F::Element> = (*x0, *y0, f.one());
    let mut exceptional = 0u8;
    for ((x, y), live) in points.iter().zip(live).skip(1) {
        let (sum, odd) = jacobian::add_affine(f, &acc, x, y);
        acc = (
            f.select(*live, &acc.0, &sum.0),
            f.select(*live, &acc.1, &sum.1),
            f.select(*live, &acc.2, &sum.2),
        );
        exceptional |= odd & live;
    }
    (acc, exceptional)
}

/// Per lane, the sum of [weights[j]_lane] P_j,lane over the affine points `points[j]`
/// (none the identity), the lanes where any weight is nonzero (the others' sum is
/// the identity and the Jacobian value meaningless), and the lanes left undecided.
#[inline(always)]
pub fn sum_by_weights<F: SelectField, O: LaneOps>(
    f: F,
    o: O,
    points: &[(F::Element, F::Element)],
    weights: &[[u64; 8]],
) -> (Jacobian<F::Element>, u8, u8) {
    assert!(!points.is_empty() && points.len() == weights.len());
    let mut exceptional = 0u8;
    // Loops, not closures: a closure's body would not be compiled with the kernel's
    // target features.
    let mut tables: Vec<[Jacobian<F::Element>; 8]> = Vec::with_capacity(points.len());
    for (x, y) in points {
        let base: Jacobian<F::Element> = (*x, *y, f.one());
        let mut table = [base; 8];
        table[1] = jacobian::double(f, &base);
        for d in 2..8 {
            let (sum, odd) = jacobian::add_affine(f, &table[d - 1], x, y);
            table[d] = sum;
            exceptional |= odd;
        }
        tables.push(table);
    }
    let digits: Vec<_> = weights.iter().map(signed_digits).collect();
    let zero = f.zero();
    let mut acc = tables[0][0];
    let mut started = 0u8;
    for window in (0..WINDOWS).rev() {
        if started != 0 {
            for _ in 0..4 {
                acc = jacobian::double(f, &acc);
            }
        }
        for (table, digits) in tables.iter().zip(&digits) {
            let (magnitudes, negative) = &digits[window];
            if magnitudes.iter().all(|m| *m == 0) {
                continue;
            }
            let magnitudes = o.load(magnitudes);
            let mut entry = table[0];
            for (d, point) in table.iter().enumerate().skip(1) {
                let hit = o.eq_mask(magnitudes, o.splat(d as u64 + 1));
                entry = (
                    f.select(hit, &entry.0, &point.0),
                    f.select(hit, &entry.1, &point.1),
                    f.select(hit, &entry.2, &point.2),
                );
            }
            entry.1 = f.select(*negative, &entry.1, &f.sub(&zero, &entry.1));
            let nonzero = !o.eq_mask(magnitudes, o.splat(0));
            let (sum, odd) = jacobian::add(f, &acc, &entry);
            let adding = started & nonzero;
            let taking = !started & nonzero;
            acc = (
                f.select(taking, &f.select(adding, &acc.0, &sum.0), &entry.0),
                f.select(taking, &f.select(adding, &acc.1, &sum.1), &entry.1),
                f.select(taking, &f.select(adding, &acc.2, &sum.2), &entry.2),
            );
            exceptional |= odd & adding;
            started |= nonzero;
        }
    }
    (acc, started, exceptional)
}

/// Keys (affine, blst's words, none the identity) eight to a row, one per lane, and
/// their weights: each lane sums its column. One row is eight keys times their
/// weights.
pub(crate) struct WeightedKeys<'a> {
    pub(crate) points: &'a [[G1Words; 8]],
    pub(crate) weights: &'a [[u64; 8]],
}

impl crate::lane::Kernel for WeightedKeys<'_> {
    /// Each lane's sum, the lanes with a nonzero weight, the lanes left undecided.
    type Output = ([G1JacobianWords; 8], u8, u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G1JacobianWords; 8], u8, u8) {
        let f = Fpx8::new(o);
        let mut points = Vec::with_capacity(self.points.len());
        for row in self.points {
            points.push((pack_fp(f, &row.map(|p| p.x)), pack_fp(f, &row.map(|p| p.y))));
        }
        let ((x3, y3, z3), started, undecided) = sum_by_weights(f, o, &points, self.weights);
        let words = [unpack_fp(f, &x3), unpack_fp(f, &y3), unpack_fp(f, &z3)];
        let sums = std::array::from_fn(|lane| [words[0][lane], words[1][lane], words[2][lane]]);
        (sums, started, undecided | (started & f.is_zero_mask(&z3)))
    }
}

/// Signatures (affine, blst's words, none the identity) eight to a row, one per
/// lane, and their weights: each lane sums its column.
pub(crate) struct WeightedSignatures<'a> {
    pub(crate) points: &'a [[G2Words; 8]],
    pub(crate) weights: &'a [[u64; 8]],
}

#[inline(always)]
fn pack_fp2<O: LaneOps>(f: Fpx8<O>, lanes: &[Fp2Words; 8]) -> Fe2<O> {
    [pack_fp(f, &lanes.map(|e| e[0])), pack_fp(f, &lanes.map(|e| e[1]))]
}

#[inline(always)]
fn unpack_fp2<O: LaneOps>(f: Fpx8<O>, a: &Fe2<O>) -> [Fp2Words; 8] {
    let (c0, c1) = (unpack_fp(f, &a[0]), unpack_fp(f, &a[1]));
    std::array::from_fn(|lane| [c0[lane], c1[lane]])
}

impl crate::lane::Kernel for WeightedSignatures<'_> {
    /// Each lane's sum, the lanes with a nonzero weight, the lanes left undecided.
    type Output = ([G2JacobianWords; 8], u8, u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G2JacobianWords; 8], u8, u8) {
        let f = Fpx8::new(o);
        let f2 = Fp2x8::new(o);
        let mut points = Vec::with_capacity(self.points.len());
        for row in self.points {
            points.push((pack_fp2(f, &row.map(|p| p.x)), pack_fp2(f, &row.map(|p| p.y))));
        }
        let ((x3, y3, z3), started, undecided) = sum_by_weights(f2, o, &points, self.weights);
        let words = [unpack_fp2(f, &x3), unpack_fp2(f, &y3), unpack_fp2(f, &z3)];
        let sums = std::array::from_fn(|lane| [words[0][lane], words[1][lane], words[2][lane]]);
        (sums, started, undecided | (started & f2.is_zero_mask(&z3)))
    }
}

/// Keys (affine, blst's words, none the identity) eight to a row, one per lane, and
/// each row's live lanes (row 0 all of them): each lane sums its column.
pub(crate) struct KeySums<'a> {
    pub(crate) points: &'a [[G1Words; 8]],
    pub(crate) live: &'a [u8],
}

impl crate::lane::Kernel for KeySums<'_> {
    /// Each lane's sum, the lanes left undecided.
    type Output = ([G1JacobianWords; 8], u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G1JacobianWords; 8], u8) {
        let f = Fpx8::new(o);
        let mut points = Vec::with_capacity(self.points.len());
        for row in self.points {
            points.push((pack_fp(f, &row.map(|p| p.x)), pack_fp(f, &row.map(|p| p.y))));
        }
        let ((x3, y3, z3), undecided) = sum_by_lane(f, &points, self.live);
        let words = [unpack_fp(f, &x3), unpack_fp(f, &y3), unpack_fp(f, &z3)];
        let sums = std::array::from_fn(|lane| [words[0][lane], words[1][lane], words[2][lane]]);
        (sums, undecided | f.is_zero_mask(&z3))
    }
}

/// Signatures (affine, blst's words, none the identity) eight to a row, as `KeySums`.
pub(crate) struct SignatureSums<'a> {
    pub(crate) points: &'a [[G2Words; 8]],
    pub(crate) live: &'a [u8],
}

impl crate::lane::Kernel for SignatureSums<'_> {
    /// Each lane's sum, the lanes left undecided.
    type Output = ([G2JacobianWords; 8], u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G2JacobianWords; 8], u8) {
        let f = Fpx8::new(o);
        let f2 = Fp2x8::new(o);
        let mut points = Vec::with_capacity(self.points.len());
        for row in self.points {
            points.push((pack_fp2(f, &row.map(|p| p.x)), pack_fp2(f, &row.map(|p| p.y))));
        }
        let ((x3, y3, z3), undecided) = sum_by_lane(f2, &points, self.live);
        let words = [unpack_fp2(f, &x3), unpack_fp2(f, &y3), unpack_fp2(f, &z3)];
        let sums = std::array::from_fn(|lane| [words[0][lane], words[1][lane], words[2][lane]]);
        (sums, undecided | f2.is_zero_mask(&z3))
    }
}
