//! The 8-lane field arithmetic against blst's, on plain integers below p (random and
//! edge values): into Montgomery form, the operation, out of it, compared with
//! blst's Montgomery arithmetic; and the lane operations of each layer against
//! their definitions on u64 and u128.

mod common;

use bls_lanes::dispatch::Path;
use bls_lanes::field::fpx8::{limbs_from_words, words_from_limbs, Limbs};
use bls_lanes::probe::{self, FieldOp, LaneOp};
use blst::*;
use common::Rng;

const P_WORDS: [u64; 6] = [
    0xb9feffffffffaaab,
    0x1eabfffeb153ffff,
    0x6730d2a0f6b0f624,
    0x64774b84f38512bf,
    0x4b1ba7b6434bacd7,
    0x1a0111ea397fe69a,
];

fn plain_inputs(rng: &mut Rng, groups: usize) -> Vec<[[u64; 6]; 8]> {
    let mut p_minus_1 = P_WORDS;
    p_minus_1[0] -= 1;
    let edges = [[0; 6], [1, 0, 0, 0, 0, 0], p_minus_1, [u64::MAX, u64::MAX, 0, 0, 0, 0]];
    (0..groups)
        .map(|group| {
            std::array::from_fn(|lane| {
                if group == 0 && lane < edges.len() {
                    edges[lane]
                } else {
                    rng.below_p()
                }
            })
        })
        .collect()
}

fn limbs_of(group: &[[u64; 6]; 8]) -> [Limbs; 8] {
    group.map(|words| limbs_from_words(&words))
}

fn run(path: Path, op: FieldOp, a: &[[Limbs; 8]], b: &[[Limbs; 8]]) -> Vec<[Limbs; 8]> {
    probe::field_op_on(path, op, a.to_vec(), b.to_vec()).expect("a layer")
}

fn blst_binary(op: FieldOp, x: &[u64; 6], y: &[u64; 6]) -> [u64; 6] {
    let (mut a, mut b, mut out) = (blst_fp::default(), blst_fp::default(), blst_fp::default());
    let mut plain = [0u64; 6];
    // SAFETY: live field elements and six-word buffers.
    unsafe {
        blst_fp_from_uint64(&mut a, x.as_ptr());
        blst_fp_from_uint64(&mut b, y.as_ptr());
        match op {
            FieldOp::Mul => blst_fp_mul(&mut out, &a, &b),
            FieldOp::Add => blst_fp_add(&mut out, &a, &b),
            FieldOp::Sub => blst_fp_sub(&mut out, &a, &b),
            _ => unreachable!("binary operations only"),
        }
        blst_uint64_from_fp(plain.as_mut_ptr(), &out);
    }
    plain
}

#[test]
fn field_operations_match_blst() {
    let mut rng = Rng(0x6737);
    let a: Vec<[Limbs; 8]> = plain_inputs(&mut rng, 64).iter().map(limbs_of).collect();
    let b: Vec<[Limbs; 8]> = plain_inputs(&mut rng, 64).iter().map(limbs_of).collect();
    for path in common::layers() {
        let (ma, mb) =
            (run(path, FieldOp::ToMontgomery, &a, &b), run(path, FieldOp::ToMontgomery, &b, &a));
        for op in [FieldOp::Mul, FieldOp::Add, FieldOp::Sub] {
            let result = run(path, op, &ma, &mb);
            let plain = run(path, FieldOp::FromMontgomery, &result, &result);
            for (group, got) in plain.iter().enumerate() {
                for lane in 0..8 {
                    let want = blst_binary(
                        op,
                        &words_from_limbs(&a[group][lane]),
                        &words_from_limbs(&b[group][lane]),
                    );
                    assert_eq!(
                        words_from_limbs(&got[lane]),
                        want,
                        "{path:?} {op:?} {group}/{lane}"
                    );
                }
            }
        }
    }
}

/// The definition of each lane operation on one lane (masks as 0 or 1).
fn lane_reference(op: LaneOp, a: u64, b: u64, c: u64) -> u64 {
    let product = ((b & ((1 << 52) - 1)) as u128) * ((c & ((1 << 52) - 1)) as u128);
    match op {
        LaneOp::Madd52Lo => a.wrapping_add(product as u64 & ((1 << 52) - 1)),
        LaneOp::Madd52Hi => a.wrapping_add((product >> 52) as u64),
        LaneOp::Add => a.wrapping_add(b),
        LaneOp::Sub => a.wrapping_sub(b),
        LaneOp::And => a & b,
        LaneOp::Or => a | b,
        LaneOp::Shr52 => a >> 52,
        LaneOp::Shr63 => a >> 63,
        LaneOp::Shl12 => a << 12,
        LaneOp::Eq => (a == b) as u64,
        LaneOp::Lt => (a < b) as u64,
        LaneOp::Select => {
            if c & 1 == 1 {
                b
            } else {
                a
            }
        }
    }
}

#[test]
fn lane_operations_keep_their_definitions() {
    let mut rng = Rng(0x6738);
    let edges = [0, 1, (1 << 52) - 1, 1 << 52, u64::MAX, u64::MAX - 1, 1 << 63];
    let mut vector = |index: usize| -> [u64; 8] {
        std::array::from_fn(|lane| {
            if index < 4 {
                edges[(index * 8 + lane) % edges.len()]
            } else {
                rng.next()
            }
        })
    };
    let (a, b, c): (Vec<_>, Vec<_>, Vec<_>) = (0..512)
        .map(|index| (vector(index), vector(index + 1), vector(index + 2)))
        .fold((vec![], vec![], vec![]), |(mut a, mut b, mut c), (x, y, z)| {
            a.push(x);
            b.push(y);
            c.push(z);
            (a, b, c)
        });
    let ops = [
        LaneOp::Madd52Lo,
        LaneOp::Madd52Hi,
        LaneOp::Add,
        LaneOp::Sub,
        LaneOp::And,
        LaneOp::Or,
        LaneOp::Shr52,
        LaneOp::Shr63,
        LaneOp::Shl12,
        LaneOp::Eq,
        LaneOp::Lt,
        LaneOp::Select,
    ];
    for path in common::layers() {
        for op in ops {
            let got =
                probe::lane_op_on(path, op, a.clone(), b.clone(), c.clone()).expect("a layer");
            for (index, vector) in got.iter().enumerate() {
                for lane in 0..8 {
                    let want = lane_reference(op, a[index][lane], b[index][lane], c[index][lane]);
                    assert_eq!(vector[lane], want, "{path:?} {op:?} {index}/{lane}");
                }
            }
        }
    }
}

/// The benchmark's chains compute what they claim: after 5 rounds chain i holds
/// (i + 1) * 3^5 in every lane (the latency chain is chain 0), on every layer.
#[test]
fn the_benchmark_chains_multiply_by_three() {
    for path in common::layers() {
        let rounds = 5;
        let plain = |value: &[Limbs; 8]| {
            probe::field_op_on(path, FieldOp::FromMontgomery, vec![*value], vec![*value])
                .expect("a lane layer")[0]
        };
        let chain = probe::mul_chain_on(path, rounds).expect("a lane layer");
        assert_eq!(plain(&chain), [limbs_from_words(&[243, 0, 0, 0, 0, 0]); 8], "{path:?}");
        let independent = probe::mul_independent_on(path, rounds).expect("a lane layer");
        for (i, value) in independent.iter().enumerate() {
            let expected = limbs_from_words(&[243 * (i as u64 + 1), 0, 0, 0, 0, 0]);
            assert_eq!(plain(value), [expected; 8], "{path:?} chain {i}");
        }
    }
}
