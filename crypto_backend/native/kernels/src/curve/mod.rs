//! Curve formulas over any 8-lane field (Fp for G1, Fp2 for G2): incomplete
//! Jacobian formulas for the public computations (`jacobian`: subgroup checks, the
//! Miller loop) and complete projective formulas with a constant-time windowed
//! multiplication for secret scalars (`complete`).

pub mod complete;
pub mod jacobian;
