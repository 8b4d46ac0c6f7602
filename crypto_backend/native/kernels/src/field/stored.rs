//! 8-lane field elements and points stored as plain lane words between kernel entries
//! (`[limb][lane]`, as the lane vectors hold them): the Miller loop's steps and the
//! hash to G2's stages pass their state this way, so that each stage is one compiled
//! function per layer rather than all of them inlined into one. Also blst's words of
//! eight elements to and from lanes (`pack_fp`, `unpack_fp`).

use crate::field::fp2x8::Fe2;
use crate::field::fpx8::{self, Fe, Fpx8, Limbs};
use crate::lane::LaneOps;
use crate::points::FpWords;

/// One 8-lane Fp element as stored words: `[limb][lane]`.
pub type Words = [[u64; 8]; 8];
pub type Words2 = [Words; 2];
pub type WordsPoint = [Words2; 3];

#[inline(always)]
pub(crate) fn store_fe<O: LaneOps>(o: O, a: &Fe<O>) -> Words {
    let mut out = [[0u64; 8]; 8];
    for limb in 0..8 {
        out[limb] = o.store(a[limb]);
    }
    out
}

#[inline(always)]
pub(crate) fn load_fe<O: LaneOps>(o: O, a: &Words) -> Fe<O> {
    let mut out = [o.splat(0); 8];
    for limb in 0..8 {
        out[limb] = o.load(&a[limb]);
    }
    out
}

#[inline(always)]
pub(crate) fn store_fe2<O: LaneOps>(o: O, a: &Fe2<O>) -> Words2 {
    [store_fe(o, &a[0]), store_fe(o, &a[1])]
}

#[inline(always)]
pub(crate) fn load_fe2<O: LaneOps>(o: O, a: &Words2) -> Fe2<O> {
    [load_fe(o, &a[0]), load_fe(o, &a[1])]
}

#[inline(always)]
pub(crate) fn store_point<O: LaneOps>(o: O, point: &[Fe2<O>; 3]) -> WordsPoint {
    [store_fe2(o, &point[0]), store_fe2(o, &point[1]), store_fe2(o, &point[2])]
}

#[inline(always)]
pub(crate) fn load_point<O: LaneOps>(o: O, point: &WordsPoint) -> [Fe2<O>; 3] {
    [load_fe2(o, &point[0]), load_fe2(o, &point[1]), load_fe2(o, &point[2])]
}

/// Eight elements in blst's words (its Montgomery form) as one 8-lane element of ours.
#[inline(always)]
pub(crate) fn pack_fp<O: LaneOps>(f: Fpx8<O>, lanes: &[FpWords; 8]) -> Fe<O> {
    let limbs: [Limbs; 8] = std::array::from_fn(|lane| fpx8::limbs_from_words(&lanes[lane]));
    f.blst_to_ours(&f.pack(&limbs))
}

/// One 8-lane element as eight elements in blst's words, canonical.
#[inline(always)]
pub(crate) fn unpack_fp<O: LaneOps>(f: Fpx8<O>, a: &Fe<O>) -> [FpWords; 8] {
    let limbs = f.unpack(&f.to_blst_form(a));
    limbs.map(|element| fpx8::words_from_limbs(&element))
}
