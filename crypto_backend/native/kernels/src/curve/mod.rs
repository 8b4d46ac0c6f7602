//! Curve formulas over any 8-lane field (Fp for G1, Fp2 for G2): incomplete
//! Jacobian formulas for the public computations (`jacobian`: subgroup checks, the
//! Miller loop) and complete projective formulas with a constant-time windowed
//! multiplication for secret scalars (`complete`).

/// |x| for BLS12-381's parameter x = -0xd201000000010000 (some papers call it z):
/// the subgroup checks' chains, the cofactor clearing, the GLS split, the Miller
/// loop and the final exponentiation all run over its bits.
pub const X_ABS: u64 = 0xd201000000010000;

pub mod complete;
pub mod jacobian;
