//! The hardware-independent cost report: each kernel pass run once on the counting
//! lane layer (`bls_lanes::lane::counting`), its lane operations by kind per pass (a
//! pass is 8 lanes) and per lane element, and its critical path in cycles on each
//! latency model (LLVM's scheduling models, see counting.rs), next to the cycles the
//! multiply-adds alone need to issue. The answers are checked against the portable
//! layer's on the way. The same figures on every host:
//!
//!     cargo run --release -p bls_lanes --example cost_report [-- --json]
//!
//! bench/cost_report.py runs this and compares two runs (before and after a change).

#[path = "../tests/common/mod.rs"]
mod common;

use bls_lanes::cost::{self, FieldKernel, FieldOp};
use bls_lanes::cyclotomic::{CyclotomicPowX, CyclotomicSquarings};
use bls_lanes::field::fpx8;
use bls_lanes::lane::counting::{self, Model, OpKind, Report};
use bls_lanes::lane::{Kernel, Portable};
use bls_lanes::miller::ONE_FP12;
use common::Rng;

struct Row {
    name: &'static str,
    /// What one pass computes, for the reader.
    what: &'static str,
    report: Report,
}

/// Run `kernel` counted and `plain` on the portable layer; they must agree.
fn counted<K: Kernel>(kernel: K, plain: K) -> Report
where
    K::Output: PartialEq + std::fmt::Debug,
{
    let (output, report) = counting::measure(kernel);
    assert_eq!(output, plain.run(Portable), "the counting layer must answer as the portable one");
    report
}

fn field(op: FieldOp, rng: &mut Rng) -> Report {
    let element = |rng: &mut Rng| std::array::from_fn(|_| fpx8::limbs_from_words(&rng.below_p()));
    let (a, b) = ([element(rng), element(rng)], [element(rng), element(rng)]);
    counted(FieldKernel { op, a, b }, FieldKernel { op, a, b })
}

fn decided<T: std::fmt::Debug>(lanes: &[bls_lanes::decode::Lane<T>; 8]) -> Vec<String> {
    lanes
        .iter()
        .map(|lane| match lane {
            bls_lanes::decode::Lane::Decided(verdict) => format!("{verdict:?}"),
            bls_lanes::decode::Lane::Undecided => "undecided".into(),
        })
        .collect()
}

