//! Test-only binary: computes eight public keys with the constant-time 8-lane kernel
//! (crypto_backend/native/g1_mul_lanes.rs, built here from the same files) after
//! marking the secret scalars undefined for valgrind's memcheck, so that any branch
//! or memory index that depends on them is reported. `--leak` first branches on a
//! secret bit on purpose: the test's proof that such a dependence is caught.
//!
//! Usage: ct_check [--leak] SCALAR_HEX x 8   (big-endian, 64 hex digits each)
//! Prints the eight compressed keys in hex, one a line.

#![allow(dead_code, unused_imports)] // the shared modules carry items this binary does not use

#[path = "../../../crypto_backend/native/fp8.rs"]
mod fp8;
#[path = "../../../crypto_backend/native/g1_mul_lanes.rs"]
mod g1_mul_lanes;
#[path = "../../../crypto_backend/native/lane.rs"]
mod lane;
mod memcheck;

fn parse_scalar(text: &str) -> [u64; 4] {
    assert_eq!(text.len(), 64, "a scalar is 64 hex digits");
    let mut words = [0u64; 4];
    for (index, word) in words.iter_mut().enumerate() {
        let start = 64 - 16 * (index + 1);
        *word = u64::from_str_radix(&text[start..start + 16], 16).expect("hex digits");
    }
    words
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let leak = args.first().is_some_and(|arg| arg == "--leak");
    if leak {
        args.remove(0);
    }
    assert_eq!(args.len(), 8, "eight scalars");
    let mut scalars = [[0u64; 4]; 8];
    for (slot, text) in scalars.iter_mut().zip(&args) {
        *slot = parse_scalar(text);
    }
    memcheck::make_undefined(&scalars);
    if leak && std::hint::black_box(scalars[0][0]) & 1 == 1 {
        eprintln!("the deliberate secret-dependent branch was taken");
    }
    let keys = g1_mul_lanes::public_keys(lane::Portable, &scalars);
    // The keys are public: from here on code may branch on them.
    memcheck::make_defined(&keys);
    for key in &keys {
        println!("{}", key.iter().map(|byte| format!("{byte:02x}")).collect::<String>());
    }
}
