//! The portable lane layer: plain u64 code, on every host.

use super::{LaneOps, MASK52};

/// Plain 64-bit integer code, on every host.
#[derive(Clone, Copy, Debug, Default)]
pub struct Portable;

#[inline(always)]
fn each(a: [u64; 8], b: [u64; 8], op: impl Fn(u64, u64) -> u64) -> [u64; 8] {
    let mut out = [0u64; 8];
    for lane in 0..8 {
        out[lane] = op(a[lane], b[lane]);
    }
    out
}

#[inline(always)]
fn product52(b: u64, c: u64) -> u128 {
    ((b & MASK52) as u128) * ((c & MASK52) as u128)
}

#[inline(always)]
fn mask_of(a: [u64; 8], b: [u64; 8], test: impl Fn(u64, u64) -> bool) -> u8 {
    let mut mask = 0u8;
    for lane in 0..8 {
        mask |= (test(a[lane], b[lane]) as u8) << lane;
    }
    mask
}

impl LaneOps for Portable {
    type V = [u64; 8];
    const INLINE_FIELD_OPS: bool = false;

    #[inline(always)]
    fn splat(self, value: u64) -> [u64; 8] {
        [value; 8]
    }
    #[inline(always)]
    fn load(self, lanes: &[u64; 8]) -> [u64; 8] {
        *lanes
    }
    #[inline(always)]
    fn store(self, vector: [u64; 8]) -> [u64; 8] {
        vector
    }
    #[inline(always)]
    fn add(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, u64::wrapping_add)
    }
    #[inline(always)]
    fn sub(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, u64::wrapping_sub)
    }
    #[inline(always)]
    fn and(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn or(self, a: [u64; 8], b: [u64; 8]) -> [u64; 8] {
        each(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn madd52lo(self, acc: [u64; 8], b: [u64; 8], c: [u64; 8]) -> [u64; 8] {
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let low = (product52(b[lane], c[lane]) as u64) & MASK52;
            out[lane] = acc[lane].wrapping_add(low);
        }
        out
    }
    #[inline(always)]
    fn madd52hi(self, acc: [u64; 8], b: [u64; 8], c: [u64; 8]) -> [u64; 8] {
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let high = (product52(b[lane], c[lane]) >> 52) as u64;
            out[lane] = acc[lane].wrapping_add(high);
        }
        out
    }
    #[inline(always)]
    fn shr<const N: u32>(self, a: [u64; 8]) -> [u64; 8] {
        a.map(|x| x >> N)
    }
    #[inline(always)]
    fn sra<const N: u32>(self, a: [u64; 8]) -> [u64; 8] {
        a.map(|x| ((x as i64) >> N) as u64)
    }
    #[inline(always)]
    fn shl<const N: u32>(self, a: [u64; 8]) -> [u64; 8] {
        a.map(|x| x << N)
    }
    #[inline(always)]
    fn eq_mask(self, a: [u64; 8], b: [u64; 8]) -> u8 {
        mask_of(a, b, |x, y| x == y)
    }
    #[inline(always)]
    fn lt_mask(self, a: [u64; 8], b: [u64; 8]) -> u8 {
        mask_of(a, b, |x, y| x < y)
    }
    #[inline(always)]
    fn select(self, mask: u8, when_clear: [u64; 8], when_set: [u64; 8]) -> [u64; 8] {
        // Branch-free: the mask may come from secret data (constant-time callers).
        // black_box hides where the mask came from: without it LLVM turns a scan of
        // a table by one-hot masks back into a table index (a secret memory index,
        // as valgrind showed in tests/crypto_backend/test_constant_time.py).
        let mask = std::hint::black_box(mask);
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let all = 0u64.wrapping_sub(((mask >> lane) & 1) as u64);
            out[lane] = (when_clear[lane] & !all) | (when_set[lane] & all);
        }
        out
    }
    #[inline(always)]
    fn permute2(self, a: [u64; 8], b: [u64; 8], index: [u64; 8]) -> [u64; 8] {
        let mut out = [0u64; 8];
        for lane in 0..8 {
            let source = if index[lane] & 8 == 0 { &a } else { &b };
            out[lane] = source[(index[lane] & 7) as usize];
        }
        out
    }
}

/// One lane in plain u64 code: the portable layer's field multiplication runs the
/// generic algorithm (`field::fpx8`) once per lane through it, so that a lane's nine
/// accumulators stay in registers instead of going through memory as eight-word
/// arrays; the operations are the same, lane by lane, so the results are too. Only
/// bit 0 of a mask means anything; `load` takes lane 0 and `store` fills lane 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneLane;

impl LaneOps for OneLane {
    type V = u64;

    #[inline(always)]
    fn splat(self, value: u64) -> u64 {
        value
    }
    #[inline(always)]
    fn load(self, lanes: &[u64; 8]) -> u64 {
        lanes[0]
    }
    #[inline(always)]
    fn store(self, vector: u64) -> [u64; 8] {
        let mut out = [0u64; 8];
        out[0] = vector;
        out
    }
    #[inline(always)]
    fn add(self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    #[inline(always)]
    fn sub(self, a: u64, b: u64) -> u64 {
        a.wrapping_sub(b)
    }
    #[inline(always)]
    fn and(self, a: u64, b: u64) -> u64 {
        a & b
    }
    #[inline(always)]
    fn or(self, a: u64, b: u64) -> u64 {
        a | b
    }
    #[inline(always)]
    fn madd52lo(self, acc: u64, b: u64, c: u64) -> u64 {
        acc.wrapping_add((product52(b, c) as u64) & MASK52)
    }
    #[inline(always)]
    fn madd52hi(self, acc: u64, b: u64, c: u64) -> u64 {
        acc.wrapping_add((product52(b, c) >> 52) as u64)
    }
    #[inline(always)]
    fn shr<const N: u32>(self, a: u64) -> u64 {
        a >> N
    }
    #[inline(always)]
    fn sra<const N: u32>(self, a: u64) -> u64 {
        ((a as i64) >> N) as u64
    }
    #[inline(always)]
    fn shl<const N: u32>(self, a: u64) -> u64 {
        a << N
    }
    #[inline(always)]
    fn eq_mask(self, a: u64, b: u64) -> u8 {
        (a == b) as u8
    }
    #[inline(always)]
    fn lt_mask(self, a: u64, b: u64) -> u8 {
        (a < b) as u8
    }
    #[inline(always)]
    fn select(self, mask: u8, when_clear: u64, when_set: u64) -> u64 {
        // Branch-free, as in `Portable::select`.
        let all = 0u64.wrapping_sub((std::hint::black_box(mask) & 1) as u64);
        (when_clear & !all) | (when_set & all)
    }
    /// Lane 0 is the only lane held: it comes from `a` or `b` by bit 3 of
    /// `index[0]`. The field operations run on this layer never move lanes.
    #[inline(always)]
    fn permute2(self, a: u64, b: u64, index: [u64; 8]) -> u64 {
        if index[0] & 8 == 0 {
            a
        } else {
            b
        }
    }
}
