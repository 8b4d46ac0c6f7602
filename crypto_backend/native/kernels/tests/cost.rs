//! The counting lane layer (`lane::counting`): kernels run on it give the portable
//! layer's answers, its counts are the operations the field code is written with,
//! and its critical path follows the dependencies.

mod common;

use bls_lanes::cost::{self, FieldKernel, FieldOp};
use bls_lanes::decode::Lane;
use bls_lanes::field::fpx8::{self, Limbs};
use bls_lanes::lane::counting::{self, Model, OpKind, Report};
use bls_lanes::lane::{Kernel, LaneOps, Portable};
use common::Rng;

fn elements(rng: &mut Rng) -> [Limbs; 8] {
    std::array::from_fn(|_| fpx8::limbs_from_words(&rng.below_p()))
}

fn field_kernel(op: FieldOp, rng: &mut Rng) -> (FieldKernel, FieldKernel) {
    let (a, b) = ([elements(rng), elements(rng)], [elements(rng), elements(rng)]);
    (FieldKernel { op, a, b }, FieldKernel { op, a, b })
}

/// The counts of one field operation, checked against the portable layer's answer.
fn field_report(op: FieldOp) -> Report {
    let mut rng = Rng(0x6740 + op as u64);
    let (counted, plain) = field_kernel(op, &mut rng);
    let (output, report) = counting::measure(counted);
    assert_eq!(output, plain.run(Portable), "{op:?}");
    report
}

fn count(report: &Report, kind: OpKind) -> u64 {
    report.count(kind)
}

/// One 8-lane Fp multiplication as `field::scheduled::mul` is written: the 8x8
/// product (64 madd52lo, 63 madd52hi: hi(a7*b7) is 0 and skipped) into columns 0 to
/// 7 started at 2^52 - 1, 8 reduction rows of one m (madd52lo), the cleared column's
/// carry (1 shift: the start makes the rounding up free), lo(m*p1) into it and
/// hi(m*p0) into column i+1 summed (1 add), then 7 hi and 6 lo; the carry pass (7
/// shifts, 7 adds, 7 ands). No final subtraction: results stay in [0, 2p). The loads
/// are the two operands (16), the stores the result (8). A change to the field code
/// changes these numbers: update them with it.
#[test]
fn fp_mul_counts_are_the_code_as_written() {
    let report = field_report(FieldOp::FpMul);
    assert_eq!(count(&report, OpKind::Madd52Lo), 64 + 8 * (1 + 1 + 6));
    assert_eq!(count(&report, OpKind::Madd52Hi), 63 + 8 * (1 + 7));
    assert_eq!(count(&report, OpKind::Add), 8 + 7);
    assert_eq!(count(&report, OpKind::Shr), 8 + 7);
    assert_eq!(count(&report, OpKind::And), 7);
    assert_eq!(count(&report, OpKind::Sub), 0);
    assert_eq!(count(&report, OpKind::Compare), 0);
    assert_eq!(count(&report, OpKind::Select), 0);
    assert_eq!(count(&report, OpKind::Shl), 0);
    assert_eq!(count(&report, OpKind::Or), 0);
    assert_eq!(count(&report, OpKind::Load), 16);
    assert_eq!(count(&report, OpKind::Store), 8);
    // A square forms the 28 products above the diagonal once and doubles them (14
    // adds): 36 lo and 35 hi where mul has 64 and 63, then the same reduction but
    // for its columns' start at zero (the doubling would double 2^52 - 1 too), so each
    // row rounds its cleared column up with one add more.
    let sqr = field_report(FieldOp::FpSqr);
    assert_eq!(count(&sqr, OpKind::Madd52Lo), count(&report, OpKind::Madd52Lo) - 28);
    assert_eq!(count(&sqr, OpKind::Madd52Hi), count(&report, OpKind::Madd52Hi) - 28);
    assert_eq!(count(&sqr, OpKind::Add), count(&report, OpKind::Add) + 14 + 8);
    assert_eq!(count(&sqr, OpKind::Load), 8);
}

