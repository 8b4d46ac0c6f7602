//! The constant-time 8-lane multiplications against blst: public keys (sk * g1) and
//! signatures (sk * H(m)), on edge and random scalars, on every layer this host runs.

mod common;

use bls_lanes::curve::X_ABS as Z_ABS;
use bls_lanes::mul;
use common::Rng;

/// Edge scalars beside random ones: 1, 2, r - 1, and every 4-bit window 0 or 15.
fn scalars(rng: &mut Rng, count: usize) -> Vec<[u64; 4]> {
    let mut out =
        vec![[1, 0, 0, 0], [2, 0, 0, 0], R_MINUS_1, [u64::MAX, u64::MAX, u64::MAX, 0xfff]];
    out.extend((out.len()..count).map(|_| rng.scalar()));
    out
}

#[test]
fn public_keys_match_blst() {
    let mut rng = Rng(0x6733);
    for chunk in scalars(&mut rng, 24).chunks(8) {
        let chunk: &[[u64; 4]; 8] = chunk.try_into().expect("8 scalars");
        let want = chunk.map(|scalar| common::blst_public_key(&scalar));
        for path in common::layers() {
            assert_eq!(mul::public_keys_on(path, chunk).expect("a layer"), want, "{path:?}");
        }
    }
}

/// r - 1.
const R_MINUS_1: [u64; 4] =
    [0xfffffffeffffffff, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];

/// a * m + c over four words; panics on overflow (the test's values fit).
fn mul_add(a: &[u64; 4], m: u64, c: u64) -> [u64; 4] {
    let mut out = [0u64; 4];
    let mut carry = u128::from(c);
    for (slot, word) in out.iter_mut().zip(a) {
        let wide = u128::from(*word) * u128::from(m) + carry;
        *slot = wide as u64;
        carry = wide >> 64;
    }
    assert_eq!(carry, 0, "the test's values fit four words");
    out
}

/// a - 1 for a > 0.
fn minus_one(a: &[u64; 4]) -> [u64; 4] {
    let mut out = *a;
    for word in out.iter_mut() {
        let (value, borrow) = word.overflowing_sub(1);
        *word = value;
        if !borrow {
            break;
        }
    }
    out
}

/// The scalars where the split into base-|z| digits is at an edge: |z|^k - 1, |z|^k
/// and |z|^k + 1 for k = 1, 2, 3 (digits all |z| - 1 below a power, a lone 1, a
/// carry), r - 1 and r - 2 (the largest keys), small keys (one digit, one window),
/// the largest 204-bit value, then random ones; a multiple of 8 in all.
fn split_edges(rng: &mut Rng) -> Vec<[u64; 4]> {
    let mut out = vec![R_MINUS_1, minus_one(&R_MINUS_1), [u64::MAX, u64::MAX, u64::MAX, 0xfff]];
    let mut power = [1, 0, 0, 0];
    for _ in 0..3 {
        power = mul_add(&power, Z_ABS, 0);
        out.extend([minus_one(&power), power, mul_add(&power, 1, 1)]);
    }
    out.extend([[1, 0, 0, 0], [2, 0, 0, 0], [15, 0, 0, 0], [16, 0, 0, 0], [Z_ABS - 1, 0, 0, 0]]);
    while out.len() % 8 != 0 || out.len() < 32 {
        out.push(rng.scalar());
    }
    out
}

#[test]
fn split_gives_base_z_digits() {
    let mut rng = Rng(0x6735);
    let scalars = split_edges(&mut rng);
    for chunk in scalars.chunks(8) {
        let want: [[u64; 4]; 8] = chunk.try_into().expect("8 scalars");
        let mut digits = want;
        mul::g2::split(&mut digits);
        for (scalar, lane) in want.iter().zip(&digits) {
            assert!(lane.iter().all(|&digit| digit < Z_ABS), "{lane:x?} of {scalar:x?}");
            // Horner: ((d3 |z| + d2) |z| + d1) |z| + d0.
            let back = lane[..3]
                .iter()
                .rev()
                .fold([lane[3], 0, 0, 0], |acc, &digit| mul_add(&acc, Z_ABS, digit));
            assert_eq!(&back, scalar, "digits {lane:x?}");
        }
    }
}

#[test]
fn signatures_match_blst() {
    let mut rng = Rng(0x6734);
    let hashed = common::hash_to_g2(b"eight keys sign one message");
    let mut all = scalars(&mut rng, 16);
    all.extend(split_edges(&mut rng));
    for path in common::layers() {
        let table = mul::window_table_on(path, &common::serialize_g2(&hashed)).expect("a layer");
        for chunk in all.chunks(8) {
            let mut chunk: [[u64; 4]; 8] = chunk.try_into().expect("8 scalars");
            let want = chunk.map(|scalar| common::blst_signature(&scalar, &hashed));
            let got = mul::signatures_on(path, &table, &mut chunk).expect("a layer");
            assert_eq!(got, want, "{path:?}");
        }
    }
}

