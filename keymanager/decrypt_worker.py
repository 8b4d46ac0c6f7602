"""What runs inside a spawned decryption worker.

A worker imports only this module and `keymanager.keystore_crypto` (hashlib,
cryptography), so it is ready long before one scrypt derivation would finish.
The parent parses the keystores and checks the secrets against their pubkeys;
the worker only does the expensive part, the KDF, plus checksum and cipher.
"""

from __future__ import annotations

import ctypes
import os

from keymanager.keystore_crypto import SealedSecret, open_secret

# glibc mallopt(3) parameter numbers.
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def prepare_worker() -> None:
    """Keep scrypt's scratch memory (128 * n * r bytes: 256 MiB for n=2^18) between keys.

    glibc serves a block that large with a fresh mmap and unmaps it when freed,
    so every key would fault in and zero 256 MiB again (about a fifth of the
    key's time here). A worker process only decrypts and then exits, so it asks
    malloc to take memory from the heap and keep it. glibc only; elsewhere
    nothing changes. Never done in the long-running parent process.
    """
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
        mallopt = ctypes.CDLL(None).mallopt
    except (ValueError, OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)


def open_in_worker(sealed: SealedSecret, password: str) -> bytes:
    # KeystoreError (a wrong password) pickles back to the parent as itself.
    return open_secret(sealed, password)
