//! The 8-lane field tower of BLS12-381, written once over the lane type: Fp
//! (`fpx8`), Fp2 = Fp[i]/(i^2 + 1), Fp6 = Fp2[v]/(v^3 - (1 + i)) and
//! Fp12 = Fp6[w]/(w^2 - v), blst's tower, so that coefficients map one to one.

pub mod fp12x8;
pub mod fp2x8;
pub mod fp6x8;
pub mod fpx8;
mod scheduled;
pub mod stored;