/// Counts without the memory and constant kinds, scaled.
fn without_memory(report: &Report, times: u64) -> [u64; counting::KINDS] {
    let mut counts = report.counts.map(|c| c * times);
    for kind in [OpKind::Load, OpKind::Store, OpKind::Splat] {
        counts[kind as usize] = 0;
    }
    counts
}

/// `parts` summed, plus `extra` (kind, count) pairs.
fn sum(parts: &[[u64; counting::KINDS]], extra: &[(OpKind, u64)]) -> [u64; counting::KINDS] {
    let mut total = [0u64; counting::KINDS];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            *t += p;
        }
    }
    for (kind, n) in extra {
        total[*kind as usize] += n;
    }
    total
}

/// Fp2 in terms of Fp (fp2x8.rs). The product is Karatsuba on unreduced products:
/// two Fp multiplications' worth (two products, two reductions; `montgomery_reduce`
/// rounds each cleared column up with an add that the Fp multiplication's start
/// of its columns makes free: 8 adds more a reduction) and one more 8x8 product
/// (64 lo, 63 hi), the two unreduced sums feeding it (`add_for_mul`: 8 adds and a
/// carry pass of 7 adds, shifts and ands each), and the 16 columns of
/// a0b0 - a1b1 + 4p^2 and of -(a0b0 + a1b1) (32 adds, 32 subs); no reduced addition
/// or subtraction, so no compare and no select. The square: 2 Fp multiplications,
/// 1 Fp subtraction and two unreduced sums. Loads and stores are those of the Fp2
/// operands and result.
#[test]
fn fp2_counts_are_made_of_fp_counts() {
    let (mul, sub) = (field_report(FieldOp::FpMul), field_report(FieldOp::FpSub));
    let carry =
        |times: u64| [(OpKind::Add, 7 * times), (OpKind::Shr, 7 * times), (OpKind::And, 7 * times)];
    let fp2_mul = field_report(FieldOp::Fp2Mul);
    let mut extra = vec![
        (OpKind::Madd52Lo, 64),
        (OpKind::Madd52Hi, 63),
        (OpKind::Add, 32 + 2 * 8 + 2 * 8),
        (OpKind::Sub, 32),
    ];
    extra.extend(carry(2));
    let want = sum(&[without_memory(&mul, 2)], &extra);
    assert_eq!((count(&fp2_mul, OpKind::Load), count(&fp2_mul, OpKind::Store)), (32, 16));
    assert_eq!(without_memory(&fp2_mul, 1), want, "Fp2 mul");
    assert_eq!(count(&fp2_mul, OpKind::Select), 0);
    let fp2_sqr = field_report(FieldOp::Fp2Sqr);
    let mut extra = vec![(OpKind::Add, 2 * 8)];
    extra.extend(carry(2));
    let want = sum(&[without_memory(&mul, 2), without_memory(&sub, 1)], &extra);
    assert_eq!((count(&fp2_sqr, OpKind::Load), count(&fp2_sqr, OpKind::Store)), (16, 16));
    assert_eq!(without_memory(&fp2_sqr, 1), want, "Fp2 sqr");
}

struct Chain {
    length: usize,
    chains: usize,
}

impl Kernel for Chain {
    type Output = [u64; 8];

    fn run<O: LaneOps>(self, o: O) -> [u64; 8] {
        let start = o.load(&[3; 8]);
        let factor = o.splat(5);
        let mut last = [start; 4];
        for chain in last.iter_mut().take(self.chains) {
            for _ in 0..self.length {
                *chain = o.madd52lo(*chain, *chain, factor);
            }
        }
        o.store(last[self.chains - 1])
    }
}

