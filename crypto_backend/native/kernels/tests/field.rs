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
            FieldOp::MulSum => {
                blst_fp_mul(&mut out, &a, &b);
                let product = out;
                blst_fp_cneg(&mut out, &product, true);
            }
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
        for op in [FieldOp::Mul, FieldOp::Add, FieldOp::Sub, FieldOp::MulSum] {
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

/// The definition of each lane operation at one lane of the vectors a, b, c (masks
/// as 0 or 1); only `Permute2` reads other lanes.
fn lane_reference(op: LaneOp, vectors: [&[u64; 8]; 3], lane: usize) -> u64 {
    let [a_lanes, b_lanes, c_lanes] = vectors;
    let (a, b, c) = (a_lanes[lane], b_lanes[lane], c_lanes[lane]);
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
        LaneOp::Sra52 => ((a as i64) >> 52) as u64,
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
        LaneOp::Permute2 => {
            let source = if c & 8 == 8 { b_lanes } else { a_lanes };
            source[(c & 7) as usize]
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
        LaneOp::Sra52,
        LaneOp::Shl12,
        LaneOp::Eq,
        LaneOp::Lt,
        LaneOp::Select,
        LaneOp::Permute2,
    ];
    for path in common::layers() {
        for op in ops {
            let got =
                probe::lane_op_on(path, op, a.clone(), b.clone(), c.clone()).expect("a layer");
            for (index, vector) in got.iter().enumerate() {
                for (lane, got) in vector.iter().enumerate() {
                    let want = lane_reference(op, [&a[index], &b[index], &c[index]], lane);
                    assert_eq!(*got, want, "{path:?} {op:?} {index}/{lane}");
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

// -- the lazy representation: values in [0, 2p) -------------------------------------

use bls_lanes::field::fpx8::P as P_LIMBS;

/// x + k*p limb by limb with carries (52-bit limbs).
fn plus_multiple_of_p(x: &Limbs, k: u64) -> Limbs {
    let mut out = [0u64; 8];
    let mut carry = 0u64;
    for j in 0..8 {
        let sum = x[j] + k * P_LIMBS[j] + carry;
        out[j] = sum & ((1 << 52) - 1);
        carry = sum >> 52;
    }
    assert_eq!(carry, 0);
    out
}

/// Whether x < k*p (52-bit limbs).
fn below_multiple_of_p(x: &Limbs, k: u64) -> bool {
    let bound = plus_multiple_of_p(&[0; 8], k);
    for j in (0..8).rev() {
        if x[j] != bound[j] {
            return x[j] < bound[j];
        }
    }
    false
}

fn raw(path: Path, op: FieldOp, a: &[[Limbs; 8]], b: &[[Limbs; 8]]) -> Vec<[Limbs; 8]> {
    probe::field_op_raw_on(path, op, a.to_vec(), b.to_vec()).expect("a layer")
}

/// The other representation of each element: x + p for x < p, x - p for x >= p.
fn other_representation(groups: &[[Limbs; 8]]) -> Vec<[Limbs; 8]> {
    groups
        .iter()
        .map(|group| {
            group.map(|x| {
                if below_multiple_of_p(&x, 1) {
                    plus_multiple_of_p(&x, 1)
                } else {
                    // x - p: x + (2^416 - p) mod 2^416, limb by limb.
                    let mut out = [0u64; 8];
                    let mut borrow = 0i128;
                    for j in 0..8 {
                        let difference = x[j] as i128 - P_LIMBS[j] as i128 - borrow;
                        borrow = (difference < 0) as i128;
                        out[j] = (difference & ((1 << 52) - 1)) as u64;
                    }
                    out
                }
            })
        })
        .collect()
}

/// Montgomery forms with the edges of the lazy range: 0 and its other form p, 1,
/// p - 1 and 2p - 1, p + 1, and random values, some of them moved to [p, 2p).
fn lazy_inputs(rng: &mut Rng, groups: usize) -> Vec<[Limbs; 8]> {
    let mut p_minus_1 = P_LIMBS;
    p_minus_1[0] -= 1;
    let edges = [
        [0; 8],
        P_LIMBS,
        [1, 0, 0, 0, 0, 0, 0, 0],
        p_minus_1,
        plus_multiple_of_p(&p_minus_1, 1),
        plus_multiple_of_p(&[1, 0, 0, 0, 0, 0, 0, 0], 1),
    ];
    (0..groups)
        .map(|group| {
            std::array::from_fn(|lane| {
                if group == 0 && lane < edges.len() {
                    edges[lane]
                } else {
                    let x = limbs_from_words(&rng.below_p());
                    if rng.next() & 1 == 1 {
                        plus_multiple_of_p(&x, 1)
                    } else {
                        x
                    }
                }
            })
        })
        .collect()
}

/// Each operation on inputs anywhere in [0, 2p): its raw result is in [0, 2p), the
/// same on every layer, and represents what the canonical inputs give (which
/// `field_operations_match_blst` checks against blst); the masks look through
/// the representation.
#[test]
fn lazy_representation_in_and_out() {
    let mut rng = Rng(0x6739);
    let a = lazy_inputs(&mut rng, 48);
    let b = lazy_inputs(&mut rng, 48);
    let (a_other, b_other) = (other_representation(&a), other_representation(&b));
    let (a_canonical, b_canonical) = {
        let pick = |x: &[[Limbs; 8]], y: &[[Limbs; 8]]| -> Vec<[Limbs; 8]> {
            x.iter()
                .zip(y)
                .map(|(u, v)| {
                    std::array::from_fn(|lane| {
                        if below_multiple_of_p(&u[lane], 1) {
                            u[lane]
                        } else {
                            v[lane]
                        }
                    })
                })
                .collect()
        };
        (pick(&a, &a_other), pick(&b, &b_other))
    };
    let ops = [
        FieldOp::Mul,
        FieldOp::Sqr,
        FieldOp::Add,
        FieldOp::Sub,
        FieldOp::Neg,
        FieldOp::MulSum,
        FieldOp::FromMontgomery,
        FieldOp::ToBlst,
        FieldOp::SqrtPow,
    ];
    let mut raw_results = Vec::new();
    for path in common::layers() {
        let mut per_path = Vec::new();
        for op in ops {
            let want = run(path, op, &a_canonical, &b_canonical);
            for (x, y) in [(&a, &b), (&a_other, &b_other), (&a, &b_other)] {
                let got_raw = raw(path, op, x, y);
                let got = run(path, op, x, y);
                assert_eq!(got, want, "{path:?} {op:?}: canonical result");
                for (group, raw_group) in got_raw.iter().enumerate() {
                    for lane in 0..8 {
                        let value = &raw_group[lane];
                        assert!(value.iter().all(|limb| *limb < 1 << 52), "{path:?} {op:?}");
                        assert!(below_multiple_of_p(value, 2), "{path:?} {op:?} {group}/{lane}");
                        let canonical = &want[group][lane];
                        assert!(
                            value == canonical || *value == plus_multiple_of_p(canonical, 1),
                            "{path:?} {op:?} {group}/{lane}: another element"
                        );
                    }
                }
                per_path.push(got_raw);
            }
        }
        // The squaring is the multiplication of a by itself, representation and all.
        for x in [&a, &a_other, &b] {
            assert_eq!(
                raw(path, FieldOp::Sqr, x, x),
                raw(path, FieldOp::Mul, x, x),
                "{path:?} sqr"
            );
        }
        // Masks: x against its other representation, against itself, and zero tests.
        let eq_other = run(path, FieldOp::EqMask, &a, &a_other);
        let eq_self = run(path, FieldOp::EqMask, &a_other, &a_other);
        let eq_ab = run(path, FieldOp::EqMask, &a, &b_other);
        let zero = run(path, FieldOp::IsZeroMask, &a_other, &a_other);
        let difference = raw(path, FieldOp::Sub, &a, &a_other);
        let difference_zero = run(path, FieldOp::IsZeroMask, &difference, &difference);
        for group in 0..a.len() {
            assert_eq!(eq_other[group][0][0], 0xff, "{path:?} eq x, x+-p");
            assert_eq!(eq_self[group][0][0], 0xff, "{path:?} eq x, x");
            assert_eq!(difference_zero[group][0][0], 0xff, "{path:?} x - (x+-p) is zero");
            let mut want_eq = 0u64;
            let mut want_zero = 0u64;
            for lane in 0..8 {
                want_eq |= ((a_canonical[group][lane] == b_canonical[group][lane]) as u64) << lane;
                want_zero |= ((a_canonical[group][lane] == [0; 8]) as u64) << lane;
            }
            assert_eq!(eq_ab[group][0][0], want_eq, "{path:?} eq a, b");
            assert_eq!(zero[group][0][0], want_zero, "{path:?} is_zero");
        }
        assert_eq!(zero[0][0][0] & 0b11, 0b11, "0 and p are zero");
        raw_results.push(per_path);
    }
    // The layers agree on the representation itself, not only on the element.
    for other in raw_results.iter().skip(1) {
        assert_eq!(other, &raw_results[0], "layers differ on raw results");
    }
}

fn blst_fp_of(plain: &[u64; 6]) -> blst_fp {
    let mut out = blst_fp::default();
    // SAFETY: a live field element and a six-word buffer.
    unsafe { blst_fp_from_uint64(&mut out, plain.as_ptr()) };
    out
}

fn plain_of(x: &blst_fp) -> [u64; 6] {
    let mut plain = [0u64; 6];
    // SAFETY: a live field element and a six-word buffer.
    unsafe { blst_uint64_from_fp(plain.as_mut_ptr(), x) };
    plain
}

/// Long chains of mixed operations, each step fed the previous step's raw result
/// (never made canonical in between), against the same chain on blst.
#[test]
fn lazy_chains_match_blst() {
    let mut rng = Rng(0x673a);
    let a: Vec<[Limbs; 8]> = plain_inputs(&mut rng, 4).iter().map(limbs_of).collect();
    let b: Vec<[Limbs; 8]> = plain_inputs(&mut rng, 4).iter().map(limbs_of).collect();
    let steps =
        [FieldOp::Mul, FieldOp::Sub, FieldOp::Add, FieldOp::Sqr, FieldOp::Neg, FieldOp::Add];
    for path in common::layers() {
        let mut x = run(path, FieldOp::ToMontgomery, &a, &a);
        let y = run(path, FieldOp::ToMontgomery, &b, &b);
        let mut want: Vec<[blst_fp; 8]> = a
            .iter()
            .map(|group| std::array::from_fn(|lane| blst_fp_of(&words_from_limbs(&group[lane]))))
            .collect();
        let other: Vec<[blst_fp; 8]> = b
            .iter()
            .map(|group| std::array::from_fn(|lane| blst_fp_of(&words_from_limbs(&group[lane]))))
            .collect();
        let mut saw_upper_half = false;
        for step in 0..300 {
            let op = steps[step % steps.len()];
            x = raw(path, op, &x, &y);
            for (group, values) in want.iter_mut().enumerate() {
                for lane in 0..8 {
                    let (v, w) = (values[lane], other[group][lane]);
                    // SAFETY: live field elements.
                    unsafe {
                        match op {
                            FieldOp::Mul => blst_fp_mul(&mut values[lane], &v, &w),
                            FieldOp::Sqr => blst_fp_sqr(&mut values[lane], &v),
                            FieldOp::Add => blst_fp_add(&mut values[lane], &v, &w),
                            FieldOp::Sub => blst_fp_sub(&mut values[lane], &v, &w),
                            FieldOp::Neg => blst_fp_cneg(&mut values[lane], &v, true),
                            FieldOp::MulSum => {
                                let mut product = blst_fp::default();
                                blst_fp_mul(&mut product, &v, &w);
                                blst_fp_cneg(&mut values[lane], &product, true);
                            }
                            _ => unreachable!(),
                        }
                    }
                    saw_upper_half |= !below_multiple_of_p(&x[group][lane], 1);
                }
            }
            let plain = run(path, FieldOp::FromMontgomery, &x, &x);
            for (group, got) in plain.iter().enumerate() {
                for lane in 0..8 {
                    assert_eq!(
                        words_from_limbs(&got[lane]),
                        plain_of(&want[group][lane]),
                        "{path:?} step {step} {op:?} {group}/{lane}"
                    );
                }
            }
        }
        assert!(saw_upper_half, "the chains never left [0, p): they test nothing lazy");
    }
}

/// An Fp2 element's coordinates as plain integers below p.
type PlainFp2 = [[u64; 6]; 2];

/// Fp2 products against blst's on edge coordinates (0, 1, p - 1, in every pairing of
/// both operands, so that a0b0 - a1b1 and the Karatsuba difference take their
/// extremes) and random ones.
#[test]
fn fp2_multiplication_matches_blst() {
    let mut p_minus_1 = P_WORDS;
    p_minus_1[0] -= 1;
    let edges = [[0u64; 6], [1, 0, 0, 0, 0, 0], p_minus_1];
    let mut rng = Rng(0xf922);
    let mut pairs: Vec<(PlainFp2, PlainFp2)> = Vec::new();
    for a0 in edges {
        for a1 in edges {
            for b0 in edges {
                for b1 in edges {
                    pairs.push(([a0, a1], [b0, b1]));
                }
            }
        }
    }
    while !pairs.len().is_multiple_of(8) || pairs.len() < 160 {
        pairs.push(([rng.below_p(), rng.below_p()], [rng.below_p(), rng.below_p()]));
    }
    let groups = |side: usize| -> Vec<[[Limbs; 8]; 2]> {
        pairs
            .chunks(8)
            .map(|chunk| {
                let of = |c: usize| -> [Limbs; 8] {
                    std::array::from_fn(|lane| {
                        let (a, b) = &chunk[lane];
                        limbs_from_words(if side == 0 { &a[c] } else { &b[c] })
                    })
                };
                [of(0), of(1)]
            })
            .collect()
    };
    for path in common::layers() {
        let got = probe::fp2_mul_on(path, groups(0), groups(1)).expect("a layer");
        for (index, (a, b)) in pairs.iter().enumerate() {
            let fp2 = |x: &PlainFp2| {
                let mut out = blst_fp2::default();
                // SAFETY: live field elements and six-word buffers.
                unsafe {
                    blst_fp_from_uint64(&mut out.fp[0], x[0].as_ptr());
                    blst_fp_from_uint64(&mut out.fp[1], x[1].as_ptr());
                }
                out
            };
            let mut product = blst_fp2::default();
            let mut want = [[0u64; 6]; 2];
            // SAFETY: live Fp2 elements and six-word buffers.
            unsafe {
                blst_fp2_mul(&mut product, &fp2(a), &fp2(b));
                blst_uint64_from_fp(want[0].as_mut_ptr(), &product.fp[0]);
                blst_uint64_from_fp(want[1].as_mut_ptr(), &product.fp[1]);
            }
            let (group, lane) = (index / 8, index % 8);
            for c in 0..2 {
                assert_eq!(
                    words_from_limbs(&got[group][c][lane]),
                    want[c],
                    "{path:?} {index} c{c}"
                );
            }
        }
    }
}

/// a^e by blst's multiplication, bit by bit from the top: the oracle of the
/// windowed exponentiation.
fn blst_pow(base: &[u64; 6], exponent: &[u64; 6]) -> [u64; 6] {
    let a = blst_fp_of(base);
    let mut acc = blst_fp_of(&[1, 0, 0, 0, 0, 0]);
    for index in (0..384).rev() {
        // SAFETY: live field elements (blst allows the output to alias an input).
        unsafe {
            blst_fp_sqr(&mut acc, &acc);
            if (exponent[index / 64] >> (index % 64)) & 1 == 1 {
                blst_fp_mul(&mut acc, &acc, &a);
            }
        }
    }
    plain_of(&acc)
}

/// `pow_public` on exponents whose windows fall every way: zero, one, small values,
/// a lone high bit, runs of ones longer than a window, ones spaced by one more than
/// a window, the square-root exponent and random ones, on random bases and 0, 1, p-1.
#[test]
fn windowed_exponentiation_matches_blst() {
    use bls_lanes::field::fpx8::{Fpx8, SQRT_EXPONENT};
    use bls_lanes::lane::Portable;
    let mut rng = Rng(0x673b);
    let mut exponents: Vec<[u64; 6]> = (0..40u64).map(|small| [small, 0, 0, 0, 0, 0]).collect();
    exponents.push([0, 0, 0, 0, 0, 1 << 60]);
    exponents.push([u64::MAX, u64::MAX, 0, 0, 0, 0]);
    exponents.push([0x0820_8208_2082_0820; 6]);
    exponents.push([0x4210_8421_0842_1084; 6]);
    exponents.push(SQRT_EXPONENT);
    exponents.extend((0..8).map(|_| rng.below_p()));
    let f = Fpx8::new(Portable);
    for group in plain_inputs(&mut rng, 2) {
        let a = f.to_montgomery(&f.pack(&limbs_of(&group)));
        for exponent in &exponents {
            let got = f.unpack(&f.out_of_montgomery(&f.pow_public(&a, exponent)));
            for lane in 0..8 {
                let want = blst_pow(&group[lane], exponent);
                assert_eq!(words_from_limbs(&got[lane]), want, "{exponent:x?} lane {lane}");
            }
        }
    }
}
