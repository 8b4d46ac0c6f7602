//! `sign_many`'s work: the message hashed once by blst, then each key signed by
//! blst's constant-time multiplication (`Path::Off`), or eight keys a pass through
//! the constant-time 8-lane kernel (`bls_lanes::mul`) on the dispatch's lane layer.
//! A last chunk of fewer than eight keys fills its spare lanes with the public
//! scalar 1 and drops their outputs. The worker threads split the chunks as they
//! split the keys on the blst path. Every copy of a secret scalar a pass makes is
//! zeroed when the pass ends.

use crate::curve::{self, SecretScalar, SIGNATURE_LENGTH};
use crate::test_panic;
use crate::threads;
use bls_lanes::dispatch::{self, Path};
use bls_lanes::mul;
use std::sync::atomic::{AtomicU64, Ordering};
use zeroize::Zeroizing;

/// Keys one kernel pass signs.
const LANE_GROUP: usize = 8;

/// Kernel passes run, for the tests (that a call really went through the lanes).
pub static PASSES: AtomicU64 = AtomicU64::new(0);

pub type Signature = [u8; SIGNATURE_LENGTH];

/// The public scalar of the spare lanes of a short chunk.
const SPARE_LANE_SCALAR: [u64; 4] = [1, 0, 0, 0];

/// Keys' signatures of `message`, in order, on `path`.
pub fn sign_many_on(secrets: &[SecretScalar], message: &[u8], path: Path) -> Vec<Signature> {
    let hashed = curve::hash_to_g2(message, curve::DST);
    let table = match path {
        Path::Off => None,
        _ => mul::window_table_on(path, &curve::serialize_g2(&hashed)),
    };
    let Some(table) = table else {
        return threads::map(secrets, 4, |secret| {
            test_panic::maybe_panic(test_panic::Site::SignMany);
            curve::encode_g2(&secret.sign_hashed(&hashed))
        });
    };
    let chunks: Vec<&[SecretScalar]> = secrets.chunks(LANE_GROUP).collect();
    threads::map(&chunks, 1, |chunk| {
        test_panic::maybe_panic(test_panic::Site::SignMany);
        PASSES.fetch_add(1, Ordering::Relaxed);
        // Zeroed on drop; the kernel reads the scalars here, through a borrow, and
        // splits them here in place (their digits are as secret as they are).
        let mut scalars = Zeroizing::new(std::array::from_fn(|lane| {
            chunk.get(lane).map_or(SPARE_LANE_SCALAR, SecretScalar::le_words)
        }));
        let signatures =
            mul::signatures_on(path, &table, &mut scalars).expect("the lane layer built the table");
        signatures[..chunk.len()].to_vec()
    })
    .concat()
}

/// `sign_many_on` on the path of this process's dispatch; fewer keys than a lane group
/// sign on blst even under IFMA, since one 8-lane pass (its window table included) costs
/// more than signing them one by one: on a Zen 4 host one key took 3.3 ms against 0.37 ms.
/// The portable layer exists for tests, so there every key still goes through the lanes.
pub fn sign_many(secrets: &[SecretScalar], message: &[u8]) -> Vec<Signature> {
    let path = match dispatch::current() {
        Path::Ifma if secrets.len() < LANE_GROUP => Path::Off,
        path => path,
    };
    sign_many_on(secrets, message, path)
}
