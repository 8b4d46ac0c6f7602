//! Eight elements of Fp (BLS12-381's base field) at once, written once over the lane
//! type (`lane`): each element is 8 limbs of 52 bits in Montgomery form with
//! R = 2^416, limb j of the eight elements in one lane vector.
//!
//! Lazy reduction: every function returns a value in [0, 2p), not necessarily in
//! [0, p), with limbs below 2^52 (limb 7 too), so one element has two
//! representations, x and x + p, where x < p. The functions that look at the exact
//! representation make it canonical (in [0, p)) first: `eq_mask`, `is_zero_mask`,
//! `gt_mask`, `unpack`, `out_of_montgomery` (whose results are plain values).
//! The bounds relied on, with p < 2^381 and R = 2^416:
//! - `mul`: for a, b < 2^390 (so any a, b < 2p or 4p), the Montgomery product
//!   (ab + Mp)/R, M < R, is below ab/R + p < 2^780/2^416 + p = 2^364 + p < 2p; so
//!   it needs no final subtraction. a, b < 2^390 also makes limbs 7 below 2^26,
//!   so a7*b7 < 2^52 and its high half is 0 (skipped). Column sums stay below 2^58.
//! - `add`: a + b < 4p; one conditional subtraction of 2p puts it in [0, 2p).
//! - `sub`: a - b is in (-2p, 2p); adding 2p where it is negative gives [0, 2p).
//!
//! Every function runs the same instructions whatever the values (no branch or index
//! on data: the constant-time kernels rely on it). Everything is `#[inline(always)]`
//! so that a kernel entered through `Ifma::run` is compiled whole with the IFMA
//! features.

use crate::lane::{LaneOps, OneLane, MASK52};

/// `body` eight times, with `$index` bound to the constants 0 to 7: straight-line
/// code at constant indices, whatever LLVM's loop unroller decides.
macro_rules! unrolled {
    ($index:ident => $body:block) => {{
        {
            let $index: usize = 0;
            $body
        }
        {
            let $index: usize = 1;
            $body
        }
        {
            let $index: usize = 2;
            $body
        }
        {
            let $index: usize = 3;
            $body
        }
        {
            let $index: usize = 4;
            $body
        }
        {
            let $index: usize = 5;
            $body
        }
        {
            let $index: usize = 6;
            $body
        }
        {
            let $index: usize = 7;
            $body
        }
    }};
}

/// One 8-lane field element: `limbs[j]` holds limb j (bits 52j..52j+51) of each lane.
pub type Fe<O> = [<O as LaneOps>::V; 8];
/// The 52-bit limbs of one field element, lowest first.
pub type Limbs = [u64; 8];

/// p, the base field modulus.
/// A double-width value, a product or sum of products before its Montgomery
/// reduction: 16 column sums (column k of weight 2^(52k)).
pub type Wide<O> = [<O as LaneOps>::V; 16];

/// 4p^2 in 16 columns of 52 bits: added to a0b0 - a1b1 (factors below 2p) it keeps
/// the whole non-negative, below 8p^2, and congruent (`fp2x8`'s multiplication).
pub const FOUR_P_SQUARED: [u64; 16] = [
    0x8000071c638e4,
    0x75d8e0baac9aa,
    0x844f3f5f3b5ac,
    0xdd0c58b0ce0d8,
    0x59afe47b4f9c6,
    0xba16a1c246812,
    0x672186171eca4,
    0x25e3bc0475a18,
    0x729bbd4c524cc,
    0x414298b3f45b7,
    0xb967924d27a2f,
    0x439439c11ad19,
    0xa88bc97a78b72,
    0xd7f1d2f49e3a,
    0xa90de92e3,
    0x0,
];

