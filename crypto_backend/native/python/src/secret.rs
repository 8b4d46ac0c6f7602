//! Secret keys cross from Python as `int`s and are read straight into a zeroed-on-drop
//! buffer, with no intermediate Python object (no `to_bytes`, no shifted copies).
//!
//! Soundness: `_PyLong_AsByteArray` is called with the GIL held, on an object that
//! was checked to be an `int` (so the cast to `PyLongObject` is valid), with a
//! 32-byte buffer and n = 32; it writes at most n bytes and returns -1 (with an
//! exception set) when the value is negative or does not fit.

use crate::curve::SecretScalar;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};
use zeroize::Zeroizing;

pub enum SecretError {
    Type(String),
    Range,
}

pub fn extract(value: &Bound<'_, PyAny>) -> Result<SecretScalar, SecretError> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        let name =
            value.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "?".into());
        return Err(SecretError::Type(format!("a secret key must be an int, not {name}")));
    }
    let mut buffer = Zeroizing::new([0u8; 32]);
    // SAFETY: see the module comment.
    let status = unsafe {
        ffi::_PyLong_AsByteArray(
            value.as_ptr() as *mut ffi::PyLongObject,
            buffer.as_mut_ptr(),
            32,
            0, // big-endian
            0, // unsigned: negative values fail
        )
    };
    if status != 0 {
        // Overflow or a negative value: out of range, whatever Python says.
        let _ = PyErr::take(value.py());
        return Err(SecretError::Range);
    }
    SecretScalar::from_be_bytes(&buffer).ok_or(SecretError::Range)
}
