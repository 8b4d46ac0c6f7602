//! Field elements and points as blst lays them out: an Fp element in blst's
//! Montgomery form (x * 2^384 mod p) as six little-endian 64-bit words. What the
//! kernels take in and give out, so that the crate above, which holds blst's types,
//! converts them by copying words.

/// One Fp element, blst's form.
pub type FpWords = [u64; 6];
/// c0, c1 of an Fp2 element.
pub type Fp2Words = [FpWords; 2];
/// An Fp12 element by blst's tower: `[c0, c1]` of Fp6, each `[c0, c1, c2]` of Fp2.
pub type Fp12Words = [[Fp2Words; 3]; 2];

/// An affine G1 point; all zero is the identity (as in blst).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct G1Words {
    pub x: FpWords,
    pub y: FpWords,
}

/// An affine G2 point; all zero is the identity (as in blst).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct G2Words {
    pub x: Fp2Words,
    pub y: Fp2Words,
}

/// A G1 point as blst's Jacobian blst_p1 holds it (X, Y, Z: x = X/Z^2, y = Y/Z^3).
pub type G1JacobianWords = [FpWords; 3];
/// A G2 point as blst's Jacobian blst_p2 holds it.
pub type G2JacobianWords = [Fp2Words; 3];

/// A compressed G1 point (a public key).
pub const G1_COMPRESSED: usize = 48;
/// A compressed G2 point (a signature).
pub const G2_COMPRESSED: usize = 96;
