//! The 8-lane hash to G2 against blst: messages through expand_message_xmd and the
//! kernel against blst_hash_to_g2, and chosen field elements (zero, p, values at and
//! above p, the all-ones 512-bit number) against blst_map_to_g2, point for point
//! (blst's serialization of the affine point), on every layer this host runs.

mod common;

use bls_lanes::hash::{self, G2JacobianWords, EXPANDED_BYTES};
use blst::*;
use common::{expand, hash_to_g2, layers, serialize_g2, Rng};

fn p2_of(words: &G2JacobianWords) -> blst_p2 {
    let fp2 = |c: &[[u64; 6]; 2]| blst_fp2 { fp: c.map(|l| blst_fp { l }) };
    blst_p2 { x: fp2(&words[0]), y: fp2(&words[1]), z: fp2(&words[2]) }
}

/// Each input's kernel point (None where its lane was left undecided), a chunk of up
/// to eight at a time.
fn kernel_points(
    path: bls_lanes::dispatch::Path,
    inputs: &[[u8; EXPANDED_BYTES]],
) -> Vec<Option<blst_p2>> {
    let mut out = Vec::new();
    for chunk in inputs.chunks(8) {
        let expanded = std::array::from_fn(|lane| chunk[lane.min(chunk.len() - 1)]);
        let hashed = hash::hash_chunk_on(path, expanded).expect("a layer this host runs");
        for lane in 0..chunk.len() {
            out.push(((hashed.undecided >> lane) & 1 == 0).then(|| p2_of(&hashed.points[lane])));
        }
    }
    out
}

#[test]
fn messages_hash_to_blsts_points() {
    let mut rng = Rng(0x4a5b_1e55_a6e5);
    let mut messages: Vec<Vec<u8>> = vec![vec![], b"abc".to_vec(), vec![0u8; 32], vec![0xff; 200]];
    for index in 0..45 {
        let length = [1, 31, 32, 33, 64, 100][index % 6];
        messages.push((0..length).map(|_| rng.next() as u8).collect());
    }
    let expanded: Vec<[u8; EXPANDED_BYTES]> = messages.iter().map(|m| expand(m)).collect();
    for path in layers() {
        let points = kernel_points(path, &expanded);
        for (message, point) in messages.iter().zip(&points) {
            let point =
                point.unwrap_or_else(|| panic!("{path:?}: message {message:02x?} undecided"));
            assert_eq!(
                serialize_g2(&point),
                serialize_g2(&hash_to_g2(message)),
                "{path:?}: message {message:02x?}"
            );
        }
    }
}

const P_BE: [u8; 48] = [
    0x1a, 0x01, 0x11, 0xea, 0x39, 0x7f, 0xe6, 0x9a, 0x4b, 0x1b, 0xa7, 0xb6, 0x43, 0x4b, 0xac, 0xd7,
    0x64, 0x77, 0x4b, 0x84, 0xf3, 0x85, 0x12, 0xbf, 0x67, 0x30, 0xd2, 0xa0, 0xf6, 0xb0, 0xf6, 0x24,
    0x1e, 0xab, 0xff, 0xfe, 0xb1, 0x53, 0xff, 0xff, 0xb9, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xaa, 0xab,
];

fn fp_from_be(bytes: &[u8; 48]) -> blst_fp {
    let mut out = blst_fp::default();
    // SAFETY: 48 bytes in, one element out (blst reduces a value below 2^384 mod p).
    unsafe { blst_fp_from_bendian(&mut out, bytes.as_ptr()) };
    out
}

/// A 64-byte big-endian number mod p, as hash_to_field reads it: h 2^384 + l.
fn fp_of_64(bytes: &[u8]) -> blst_fp {
    let mut high = [0u8; 48];
    high[32..].copy_from_slice(&bytes[..16]);
    let mut two_376 = [0u8; 48];
    two_376[0] = 1;
    let mut two_8 = [0u8; 48];
    two_8[46] = 1;
    let (mut shift, mut out) = (blst_fp::default(), blst_fp::default());
    // SAFETY: live elements in and out.
    unsafe {
        blst_fp_mul(&mut shift, &fp_from_be(&two_376), &fp_from_be(&two_8));
        let high_part = {
            let mut t = blst_fp::default();
            blst_fp_mul(&mut t, &fp_from_be(&high), &shift);
            t
        };
        blst_fp_add(&mut out, &high_part, &fp_from_be(bytes[16..].try_into().expect("48 bytes")));
    }
    out
}

fn map_to_g2(expanded: &[u8; EXPANDED_BYTES]) -> blst_p2 {
    let fp2 = |index: usize| blst_fp2 {
        fp: [
            fp_of_64(&expanded[128 * index..128 * index + 64]),
            fp_of_64(&expanded[128 * index + 64..128 * index + 128]),
        ],
    };
    let mut out = blst_p2::default();
    // SAFETY: live elements in, one point out.
    unsafe { blst_map_to_g2(&mut out, &fp2(0), &fp2(1)) };
    out
}

/// 64 bytes: 16 high bytes and the 48 low ones.
fn number(high: [u8; 16], low: [u8; 48]) -> [u8; 64] {
    let mut out = [0u8; 64];
    out[..16].copy_from_slice(&high);
    out[16..].copy_from_slice(&low);
    out
}

#[test]
fn chosen_field_elements_map_as_blst_maps_them() {
    let mut p_plus_one = P_BE;
    p_plus_one[47] += 1;
    let mut p_minus_one = P_BE;
    p_minus_one[47] -= 1;
    let mut one = [0u8; 48];
    one[47] = 1;
    let elements: Vec<[u8; 64]> = vec![
        [0u8; 64],             // 0: the map's exceptional case
        number([0; 16], P_BE), // p = 0 mod p
        number([0; 16], one),
        number([0; 16], p_minus_one),
        number([0; 16], p_plus_one), // a low part at and above p
        number([0; 16], [0xff; 48]), // 2^384 - 1
        [0xff; 64],                  // 2^512 - 1
        number([0xff; 16], [0; 48]),
    ];
    let mut rng = Rng(0x0005_eedf_1e1d);
    let mut inputs = Vec::new();
    for (index, first) in elements.iter().enumerate() {
        for second in &elements {
            // u0 = first + second i, u1 another pair (a random one half the time).
            let mut expanded = [0u8; EXPANDED_BYTES];
            expanded[..64].copy_from_slice(first);
            expanded[64..128].copy_from_slice(second);
            for byte in expanded[128..].iter_mut() {
                *byte = rng.next() as u8;
            }
            if index % 2 == 0 {
                expanded[128..192].copy_from_slice(second);
                expanded[192..].copy_from_slice(first);
            }
            inputs.push(expanded);
        }
    }
    for path in layers() {
        let points = kernel_points(path, &inputs);
        let mut identities = 0;
        for (input, point) in inputs.iter().zip(&points) {
            let expected = map_to_g2(input);
            match point {
                Some(point) => {
                    assert_eq!(
                        serialize_g2(point),
                        serialize_g2(&expected),
                        "{path:?}: {input:02x?}"
                    )
                }
                // u1 = -u0 up to sign gives Q1 = -Q0, a sum the kernel leaves to blst.
                None => {
                    // SAFETY: a live point.
                    assert!(
                        unsafe { blst_p2_is_inf(&expected) },
                        "{path:?}: {input:02x?} undecided"
                    );
                    identities += 1;
                }
            }
        }
        assert!(identities < inputs.len() / 4, "{path:?}: {identities} undecided");
    }
}