pub const P: Limbs = [
    0xeffffffffaaab,
    0xfeb153ffffb9f,
    0x6b0f6241eabff,
    0x12bf6730d2a0f,
    0x764774b84f385,
    0x1ba7b6434bacd,
    0x1ea397fe69a4b,
    0x1a011,
];
/// 2p, the bound of the lazy representation (2p < 2^382: limb 7 below 2^18).
const P2: Limbs = [
    0xdffffffff5556,
    0xfd62a7ffff73f,
    0xd61ec483d57ff,
    0x257ece61a541e,
    0xec8ee9709e70a,
    0x374f6c869759a,
    0x3d472ffcd3496,
    0x34022,
];
/// 4p (4p < 2^383: limb 7 below 2^19), for `neg_for_mul`.
const P4: Limbs = [
    0xbfffffffeaaac,
    0xfac54ffffee7f,
    0xac3d8907aafff,
    0x4afd9cc34a83d,
    0xd91dd2e13ce14,
    0x6e9ed90d2eb35,
    0x7a8e5ff9a692c,
    0x68044,
];
/// 8p (8p < 2^384: limb 7 below 2^20), for `reduce_lazy`.
const P8: Limbs = [
    0x7fffffffd5558,
    0xf58a9ffffdcff,
    0x587b120f55fff,
    0x95fb39869507b,
    0xb23ba5c279c28,
    0xdd3db21a5d66b,
    0xf51cbff34d258,
    0xd0088,
];
/// k p in 52-bit limbs with one lent from each limb to the one below (limb 0 plus
/// 2^52, limbs 1 to 6 plus 2^52 - 1, limb 7 minus 1: the same whole), so that every
/// limb is at least the limb of any carried value below k p / 2: subtracting such a
/// value limb by limb from it leaves no limb below zero.
pub(crate) const fn lent_multiple_of_p(k: u64) -> Limbs {
    let mut out = [0u64; 8];
    let mut carry: u128 = 0;
    let mut j = 0;
    while j < 8 {
        let limb = P[j] as u128 * k as u128 + carry;
        out[j] = if j < 7 { (limb as u64) & MASK52 } else { limb as u64 };
        carry = limb >> 52;
        j += 1;
    }
    out[0] += 1 << 52;
    let mut j = 1;
    while j < 7 {
        out[j] += (1 << 52) - 1;
        j += 1;
    }
    out[7] -= 1;
    out
}

/// 4p lent (`lent_multiple_of_p`), for `neg_for_mul` and the cyclotomic squaring.
pub(crate) const LENT_4P: Limbs = lent_multiple_of_p(4);

// The lent form is 4p's limbs moved, not changed: limb for limb as above.
const _: () = {
    let mut j = 0;
    while j < 8 {
        let lent = if j == 0 {
            1 << 52
        } else if j < 7 {
            (1 << 52) - 1
        } else {
            u64::MAX
        };
        assert!(LENT_4P[j] == P4[j].wrapping_add(lent));
        j += 1;
    }
};

/// -p^-1 mod 2^52.
pub(crate) const P_INV_NEG: u64 = 0x3fffcfffcfffd;
/// R^2 mod p (to Montgomery form).
const R2: Limbs = [
    0xa5bf4cb89af51,
    0x3afbba7ca31a2,
    0x2646160ec71f1,
    0xa84d710465903,
    0x3480a4a188311,
    0x98e5907ad91f5,
    0x2075d74507266,
    0x8746,
];
/// 1 in Montgomery form (R mod p).
pub const ONE: Limbs = [
    0x6480ea8e9b9af,
    0x65766c8fe444f,
    0x8b540fea96f7d,
    0x3b2ee82efd422,
    0xa6723e5f0ade5,
    0xff6eb6fdd4230,
    0xe06ef23c24a25,
    0x14c8e,
];
/// The plain integer 1 (out of Montgomery form).
const PLAIN_ONE: Limbs = [1, 0, 0, 0, 0, 0, 0, 0];
/// 2^384 mod p as a plain integer: x*2^416 times it, reduced, is blst's x*2^384.
const TO_BLST: Limbs = [
    0x900000002fffd,
    0xbc40c0002760,
    0x3c758baebf400,
    0x57455f4898575,
    0xd77ce58537052,
    0x71a97a256ec6,
    0xec3fa80e4935c,
    0x15f65,
];
/// 2^448 mod p as a plain integer: blst's x*2^384 times it, reduced, is x*2^416.
const FROM_BLST: Limbs = [
    0x7fde37dba9366,
    0x4e27525bc342b,
    0x1f5b1e9778489,
    0xb872b2b91b9dc,
    0xb206f497dfcaf,
    0x4137cc89a9b0b,
    0xd9d20d7e39959,
    0x411c,
];
/// (p - 1) / 2 as a plain integer: canonical values above it are the "larger" root.
pub const HALF_P: Limbs = [
    0xf7fffffffd555,
    0xff58a9ffffdcf,
    0xb587b120f55ff,
    0x895fb39869507,
    0xbb23ba5c279c2,
    0x8dd3db21a5d66,
    0x8f51cbff34d25,
    0xd008,
];
/// (p + 1) / 4, little-endian 64-bit words: a^this is a square root of a square a.
pub const SQRT_EXPONENT: [u64; 6] = [
    0xee7fbfffffffeaab,
    0x07aaffffac54ffff,
    0xd9cc34a83dac3d89,
    0xd91dd2e13ce144af,
    0x92c6e9ed90d2eb35,
    0x0680447a8e5ff9a6,
];
/// p - 2, little-endian words: a^this = 1/a (Fermat).
const INVERSE_EXPONENT: [u64; 6] = [
    0xb9feffffffffaaa9,
    0x1eabfffeb153ffff,
    0x6730d2a0f6b0f624,
    0x64774b84f38512bf,
    0x4b1ba7b6434bacd7,
    0x1a0111ea397fe69a,
];

