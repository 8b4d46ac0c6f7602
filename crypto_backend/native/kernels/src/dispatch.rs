//! The SIMD dispatch: which code runs the lane kernels, set once at import from
//! `VALIDATOR_BLS_SIMD` (crypto_backend/simd.py) and read by every call.
//!
//! `off` runs blst's own code only (the native core of before, no lane kernel);
//! `portable` runs the lane kernels on the portable layer (tests, any host);
//! `avx512ifma` runs them on the intrinsics. `auto` picks `avx512ifma` where the CPU
//! has it and `off` elsewhere; `require` is `avx512ifma` or an error.

pub use crate::lane::Kernel;
use crate::lane::Portable;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Off = 0,
    Portable = 1,
    Ifma = 2,
}

static PATH: AtomicU8 = AtomicU8::new(Path::Off as u8);

impl Path {
    pub fn name(self) -> &'static str {
        match self {
            Path::Off => "none",
            Path::Portable => "portable",
            Path::Ifma => "avx512ifma",
        }
    }

    pub fn from_name(name: &str) -> Option<Path> {
        match name {
            "none" | "off" => Some(Path::Off),
            "portable" => Some(Path::Portable),
            "avx512ifma" => Some(Path::Ifma),
            _ => None,
        }
    }
}

pub fn ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::lane::Ifma::detect().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Apply a `VALIDATOR_BLS_SIMD` mode; the path it chose, or why it cannot.
pub fn configure(mode: &str) -> Result<Path, String> {
    let path = match mode {
        "auto" => {
            if ifma_available() {
                Path::Ifma
            } else {
                Path::Off
            }
        }
        "off" => Path::Off,
        "portable" => Path::Portable,
        "require" => {
            if !ifma_available() {
                return Err("VALIDATOR_BLS_SIMD=require, but this CPU has no AVX-512 IFMA \
                            (avx512f and avx512ifma); use auto, off or portable"
                    .into());
            }
            Path::Ifma
        }
        other => {
            return Err(format!(
                "VALIDATOR_BLS_SIMD must be auto, off, portable or require, not {other:?}"
            ))
        }
    };
    PATH.store(path as u8, Ordering::SeqCst);
    Ok(path)
}

pub fn current() -> Path {
    match PATH.load(Ordering::Relaxed) {
        1 => Path::Portable,
        2 => Path::Ifma,
        _ => Path::Off,
    }
}

/// Run `kernel` on the lane layer of `path`; None for `Off` (the caller uses blst) or
/// for `Ifma` on a CPU without it.
pub fn run_on<K: Kernel>(path: Path, kernel: K) -> Option<K::Output> {
    match path {
        Path::Off => None,
        Path::Portable => Some(kernel.run(Portable)),
        Path::Ifma => {
            #[cfg(target_arch = "x86_64")]
            {
                let token = crate::lane::Ifma::detect()?;
                Some(token.run(kernel))
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                None
            }
        }
    }
}

/// Runs kernels one after another, for sequences of kernel entries (the hash to G2's
/// stages): a `Path` runs each on its layer; the cost report's runner counts them.
pub trait Runner {
    fn run<K: Kernel>(&mut self, kernel: K) -> Option<K::Output>;
}

impl Runner for Path {
    fn run<K: Kernel>(&mut self, kernel: K) -> Option<K::Output> {
        run_on(*self, kernel)
    }
}
