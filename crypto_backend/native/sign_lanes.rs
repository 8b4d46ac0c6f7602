//! `sign_many`'s work: the message hashed once by blst, then each key signed by
//! blst's constant-time multiplication (`Path::Off`), or eight keys a pass through
//! the constant-time 8-lane kernel of `g2_mul_lanes.rs` on the dispatch's lane layer.
//! A last chunk of fewer than eight keys fills its spare lanes with the public
//! scalar 1 and drops their outputs. The lane threads split the chunks as they
//! split the keys on the blst path. Every copy of a secret scalar a pass makes is
//! zeroed when the pass ends.

use crate::curve::{self, SecretScalar, SIGNATURE_LENGTH};
use crate::g2_mul_lanes::{self, Table};
use crate::lane::LaneOps;
use crate::lanes;
use crate::simd::{self, Kernel, Path};
use crate::test_panic;
use std::sync::atomic::{AtomicU64, Ordering};

/// Kernel passes run, for the tests (that a call really went through the lanes).
pub static PASSES: AtomicU64 = AtomicU64::new(0);

pub type Signature = [u8; SIGNATURE_LENGTH];

struct WindowTable {
    uncompressed: [u8; 2 * SIGNATURE_LENGTH],
}

impl Kernel for WindowTable {
    type Output = Table;

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> Table {
        g2_mul_lanes::window_table(o, &self.uncompressed)
    }
}

struct SignChunk<'a> {
    table: &'a Table,
    scalars: [[u64; 4]; 8],
}

// On a borrow, so that the scalars stay in the one place that is zeroed.
impl Kernel for &SignChunk<'_> {
    type Output = [Signature; 8];

    #[inline(always)]
    fn run<O: LaneOps>(self, o: O) -> [Signature; 8] {
        g2_mul_lanes::signatures(o, self.table, &self.scalars)
    }
}

impl Drop for SignChunk<'_> {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.scalars);
    }
}

/// The public scalar of the spare lanes of a short chunk.
const SPARE_LANE_SCALAR: [u64; 4] = [1, 0, 0, 0];

/// Keys' signatures of `message`, in order, on `path`.
pub fn sign_many_on(secrets: &[SecretScalar], message: &[u8], path: Path) -> Vec<Signature> {
    let hashed = curve::hash_to_g2(message, curve::DST);
    let table = match path {
        Path::Off => None,
        _ => simd::run_on(path, WindowTable { uncompressed: curve::serialize_g2(&hashed) }),
    };
    let Some(table) = table else {
        return lanes::map(secrets, 4, |secret| {
            test_panic::maybe_panic(test_panic::Site::SignMany);
            curve::encode_g2(&secret.sign_hashed(&hashed))
        });
    };
    let chunks: Vec<&[SecretScalar]> = secrets.chunks(8).collect();
    lanes::map(&chunks, 1, |chunk| {
        test_panic::maybe_panic(test_panic::Site::SignMany);
        PASSES.fetch_add(1, Ordering::Relaxed);
        let kernel = SignChunk {
            table: &table,
            scalars: std::array::from_fn(|lane| {
                chunk.get(lane).map_or(SPARE_LANE_SCALAR, SecretScalar::le_words)
            }),
        };
        let signatures = simd::run_on(path, &kernel).expect("the lane layer built the table");
        signatures[..chunk.len()].to_vec()
    })
    .concat()
}

/// `sign_many_on` on the path of this process's dispatch.
pub fn sign_many(secrets: &[SecretScalar], message: &[u8]) -> Vec<Signature> {
    sign_many_on(secrets, message, simd::current())
}