/// Field arithmetic on 8 lanes, over the lane operations `O`.
#[derive(Clone, Copy)]
pub struct Fpx8<O: LaneOps> {
    pub o: O,
}

impl<O: LaneOps> Fpx8<O> {
    #[inline(always)]
    pub fn new(o: O) -> Self {
        Fpx8 { o }
    }

    #[inline(always)]
    pub fn constant(self, limbs: &Limbs) -> Fe<O> {
        // A loop, not `map` with a closure: LLVM may leave the closure out of line,
        // and there the intrinsic is compiled without the IFMA features.
        let mut out = [self.o.splat(0); 8];
        for (slot, limb) in out.iter_mut().zip(limbs.iter()) {
            *slot = self.o.splat(*limb);
        }
        out
    }

    #[inline(always)]
    pub fn zero(self) -> Fe<O> {
        [self.o.splat(0); 8]
    }

    #[inline(always)]
    pub fn one(self) -> Fe<O> {
        self.constant(&ONE)
    }

    /// Pack eight elements (52-bit limbs each, lane i from `lanes[i]`).
    #[inline(always)]
    pub fn pack(self, lanes: &[Limbs; 8]) -> Fe<O> {
        let mut out = self.zero();
        for (limb, slot) in out.iter_mut().enumerate() {
            *slot = self.o.load(&lanes.map(|element| element[limb]));
        }
        out
    }

    /// The eight elements' limbs, lane by lane, canonical (in [0, p)).
    #[inline(always)]
    pub fn unpack(self, a: &Fe<O>) -> [Limbs; 8] {
        self.unpack_raw(&self.canonical(a))
    }

    /// The eight elements' limbs as they are (in [0, 2p)): for the outlined
    /// multiplication and the tests of the representation.
    #[inline(always)]
    pub fn unpack_raw(self, a: &Fe<O>) -> [Limbs; 8] {
        let mut out = [[0u64; 8]; 8];
        for (limb, vector) in a.iter().enumerate() {
            let values = self.o.store(*vector);
            for lane in 0..8 {
                out[lane][limb] = values[lane];
            }
        }
        out
    }

    /// a*b/R mod p (Montgomery multiplication), in [0, 2p) for a, b < 2^390 (see the
    /// module comment): the whole 8x8 product into 16 column sums, then 8 reduction
    /// rows, each adding the multiple m*p of p that clears its lowest column and
    /// carrying that column into the next, then one carry pass.
    #[inline(always)]
    pub fn mul(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        if O::INLINE_FIELD_OPS {
            self.mul_inline(a, b)
        } else {
            mul_outlined(self, a, b)
        }
    }

    /// `add_product` then `montgomery_reduce`, but for columns 0 to 7 starting at
    /// 2^52 - 1 (each row's rounding up then free), written out in the order of a
    /// static schedule (`field::scheduled`, generated): on the Intel IFMA host a
    /// chain of products took 0.88-0.91x the time of the rows.
    #[inline(always)]
    fn mul_inline(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        super::scheduled::mul(self.o, a, b)
    }

    /// The 8x8 product's column sums added into t (column k: weight 2^(52k)).
    #[inline(always)]
    pub(crate) fn add_product(self, t: &mut Wide<O>, a: &Fe<O>, b: &Fe<O>) {
        let o = self.o;
        unrolled!(i => {
            unrolled!(j => {
                t[i + j] = o.madd52lo(t[i + j], a[i], b[j]);
                // hi(a7*b7) is 0: both below 2^26 (module comment).
                if i + j < 14 {
                    t[i + j + 1] = o.madd52hi(t[i + j + 1], a[i], b[j]);
                }
            });
        });
    }

    /// (a*b + c*d)/R mod p, in [0, 2p), with one reduction for both products: for
    /// a, b, c, d < 4p, ab + cd < 32p^2 < pR, so the result is below 2p as `mul`'s
    /// is (module comment), and the column sums stay below 2^58.
    #[inline(always)]
    pub fn mul_sum(self, a: &Fe<O>, b: &Fe<O>, c: &Fe<O>, d: &Fe<O>) -> Fe<O> {
        if O::INLINE_FIELD_OPS {
            self.mul_sum_inline(a, b, c, d)
        } else {
            mul_sum_outlined(self, a, b, c, d)
        }
    }

    #[inline(always)]
    fn mul_sum_inline(self, a: &Fe<O>, b: &Fe<O>, c: &Fe<O>, d: &Fe<O>) -> Fe<O> {
        let mut t = [self.o.splat(0); 16];
        self.add_product(&mut t, a, b);
        self.add_product(&mut t, c, d);
        self.montgomery_reduce(t)
    }

