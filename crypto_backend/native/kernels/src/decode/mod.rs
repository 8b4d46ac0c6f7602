//! Decoding many points through an 8-lane kernel, the part that does not depend on
//! the group: each input is first read on its own (byte rules, decided or a
//! candidate), the candidates are packed eight to a kernel pass (a short chunk
//! repeats its first candidate in the spare lanes), and lanes the kernel leaves
//! undecided, chunks too small for a pass and every input under `Path::Off` go to
//! the fallback decoder the caller passes (blst's, in the crate above). Verdicts keep
//! the inputs' order.

pub mod g1;
pub mod g2;

use crate::dispatch::{self, Kernel, Path};
use std::sync::atomic::{AtomicU64, Ordering};

pub type Decoded<T> = Result<T, &'static str>;

/// An input after its byte rules: decided, or a candidate for the kernel.
pub enum Read<T, C> {
    Done(Decoded<T>),
    Candidate(C),
}

/// One lane of a kernel pass.
pub enum Lane<T> {
    Decided(Decoded<T>),
    Undecided,
}

/// What the three flag bits of a compressed point (48 or 96 bytes) say, by
/// blst's rules: the compression bit must be set; with the infinity bit, only the
/// identity's one encoding (no other bit, every other byte zero) is valid.
pub enum Flags {
    Bad,
    Identity,
    Point { larger: bool },
}

pub fn read_flags(bytes: &[u8]) -> Flags {
    let flags = bytes[0];
    if flags & 0x80 == 0 {
        return Flags::Bad;
    }
    if flags & 0x40 != 0 {
        let rest_zero = flags & 0x3f == 0 && bytes[1..].iter().all(|&b| b == 0);
        return if rest_zero { Flags::Identity } else { Flags::Bad };
    }
    Flags::Point { larger: flags & 0x20 != 0 }
}

/// The lanes whose sign flag is set, as a lane mask.
pub fn sign_mask(flags: [bool; 8]) -> u8 {
    (0..8).fold(0u8, |bits, lane| bits | ((flags[lane] as u8) << lane))
}

/// Kernel passes and undecided lanes of one kernel, for the tests.
pub struct Counters {
    pub passes: AtomicU64,
    pub undecided: AtomicU64,
}

impl Counters {
    pub const fn new() -> Counters {
        Counters { passes: AtomicU64::new(0), undecided: AtomicU64::new(0) }
    }
}

impl Default for Counters {
    fn default() -> Self {
        Counters::new()
    }
}

/// Fewest candidates of a chunk worth a kernel pass on each path (below: the
/// fallback). The portable layer takes even one, so that the tests drive every
/// decode through it.
fn min_fill(path: Path) -> usize {
    match path {
        Path::Portable => 1,
        _ => 4,
    }
}

pub struct Decoder<'a, T, C, K> {
    pub read: &'a dyn Fn(&[u8]) -> Read<T, C>,
    pub kernel: &'a dyn Fn([C; 8]) -> K,
    pub fallback: &'a dyn Fn(&[u8]) -> Decoded<T>,
    pub counters: &'a Counters,
}

impl<T: Copy, C: Copy, K: Kernel<Output = [Lane<T>; 8]>> Decoder<'_, T, C, K> {
    pub fn decode_many_on(&self, inputs: &[&[u8]], path: Path) -> Vec<Decoded<T>> {
        if path == Path::Off {
            return inputs.iter().map(|input| (self.fallback)(input)).collect();
        }
        let mut out: Vec<Option<Decoded<T>>> = Vec::with_capacity(inputs.len());
        let mut pending: Vec<(usize, C)> = Vec::new();
        for (index, input) in inputs.iter().enumerate() {
            match (self.read)(input) {
                Read::Done(decoded) => out.push(Some(decoded)),
                Read::Candidate(candidate) => {
                    out.push(None);
                    pending.push((index, candidate));
                }
            }
        }
        for chunk in pending.chunks(8) {
            let lanes = if chunk.len() >= min_fill(path) {
                self.counters.passes.fetch_add(1, Ordering::Relaxed);
                let candidates = std::array::from_fn(|lane| chunk[lane.min(chunk.len() - 1)].1);
                dispatch::run_on(path, (self.kernel)(candidates))
            } else {
                None
            };
            for (lane, (index, _)) in chunk.iter().enumerate() {
                out[*index] = Some(match lanes.as_ref().map(|lanes| &lanes[lane]) {
                    Some(Lane::Decided(decoded)) => *decoded,
                    Some(Lane::Undecided) => {
                        self.counters.undecided.fetch_add(1, Ordering::Relaxed);
                        (self.fallback)(inputs[*index])
                    }
                    None => (self.fallback)(inputs[*index]),
                });
            }
        }
        out.into_iter().map(|item| item.expect("every input decided")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_blsts_rules() {
        let mut bytes = [0u8; 48];
        assert!(matches!(read_flags(&bytes), Flags::Bad), "compression bit clear");
        bytes[0] = 0xc0;
        assert!(matches!(read_flags(&bytes), Flags::Identity));
        bytes[47] = 1;
        assert!(matches!(read_flags(&bytes), Flags::Bad), "identity with a stray bit");
        bytes[47] = 0;
        bytes[0] = 0xe0;
        assert!(matches!(read_flags(&bytes), Flags::Bad), "identity with the sign bit");
        bytes[0] = 0xa0;
        assert!(matches!(read_flags(&bytes), Flags::Point { larger: true }));
        bytes[0] = 0x80;
        assert!(matches!(read_flags(&bytes), Flags::Point { larger: false }));
    }

    #[test]
    fn sign_mask_has_one_bit_per_lane() {
        assert_eq!(sign_mask([true, false, false, false, false, false, false, true]), 0x81);
        assert_eq!(sign_mask([false; 8]), 0);
    }
}
