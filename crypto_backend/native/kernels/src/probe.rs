//! Entry points for the differential tests and the benchmarks: one lane operation or
//! one 8-lane field operation over many inputs on a named layer, and a dependent
//! chain of field multiplications to time. Nothing in the kernels calls them.

use crate::dispatch::{self, Kernel, Path};
use crate::field::fp2x8::Fp2x8;
use crate::field::fpx8::{self, Fpx8, Limbs};
use crate::lane::LaneOps;

/// A lane operation by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneOp {
    Madd52Lo,
    Madd52Hi,
    Add,
    Sub,
    And,
    Or,
    Shr52,
    Shr63,
    Sra52,
    Shl12,
    Eq,
    Lt,
    Select,
    /// `permute2(a, b, c)`: the lanes of c are the index.
    Permute2,
}

struct LaneOpKernel {
    op: LaneOp,
    a: Vec<[u64; 8]>,
    b: Vec<[u64; 8]>,
    c: Vec<[u64; 8]>,
}

fn mask_words(mask: u8) -> [u64; 8] {
    std::array::from_fn(|lane| ((mask >> lane) & 1) as u64)
}

impl Kernel for LaneOpKernel {
    type Output = Vec<[u64; 8]>;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Vec<[u64; 8]> {
        let mut out = Vec::with_capacity(self.a.len());
        for index in 0..self.a.len() {
            let (a, b, c) =
                (o.load(&self.a[index]), o.load(&self.b[index]), o.load(&self.c[index]));
            out.push(match self.op {
                LaneOp::Madd52Lo => o.store(o.madd52lo(a, b, c)),
                LaneOp::Madd52Hi => o.store(o.madd52hi(a, b, c)),
                LaneOp::Add => o.store(o.add(a, b)),
                LaneOp::Sub => o.store(o.sub(a, b)),
                LaneOp::And => o.store(o.and(a, b)),
                LaneOp::Or => o.store(o.or(a, b)),
                LaneOp::Shr52 => o.store(o.shr::<52>(a)),
                LaneOp::Shr63 => o.store(o.shr::<63>(a)),
                LaneOp::Sra52 => o.store(o.sra::<52>(a)),
                LaneOp::Shl12 => o.store(o.shl::<12>(a)),
                LaneOp::Eq => mask_words(o.eq_mask(a, b)),
                LaneOp::Lt => mask_words(o.lt_mask(a, b)),
                // The mask: bit 0 of each lane of c.
                LaneOp::Select => {
                    let mask = self.c[index]
                        .iter()
                        .enumerate()
                        .fold(0u8, |bits, (lane, word)| bits | (((word & 1) as u8) << lane));
                    o.store(o.select(mask, a, b))
                }
                LaneOp::Permute2 => o.store(o.permute2(a, b, self.c[index])),
            });
        }
        out
    }
}

impl LaneOp {
    pub fn from_name(name: &str) -> Option<LaneOp> {
        Some(match name {
            "madd52lo" => LaneOp::Madd52Lo,
            "madd52hi" => LaneOp::Madd52Hi,
            "add" => LaneOp::Add,
            "sub" => LaneOp::Sub,
            "and" => LaneOp::And,
            "or" => LaneOp::Or,
            "shr52" => LaneOp::Shr52,
            "shr63" => LaneOp::Shr63,
            "sra52" => LaneOp::Sra52,
            "shl12" => LaneOp::Shl12,
            "eq" => LaneOp::Eq,
            "lt" => LaneOp::Lt,
            "select" => LaneOp::Select,
            "permute2" => LaneOp::Permute2,
            _ => return None,
        })
    }
}

/// `op` on each triple of vectors (masks come back as one word per lane, 0 or 1;
/// `select` takes its mask from bit 0 of each lane of `c`, `permute2` its index from
/// the lanes of `c`); None on `Path::Off` or
/// without IFMA. The three lists have one length.
pub fn lane_op_on(
    path: Path,
    op: LaneOp,
    a: Vec<[u64; 8]>,
    b: Vec<[u64; 8]>,
    c: Vec<[u64; 8]>,
) -> Option<Vec<[u64; 8]>> {
    assert!(a.len() == b.len() && a.len() == c.len(), "lane inputs differ in length");
    dispatch::run_on(path, LaneOpKernel { op, a, b, c })
}