    /// a + b for a, b < 2p, not reduced: below 4p, so only for the inputs of `mul`,
    /// `sqr` and `mul_sum` (which take values below 4p), never kept.
    #[inline(always)]
    pub fn add_for_mul(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        let mut sum = self.zero();
        for j in 0..8 {
            sum[j] = self.o.add(a[j], b[j]);
        }
        self.carry(sum)
    }

    /// 4p - b for b < 2p, not reduced: in (2p, 4p], so only for the inputs of
    /// `mul`, `sqr` and `mul_sum`, as `add_for_mul`. 4p is taken in its lent form
    /// (`LENT_4P`), each limb at least b's, so no limb goes below zero before the
    /// carry pass.
    #[inline(always)]
    pub fn neg_for_mul(self, b: &Fe<O>) -> Fe<O> {
        let o = self.o;
        let mut out = self.zero();
        for j in 0..8 {
            out[j] = o.sub(o.splat(LENT_4P[j]), b[j]);
        }
        self.carry(out)
    }

    /// a^2, as `mul_inline` of a and a but with the 28 products a_i*a_j (i < j)
    /// formed once and doubled: 85 instead of 127 operations for the product. The
    /// column sums differ from mul's, their value does not, so neither do the
    /// reduction's m_i (the digits of -a^2/p mod R) nor the result, bit for bit.
    /// Written out in a static schedule's order as `mul_inline` (`field::scheduled`;
    /// a chain of squarings: 0.90x the time of the rows), its columns starting at
    /// zero: the doubling would double a start.
    #[inline(always)]
    fn sqr_inline(self, a: &Fe<O>) -> Fe<O> {
        super::scheduled::sqr(self.o, a)
    }

