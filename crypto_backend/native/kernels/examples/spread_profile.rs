//! The spread Miller loop (`miller::spread`) of N pairs, run over and over on the
//! IFMA layer where this CPU has it (else the portable one): a steady loop to put
//! under `perf record`, printing its time per loop.
//!
//!     cargo run --release -p bls_lanes --example spread_profile [-- PAIRS [REPEATS]]

#[path = "../tests/common/mod.rs"]
mod common;

use bls_lanes::dispatch::Path;
use bls_lanes::miller::spread;
use bls_lanes::points::{G1Words, G2Words};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1).map(|text| text.parse::<usize>().ok());
    let pairs = args.next().flatten().unwrap_or(2).clamp(1, spread::MAX_PAIRS);
    let repeats = args.next().flatten().unwrap_or(2000);
    let mut rng = common::Rng(23);
    let ps: Vec<G1Words> = (0..pairs)
        .map(|_| common::blst_decode_g1(&common::blst_public_key(&rng.scalar())).unwrap())
        .collect();
    let qs: Vec<G2Words> = (0..pairs as u8)
        .map(|k| {
            let mut q = blst::blst_p2_affine::default();
            // SAFETY: a live point in, one out.
            unsafe { blst::blst_p2_to_affine(&mut q, &common::hash_to_g2(&[k; 32])) };
            G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] }
        })
        .collect();
    let path = if cfg!(target_arch = "x86_64") && std::arch::is_x86_feature_detected!("avx512ifma")
    {
        Path::Ifma
    } else {
        Path::Portable
    };
    let start = Instant::now();
    for _ in 0..repeats {
        black_box(spread::miller_loop(path, &ps, &qs));
    }
    let micros = start.elapsed().as_secs_f64() * 1e6 / repeats as f64;
    println!("{pairs} pairs on {path:?}: {micros:.1} us a loop");
}