/// An 8-lane field operation by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    Mul,
    Sqr,
    Add,
    Sub,
    Neg,
    ToMontgomery,
    FromMontgomery,
    ToBlst,
    FromBlst,
    SqrtPow,
    /// mul_sum(a, b, 4p - a, 2b) = -ab, through the unreduced helpers.
    MulSum,
    /// The lanes where a == b, as limb 0 of lane 0 (bit i: lane i), the rest zero.
    EqMask,
    /// The lanes where a is zero, as `EqMask` lays it out.
    IsZeroMask,
}

struct FieldOpKernel {
    op: FieldOp,
    a: Vec<[Limbs; 8]>,
    b: Vec<[Limbs; 8]>,
    /// Results as the operation leaves them (in [0, 2p)), not made canonical.
    raw: bool,
}

fn mask_limbs(mask: u8) -> [Limbs; 8] {
    let mut out = [[0u64; 8]; 8];
    out[0][0] = mask as u64;
    out
}

impl Kernel for FieldOpKernel {
    type Output = Vec<[Limbs; 8]>;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Vec<[Limbs; 8]> {
        let f = Fpx8::new(o);
        let mut out = Vec::with_capacity(self.a.len());
        for (a, b) in self.a.iter().zip(self.b.iter()) {
            let (a, b) = (f.pack(a), f.pack(b));
            let result = match self.op {
                FieldOp::Mul => f.mul(&a, &b),
                FieldOp::Sqr => f.sqr(&a),
                FieldOp::Add => f.add(&a, &b),
                FieldOp::Sub => f.sub(&a, &b),
                FieldOp::Neg => f.neg(&a),
                FieldOp::ToMontgomery => f.to_montgomery(&a),
                FieldOp::FromMontgomery => f.out_of_montgomery(&a),
                FieldOp::ToBlst => f.to_blst_form(&a),
                FieldOp::FromBlst => f.blst_to_ours(&a),
                FieldOp::SqrtPow => f.pow_public(&a, &fpx8::SQRT_EXPONENT),
                FieldOp::MulSum => f.mul_sum(&a, &b, &f.neg_for_mul(&a), &f.add_for_mul(&b, &b)),
                FieldOp::EqMask => {
                    out.push(mask_limbs(f.eq_mask(&a, &b)));
                    continue;
                }
                FieldOp::IsZeroMask => {
                    out.push(mask_limbs(f.is_zero_mask(&a)));
                    continue;
                }
            };
            out.push(if self.raw { f.unpack_raw(&result) } else { f.unpack(&result) });
        }
        out
    }
}

impl FieldOp {
    pub fn from_name(name: &str) -> Option<FieldOp> {
        Some(match name {
            "mul" => FieldOp::Mul,
            "sqr" => FieldOp::Sqr,
            "add" => FieldOp::Add,
            "sub" => FieldOp::Sub,
            "neg" => FieldOp::Neg,
            "to_montgomery" => FieldOp::ToMontgomery,
            "from_montgomery" => FieldOp::FromMontgomery,
            "to_blst" => FieldOp::ToBlst,
            "from_blst" => FieldOp::FromBlst,
            "sqrt_pow" => FieldOp::SqrtPow,
            "mul_sum" => FieldOp::MulSum,
            "eq_mask" => FieldOp::EqMask,
            "is_zero_mask" => FieldOp::IsZeroMask,
            _ => return None,
        })
    }
}

/// Plain Fp2 elements (c0, c1 of eight lanes each) multiplied on a layer: into
/// Montgomery form, `Fp2x8::mul`, out of it.
struct Fp2MulKernel {
    a: Vec<[[Limbs; 8]; 2]>,
    b: Vec<[[Limbs; 8]; 2]>,
}

impl Kernel for Fp2MulKernel {
    type Output = Vec<[[Limbs; 8]; 2]>;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        // Loops, no closures over lane values: a closure LLVM leaves out of line is
        // compiled without the IFMA features (see `lane::Ifma::run`).
        let f2 = Fp2x8::new(o);
        let f = f2.f;
        let mut out = Vec::with_capacity(self.a.len());
        for (a, b) in self.a.iter().zip(self.b.iter()) {
            let mut x = [f.zero(), f.zero()];
            let mut y = [f.zero(), f.zero()];
            for c in 0..2 {
                x[c] = f.to_montgomery(&f.pack(&a[c]));
                y[c] = f.to_montgomery(&f.pack(&b[c]));
            }
            let product = f2.mul(&x, &y);
            let mut plain = [[[0u64; 8]; 8]; 2];
            for c in 0..2 {
                plain[c] = f.unpack(&f.out_of_montgomery(&product[c]));
            }
            out.push(plain);
        }
        out
    }
}

