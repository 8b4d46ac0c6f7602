//! The kernels as values, for the cost report (`examples/cost_report.rs`) and its
//! tests: each function below builds one kernel pass, the same `Kernel` the entry
//! points hand to `dispatch::run_on`, so that the caller runs it on a layer of its
//! choosing: `Portable` for the answer, `lane::counting::measure` for the operation
//! counts and the critical path. Nothing in the native core calls them.

use crate::decode::{self, g1 as decode_g1, g2 as decode_g2, Lane, Read};
use crate::dispatch::Runner;
use crate::field::fp2x8::Fp2x8;
use crate::field::fpx8::{Fpx8, Limbs};
use crate::hash;
use crate::lane::{counting, Kernel, LaneOps};
use crate::miller::{self, Words, Words12, Words2, WordsPoint};
use crate::mul::{self, Table};
use crate::points::{Fp12Words, G1Words, G2Words, G1_COMPRESSED, G2_COMPRESSED};

/// An 8-lane field operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    FpMul,
    FpSqr,
    FpAdd,
    FpSub,
    Fp2Mul,
    Fp2Sqr,
}

/// One field operation on eight lanes: Fp operands are `a[0]`, `b[0]` (`a[1]`,
/// `b[1]` are not read), Fp2 operands are `[c0, c1]`; limbs as `Fpx8::pack` takes
/// them (Montgomery forms below p). The output has the same shape (`[1]` zero for
/// Fp), as the operation leaves it (`unpack_raw`: in [0, 2p), the lazy form, not
/// made canonical). Only the operands an operation reads are loaded, so the counts
/// are the operation's own plus its loads and stores.
pub struct FieldKernel {
    pub op: FieldOp,
    pub a: [[Limbs; 8]; 2],
    pub b: [[Limbs; 8]; 2],
}

impl Kernel for FieldKernel {
    type Output = [[Limbs; 8]; 2];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [[Limbs; 8]; 2] {
        let f = Fpx8::new(o);
        let f2 = Fp2x8::new(o);
        let zero = [[0u64; 8]; 8];
        let fp = |result: &crate::field::fpx8::Fe<O>| [f.unpack_raw(result), zero];
        match self.op {
            FieldOp::FpMul => fp(&f.mul(&f.pack(&self.a[0]), &f.pack(&self.b[0]))),
            FieldOp::FpSqr => fp(&f.sqr(&f.pack(&self.a[0]))),
            FieldOp::FpAdd => fp(&f.add(&f.pack(&self.a[0]), &f.pack(&self.b[0]))),
            FieldOp::FpSub => fp(&f.sub(&f.pack(&self.a[0]), &f.pack(&self.b[0]))),
            FieldOp::Fp2Mul => {
                let a = [f.pack(&self.a[0]), f.pack(&self.a[1])];
                let b = [f.pack(&self.b[0]), f.pack(&self.b[1])];
                f2.mul(&a, &b).map(|c| f.unpack_raw(&c))
            }
            FieldOp::Fp2Sqr => {
                let a = [f.pack(&self.a[0]), f.pack(&self.a[1])];
                f2.sqr(&a).map(|c| f.unpack_raw(&c))
            }
        }
    }
}

fn candidates<T, C: Copy>(inputs: &[&[u8]; 8], read: impl Fn(&[u8]) -> Read<T, C>) -> [C; 8] {
    inputs.map(|input| match read(input) {
        Read::Candidate(candidate) => candidate,
        Read::Done(_) => panic!("a kernel input must pass the byte rules"),
    })
}

/// One G1 decode pass (decompression and subgroup check) of eight compressed keys,
/// each of which must pass the byte rules (not the identity, x below p).
pub fn g1_decode_chunk(
    keys: &[[u8; G1_COMPRESSED]; 8],
) -> impl Kernel<Output = [Lane<G1Words>; 8]> {
    let candidates = candidates(&keys.each_ref().map(|key| key.as_slice()), decode_g1::read);
    decode_g1::DecodeChunk {
        xs: candidates.map(|(x, _)| x),
        larger: decode::sign_mask(candidates.map(|(_, larger)| larger)),
    }
}

/// One G2 decode pass of eight compressed signatures (each passing the byte rules).
pub fn g2_decode_chunk(
    signatures: &[[u8; G2_COMPRESSED]; 8],
) -> impl Kernel<Output = [Lane<G2Words>; 8]> {
    let candidates =
        candidates(&signatures.each_ref().map(|signature| signature.as_slice()), decode_g2::read);
    decode_g2::DecodeChunk {
        xs: candidates.map(|(x, _)| x),
        larger: decode::sign_mask(candidates.map(|(_, larger)| larger)),
    }
}

