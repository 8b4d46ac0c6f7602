//! The 8-lane decode kernels against blst's decode, verdict by verdict and message
//! by message, on valid keys and signatures and their corruptions, on every layer
//! this host runs.

mod common;

use bls_lanes::decode::{g1, g2};
use common::{corruptions, Rng};

#[test]
fn g1_decode_answers_as_blst() {
    let mut rng = Rng(0x6731);
    let valid: Vec<[u8; 48]> = (0..40).map(|_| common::blst_public_key(&rng.scalar())).collect();
    let inputs = corruptions(&valid, &mut rng);
    let refs: Vec<&[u8]> = inputs.iter().map(|input| &input[..]).collect();
    let want: Vec<_> = refs.iter().map(|input| common::blst_decode_g1(input)).collect();
    assert!(want.iter().filter(|verdict| verdict.is_ok()).count() >= 80);
    for path in common::layers() {
        let passes = g1::COUNTERS.passes.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(g1::decode_many_on(&refs, path, &common::blst_decode_g1), want, "{path:?}");
        assert!(g1::COUNTERS.passes.load(std::sync::atomic::Ordering::Relaxed) > passes);
    }
}

#[test]
fn g2_decode_answers_as_blst() {
    let mut rng = Rng(0x6732);
    let hashed = common::hash_to_g2(b"the decode differential");
    let valid: Vec<[u8; 96]> =
        (0..24).map(|_| common::blst_signature(&rng.scalar(), &hashed)).collect();
    let inputs = corruptions(&valid, &mut rng);
    let refs: Vec<&[u8]> = inputs.iter().map(|input| &input[..]).collect();
    let want: Vec<_> = refs.iter().map(|input| common::blst_decode_g2(input)).collect();
    assert!(want.iter().filter(|verdict| verdict.is_ok()).count() >= 48);
    for path in common::layers() {
        assert_eq!(g2::decode_many_on(&refs, path, &common::blst_decode_g2), want, "{path:?}");
    }
}