/// The Fp2 products of plain elements below p on `path`; None on `Path::Off` or
/// without IFMA.
pub fn fp2_mul_on(
    path: Path,
    a: Vec<[[Limbs; 8]; 2]>,
    b: Vec<[[Limbs; 8]; 2]>,
) -> Option<Vec<[[Limbs; 8]; 2]>> {
    assert_eq!(a.len(), b.len(), "field inputs differ in length");
    dispatch::run_on(path, Fp2MulKernel { a, b })
}

/// `op` on each pair of 8-lane elements (the raw lane values, Montgomery forms
/// themselves, each below 2p; the results made canonical: `mul` is a*b/2^416 mod p, `to_blst` a*2^384/2^416...);
/// None on `Path::Off` or without IFMA.
pub fn field_op_on(
    path: Path,
    op: FieldOp,
    a: Vec<[Limbs; 8]>,
    b: Vec<[Limbs; 8]>,
) -> Option<Vec<[Limbs; 8]>> {
    assert_eq!(a.len(), b.len(), "field inputs differ in length");
    dispatch::run_on(path, FieldOpKernel { op, a, b, raw: false })
}

/// `field_op_on` with the results as the operation leaves them, in [0, 2p) (the
/// lazy representation, see `field::fpx8`), not made canonical; inputs may be
/// anywhere in [0, 2p) too.
pub fn field_op_raw_on(
    path: Path,
    op: FieldOp,
    a: Vec<[Limbs; 8]>,
    b: Vec<[Limbs; 8]>,
) -> Option<Vec<[Limbs; 8]>> {
    assert_eq!(a.len(), b.len(), "field inputs differ in length");
    dispatch::run_on(path, FieldOpKernel { op, a, b, raw: true })
}

struct MulChain {
    iterations: usize,
}

impl Kernel for MulChain {
    type Output = [Limbs; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Limbs; 8] {
        let f = Fpx8::new(o);
        let mut acc = f.one();
        let factor = f.to_montgomery(&f.constant(&[3, 0, 0, 0, 0, 0, 0, 0]));
        // No black_box between the products: it sends the value through memory and
        // makes the whole carry pass finish before the next product may start, a
        // barrier no kernel has (it cost 10% of the chain on the Intel IFMA host).
        // The chain stays a chain: each product needs the last one, and the loop's
        // count is known only at run time.
        for _ in 0..self.iterations {
            acc = f.mul(&acc, &factor);
        }
        f.unpack(&acc)
    }
}

/// `iterations` dependent 8-lane multiplications on `path` (the benchmark's chain).
pub fn mul_chain_on(path: Path, iterations: usize) -> Option<[Limbs; 8]> {
    dispatch::run_on(path, MulChain { iterations })
}

/// How many independent chains `MulIndependent` interleaves: enough to hide a
/// product's latency behind the next ones. Their values alone fill the 32 registers,
/// so the compiled loop keeps some column sums on the stack (`bench/lane_code.py`
/// counts them).
pub const INDEPENDENT_CHAINS: usize = 4;

/// `INDEPENDENT_CHAINS` chains side by side, so the core may overlap their products:
/// the throughput of the multiplication, where `MulChain` measures its latency.
struct MulIndependent {
    iterations: usize,
}

impl Kernel for MulIndependent {
    type Output = [[Limbs; 8]; INDEPENDENT_CHAINS];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Self::Output {
        // Loops, no closures over lane values (see `Fp2MulKernel`).
        let f = Fpx8::new(o);
        let factor = f.to_montgomery(&f.constant(&[3, 0, 0, 0, 0, 0, 0, 0]));
        let mut accs = [f.zero(); INDEPENDENT_CHAINS];
        for (i, acc) in accs.iter_mut().enumerate() {
            *acc = f.to_montgomery(&f.constant(&[i as u64 + 1, 0, 0, 0, 0, 0, 0, 0]));
        }
        for _ in 0..self.iterations {
            for acc in accs.iter_mut() {
                *acc = f.mul(acc, &factor);
            }
        }
        let mut out = [[[0u64; 8]; 8]; INDEPENDENT_CHAINS];
        for (slot, acc) in out.iter_mut().zip(accs.iter()) {
            *slot = f.unpack(acc);
        }
        out
    }
}

/// `iterations` rounds of `INDEPENDENT_CHAINS` independent 8-lane multiplications.
pub fn mul_independent_on(
    path: Path,
    iterations: usize,
) -> Option<[[Limbs; 8]; INDEPENDENT_CHAINS]> {
    dispatch::run_on(path, MulIndependent { iterations })
}
