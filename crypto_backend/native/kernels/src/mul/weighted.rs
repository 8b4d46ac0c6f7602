//! Eight public keys times eight public 64-bit weights at once, a different weight in
//! each lane: the random weights of batch verification (`verify_signature_sets`), on
//! the incomplete Jacobian formulas of `curve::jacobian`. Neither keys nor weights are
//! secret, so this is not constant time; every lane still runs the same steps.
//!
//! Fixed 4-bit windows from the top: a table of [d]P for d = 1..15 per lane, then per
//! window four doublings and one addition of the entry the lane's digit names (a
//! masked scan of the table). A lane takes its first nonzero digit's entry as it is
//! and adds nothing for a zero digit, so no addition ever meets the identity. For a
//! point of prime order r, no addition meets +-its other operand either: the table's
//! [k]P + P has k in 2..14, and a window adds [d]P (d <= 15) to [16 m]P with m >= 1,
//! all far below r. Lanes flagged anyway (a point not in G1) are left undecided, and
//! the caller multiplies them on blst.

use crate::curve::complete::SelectField;
use crate::curve::jacobian::{self, Jacobian};
use crate::field::fpx8::Fpx8;
use crate::field::stored::{pack_fp, unpack_fp};
use crate::lane::LaneOps;
use crate::points::{FpWords, G1Words};

/// A G1 point as blst's Jacobian blst_p1 holds it (X, Y, Z: x = X/Z^2, y = Y/Z^3).
pub type G1JacobianWords = [FpWords; 3];

/// [weight_lane](x_lane, y_lane) for affine points that are not the identity, and
/// the lanes left undecided.
#[inline(always)]
pub fn multiply_by_weights<F: SelectField, O: LaneOps>(
    f: F,
    o: O,
    x: &F::Element,
    y: &F::Element,
    weights: &[u64; 8],
) -> (Jacobian<F::Element>, u8) {
    let one = f.one();
    let base: Jacobian<F::Element> = (*x, *y, one);
    let mut table = [base; 16];
    table[2] = jacobian::double(f, &base);
    let mut exceptional = 0u8;
    for d in 3..16 {
        let (sum, odd) = jacobian::add_affine(f, &table[d - 1], x, y);
        table[d] = sum;
        exceptional |= odd;
    }
    let mut acc = base;
    let mut started = 0u8;
    for window in (0..16).rev() {
        if window != 15 {
            for _ in 0..4 {
                acc = jacobian::double(f, &acc);
            }
        }
        let digits: [u64; 8] = std::array::from_fn(|lane| (weights[lane] >> (4 * window)) & 0xf);
        let digits = o.load(&digits);
        let mut entry = base;
        for (d, point) in table.iter().enumerate().skip(2) {
            let hit = o.eq_mask(digits, o.splat(d as u64));
            entry = (
                f.select(hit, &entry.0, &point.0),
                f.select(hit, &entry.1, &point.1),
                f.select(hit, &entry.2, &point.2),
            );
        }
        let nonzero = !o.eq_mask(digits, o.splat(0));
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
    (acc, exceptional | !started)
}

/// Eight keys (affine, blst's words, none the identity) and their weights.
pub(crate) struct WeightedKeys {
    pub(crate) points: [G1Words; 8],
    pub(crate) weights: [u64; 8],
}

impl crate::lane::Kernel for WeightedKeys {
    type Output = ([G1JacobianWords; 8], u8);

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> ([G1JacobianWords; 8], u8) {
        let f = Fpx8::new(o);
        let x = pack_fp(f, &self.points.map(|point| point.x));
        let y = pack_fp(f, &self.points.map(|point| point.y));
        let ((x3, y3, z3), undecided) = multiply_by_weights(f, o, &x, &y, &self.weights);
        let words = [unpack_fp(f, &x3), unpack_fp(f, &y3), unpack_fp(f, &z3)];
        let points = std::array::from_fn(|lane| [words[0][lane], words[1][lane], words[2][lane]]);
        (points, undecided | f.is_zero_mask(&z3))
    }
}
