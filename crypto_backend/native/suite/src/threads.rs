//! The worker threads: one rayon pool per process, sized by `set_threads` (from
//! `VALIDATOR_BLS_LANES`, default the usable cores). With one thread nothing is
//! spawned and all work runs on the calling thread. The pool is built lazily by
//! the first call that needs it and rebuilt when the size changes.

use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

static THREADS: AtomicUsize = AtomicUsize::new(1);
static POOL: Mutex<Option<(usize, Arc<ThreadPool>)>> = Mutex::new(None);

pub fn threads() -> usize {
    THREADS.load(Ordering::Relaxed)
}

pub fn set_threads(count: usize) {
    THREADS.store(count.max(1), Ordering::Relaxed);
    let mut pool = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if pool.as_ref().is_some_and(|(size, _)| *size != count) {
        // Dropping the last handle lets the old threads finish and exit.
        *pool = None;
    }
}

fn pool(size: usize) -> Arc<ThreadPool> {
    let mut slot = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((held, pool)) = slot.as_ref() {
        if *held == size {
            return pool.clone();
        }
    }
    let built = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(size)
            .thread_name(|index| format!("bls-worker-{index}"))
            .build()
            .expect("could not start the BLS worker threads"),
    );
    *slot = Some((size, built.clone()));
    built
}

/// `items.map(work)` in order, spread over the threads in tasks of at least
/// `min_len` items; on the calling thread with one thread or too few items. Never
/// rayon's global pool: only this pool, of the configured size, runs our work.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    min_len: usize,
    work: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    let size = threads();
    if size <= 1 || items.len() < 2 * min_len.max(1) {
        return items.iter().map(work).collect();
    }
    pool(size).install(|| items.par_iter().with_min_len(min_len.max(1)).map(work).collect())
}