/// One pass of the public keys' kernel (`mul::public_keys_on`).
pub fn public_keys(scalars: &[[u64; 4]; 8]) -> impl Kernel<Output = [[u8; 48]; 8]> + '_ {
    mul::PublicKeys { scalars }
}

/// The signatures' table of one hashed message (`mul::window_table_on`).
pub fn window_table(uncompressed: &[u8; 192]) -> impl Kernel<Output = Table> + '_ {
    mul::WindowTable { uncompressed }
}

/// One pass of the signatures' kernel (`mul::signatures_on`); it splits the scalars
/// in place, as that does.
pub fn signatures<'a>(
    table: &'a Table,
    scalars: &'a mut [[u64; 4]; 8],
) -> impl Kernel<Output = [[u8; 96]; 8]> + 'a {
    mul::Signatures { table, scalars }
}

/// The Miller loop's setup of one chunk: (xp, yp, xq, yq) in the kernels' words.
pub fn miller_setup(
    ps: [G1Words; 8],
    qs: [G2Words; 8],
) -> impl Kernel<Output = (Words, Words, Words2, Words2)> {
    miller::Setup { ps, qs }
}

/// Eight Fp12 values (blst's form) into the kernels' words.
pub fn miller_load(values: [Fp12Words; 8]) -> impl Kernel<Output = Words12> {
    miller::Load { values }
}

/// One doubling step of the Miller loop with its line multiplied into `acc`.
pub fn miller_doubling(
    acc: Words12,
    t: WordsPoint,
    xp: Words,
    yp: Words,
) -> impl Kernel<Output = (Words12, WordsPoint)> {
    miller::Doubling { acc, live: 0xff, t, xp, yp }
}

/// One addition step of the Miller loop with its line multiplied into `acc`.
pub fn miller_addition(
    acc: Words12,
    t: WordsPoint,
    xq: Words2,
    yq: Words2,
    xp: Words,
    yp: Words,
) -> impl Kernel<Output = (Words12, WordsPoint)> {
    miller::Addition { acc, live: 0xff, t, xq, yq, xp, yp }
}

/// acc^2 in Fp12 (the loop's squaring of its accumulator).
pub fn fp12_square(acc: Words12) -> impl Kernel<Output = Words12> {
    miller::Square { acc }
}

/// The hash to G2 of eight expansions (`hash::hash_chunk_on`), its stages run on the
/// counting layer: the answer and their counts summed, their critical paths added
/// (each stage starts from stored words, after the one before).
pub fn hash_to_g2_counted(
    expanded: [[u8; hash::EXPANDED_BYTES]; 8],
) -> (hash::Hashed, counting::Report) {
    struct Counted(counting::Report);
    impl Runner for Counted {
        fn run<K: Kernel>(&mut self, kernel: K) -> Option<K::Output> {
            let (output, report) = counting::measure(kernel);
            for (total, count) in self.0.counts.iter_mut().zip(report.counts) {
                *total += count;
            }
            for (total, cycles) in self.0.critical_path.iter_mut().zip(report.critical_path) {
                *total += cycles;
            }
            Some(output)
        }
    }
    let mut runner = Counted(counting::Report::default());
    let hashed = hash::hash_chunk_with(&mut runner, expanded).expect("the counting layer runs");
    (hashed, runner.0)
}

/// One pass of the batch weights' kernel on keys (`mul::weighted_keys_on`).
pub fn weighted_keys<'a>(
    points: &'a [[G1Words; 8]],
    weights: &'a [[u64; 8]],
) -> impl Kernel<Output = ([mul::weighted::G1JacobianWords; 8], u8, u8)> + 'a {
    mul::weighted::WeightedKeys { points, weights }
}

/// One pass of the plain key sum (`mul::key_sums_on`).
pub fn key_sums<'a>(
    points: &'a [[G1Words; 8]],
    live: &'a [u8],
) -> impl Kernel<Output = ([mul::weighted::G1JacobianWords; 8], u8)> + 'a {
    mul::weighted::KeySums { points, live }
}

/// One pass of the plain signature sum (`mul::signature_sums_on`).
pub fn signature_sums<'a>(
    points: &'a [[G2Words; 8]],
    live: &'a [u8],
) -> impl Kernel<Output = ([mul::weighted::G2JacobianWords; 8], u8)> + 'a {
    mul::weighted::SignatureSums { points, live }
}

/// One pass of the weighted signature sum (`mul::weighted_signatures_on`).
pub fn weighted_signatures<'a>(
    points: &'a [[G2Words; 8]],
    weights: &'a [[u64; 8]],
) -> impl Kernel<Output = ([mul::weighted::G2JacobianWords; 8], u8, u8)> + 'a {
    mul::weighted::WeightedSignatures { points, weights }
}
