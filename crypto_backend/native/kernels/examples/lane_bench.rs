//! A benchmark of the kernels crate alone, that needs nothing installed: the 8-lane Fp
//! multiplication (a dependent chain, and four independent products per step) and
//! the G1/G2 decode pass, on the portable layer and, where this CPU has AVX-512
//! IFMA, on the IFMA layer, each against blst doing the same work for 8 elements
//! (8 mul_mont_384 through blst_fp_mul; 8 decompressions with the subgroup check);
//! and 63 squarings of one cyclotomic-subgroup Fp12 value spread over the lanes
//! (an exponentiation by x's chain) against 63 blst_fp12_cyclotomic_sqr; and, on the
//! IFMA layer, the Miller loop of one chunk of 8 pairs against blst_miller_loop_n of
//! 4 to 8 pairs, and of two chunks in one pass against one (where a partial chunk
//! pays: bls_suite's pairing), and the weighted sum of 8 to 256 signatures (the
//! batch check's) against blst_p2s_mult_pippenger (where the lanes pay: bls_suite's
//! batch).
//! It prints medians over rounds, ours and blst's timed in turn within each round,
//! and their ratios:
//!
//!     cargo run --release -p bls_lanes --example lane_bench [-- ROUNDS]

#[path = "../tests/common/mod.rs"]
mod common;

use bls_lanes::cost;
use bls_lanes::cyclotomic::CyclotomicSquarings;
use bls_lanes::dispatch::Path;
use bls_lanes::field::fpx8::{Fpx8, Limbs};
use bls_lanes::lane::{Kernel, LaneOps, Portable};
use bls_lanes::miller;
use bls_lanes::points::{G1Words, G2Words};
use blst::{blst_fp, blst_fp_mul};
use common::Rng;
use std::hint::black_box;
use std::time::Instant;

/// `steps` multiplications of 8 lanes, each by the previous result (the chain) or,
/// with `width` 4, four independent accumulators per step (4 products per step).
struct MulSteps {
    steps: usize,
    width: usize,
}

impl Kernel for MulSteps {
    type Output = [Limbs; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Limbs; 8] {
        let f = Fpx8::new(o);
        let factor = f.to_montgomery(&f.constant(&[3, 0, 0, 0, 0, 0, 0, 0]));
        let mut acc = [f.one(), factor, f.add(&factor, &factor), f.one()];
        for _ in 0..self.steps {
            for slot in acc.iter_mut().take(self.width) {
                // No black_box: as `probe::MulChain`, no memory barrier between products.
                *slot = f.mul(slot, &factor);
            }
        }
        let mut out = acc[0];
        for slot in acc.iter().take(self.width).skip(1) {
            out = f.add(&out, slot);
        }
        f.unpack(&out)
    }
}

/// blst's 8 chains of `steps` dependent multiplications, `width` products each step.
fn blst_mul_steps(steps: usize, width: usize) -> [blst_fp; 8] {
    let factor = blst_fp { l: [3, 0, 0, 0, 0, 0] };
    let mut values: [[blst_fp; 4]; 8] = std::array::from_fn(|lane| {
        std::array::from_fn(|k| blst_fp { l: [(lane * 4 + k) as u64 + 1, 0, 0, 0, 0, 0] })
    });
    for _ in 0..steps {
        for lane in values.iter_mut() {
            for value in lane.iter_mut().take(width) {
                let previous = black_box(*value);
                // SAFETY: three live field elements, the output distinct from the inputs.
                unsafe { blst_fp_mul(value, &previous, &factor) };
            }
        }
    }
    values.map(|lane| lane[0])
}

/// The core's clock in GHz, read from a dependent chain of 64-bit multiplications:
/// 3 cycles each on the x86 cores this bench is for (Intel since Sandy Bridge, AMD
/// since Zen; Agner Fog's instruction tables). The Fp multiplication rows are also
/// given in cycles with it: on this project's Intel IFMA host (a VM) the clock
/// wandered between 2.6 and 3.9 GHz from one run to the next, the cycles much less.
fn core_clock_ghz() -> f64 {
    let steps = 20_000_000u64;
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    let start = Instant::now();
    for _ in 0..steps {
        x = x.wrapping_mul(x);
    }
    let seconds = start.elapsed().as_secs_f64();
    black_box(x);
    3.0 * steps as f64 / seconds / 1e9
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    samples[samples.len() / 2]
}

