//! The constant-time 8-lane multiplications against blst: public keys (sk * g1) and
//! signatures (sk * H(m)), on edge and random scalars, on every layer this host runs.

mod common;

use bls_lanes::mul;
use common::Rng;

/// Edge scalars beside random ones: 1, 2, r - 1, and every 4-bit window 0 or 15.
fn scalars(rng: &mut Rng, count: usize) -> Vec<[u64; 4]> {
    let r_minus_1 =
        [0xfffffffeffffffff, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];
    let mut out =
        vec![[1, 0, 0, 0], [2, 0, 0, 0], r_minus_1, [u64::MAX, u64::MAX, u64::MAX, 0xfff]];
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

#[test]
fn signatures_match_blst() {
    let mut rng = Rng(0x6734);
    let hashed = common::hash_to_g2(b"eight keys sign one message");
    for path in common::layers() {
        let table = mul::window_table_on(path, &common::serialize_g2(&hashed)).expect("a layer");
        for chunk in scalars(&mut rng, 16).chunks(8) {
            let chunk: &[[u64; 4]; 8] = chunk.try_into().expect("8 scalars");
            let want = chunk.map(|scalar| common::blst_signature(&scalar, &hashed));
            assert_eq!(mul::signatures_on(path, &table, chunk).expect("a layer"), want, "{path:?}");
        }
    }
}