/// A chain of n dependent multiply-adds is load + n madds + store long; chains that do
/// not depend on each other do not add up; a select waits for its compare.
#[test]
fn critical_path_follows_the_dependencies() {
    for model in Model::ALL {
        let lat = |kind| model.latency(kind);
        let (_, one) = counting::measure(Chain { length: 10, chains: 1 });
        let want = lat(OpKind::Load) + 10 * lat(OpKind::Madd52Lo) + lat(OpKind::Store);
        assert_eq!(one.critical_path(model), want, "{model:?}");
        let (_, four) = counting::measure(Chain { length: 10, chains: 4 });
        assert_eq!(four.critical_path(model), want, "{model:?}: independent chains");
        assert_eq!(four.count(OpKind::Madd52Lo), 40);
    }

    struct Masked;
    impl Kernel for Masked {
        type Output = [u64; 8];
        fn run<O: LaneOps>(self, o: O) -> [u64; 8] {
            let (a, b) = (o.load(&[1, 2, 3, 4, 5, 6, 7, 8]), o.splat(1));
            // A long chain into the compare, nothing long into the select's operands.
            let mut late = a;
            for _ in 0..5 {
                late = o.add(late, b);
            }
            let mask = o.lt_mask(late, o.splat(10));
            o.store(o.select(mask, a, b))
        }
    }
    let (out, report) = counting::measure(Masked);
    // a + 5 < 10 in the lanes where a < 5: those take b.
    assert_eq!(out, [1, 1, 1, 1, 5, 6, 7, 8]);
    for model in Model::ALL {
        let lat = |kind| model.latency(kind);
        let want = lat(OpKind::Load)
            + 5 * lat(OpKind::Add)
            + lat(OpKind::Compare)
            + lat(OpKind::Select)
            + lat(OpKind::Store);
        assert_eq!(report.critical_path(model), want, "{model:?}");
    }
}

fn lanes<T: std::fmt::Debug>(lanes: &[Lane<T>; 8]) -> Vec<String> {
    lanes
        .iter()
        .map(|lane| match lane {
            Lane::Decided(decided) => format!("{decided:?}"),
            Lane::Undecided => "undecided".into(),
        })
        .collect()
}

/// The decode kernels on the counting layer answer as on the portable layer (and so,
/// by tests/decode.rs, as blst does), and count the same on every pass.
#[test]
fn decode_kernels_count_and_answer_as_portable() {
    let mut rng = Rng(0x6741);
    let keys: [[u8; 48]; 8] = std::array::from_fn(|_| common::blst_public_key(&rng.scalar()));
    let (counted, first) = counting::measure(cost::g1_decode_chunk(&keys));
    assert_eq!(lanes(&counted), lanes(&cost::g1_decode_chunk(&keys).run(Portable)));
    assert!(lanes(&counted).iter().all(|lane| lane.starts_with("Ok")));
    let other: [[u8; 48]; 8] = std::array::from_fn(|_| common::blst_public_key(&rng.scalar()));
    let (_, second) = counting::measure(cost::g1_decode_chunk(&other));
    assert_eq!(first.counts, second.counts, "the pass runs the same operations on any input");
    assert!(first.madds() > 100 * 264, "a square root is over a hundred multiplications");

    let hashed = common::hash_to_g2(b"counting");
    let signatures: [[u8; 96]; 8] =
        std::array::from_fn(|_| common::blst_signature(&rng.scalar(), &hashed));
    let (counted, _) = counting::measure(cost::g2_decode_chunk(&signatures));
    assert_eq!(lanes(&counted), lanes(&cost::g2_decode_chunk(&signatures).run(Portable)));
}

/// A Miller doubling step on the counting layer gives the portable layer's words.
#[test]
fn miller_step_answers_as_portable() {
    let mut rng = Rng(0x6742);
    let ps = std::array::from_fn(|_| {
        common::blst_decode_g1(&common::blst_public_key(&rng.scalar())).expect("a key")
    });
    let hashed = common::hash_to_g2(b"a step");
    let qs = std::array::from_fn(|_| {
        common::blst_decode_g2(&common::blst_signature(&rng.scalar(), &hashed)).expect("a point")
    });
    let (xp, yp, xq, yq) = cost::miller_setup(ps, qs).run(Portable);
    let one = cost::miller_load([bls_lanes::miller::ONE_FP12; 8]).run(Portable);
    let acc = cost::fp12_square(one).run(Portable);
    let t = [xq, yq, one[0][0]];
    let (counted, report) = counting::measure(cost::miller_doubling(acc, t, xp, yp));
    assert_eq!(counted, cost::miller_doubling(acc, t, xp, yp).run(Portable));
    assert!(report.critical_path(Model::Zen4) > 0);
}