/// Median seconds of `ours` and of `theirs` over `rounds` rounds, the two timed in
/// turn within each round, so that a change of load on the machine hits both, each
/// after 10 ms of busy scalar work: timed straight after the IFMA kernel, blst's
/// multiplications took nearly twice as long on this project's Intel host, as if the
/// core's clock had not recovered yet from the 512-bit code; a 10 ms sleep removed
/// that but slowed the short decode passes after it (the core idle), so the wait spins.
fn time_pair(rounds: usize, mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (f64, f64) {
    ours();
    theirs();
    let once = |run: &mut dyn FnMut()| {
        let wait = Instant::now();
        let mut spin = 0u64;
        while wait.elapsed().as_millis() < 10 {
            spin = black_box(spin.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let start = Instant::now();
        run();
        start.elapsed().as_secs_f64()
    };
    let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        a.push(once(&mut ours));
        b.push(once(&mut theirs));
    }
    (median(a), median(b))
}

#[cfg(target_arch = "x86_64")]
fn ifma() -> Option<bls_lanes::lane::Ifma> {
    bls_lanes::lane::Ifma::detect()
}

#[cfg(not(target_arch = "x86_64"))]
fn ifma() -> Option<()> {
    None
}

/// blst_miller_loop_n of the pairs.
fn blst_miller_loop(ps: &[blst::blst_p1_affine], qs: &[blst::blst_p2_affine]) -> blst::blst_fp12 {
    let p_refs: Vec<*const blst::blst_p1_affine> = ps.iter().map(|p| p as *const _).collect();
    let q_refs: Vec<*const blst::blst_p2_affine> = qs.iter().map(|q| q as *const _).collect();
    let mut value = blst::blst_fp12::default();
    // SAFETY: `ps.len()` pointers to live points each; the value is written before read.
    unsafe { blst::blst_miller_loop_n(&mut value, q_refs.as_ptr(), p_refs.as_ptr(), ps.len()) };
    value
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|text| text.parse().ok()).unwrap_or(21);
    let ifma = ifma();
    println!(
        "lane_bench: medians of {rounds} rounds, all in this run; AVX-512 IFMA {}",
        if ifma.is_some() { "present" } else { "absent (IFMA rows skipped)" }
    );

    println!();
    println!("Fp multiplication (ns per 8 products: one 8-lane product, or 8 blst_fp_mul; ratio = lanes / blst)");
    println!("{:<44}{:>12}{:>12}{:>10}", "", "lanes", "blst x8", "ratio");
    let steps = 20_000;
    for (label, width) in [("dependent chain", 1usize), ("4 independent products per step", 4)] {
        let row = |layer: &str, (lanes, blst): (f64, f64), steps: usize| {
            let per = |seconds: f64| seconds / steps as f64 / width as f64 * 1e9;
            println!(
                "{:<44}{:>12.1}{:>12.1}{:>10.2}",
                format!("{label}, {layer}"),
                per(lanes),
                per(blst),
                lanes / blst
            );
        };
        let few = steps / 10;
        let portable = time_pair(
            rounds.min(9),
            || {
                black_box(MulSteps { steps: few, width }.run(Portable));
            },
            || {
                black_box(blst_mul_steps(few, width));
            },
        );
        row("portable", portable, few);
        #[cfg(target_arch = "x86_64")]
        if let Some(token) = ifma {
            let clock_before = core_clock_ghz();
            let pair = time_pair(
                rounds,
                || {
                    black_box(token.run(MulSteps { steps, width }));
                },
                || {
                    black_box(blst_mul_steps(steps, width));
                },
            );
            let clock = (clock_before + core_clock_ghz()) / 2.0;
            row("ifma", pair, steps);
            let cycles =
                |seconds: f64, per: usize| seconds / (steps * width * per) as f64 * clock * 1e9;
            println!(
                "{:<44}{:>12.0}{:>12.0}   cycles (clock {clock:.2} GHz; blst: per multiplication)",
                "  the same in core cycles",
                cycles(pair.0, 1),
                cycles(pair.1, 8)
            );
        }
    }

    println!();
    println!("Decode of 8 points with the subgroup check (us per 8: one pass, or 8 blst decodes; ratio = lanes / blst)");
    println!("{:<44}{:>12}{:>12}{:>10}", "", "lanes", "blst x8", "ratio");
    let mut rng = Rng(0xbe4c);
    let keys: [[u8; 48]; 8] = std::array::from_fn(|_| common::blst_public_key(&rng.scalar()));
    let hashed = common::hash_to_g2(b"lane bench");
    let signatures: [[u8; 96]; 8] =
        std::array::from_fn(|_| common::blst_signature(&rng.scalar(), &hashed));
    let blst_g1 = || {
        for key in &keys {
            black_box(common::blst_decode_g1(black_box(key)).expect("a key"));
        }
    };
    let blst_g2 = || {
        for signature in &signatures {
            black_box(common::blst_decode_g2(black_box(signature)).expect("a point"));
        }
    };
    let row = |label: &str, (lanes, blst): (f64, f64)| {
        println!("{:<44}{:>12.1}{:>12.1}{:>10.2}", label, lanes * 1e6, blst * 1e6, lanes / blst);
    };
    let portable_rounds = rounds.min(7);
    row(
        "G1 decode, portable",
        time_pair(
            portable_rounds,
            || {
                black_box(cost::g1_decode_chunk(&keys).run(Portable));
            },
            blst_g1,
        ),
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(token) = ifma {
        row(
            "G1 decode, ifma",
            time_pair(
                rounds,
                || {
                    black_box(token.run(cost::g1_decode_chunk(&keys)));
                },
                blst_g1,
            ),
        );
    }
    row(
        "G2 decode, portable",
        time_pair(
            portable_rounds,
            || {
                black_box(cost::g2_decode_chunk(&signatures).run(Portable));
            },
            blst_g2,
        ),
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(token) = ifma {
        row(
            "G2 decode, ifma",
            time_pair(
                rounds,
                || {
                    black_box(token.run(cost::g2_decode_chunk(&signatures)));
                },
                blst_g2,
            ),
        );
    }

    println!();
    println!("63 squarings of one cyclotomic-subgroup Fp12 value, spread over the lanes (us; ratio = lanes / blst)");
    println!("{:<44}{:>12}{:>12}{:>10}", "", "lanes", "blst", "ratio");
    let value = common::fp12_of_words(&common::cyclotomic_value(&mut rng));
    let blst_squarings = || {
        let mut value = common::fp12_of(&value);
        for _ in 0..63 {
            let so_far = black_box(value);
            // SAFETY: a live fp12 in, a distinct one out.
            unsafe { blst::blst_fp12_cyclotomic_sqr(&mut value, &so_far) };
        }
        black_box(value);
    };
    row(
        "cyclotomic squarings, portable",
        time_pair(
            portable_rounds,
            || {
                black_box(CyclotomicSquarings { value, count: 63 }.run(Portable));
            },
            blst_squarings,
        ),
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(token) = ifma {
        row(
            "cyclotomic squarings, ifma",
            time_pair(
                rounds,
                || {
                    black_box(token.run(CyclotomicSquarings { value, count: 63 }));
                },
                blst_squarings,
            ),
        );
    }

    if ifma.is_none() {
        return;
    }
    println!();
    println!("Miller loop of 8 pairs (one chunk) on the ifma layer against blst_miller_loop_n (us; ratio = lanes / blst)");
    println!("{:<44}{:>12}{:>12}{:>10}", "", "lanes", "blst", "ratio");
    let ps: Vec<blst::blst_p1_affine> = (0..8).map(|_| g1_point(&rng.scalar())).collect();
    let qs: Vec<blst::blst_p2_affine> = (0..8u8)
        .map(|k| {
            let mut affine = blst::blst_p2_affine::default();
            // SAFETY: a live point in, one out.
            unsafe { blst::blst_p2_to_affine(&mut affine, &common::hash_to_g2(&[k; 32])) };
            affine
        })
        .collect();
    let p_words: [G1Words; 8] = std::array::from_fn(|i| G1Words { x: ps[i].x.l, y: ps[i].y.l });
    let q_words: [G2Words; 8] = std::array::from_fn(|i| G2Words {
        x: [qs[i].x.fp[0].l, qs[i].x.fp[1].l],
        y: [qs[i].y.fp[0].l, qs[i].y.fp[1].l],
    });
    let one_chunk = || {
        black_box(miller::miller_loop_on(Path::Ifma, &p_words, &q_words));
    };
    for count in [4, 5, 6, 8] {
        let blst_pairs = || {
            black_box(blst_miller_loop(&ps[..count], &qs[..count]));
        };
        row(
            &format!("one chunk of 8 vs blst's {count} pairs"),
            time_pair(rounds, one_chunk, blst_pairs),
        );
    }
    let two_chunks = || {
        black_box(miller::miller_product_on(Path::Ifma, &[p_words, p_words], &[q_words, q_words]));
    };
    row("two chunks in one pass vs one chunk", time_pair(rounds, two_chunks, one_chunk));
    for count in 1..=miller::spread::MAX_PAIRS {
        let spread = || {
            black_box(miller::spread::miller_loop(
                Path::Ifma,
                &p_words[..count],
                &q_words[..count],
            ));
        };
        let blst_pairs = || {
            black_box(blst_miller_loop(&ps[..count], &qs[..count]));
        };
        row(
            &format!("{count} pairs spread over the lanes vs blst's"),
            time_pair(rounds, spread, blst_pairs),
        );
    }

    println!();
    println!("Sum of N signatures times random 64-bit weights: the ifma kernel (N/8 a lane) and blst's sum of the 8 lanes' results, against blst_p2s_mult_pippenger (us; ratio = lanes / blst)");
    println!("{:<44}{:>12}{:>12}{:>10}", "", "lanes", "blst", "ratio");
    let signature_points: Vec<blst::blst_p2_affine> = (0..256u32)
        .map(|k| {
            let (mut point, mut affine) =
                (blst::blst_p2::default(), blst::blst_p2_affine::default());
            let hashed = common::hash_to_g2(&k.to_le_bytes());
            let scalar = rng.scalar();
            let mut sk = blst::blst_scalar::default();
            // SAFETY: live values of the right types.
            unsafe {
                blst::blst_scalar_from_uint64(&mut sk, scalar.as_ptr());
                blst::blst_sign_pk_in_g1(&mut point, &hashed, &sk);
                blst::blst_p2_to_affine(&mut affine, &point);
            }
            affine
        })
        .collect();
    let weights: Vec<u64> = (0..256).map(|_| rng.next() | 1).collect();
    for count in [8, 16, 32, 64, 128, 256] {
        let rows = count / 8;
        let points: Vec<[G2Words; 8]> = (0..rows)
            .map(|row| {
                std::array::from_fn(|lane| {
                    let q = &signature_points[row * 8 + lane];
                    G2Words { x: [q.x.fp[0].l, q.x.fp[1].l], y: [q.y.fp[0].l, q.y.fp[1].l] }
                })
            })
            .collect();
        let lane_weights: Vec<[u64; 8]> =
            (0..rows).map(|row| std::array::from_fn(|lane| weights[row * 8 + lane])).collect();
        let lanes = || {
            let (sums, _, _) =
                bls_lanes::mul::weighted_signatures_on(Path::Ifma, &points, &lane_weights)
                    .expect("ifma");
            let mut total = blst::blst_p2::default();
            for sum in &sums {
                let fp2 = |c: &[[u64; 6]; 2]| blst::blst_fp2 { fp: c.map(|l| blst::blst_fp { l }) };
                let point = blst::blst_p2 { x: fp2(&sum[0]), y: fp2(&sum[1]), z: fp2(&sum[2]) };
                let previous = total;
                // SAFETY: live points.
                unsafe { blst::blst_p2_add_or_double(&mut total, &previous, &point) };
            }
            black_box(total);
        };
        let pippenger = || {
            let scalars: Vec<[u8; 8]> = weights[..count].iter().map(|w| w.to_le_bytes()).collect();
            let point_refs: Vec<*const blst::blst_p2_affine> =
                signature_points[..count].iter().map(|p| p as *const _).collect();
            let scalar_refs: Vec<*const u8> = scalars.iter().map(|s| s.as_ptr()).collect();
            let mut out = blst::blst_p2::default();
            // SAFETY: `count` live points and 8-byte scalars; scratch of blst's size.
            unsafe {
                let size = blst::blst_p2s_mult_pippenger_scratch_sizeof(count);
                let mut scratch = vec![0u64; size.div_ceil(8)];
                blst::blst_p2s_mult_pippenger(
                    &mut out,
                    point_refs.as_ptr(),
                    count,
                    scalar_refs.as_ptr(),
                    64,
                    scratch.as_mut_ptr(),
                );
            }
            black_box(out);
        };
        row(&format!("{count} signatures"), time_pair(rounds, lanes, pippenger));
    }
}

/// sk * g1, affine.
fn g1_point(words: &[u64; 4]) -> blst::blst_p1_affine {
    let (mut scalar, mut point, mut affine) =
        (blst::blst_scalar::default(), blst::blst_p1::default(), blst::blst_p1_affine::default());
    // SAFETY: live values of the right types.
    unsafe {
        blst::blst_scalar_from_uint64(&mut scalar, words.as_ptr());
        blst::blst_sk_to_pk_in_g1(&mut point, &scalar);
        blst::blst_p1_to_affine(&mut affine, &point);
    }
    affine
}