    /// The 8 reduction rows and the carry pass, for column sums t of a product
    /// (each below 2^57) whose value is below 2^780.
    ///
    /// The serial part is the chain of reduction rows (m_i needs column i, which
    /// needs m_(i-1)); each row keeps it short:
    /// - column i itself is never updated: with m = t_i * (-1/p) mod 2^52,
    ///   t_i + lo(m*p_0) is t_i rounded up to a multiple of 2^52, so the carry out
    ///   of the cleared column is (t_i + 2^52 - 1) >> 52, known before m is;
    /// - column i+1, which the next m needs, gets hi(m*p_0) and lo(m*p_1) in two
    ///   independent multiply-adds (one into the carry), summed once.
    #[inline(always)]
    pub(crate) fn montgomery_reduce(self, mut t: Wide<O>) -> Fe<O> {
        let o = self.o;
        let zero = o.splat(0);
        let mask = o.splat(MASK52);
        let p = self.constant(&P);
        let p_inv_neg = o.splat(P_INV_NEG);
        unrolled!(i => {
            // m makes column i divisible by 2^52 (only its low 52 bits count).
            let m = o.madd52lo(zero, t[i], p_inv_neg);
            // Arithmetic: a column of a difference of products may be negative.
            let carry = o.sra::<52>(o.add(t[i], mask));
            let low = o.madd52lo(carry, m, p[1]);
            t[i + 1] = o.add(o.madd52hi(t[i + 1], m, p[0]), low);
            unrolled!(j => {
                if j >= 1 {
                    t[i + j + 1] = o.madd52hi(t[i + j + 1], m, p[j]);
                }
                if j >= 2 {
                    t[i + j] = o.madd52lo(t[i + j], m, p[j]);
                }
            });
        });
        let out = [t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]];
        self.carry(out)
    }

    /// a^2, the same value and representation as `mul(a, a)`, in fewer operations.
    #[inline(always)]
    pub fn sqr(self, a: &Fe<O>) -> Fe<O> {
        if O::INLINE_FIELD_OPS {
            self.sqr_inline(a)
        } else {
            sqr_outlined(self, a)
        }
    }

    /// Propagate carries so that limbs 0..7 are below 2^52 (limb 7 keeps the rest).
    #[inline(always)]
    pub(crate) fn carry(self, mut t: Fe<O>) -> Fe<O> {
        let o = self.o;
        let mask = o.splat(MASK52);
        for j in 0..7 {
            // Arithmetic, so that a negative limb (of a non-negative whole) borrows.
            t[j + 1] = o.add(t[j + 1], o.sra::<52>(t[j]));
            t[j] = o.and(t[j], mask);
        }
        t
    }

    /// t - bound where t >= bound, else t, for carried t < 2 bound.
    #[inline(always)]
    fn reduce_below(self, t: Fe<O>, bound: &Limbs) -> Fe<O> {
        let o = self.o;
        let (difference, borrow) = self.sub_limbs(&t, &self.constant(bound));
        let no_borrow = o.eq_mask(borrow, o.splat(0));
        self.select(no_borrow, &t, &difference)
    }

    /// 3a, 4a and 8a in [0, 2p) for a in [0, 2p): formed unreduced (below 6p, 8p,
    /// 16p), carried, then reduced by as many conditional subtractions as the bound
    /// needs: one pass where two or three chained additions reduced after each.
    #[inline(always)]
    pub fn triple(self, a: &Fe<O>) -> Fe<O> {
        let o = self.o;
        let mut sum = *a;
        for j in 0..8 {
            sum[j] = o.add(o.add(a[j], a[j]), a[j]);
        }
        self.reduce_below_8p(self.carry(sum))
    }

    #[inline(always)]
    pub fn times4(self, a: &Fe<O>) -> Fe<O> {
        self.reduce_below_8p(self.shifted::<2>(a))
    }

    #[inline(always)]
    pub fn times8(self, a: &Fe<O>) -> Fe<O> {
        self.reduce_lazy(&self.shifted::<3>(a))
    }

    /// 2^N a, unreduced and carried (limbs below 2^52 take the shift, N <= 3).
    #[inline(always)]
    fn shifted<const N: u32>(self, a: &Fe<O>) -> Fe<O> {
        let mut product = *a;
        for j in 0..8 {
            product[j] = self.o.shl::<N>(a[j]);
        }
        self.carry(product)
    }

    /// The lazy representation (in [0, 2p)) of a sum of field elements a in
    /// [0, 16p) whose limbs are carried (`add_for_mul`'s form): conditional
    /// subtractions of 8p, 4p and 2p.
    #[inline(always)]
    pub fn reduce_lazy(self, a: &Fe<O>) -> Fe<O> {
        self.reduce_below_8p(self.reduce_below(*a, &P8))
    }

    /// [0, 2p) from carried t in [0, 8p): conditional subtractions of 4p and 2p.
    #[inline(always)]
    fn reduce_below_8p(self, t: Fe<O>) -> Fe<O> {
        self.reduce_below(self.reduce_below(t, &P4), &P2)
    }

    /// The canonical representation (in [0, p)) of a (in [0, 2p)).
    #[inline(always)]
    pub fn canonical(self, a: &Fe<O>) -> Fe<O> {
        self.reduce_below(*a, &P)
    }

    /// a - b limb by limb with borrows: the 416-bit difference and the final borrow (0/1).
    #[inline(always)]
    fn sub_limbs(self, a: &Fe<O>, b: &Fe<O>) -> (Fe<O>, O::V) {
        let o = self.o;
        let mask = o.splat(MASK52);
        let mut borrow = o.splat(0);
        let mut out = self.zero();
        for j in 0..8 {
            let x = o.sub(o.sub(a[j], b[j]), borrow);
            borrow = o.shr::<63>(x);
            out[j] = o.and(x, mask);
        }
        (out, borrow)
    }

    #[inline(always)]
    pub fn add(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        if O::INLINE_FIELD_OPS {
            self.add_inline(a, b)
        } else {
            add_outlined(self, a, b)
        }
    }

    #[inline(always)]
    fn add_inline(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        let mut sum = self.zero();
        for j in 0..8 {
            sum[j] = self.o.add(a[j], b[j]);
        }
        // a + b < 4p: one conditional subtraction of 2p.
        self.reduce_below(self.carry(sum), &P2)
    }

    #[inline(always)]
    pub fn sub(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        if O::INLINE_FIELD_OPS {
            self.sub_inline(a, b)
        } else {
            sub_outlined(self, a, b)
        }
    }

    #[inline(always)]
    fn sub_inline(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        let o = self.o;
        let (difference, borrow) = self.sub_limbs(a, b);
        // Add 2p back in the lanes that went below zero (the add wraps past 2^416):
        // a - b > -2p there, so the result is in [0, 2p) in every lane.
        let negative = o.eq_mask(borrow, o.splat(1));
        let p = self.constant(&P2);
        let mut out = self.zero();
        for j in 0..8 {
            out[j] = o.add(difference[j], o.select(negative, o.splat(0), p[j]));
        }
        let mut out = self.carry(out);
        out[7] = o.and(out[7], o.splat(MASK52));
        out
    }

    #[inline(always)]
    pub fn neg(self, a: &Fe<O>) -> Fe<O> {
        self.sub(&self.zero(), a)
    }

    #[inline(always)]
    pub fn double(self, a: &Fe<O>) -> Fe<O> {
        self.add(a, a)
    }

    /// Lanes where a == b as field elements (compared canonical).
    #[inline(always)]
    pub fn eq_mask(self, a: &Fe<O>, b: &Fe<O>) -> u8 {
        let (a, b) = (self.canonical(a), self.canonical(b));
        let mut mask = 0xff;
        for j in 0..8 {
            mask &= self.o.eq_mask(a[j], b[j]);
        }
        mask
    }

    #[inline(always)]
    pub fn is_zero_mask(self, a: &Fe<O>) -> u8 {
        let a = self.canonical(a);
        let mut any = self.o.splat(0);
        for limb in a.iter() {
            any = self.o.or(any, *limb);
        }
        self.o.eq_mask(any, self.o.splat(0))
    }

    /// Lanes where the plain (non-Montgomery) value a, made canonical, exceeds `bound`.
    #[inline(always)]
    pub fn gt_mask(self, a: &Fe<O>, bound: &Limbs) -> u8 {
        let (_, borrow) = self.sub_limbs(&self.constant(bound), &self.canonical(a));
        self.o.eq_mask(borrow, self.o.splat(1))
    }

    #[inline(always)]
    pub fn select(self, mask: u8, when_clear: &Fe<O>, when_set: &Fe<O>) -> Fe<O> {
        let mut out = *when_clear;
        for j in 0..8 {
            out[j] = self.o.select(mask, when_clear[j], when_set[j]);
        }
        out
    }

    #[inline(always)]
    pub fn to_montgomery(self, a: &Fe<O>) -> Fe<O> {
        self.mul(a, &self.constant(&R2))
    }

    /// The plain value, canonical: the product a*1/R is in [0, p] (a < 2p gives
    /// (a + Mp)/R < p + 1), so an a equal to p or 0 gives p or 0, and p is made 0.
    #[inline(always)]
    pub fn out_of_montgomery(self, a: &Fe<O>) -> Fe<O> {
        self.canonical(&self.mul(a, &self.constant(&PLAIN_ONE)))
    }

    /// From our Montgomery form to blst's (x*2^384 mod p), still in 52-bit limbs.
    #[inline(always)]
    pub fn to_blst_form(self, a: &Fe<O>) -> Fe<O> {
        self.mul(a, &self.constant(&TO_BLST))
    }

    /// From blst's Montgomery form (in 52-bit limbs) to ours.
    #[inline(always)]
    pub fn blst_to_ours(self, a: &Fe<O>) -> Fe<O> {
        self.mul(a, &self.constant(&FROM_BLST))
    }

    /// a^e for a public exponent (little-endian words): see `pow_public`.
    #[inline(always)]
    pub fn pow_public(self, a: &Fe<O>, exponent: &[u64]) -> Fe<O> {
        pow_public(self, a, exponent)
    }

    /// 1/a for a != 0 (0 for 0), by a fixed exponentiation: no branch on a.
    #[inline(always)]
    pub fn invert(self, a: &Fe<O>) -> Fe<O> {
        pow_public(self, a, &INVERSE_EXPONENT)
    }
}