fn rows() -> Vec<Row> {
    let mut rng = Rng(0xc057);
    let mut rows = Vec::new();
    let mut push = |name, what, report| rows.push(Row { name, what, report });

    push("fp_mul", "8 Fp products (Montgomery)", field(FieldOp::FpMul, &mut rng));
    push("fp_add", "8 Fp sums", field(FieldOp::FpAdd, &mut rng));
    push("fp_sub", "8 Fp differences", field(FieldOp::FpSub, &mut rng));
    push("fp2_mul", "8 Fp2 products (Karatsuba)", field(FieldOp::Fp2Mul, &mut rng));
    push("fp2_sqr", "8 Fp2 squares", field(FieldOp::Fp2Sqr, &mut rng));

    let keys: [[u8; 48]; 8] = std::array::from_fn(|_| common::blst_public_key(&rng.scalar()));
    let (lanes, report) = counting::measure(cost::g1_decode_chunk(&keys));
    assert_eq!(decided(&lanes), decided(&cost::g1_decode_chunk(&keys).run(Portable)));
    push("g1_decode", "8 keys: sqrt, sign, subgroup check", report);

    let hashed = common::hash_to_g2(b"cost report");
    let signatures: [[u8; 96]; 8] =
        std::array::from_fn(|_| common::blst_signature(&rng.scalar(), &hashed));
    let (lanes, report) = counting::measure(cost::g2_decode_chunk(&signatures));
    assert_eq!(decided(&lanes), decided(&cost::g2_decode_chunk(&signatures).run(Portable)));
    push("g2_decode", "8 signatures: sqrt, sign, subgroup check", report);

    let ps = keys.map(|key| common::blst_decode_g1(&key).expect("a key"));
    let qs = signatures.map(|signature| common::blst_decode_g2(&signature).expect("a point"));
    let (xp, yp, xq, yq) = cost::miller_setup(ps, qs).run(Portable);
    let one = cost::miller_load([ONE_FP12; 8]).run(Portable);
    // An accumulator and a point T past the first steps (not the special values 1, Q).
    let (acc, t) = cost::miller_doubling(one, [xq, yq, one[0][0]], xp, yp).run(Portable);
    push(
        "miller_double",
        "8 pairs: doubling step, line into acc",
        counted(cost::miller_doubling(acc, t, xp, yp), cost::miller_doubling(acc, t, xp, yp)),
    );
    push(
        "miller_add",
        "8 pairs: addition step, line into acc",
        counted(
            cost::miller_addition(acc, t, xq, yq, xp, yp),
            cost::miller_addition(acc, t, xq, yq, xp, yp),
        ),
    );
    push("fp12_sqr", "8 Fp12 squares", counted(cost::fp12_square(acc), cost::fp12_square(acc)));

    let scalars: [[u64; 4]; 8] = std::array::from_fn(|_| rng.scalar());
    push(
        "public_keys",
        "8 keys: sk * G1, compressed",
        counted(cost::public_keys(&scalars), cost::public_keys(&scalars)),
    );
    let uncompressed = common::serialize_g2(&hashed);
    let table = cost::window_table(&uncompressed).run(Portable);
    push(
        "window_table",
        "one message: 4 x 16 multiples of H (per message)",
        counted(cost::window_table(&uncompressed), cost::window_table(&uncompressed)),
    );
    let (mut counted_scalars, mut plain_scalars) = (scalars, scalars);
    push(
        "signatures",
        "8 keys: sk * H(m), compressed (table given)",
        counted(
            cost::signatures(&table, &mut counted_scalars),
            cost::signatures(&table, &mut plain_scalars),
        ),
    );
    // One value over the lanes: a run of 2 squarings less a run of 1 is one squaring
    // without the entry's conversions; its path, one link of the run's chain.
    let value = common::fp12_of_words(&common::cyclotomic_value(&mut rng));
    let run =
        |count| counted(CyclotomicSquarings { value, count }, CyclotomicSquarings { value, count });
    let (one, two) = (run(1), run(2));
    push(
        "cyclotomic_sqr",
        "one Fp12 value: a cyclotomic squaring, 18 products over 3 passes",
        Report {
            counts: std::array::from_fn(|kind| two.counts[kind] - one.counts[kind]),
            critical_path: std::array::from_fn(|model| {
                two.critical_path[model] - one.critical_path[model]
            }),
        },
    );
    push(
        "cyclotomic_pow_x",
        "one Fp12 value to the |x|: 62 squarings, 5 products, one entry",
        counted(CyclotomicPowX { value }, CyclotomicPowX { value }),
    );
    let messages: [Vec<u8>; 8] = std::array::from_fn(|_| rng.next().to_le_bytes().to_vec());
    let expanded = messages.each_ref().map(|message| common::expand(message));
    let (hashed, report) = cost::hash_to_g2_counted(expanded);
    let plain = bls_lanes::hash::hash_chunk_on(bls_lanes::dispatch::Path::Portable, expanded);
    assert_eq!(Some(hashed), plain, "the counting layer must answer as the portable one");
    push("hash_to_g2", "8 messages: expanded bytes to H(m), Jacobian (all stages)", report);
    let points: [bls_lanes::points::G1Words; 8] = std::array::from_fn(|_| {
        let key = common::blst_public_key(&rng.scalar());
        let mut point = blst::blst_p1_affine::default();
        // SAFETY: 48 bytes in, one point out.
        unsafe { blst::blst_p1_uncompress(&mut point, key.as_ptr()) };
        bls_lanes::points::G1Words { x: point.x.l, y: point.y.l }
    });
    let weights: [[u64; 8]; 1] = [std::array::from_fn(|_| rng.next())];
    push(
        "weighted_keys",
        "8 keys times 64-bit weights (batch verification)",
        counted(cost::weighted_keys(&[points], &weights), cost::weighted_keys(&[points], &weights)),
    );
    let hashed = common::hash_to_g2(b"cost report");
    let signatures: Vec<[bls_lanes::points::G2Words; 8]> = (0..8)
        .map(|_| {
            std::array::from_fn(|_| {
                let compressed = common::blst_signature(&rng.scalar(), &hashed);
                let mut point = blst::blst_p2_affine::default();
                // SAFETY: 96 bytes in, one point out.
                unsafe { blst::blst_p2_uncompress(&mut point, compressed.as_ptr()) };
                bls_lanes::points::G2Words {
                    x: [point.x.fp[0].l, point.x.fp[1].l],
                    y: [point.y.fp[0].l, point.y.fp[1].l],
                }
            })
        })
        .collect();
    let signature_weights: Vec<[u64; 8]> =
        (0..8).map(|_| std::array::from_fn(|_| rng.next())).collect();
    let key_rows: Vec<[bls_lanes::points::G1Words; 8]> = (0..8)
        .map(|_| {
            std::array::from_fn(|_| {
                let key = common::blst_public_key(&rng.scalar());
                let mut point = blst::blst_p1_affine::default();
                // SAFETY: 48 bytes in, one point out.
                unsafe { blst::blst_p1_uncompress(&mut point, key.as_ptr()) };
                bls_lanes::points::G1Words { x: point.x.l, y: point.y.l }
            })
        })
        .collect();
    let live = [0xffu8; 8];
    push(
        "key_sums",
        "sum of 64 keys (8 a lane, one mixed addition each)",
        counted(cost::key_sums(&key_rows, &live), cost::key_sums(&key_rows, &live)),
    );
    push(
        "signature_sums",
        "sum of 64 signatures (8 a lane, one mixed addition each)",
        counted(cost::signature_sums(&signatures, &live), cost::signature_sums(&signatures, &live)),
    );
    push(
        "weighted_signatures",
        "sum of 64 signatures times 64-bit weights (8 a lane)",
        counted(
            cost::weighted_signatures(&signatures, &signature_weights),
            cost::weighted_signatures(&signatures, &signature_weights),
        ),
    );
    rows
}

