"""EIP-2335's cryptographic steps on bytes: password bytes, decryption key, checksum, cipher.

Apart from the JSON format (`keymanager.keystore`) because the spawned
decryption workers import only this: hashlib and cryptography, no pydantic, so
a worker is ready in a fraction of the time one key's scrypt takes. Primitives
come from `hashlib` (PBKDF2, SHA-256) and `cryptography` (scrypt, AES).
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from keymanager.errors import KeystoreError, WrongPasswordError


@dataclass(frozen=True)
class ScryptInput:
    salt: bytes
    dklen: int
    n: int
    r: int
    p: int


@dataclass(frozen=True)
class Pbkdf2Input:
    """PBKDF2 with HMAC-SHA256, the only PRF EIP-2335 names."""

    salt: bytes
    dklen: int
    c: int


KdfInput = ScryptInput | Pbkdf2Input


@dataclass(frozen=True)
class SealedSecret:
    """What decryption needs from a keystore, already checked by the parser."""

    kdf: KdfInput
    checksum: bytes
    iv: bytes
    ciphertext: bytes = field(repr=False)


def _is_control(char: str) -> bool:
    code = ord(char)
    return code <= 0x1F or 0x7F <= code <= 0x9F


def normalize_password(password: str) -> bytes:
    """EIP-2335 password bytes: NFKD, then C0, C1 and Delete removed, then UTF-8."""
    if not isinstance(password, str):
        raise KeystoreError(f"password must be text, got {type(password).__name__}")
    decomposed = unicodedata.normalize("NFKD", password)
    kept = "".join(char for char in decomposed if not _is_control(char))
    try:
        return kept.encode("utf-8")
    except UnicodeEncodeError:
        raise KeystoreError("password is not valid Unicode (it holds a lone surrogate)") from None


def derive_decryption_key(kdf: KdfInput, password: bytes) -> bytes:
    if isinstance(kdf, ScryptInput):
        return Scrypt(salt=kdf.salt, length=kdf.dklen, n=kdf.n, r=kdf.r, p=kdf.p).derive(password)
    return hashlib.pbkdf2_hmac("sha256", password, kdf.salt, kdf.c, kdf.dklen)


def checksum(decryption_key: bytes, ciphertext: bytes) -> bytes:
    return hashlib.sha256(decryption_key[16:32] + ciphertext).digest()


def aes_128_ctr(decryption_key: bytes, iv: bytes, data: bytes) -> bytes:
    # CTR mode is its own inverse: the same call encrypts and decrypts.
    transform = Cipher(algorithms.AES(decryption_key[:16]), modes.CTR(iv)).encryptor()
    return transform.update(data) + transform.finalize()


def open_secret(sealed: SealedSecret, password: str) -> bytes:
    """The plaintext secret; `WrongPasswordError` when the checksum does not match."""
    decryption_key = derive_decryption_key(sealed.kdf, normalize_password(password))
    if not hmac.compare_digest(checksum(decryption_key, sealed.ciphertext), sealed.checksum):
        raise WrongPasswordError("wrong password: the keystore checksum does not match")
    return aes_128_ctr(decryption_key, sealed.iv, sealed.ciphertext)


def seal_secret(secret: bytes, password: str, kdf: KdfInput, iv: bytes) -> SealedSecret:
    decryption_key = derive_decryption_key(kdf, normalize_password(password))
    ciphertext = aes_128_ctr(decryption_key, iv, secret)
    return SealedSecret(
        kdf=kdf, checksum=checksum(decryption_key, ciphertext), iv=iv, ciphertext=ciphertext
    )
