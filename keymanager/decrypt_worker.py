"""What runs inside a spawned decryption worker.

A worker imports only this module and `keymanager.keystore_crypto` (hashlib,
cryptography), so it is ready long before one scrypt derivation would finish.
The parent parses the keystores and checks the secrets against their pubkeys;
the worker only does the expensive part, the KDF, plus checksum and cipher.
"""

from __future__ import annotations

import ctypes
import os

from keymanager.keystore_crypto import KdfInput, ScryptInput, SealedSecret, open_secret

# glibc mallopt(3) parameter numbers.
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
# Room beside the scrypt scratch for the small allocations made between keys.
_SCRATCH_SLACK = 16 << 20
_GUARD_BYTES = 1 << 20


def scrypt_scratch_bytes(kdf: KdfInput) -> int:
    """Memory one scrypt derivation allocates in one block (OpenSSL: 128 * r * (n + p + 2))."""
    if isinstance(kdf, ScryptInput):
        return 128 * kdf.r * (kdf.n + kdf.p + 2)
    return 0


def prepare_worker(scratch_bytes: int = 0) -> None:
    """Keep scrypt's scratch memory (256 MiB for n=2^18) mapped from one key to the next.

    glibc serves a block that large with a fresh mmap and unmaps it when freed,
    so every key would fault in and zero 256 MiB again (measured here: 0.72 s
    per key in a plain process, 0.58 s once the memory is kept). A worker only
    decrypts and then exits, so it asks malloc to take memory from the heap and
    keep it. With `scratch_bytes`, it also reserves a free block a little larger
    than the scratch, fenced off from the top of the heap, so the small
    allocations made between keys are carved from its slack instead of shrinking
    the region the next key reuses. glibc only; elsewhere nothing changes. Never
    done in the long-running parent process.
    """
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
        libc = ctypes.CDLL(None)
        mallopt, malloc, free = libc.mallopt, libc.malloc, libc.free
    except (ValueError, OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    malloc.argtypes, malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    free.argtypes, free.restype = [ctypes.c_void_p], None
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    if scratch_bytes > 0:
        reserve = malloc(scratch_bytes + _SCRATCH_SLACK)  # pages untouched: nothing faults yet
        guard = malloc(_GUARD_BYTES)  # stays allocated for the worker's life
        if reserve and guard:
            free(reserve)


def open_in_worker(sealed: SealedSecret, password: str) -> bytes:
    # KeystoreError (a wrong password) pickles back to the parent as itself.
    return open_secret(sealed, password)
