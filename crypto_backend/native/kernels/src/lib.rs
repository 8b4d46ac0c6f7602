//! The 8-lane BLS12-381 kernels, pure Rust: the lane type and its two layers
//! (`lane`: portable code and AVX-512 IFMA), the field tower over it (`field`), the
//! curve formulas (`curve`), and the kernels the native core runs on eight inputs at
//! once: decompression with the subgroup check (`decode`), constant-time
//! multiplication by secret scalars and multiplication by public batch weights
//! (`mul`), the hash to G2 after expand_message_xmd (`hash`) and the Miller loop
//! (`miller`). The
//! `dispatch` says which layer runs them. Inputs and outputs are plain words and
//! bytes (`points`): this crate knows nothing of blst or Python, and everything in it
//! is written once over `lane::LaneOps`.

pub mod cost;
pub mod curve;
pub mod cyclotomic;
pub mod decode;
pub mod dispatch;
pub mod field;
pub mod hash;
pub mod lane;
pub mod miller;
pub mod mul;
pub mod points;
pub mod probe;