/// The one copy of the field multiplication that layers with `INLINE_FIELD_OPS` off
/// call: the same algorithm, run lane by lane through `OneLane` (see there) where the
/// layer asks for that (`OUTLINED_LANE_BY_LANE`). Measured
/// on the sign kernel, this is 14% faster than running it on eight lanes at once.
#[inline(never)]
fn mul_outlined<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
    if !O::OUTLINED_LANE_BY_LANE {
        return f.mul_inline(a, b);
    }
    let (a_lanes, b_lanes) = (f.unpack_raw(a), f.unpack_raw(b));
    let one_lane = Fpx8::new(OneLane);
    let mut out = [[0u64; 8]; 8];
    for lane in 0..8 {
        out[lane] = one_lane.mul_inline(&a_lanes[lane], &b_lanes[lane]);
    }
    f.pack(&out)
}

/// The one copy of `mul_sum` that layers with `INLINE_FIELD_OPS` off call, lane by
/// lane as `mul_outlined`.
#[inline(never)]
fn mul_sum_outlined<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>, c: &Fe<O>, d: &Fe<O>) -> Fe<O> {
    if !O::OUTLINED_LANE_BY_LANE {
        return f.mul_sum_inline(a, b, c, d);
    }
    let lanes = [f.unpack_raw(a), f.unpack_raw(b), f.unpack_raw(c), f.unpack_raw(d)];
    let one_lane = Fpx8::new(OneLane);
    let mut out = [[0u64; 8]; 8];
    for lane in 0..8 {
        out[lane] = one_lane.mul_sum_inline(
            &lanes[0][lane],
            &lanes[1][lane],
            &lanes[2][lane],
            &lanes[3][lane],
        );
    }
    f.pack(&out)
}

/// The one copy of the squaring that layers with `INLINE_FIELD_OPS` off call, lane
/// by lane as `mul_outlined`.
#[inline(never)]
fn sqr_outlined<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>) -> Fe<O> {
    if !O::OUTLINED_LANE_BY_LANE {
        return f.sqr_inline(a);
    }
    let a_lanes = f.unpack_raw(a);
    let one_lane = Fpx8::new(OneLane);
    let mut out = [[0u64; 8]; 8];
    for lane in 0..8 {
        out[lane] = one_lane.sqr_inline(&a_lanes[lane]);
    }
    f.pack(&out)
}