/// Weights of every shape: 1, 2, 15, 16, all ones, leading zero windows, zero windows
/// inside, one top bit, and random ones.
fn weights(rng: &mut Rng, count: usize) -> Vec<u64> {
    let mut out = vec![
        1,
        2,
        15,
        16,
        17,
        u64::MAX,
        1 << 63,
        0x8000_0000_0000_0001,
        0x0000_0001_0000_0000,
        0xf0f0_f0f0_f0f0_f0f0,
        0x0f0f_0f0f_0f0f_0f0f,
        Z_ABS,
        0x10,
        0xffff,
    ];
    out.extend((out.len()..count).map(|_| rng.next() >> (rng.next() % 64)).map(|w| w.max(1)));
    out
}

#[test]
fn keys_times_public_weights_match_blst() {
    use blst::*;
    let mut rng = Rng(0x003e_1647);
    let weights = weights(&mut rng, 40);
    let keys: Vec<blst_p1_affine> = (0..weights.len())
        .map(|_| {
            let compressed = common::blst_public_key(&rng.scalar());
            let mut point = blst_p1_affine::default();
            // SAFETY: 48 bytes in, one point out.
            assert_eq!(
                unsafe { blst_p1_uncompress(&mut point, compressed.as_ptr()) },
                BLST_ERROR::BLST_SUCCESS
            );
            point
        })
        .collect();
    let want: Vec<[u8; 96]> = keys
        .iter()
        .zip(&weights)
        .map(|(key, weight)| {
            let (mut point, mut product, mut out) =
                (blst_p1::default(), blst_p1::default(), [0u8; 96]);
            // SAFETY: live values; the scalar is 8 little-endian bytes of 64 bits.
            unsafe {
                blst_p1_from_affine(&mut point, key);
                blst_p1_mult(&mut product, &point, weight.to_le_bytes().as_ptr(), 64);
                blst_p1_serialize(out.as_mut_ptr(), &product);
            }
            out
        })
        .collect();
    for path in common::layers() {
        for start in (0..keys.len()).step_by(8) {
            let lanes: [usize; 8] = std::array::from_fn(|lane| (start + lane).min(keys.len() - 1));
            let points = lanes
                .map(|index| bls_lanes::points::G1Words { x: keys[index].x.l, y: keys[index].y.l });
            let (products, started, undecided) =
                mul::weighted_keys_on(path, &[points], &[lanes.map(|index| weights[index])])
                    .expect("a layer");
            assert_eq!((started, undecided), (0xff, 0), "{path:?}");
            for (lane, index) in lanes.iter().enumerate() {
                let fp = |words: &[u64; 6]| blst_fp { l: *words };
                let point = blst_p1 {
                    x: fp(&products[lane][0]),
                    y: fp(&products[lane][1]),
                    z: fp(&products[lane][2]),
                };
                let mut out = [0u8; 96];
                // SAFETY: one live point, 96 bytes out.
                unsafe { blst_p1_serialize(out.as_mut_ptr(), &point) };
                assert_eq!(out, want[*index], "{path:?}: weight {:#x}", weights[*index]);
            }
        }
    }
}

/// G2 points (real signatures) in blst's affine form.
fn signature_points(rng: &mut Rng, count: usize) -> Vec<blst::blst_p2_affine> {
    (0..count)
        .map(|index| {
            let hashed = common::hash_to_g2(&(index as u64).to_le_bytes());
            let compressed = common::blst_signature(&rng.scalar(), &hashed);
            let mut point = blst::blst_p2_affine::default();
            // SAFETY: 96 bytes in, one point out.
            let status = unsafe { blst::blst_p2_uncompress(&mut point, compressed.as_ptr()) };
            assert_eq!(status, blst::BLST_ERROR::BLST_SUCCESS);
            point
        })
        .collect()
}

/// blst's sum of weight * point over the given points (the identity for none).
fn blst_weighted_column(points: &[&blst::blst_p2_affine], weights: &[u64]) -> [u8; 192] {
    use blst::*;
    let mut total = blst_p2::default();
    for (point, weight) in points.iter().zip(weights) {
        let (mut projective, mut product, previous) =
            (blst_p2::default(), blst_p2::default(), total);
        // SAFETY: live values; the scalar is 8 little-endian bytes of 64 bits.
        unsafe {
            blst_p2_from_affine(&mut projective, *point);
            blst_p2_mult(&mut product, &projective, weight.to_le_bytes().as_ptr(), 64);
            blst_p2_add_or_double(&mut total, &previous, &product);
        }
    }
    let mut out = [0u8; 192];
    // SAFETY: one live point, 192 bytes out.
    unsafe { blst_p2_serialize(out.as_mut_ptr(), &total) };
    out
}

fn g2_words(point: &blst::blst_p2_affine) -> bls_lanes::points::G2Words {
    bls_lanes::points::G2Words {
        x: [point.x.fp[0].l, point.x.fp[1].l],
        y: [point.y.fp[0].l, point.y.fp[1].l],
    }
}

