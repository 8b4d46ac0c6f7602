//! Test-only binary: computes eight public keys (or, with `--g2`, eight signatures
//! of one hashed message) with the constant-time 8-lane kernels of the kernels crate
//! (`bls_lanes::mul`, on the portable layer) after marking the secret scalars
//! undefined for valgrind's memcheck, so that any branch or memory index that
//! depends on them is reported. `--leak` first branches on a secret bit on purpose:
//! the test's proof that such a dependence is caught.
//!
//! Usage: ct_check [--leak] [--g2 H_HEX] SCALAR_HEX x 8   (big-endian, 64 hex digits
//! each; H uncompressed, 192 bytes: x1, x0, y1, y0)
//! Prints the eight compressed points in hex, one a line.

use bls_lanes::lane::Portable;
use bls_lanes::mul::{g1, g2};

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

fn parse_point(text: &str) -> [u8; 192] {
    assert_eq!(text.len(), 384, "an uncompressed G2 point is 384 hex digits");
    std::array::from_fn(|index| {
        u8::from_str_radix(&text[2 * index..2 * index + 2], 16).expect("hex digits")
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let leak = args.first().is_some_and(|arg| arg == "--leak");
    if leak {
        args.remove(0);
    }
    let hashed = if args.first().is_some_and(|arg| arg == "--g2") {
        args.remove(0);
        Some(parse_point(&args.remove(0)))
    } else {
        None
    };
    assert_eq!(args.len(), 8, "eight scalars");
    let mut scalars = [[0u64; 4]; 8];
    for (slot, text) in scalars.iter_mut().zip(&args) {
        *slot = parse_scalar(text);
    }
    // The message's table is public: built before the scalars are marked.
    let table = hashed.map(|point| g2::window_table(Portable, &point));
    memcheck::make_undefined(&scalars);
    if leak && std::hint::black_box(scalars[0][0]) & 1 == 1 {
        eprintln!("the deliberate secret-dependent branch was taken");
    }
    // The outputs are public: from here on code may branch on them.
    let lines: Vec<String> = match table {
        Some(table) => {
            // The split into base-|z| digits runs inside, on the marked scalars.
            let signatures = g2::signatures(Portable, &table, &mut scalars);
            memcheck::make_defined(&signatures);
            signatures.iter().map(|signature| hex(signature)).collect()
        }
        None => {
            let keys = g1::public_keys(Portable, &scalars);
            memcheck::make_defined(&keys);
            keys.iter().map(|key| hex(key)).collect()
        }
    };
    for line in lines {
        println!("{line}");
    }
}