/// The one copy of the addition that layers with `INLINE_FIELD_OPS` off call.
#[inline(never)]
fn add_outlined<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
    f.add_inline(a, b)
}

/// The one copy of the subtraction that layers with `INLINE_FIELD_OPS` off call.
#[inline(never)]
fn sub_outlined<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
    f.sub_inline(a, b)
}

/// A field's multiplication, for exponentiation written once (Fp here, Fp2 in fp2x8).
pub trait Multiplicative: Copy {
    type Element: Copy;
    fn one(self) -> Self::Element;
    fn mul(self, a: &Self::Element, b: &Self::Element) -> Self::Element;
    fn sqr(self, a: &Self::Element) -> Self::Element;
}

impl<O: LaneOps> Multiplicative for Fpx8<O> {
    type Element = Fe<O>;
    #[inline(always)]
    fn one(self) -> Fe<O> {
        Fpx8::one(self)
    }
    #[inline(always)]
    fn mul(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        Fpx8::mul(self, a, b)
    }
    #[inline(always)]
    fn sqr(self, a: &Fe<O>) -> Fe<O> {
        Fpx8::sqr(self, a)
    }
}

/// The rest of a field's operations, for curve formulas written once (`curve::jacobian`).
pub trait FieldOps: Multiplicative {
    fn add(self, a: &Self::Element, b: &Self::Element) -> Self::Element;
    fn sub(self, a: &Self::Element, b: &Self::Element) -> Self::Element;
    fn eq_mask(self, a: &Self::Element, b: &Self::Element) -> u8;
    fn is_zero_mask(self, a: &Self::Element) -> u8;
    #[inline(always)]
    fn double(self, a: &Self::Element) -> Self::Element {
        self.add(a, a)
    }
    /// 3a, 4a, 8a (the curve formulas' small multiples), reduced as `add`'s results.
    fn triple(self, a: &Self::Element) -> Self::Element;
    fn times4(self, a: &Self::Element) -> Self::Element;
    fn times8(self, a: &Self::Element) -> Self::Element;
    /// ab - 8c^2 (the doubling's Y3), reduced as `mul`'s results.
    #[inline(always)]
    fn mul_minus_8_sqr(
        self,
        a: &Self::Element,
        b: &Self::Element,
        c: &Self::Element,
    ) -> Self::Element {
        self.sub(&self.mul(a, b), &self.times8(&self.sqr(c)))
    }
}

impl<O: LaneOps> FieldOps for Fpx8<O> {
    #[inline(always)]
    fn add(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        Fpx8::add(self, a, b)
    }
    #[inline(always)]
    fn sub(self, a: &Fe<O>, b: &Fe<O>) -> Fe<O> {
        Fpx8::sub(self, a, b)
    }
    #[inline(always)]
    fn eq_mask(self, a: &Fe<O>, b: &Fe<O>) -> u8 {
        Fpx8::eq_mask(self, a, b)
    }
    #[inline(always)]
    fn is_zero_mask(self, a: &Fe<O>) -> u8 {
        Fpx8::is_zero_mask(self, a)
    }
    #[inline(always)]
    fn triple(self, a: &Fe<O>) -> Fe<O> {
        Fpx8::triple(self, a)
    }
    #[inline(always)]
    fn times4(self, a: &Fe<O>) -> Fe<O> {
        Fpx8::times4(self, a)
    }
    #[inline(always)]
    fn times8(self, a: &Fe<O>) -> Fe<O> {
        Fpx8::times8(self, a)
    }
    /// ab + (-8c)c with one reduction for both products (`mul_sum`: a, b, c < 2p and
    /// 4p - 8c in (2p, 4p], so the sum is below 12p^2): the square's own reduction
    /// and the subtraction saved, 4.6% of a G1 doubling's multiply-adds.
    #[inline(always)]
    fn mul_minus_8_sqr(self, a: &Fe<O>, b: &Fe<O>, c: &Fe<O>) -> Fe<O> {
        self.mul_sum(a, b, &self.neg_for_mul(&self.times8(c)), c)
    }
}

/// Widest window of `pow_public`: a table of the 16 odd powers a, a^3, ..., a^31.
/// Over the 381-bit exponents used here (square roots, the inverse) this takes 82
/// products besides the chain's 375 squarings, table included, where fixed 4-bit
/// windows took 105; 4- and 6-bit sliding windows take 86 and 88.
const POW_WINDOW: usize = 5;

