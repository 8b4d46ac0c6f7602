//! A one-shot panic the tests arm to prove that a panic inside the extension (on a
//! worker thread or the calling thread) becomes a Python exception, never a verdict
//! or a missing signature. Disarmed, it costs one relaxed atomic load.

use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Site {
    None = 0,
    BatchChunk = 1,
    SignMany = 2,
    Verify = 3,
    KeyDecode = 4,
}

static ARMED: AtomicU8 = AtomicU8::new(Site::None as u8);

pub fn arm(site: Site) {
    ARMED.store(site as u8, Ordering::SeqCst);
}

pub fn parse(name: &str) -> Option<Site> {
    match name {
        "batch_chunk" => Some(Site::BatchChunk),
        "sign_many" => Some(Site::SignMany),
        "verify" => Some(Site::Verify),
        "key_decode" => Some(Site::KeyDecode),
        _ => None,
    }
}

pub fn maybe_panic(site: Site) {
    if ARMED.load(Ordering::Relaxed) == site as u8
        && ARMED
            .compare_exchange(site as u8, Site::None as u8, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    {
        panic!("test panic armed at this site");
    }
}