/// The kinds shown: all but the last, splat (a broadcast constant), which is left
/// out of the totals.
const SHOWN: [OpKind; counting::KINDS - 1] = {
    let mut shown = [OpKind::Splat; counting::KINDS - 1];
    let mut index = 0;
    while index < shown.len() {
        shown[index] = OpKind::ALL[index];
        index += 1;
    }
    shown
};

fn total(report: &Report) -> u64 {
    SHOWN.iter().map(|kind| report.count(*kind)).sum()
}

fn print_table(rows: &[Row]) {
    println!("Lane operations per pass (one kernel pass = 8 lanes; splat constants not counted).");
    print!("{:<14}", "kernel");
    for kind in SHOWN {
        print!("{:>10}", kind.name());
    }
    println!("{:>11}", "total");
    for row in rows {
        print!("{:<14}", row.name);
        for kind in SHOWN {
            print!("{:>10}", row.report.count(kind));
        }
        println!("{:>11}", total(&row.report));
    }
    println!();
    println!("Per lane element: multiply-adds and all operations.");
    println!("{:<14}{:>14}{:>14}  one pass is", "kernel", "madds/elem", "ops/elem");
    for row in rows {
        println!(
            "{:<14}{:>14.1}{:>14.1}  {}",
            row.name,
            row.report.madds() as f64 / 8.0,
            total(&row.report) as f64 / 8.0,
            row.what
        );
    }
    println!();
    println!("Critical path per pass, cycles (longest dependency chain, unbounded issue);");
    println!("in brackets the cycles the multiply-adds alone need to issue (count x rthroughput).");
    print!("{:<14}", "kernel");
    for model in Model::ALL {
        print!("{:>26}", model.name());
    }
    println!();
    for row in rows {
        print!("{:<14}", row.name);
        for model in Model::ALL {
            let cell = format!(
                "{} [{:.0}]",
                row.report.critical_path(model),
                row.report.madd_issue_bound(model)
            );
            print!("{cell:>26}");
        }
        println!();
    }
    println!();
    println!("Latencies used (cycles; LLVM scheduling models, see src/lane/counting.rs):");
    print!("{:<16}", "model");
    for kind in SHOWN {
        print!("{:>10}", kind.name());
    }
    println!();
    for model in Model::ALL {
        print!("{:<16}", model.name());
        for kind in SHOWN {
            print!("{:>10}", model.latency(kind));
        }
        println!();
    }
}

fn print_json(rows: &[Row]) {
    let kinds: Vec<String> = SHOWN.iter().map(|kind| format!("\"{}\"", kind.name())).collect();
    let models: Vec<String> =
        Model::ALL.iter().map(|model| format!("\"{}\"", model.name())).collect();
    println!(
        "{{\"kinds\": [{}], \"models\": [{}], \"kernels\": [",
        kinds.join(", "),
        models.join(", ")
    );
    for (index, row) in rows.iter().enumerate() {
        let counts: Vec<String> =
            SHOWN.iter().map(|kind| row.report.count(*kind).to_string()).collect();
        let paths: Vec<String> =
            Model::ALL.iter().map(|model| row.report.critical_path(*model).to_string()).collect();
        let bounds: Vec<String> = Model::ALL
            .iter()
            .map(|model| format!("{:.1}", row.report.madd_issue_bound(*model)))
            .collect();
        println!(
            "  {{\"name\": \"{}\", \"what\": \"{}\", \"lanes\": 8, \"counts\": [{}], \
             \"critical_path\": [{}], \"madd_issue_bound\": [{}]}}{}",
            row.name,
            row.what,
            counts.join(", "),
            paths.join(", "),
            bounds.join(", "),
            if index + 1 < rows.len() { "," } else { "" }
        );
    }
    println!("]}}");
}

fn main() {
    let rows = rows();
    if std::env::args().any(|argument| argument == "--json") {
        print_json(&rows);
    } else {
        print_table(&rows);
    }
}