/// a^e for a public exponent (little-endian words), by sliding windows of up to
/// `POW_WINDOW` bits, each starting and ending on a set bit (so one odd power per
/// window). The exponent's bits choose the steps; a's value never does.
#[inline(always)]
pub fn pow_public<F: Multiplicative>(field: F, a: &F::Element, exponent: &[u64]) -> F::Element {
    let bit = |index: usize| (exponent[index / 64] >> (index % 64)) & 1 == 1;
    let mut remaining = exponent.len() * 64;
    while remaining > 0 && !bit(remaining - 1) {
        remaining -= 1;
    }
    if remaining == 0 {
        return field.one();
    }
    let a_squared = field.sqr(a);
    let mut odd_powers = [*a; 1 << (POW_WINDOW - 1)];
    for k in 1..odd_powers.len() {
        odd_powers[k] = field.mul(&odd_powers[k - 1], &a_squared);
    }
    // The top window starts the accumulator; bits [0, remaining) are left after it.
    let (low, digit) = window_below(&bit, remaining);
    let mut acc = odd_powers[digit >> 1];
    remaining = low;
    while remaining > 0 {
        if !bit(remaining - 1) {
            acc = field.sqr(&acc);
            remaining -= 1;
            continue;
        }
        let (low, digit) = window_below(&bit, remaining);
        for _ in low..remaining {
            acc = field.sqr(&acc);
        }
        acc = field.mul(&acc, &odd_powers[digit >> 1]);
        remaining = low;
    }
    acc
}

/// The window of exponent bits [low, top) whose top bit (top - 1) is set: at most
/// `POW_WINDOW` bits, its lowest bit set; returns (low, the window's value, odd).
#[inline(always)]
fn window_below(bit: &impl Fn(usize) -> bool, top: usize) -> (usize, usize) {
    let mut low = top.saturating_sub(POW_WINDOW);
    while !bit(low) {
        low += 1;
    }
    let digit = (low..top).rev().fold(0usize, |digit, index| (digit << 1) | bit(index) as usize);
    (low, digit)
}

// -- scalar conversions (one element, no lanes) --------------------------------------

/// 48 big-endian bytes as 52-bit limbs (the value must fit 384 bits, as it does).
pub fn limbs_from_be(bytes: &[u8; 48]) -> Limbs {
    let mut words = [0u64; 6];
    for (index, chunk) in bytes.rchunks(8).enumerate() {
        words[index] = u64::from_be_bytes(chunk.try_into().expect("8 bytes"));
    }
    limbs_from_words(&words)
}

/// 52-bit limbs (value below 2^384) as 48 big-endian bytes.
pub fn limbs_to_be(limbs: &Limbs) -> [u8; 48] {
    let words = words_from_limbs(limbs);
    let mut out = [0u8; 48];
    for (index, chunk) in out.rchunks_mut(8).enumerate() {
        chunk.copy_from_slice(&words[index].to_be_bytes());
    }
    out
}

/// Six little-endian 64-bit words (blst's layout) as 52-bit limbs.
pub fn limbs_from_words(words: &[u64; 6]) -> Limbs {
    let mut limbs = [0u64; 8];
    for (index, limb) in limbs.iter_mut().enumerate() {
        let bit = 52 * index;
        let (word, shift) = (bit / 64, bit % 64);
        let mut value = words[word] >> shift;
        if shift > 12 && word + 1 < 6 {
            value |= words[word + 1] << (64 - shift);
        }
        *limb = value & MASK52;
    }
    limbs
}

/// 52-bit limbs (value below 2^384) as six little-endian 64-bit words.
pub fn words_from_limbs(limbs: &Limbs) -> [u64; 6] {
    let mut words = [0u64; 6];
    for (index, limb) in limbs.iter().enumerate() {
        let bit = 52 * index;
        let (word, shift) = (bit / 64, bit % 64);
        words[word] |= limb << shift;
        if shift > 12 && word + 1 < 6 {
            words[word + 1] |= limb >> (64 - shift);
        }
    }
    words
}

/// Whether canonical-candidate limbs are below p (scalar, for input checks).
pub fn below_modulus(limbs: &Limbs) -> bool {
    for j in (0..8).rev() {
        if limbs[j] != P[j] {
            return limbs[j] < P[j];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limbs_and_words_and_bytes_round_trip() {
        let words =
            [0x0123456789abcdef, u64::MAX, 0, 1 << 63, 0xfedcba9876543210, 0x1a0111ea397fe69a];
        let limbs = limbs_from_words(&words);
        assert!(limbs.iter().all(|limb| *limb <= MASK52));
        assert_eq!(words_from_limbs(&limbs), words);
        let bytes = limbs_to_be(&limbs);
        assert_eq!(bytes[0], 0x1a);
        assert_eq!(bytes[47], 0xef);
        assert_eq!(limbs_from_be(&bytes), limbs);
    }

    #[test]
    fn below_modulus_is_strict() {
        assert!(below_modulus(&[0; 8]));
        assert!(!below_modulus(&P));
        let mut p_minus_1 = P;
        p_minus_1[0] -= 1;
        assert!(below_modulus(&p_minus_1));
        let mut above = P;
        above[7] += 1;
        assert!(!below_modulus(&above));
    }
}