fn serialize_jacobian(words: &mul::weighted::G2JacobianWords) -> [u8; 192] {
    let fp2 = |c: &[[u64; 6]; 2]| blst::blst_fp2 { fp: c.map(|l| blst::blst_fp { l }) };
    let point = blst::blst_p2 { x: fp2(&words[0]), y: fp2(&words[1]), z: fp2(&words[2]) };
    let mut out = [0u8; 192];
    // SAFETY: one live point, 192 bytes out.
    unsafe { blst::blst_p2_serialize(out.as_mut_ptr(), &point) };
    out
}

#[test]
fn signature_sums_by_lane_match_blst() {
    let mut rng = Rng(0x5157_a7e5);
    let points = signature_points(&mut rng, 24);
    // Three rows; lane 7 of the last row left empty (weight 0), lane 6 of every row
    // weighted 0 too (a lane adding nothing: its sum is the identity), edge weights in
    // the first row.
    let mut weights: Vec<[u64; 8]> =
        (0..3).map(|_| std::array::from_fn(|_| rng.next() | 1)).collect();
    weights[0][..5].copy_from_slice(&[1, u64::MAX, 1 << 63, 0x8888_8888_8888_8888, 15]);
    for row in weights.iter_mut() {
        row[6] = 0;
    }
    weights[2][7] = 0;
    let rows: Vec<[bls_lanes::points::G2Words; 8]> =
        (0..3).map(|row| std::array::from_fn(|lane| g2_words(&points[row * 8 + lane]))).collect();
    for path in common::layers() {
        let (sums, started, undecided) =
            mul::weighted_signatures_on(path, &rows, &weights).expect("a layer");
        assert_eq!(undecided, 0, "{path:?}");
        assert_eq!(started, 0b1011_1111, "{path:?}");
        for lane in (0..8).filter(|lane| *lane != 6) {
            let column: Vec<&blst::blst_p2_affine> =
                (0..3).map(|row| &points[row * 8 + lane]).collect();
            let column_weights: Vec<u64> = (0..3).map(|row| weights[row][lane]).collect();
            assert_eq!(
                serialize_jacobian(&sums[lane]),
                blst_weighted_column(&column, &column_weights),
                "{path:?}: lane {lane}"
            );
        }
    }
}

#[test]
fn signature_sums_flag_a_lane_whose_partial_sum_meets_its_addend() {
    // Lane 2 holds one point twice with one weight: its second addition is a
    // doubling, which the formula cannot do, so the lane is left to the caller.
    let mut rng = Rng(0xd0b1e);
    let points = signature_points(&mut rng, 16);
    let mut rows: Vec<[bls_lanes::points::G2Words; 8]> =
        (0..2).map(|row| std::array::from_fn(|lane| g2_words(&points[row * 8 + lane]))).collect();
    let mut weights: Vec<[u64; 8]> =
        (0..2).map(|_| std::array::from_fn(|_| rng.next() | 1)).collect();
    rows[1][2] = rows[0][2];
    weights[1][2] = weights[0][2];
    for path in common::layers() {
        let (sums, started, undecided) =
            mul::weighted_signatures_on(path, &rows, &weights).expect("a layer");
        assert_eq!(undecided, 0b100, "{path:?}");
        assert_eq!(started, 0xff, "{path:?}");
        for lane in (0..8).filter(|lane| *lane != 2) {
            let column = [&points[lane], &points[8 + lane]];
            assert_eq!(
                serialize_jacobian(&sums[lane]),
                blst_weighted_column(&column, &[weights[0][lane], weights[1][lane]]),
                "{path:?}: lane {lane}"
            );
        }
    }
}

#[test]
fn plain_sums_by_lane_match_blst_and_flag_a_doubling() {
    let mut rng = Rng(0x5a_3e5);
    let points = signature_points(&mut rng, 24);
    let mut rows: Vec<[bls_lanes::points::G2Words; 8]> =
        (0..3).map(|row| std::array::from_fn(|lane| g2_words(&points[row * 8 + lane]))).collect();
    // Lane 5 meets its own first point again: a doubling, which the formula leaves.
    rows[1][5] = rows[0][5];
    // The last row is live in lanes 0-3 only.
    let live = [0xff, 0xff, 0x0f];
    for path in common::layers() {
        let (sums, undecided) = mul::signature_sums_on(path, &rows, &live).expect("a layer");
        assert_eq!(undecided, 1 << 5, "{path:?}");
        for lane in (0..8).filter(|lane| *lane != 5) {
            let column: Vec<&blst::blst_p2_affine> = (0..3)
                .filter(|row| (live[*row] >> lane) & 1 == 1)
                .map(|row| &points[row * 8 + lane])
                .collect();
            let ones = vec![1u64; column.len()];
            assert_eq!(
                serialize_jacobian(&sums[lane]),
                blst_weighted_column(&column, &ones),
                "{path:?}: lane {lane}"
            );
        }
    }
}
