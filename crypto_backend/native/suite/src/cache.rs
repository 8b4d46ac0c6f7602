//! The key cache: validated public keys as blst affine points, keyed by their 48
//! bytes, bounded (LRU), refusals remembered as `None`. Lookups take one lock for a
//! whole list; misses are decoded outside the lock, in parallel on the worker
//! threads when there are many, then inserted.

use crate::curve::{self, G1Affine, PUBKEY_LENGTH};
use crate::decode;
use lru::LruCache;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::Mutex;

/// Misses below this count are decoded on the calling thread (a hand-off to a
/// worker thread costs more than a few decodes).
const PARALLEL_DECODE_MIN: usize = 32;

pub struct KeyCache {
    inner: Mutex<Inner>,
}

struct Inner {
    map: LruCache<[u8; PUBKEY_LENGTH], Option<G1Affine>>,
    hits: u64,
    misses: u64,
}

/// Keys per task when many misses are decoded on the worker threads (eight
/// passes of the 8-lane kernel, or 64 blst decodes).
const KEYS_PER_TASK: usize = 64;

/// KeyValidate of each key: a canonical G1 point that is not the identity. The
/// decoding is the SIMD dispatch's (`decode::g1_many`, blst's own under `off`); the
/// identity is refused here, above the kernels, whatever path decoded it.
pub fn validate_keys(keys: &[[u8; PUBKEY_LENGTH]]) -> Vec<Option<G1Affine>> {
    let refs: Vec<&[u8]> = keys.iter().map(|key| &key[..]).collect();
    decode::g1_many(&refs)
        .into_iter()
        .map(|decoded| match decoded {
            Ok(point) if !curve::g1_affine_is_identity(&point) => Some(point),
            _ => None,
        })
        .collect()
}

impl KeyCache {
    pub fn new(maxsize: usize) -> Option<KeyCache> {
        let capacity = NonZeroUsize::new(maxsize)?;
        Some(KeyCache {
            inner: Mutex::new(Inner { map: LruCache::new(capacity), hits: 0, misses: 0 }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The validated point of each key (None: refused), in order.
    pub fn resolve(&self, keys: &[&[u8]]) -> Vec<Option<G1Affine>> {
        let mut found: Vec<Option<Option<G1Affine>>> = Vec::with_capacity(keys.len());
        let mut missing: HashMap<[u8; PUBKEY_LENGTH], Option<G1Affine>> = HashMap::new();
        {
            let mut inner = self.lock();
            for key in keys {
                let Ok(array) = <[u8; PUBKEY_LENGTH]>::try_from(*key) else {
                    found.push(Some(None)); // wrong length: refused, not worth a slot
                    continue;
                };
                match inner.map.get(&array) {
                    Some(point) => {
                        let point = *point;
                        inner.hits += 1;
                        found.push(Some(point));
                    }
                    None => {
                        if missing.insert(array, None).is_some() {
                            inner.hits += 1; // a repeat of a miss in this call
                        } else {
                            inner.misses += 1;
                        }
                        found.push(None);
                    }
                }
            }
        }
        if missing.is_empty() {
            return found.into_iter().map(|item| item.flatten()).collect();
        }
        let todo: Vec<[u8; PUBKEY_LENGTH]> = missing.keys().copied().collect();
        let decoded: Vec<Option<G1Affine>> = if todo.len() >= PARALLEL_DECODE_MIN {
            let tasks: Vec<&[[u8; PUBKEY_LENGTH]]> = todo.chunks(KEYS_PER_TASK).collect();
            crate::threads::map(&tasks, 1, |keys| validate_keys(keys)).concat()
        } else {
            validate_keys(&todo)
        };
        {
            let mut inner = self.lock();
            for (key, point) in todo.iter().zip(decoded.iter()) {
                inner.map.put(*key, *point);
                missing.insert(*key, *point);
            }
        }
        keys.iter()
            .zip(found)
            .map(|(key, item)| match item {
                Some(point) => point,
                None => <[u8; PUBKEY_LENGTH]>::try_from(*key)
                    .ok()
                    .and_then(|array| missing.get(&array).copied().flatten()),
            })
            .collect()
    }

    pub fn stats(&self) -> (u64, u64, usize, usize) {
        let inner = self.lock();
        (inner.hits, inner.misses, inner.map.len(), inner.map.cap().get())
    }

    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.map.clear();
        inner.hits = 0;
        inner.misses = 0;
    }
}
