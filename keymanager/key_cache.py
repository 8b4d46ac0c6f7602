"""The key cache: every decrypted secret of a validators directory in one file,
`key-cache.json`, so that a restart costs one memory-hard KDF instead of one per keystore.

File (JSON, mode 0600, replaced durably like every file of the store)::

    {"version": 1,
     "kdf": {"function": "scrypt", "n": 262144, "r": 8, "p": 1, "salt": "<32 bytes hex>"},
     "cipher": {"function": "aes-256-gcm", "nonce": "<12 bytes hex>"},
     "entries": [{"pubkey": "0x...", "keystore_sha256": "<hex>"}, ...],   sorted by pubkey
     "ciphertext": "<hex>"}

The plaintext is the entries' 32-byte secret keys, concatenated in entry order. The
associated data of AES-GCM is the canonical JSON of every field but `ciphertext`, so
the list of keys, the hash of each keystore file and the KDF parameters cannot be
changed without the tag failing.

The cache key is scrypt (the salt and cost in the file, fresh salt at every write) over
SHA-256 of the sorted, distinct EIP-2335-normalized passwords of the cached keys, each
length-prefixed. Only someone holding every one of those passwords can derive it, and
each guess costs one scrypt, so the file gives an attacker nothing that the keystores
beside it do not (docs/keymanager.md argues it against EIP-2335's threat model).
No fast hash of a password is stored anywhere: a plain SHA-256 of a password in the file
would let a stolen cache be brute-forced at hash speed, skipping the scrypt.

What the cache may give, `open_cache` decides against the keystores on disk: an entry is
used only when a keystore for its pubkey exists now with exactly the bytes that were
cached. A changed or removed password changes the key, so the tag fails and the whole
cache is refused (`KeyCacheError`): the caller then decrypts the keystores, which
reports a wrong password instead of hiding it.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from keymanager.keystore_crypto import normalize_password
from keymanager.pubkeys import format_pubkey
from slashing_protection.durable import write_durably

KEY_CACHE_FILE_NAME = "key-cache.json"
CACHE_VERSION = 1
SECRET_LENGTH = 32
NONCE_LENGTH = 12
SALT_LENGTH = 32
# A cached file bigger than this is not one we wrote (10,000 keys make about 1.5 MB).
MAX_CACHE_BYTES = 64 << 20
_PASSWORDS_DOMAIN = b"validator key cache v1 passwords\x00"


@dataclass(frozen=True)
class CacheKdf:
    """The scrypt cost of the cache key; the default is EIP-2335's standard keystore cost."""

    n: int = 2**18
    r: int = 8
    p: int = 1


STANDARD_CACHE_KDF = CacheKdf()


class KeyCacheError(Exception):
    """The cache cannot be used (absent, damaged, written for other passwords); the caller
    falls back to the keystores."""


@dataclass(frozen=True)
class KeyMaterial:
    """What binds a cached secret to the directory: the keystore bytes and its password."""

    keystore_json: bytes
    password: str


def keystore_digest(keystore_json: bytes) -> str:
    return hashlib.sha256(keystore_json).hexdigest()


def _passwords_digest(passwords: Iterable[str]) -> bytes:
    digest = hashlib.sha256(_PASSWORDS_DOMAIN)
    for password in sorted({normalize_password(password) for password in passwords}):
        digest.update(struct.pack(">Q", len(password)))
        digest.update(password)
    return digest.digest()


def _derive_key(passwords: Iterable[str], salt: bytes, kdf: CacheKdf) -> bytes:
    scrypt = Scrypt(salt=salt, length=32, n=kdf.n, r=kdf.r, p=kdf.p)
    return scrypt.derive(_passwords_digest(passwords))


def _associated_data(header: Mapping[str, object]) -> bytes:
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode("ascii")


def write_cache(
    path: Path,
    secrets: Mapping[bytes, int],
    material: Mapping[bytes, KeyMaterial],
    *,
    kdf: CacheKdf = STANDARD_CACHE_KDF,
) -> None:
    """Replace the cache at `path` with `secrets` (pubkey -> secret key), each bound to its
    keystore bytes and password in `material`; durable, mode 0600."""
    pubkeys = sorted(secrets)
    salt, nonce = os.urandom(SALT_LENGTH), os.urandom(NONCE_LENGTH)
    header: dict[str, object] = {
        "version": CACHE_VERSION,
        "kdf": {"function": "scrypt", "n": kdf.n, "r": kdf.r, "p": kdf.p, "salt": salt.hex()},
        "cipher": {"function": "aes-256-gcm", "nonce": nonce.hex()},
        "entries": [
            {
                "pubkey": format_pubkey(pubkey),
                "keystore_sha256": keystore_digest(material[pubkey].keystore_json),
            }
            for pubkey in pubkeys
        ],
    }
    key = _derive_key((material[pubkey].password for pubkey in pubkeys), salt, kdf)
    plaintext = b"".join(secrets[pubkey].to_bytes(SECRET_LENGTH, "big") for pubkey in pubkeys)
    ciphertext = AESGCM(key).encrypt(nonce, plaintext, _associated_data(header))
    document = dict(header, ciphertext=ciphertext.hex())
    write_durably(path, json.dumps(document).encode("ascii"), mode=0o600)


@dataclass(frozen=True)
class OpenedCache:
    """The usable part of a cache: `secrets` of keys whose keystore is on disk unchanged;
    `stale` counts entries left out (keystore gone or changed)."""

    secrets: dict[bytes, int]
    stale: int


_Parsed = tuple[dict[str, object], CacheKdf, bytes, bytes, bytes, list[tuple[bytes, str]]]


def _parse(raw: bytes) -> _Parsed:
    try:
        document = json.loads(raw)
        if not isinstance(document, dict) or document.get("version") != CACHE_VERSION:
            raise KeyCacheError("not a version 1 key cache")
        kdf_field, cipher_field = document["kdf"], document["cipher"]
        if kdf_field["function"] != "scrypt" or cipher_field["function"] != "aes-256-gcm":
            raise KeyCacheError("unknown KDF or cipher")
        n, r, p = (kdf_field[name] for name in ("n", "r", "p"))
        if not all(type(value) is int and value > 0 for value in (n, r, p)):
            raise KeyCacheError("bad scrypt parameters")
        if 128 * n * r > 1 << 30 or n * r * p > 1 << 25:
            raise KeyCacheError("scrypt parameters beyond what this client writes")
        salt, nonce = bytes.fromhex(kdf_field["salt"]), bytes.fromhex(cipher_field["nonce"])
        ciphertext = bytes.fromhex(document["ciphertext"])
        entries = []
        for entry in document["entries"]:
            pubkey_hex = entry["pubkey"]
            if not (isinstance(pubkey_hex, str) and pubkey_hex.startswith("0x")):
                raise KeyCacheError("bad pubkey")
            pubkey = bytes.fromhex(pubkey_hex[2:])
            digest = entry["keystore_sha256"]
            if len(pubkey) != 48 or not isinstance(digest, str):
                raise KeyCacheError("bad entry")
            entries.append((pubkey, digest))
    except KeyCacheError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise KeyCacheError(f"malformed ({type(error).__name__}: {error})") from None
    if len(nonce) != NONCE_LENGTH or len(salt) != SALT_LENGTH:
        raise KeyCacheError("bad salt or nonce length")
    if [pubkey for pubkey, _ in entries] != sorted({pubkey for pubkey, _ in entries}):
        raise KeyCacheError("entries not sorted or duplicated")
    header = {name: value for name, value in document.items() if name != "ciphertext"}
    return header, CacheKdf(n=n, r=r, p=p), salt, nonce, ciphertext, entries


def open_cache(path: Path, on_disk: Mapping[bytes, KeyMaterial]) -> OpenedCache:
    """Decrypt the cache at `path` (one scrypt) and keep what the keystores on disk
    (`on_disk`: pubkey -> its keystore bytes and password now) still vouch for.

    Raises `KeyCacheError` when there is no cache or it cannot be trusted: unreadable,
    malformed, written under other passwords, or altered (the AES-GCM tag fails).
    """
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_CACHE_BYTES + 1)
    except FileNotFoundError:
        raise KeyCacheError("no key cache") from None
    except OSError as error:
        raise KeyCacheError(f"cannot read: {error}") from None
    if len(raw) > MAX_CACHE_BYTES:
        raise KeyCacheError("too large")
    header, kdf, salt, nonce, ciphertext, entries = _parse(raw)
    # Passwords of the cached keys still on disk: a removed key whose password another key
    # shares leaves the key derivable; a removed or changed unique password does not.
    passwords = [on_disk[pubkey].password for pubkey, _ in entries if pubkey in on_disk]
    key = _derive_key(passwords, salt, kdf)
    try:
        plaintext = AESGCM(key).decrypt(nonce, ciphertext, _associated_data(header))
    except InvalidTag:
        raise KeyCacheError(
            "it does not open with the current passwords (a password changed, a key was "
            "removed, or the file was altered)"
        ) from None
    if len(plaintext) != SECRET_LENGTH * len(entries):
        raise KeyCacheError("secret count differs from the entries")
    secrets: dict[bytes, int] = {}
    stale = 0
    for index, (pubkey, digest) in enumerate(entries):
        material = on_disk.get(pubkey)
        if material is None or keystore_digest(material.keystore_json) != digest:
            stale += 1  # never hand out a key whose keystore is gone or was replaced
            continue
        chunk = plaintext[index * SECRET_LENGTH : (index + 1) * SECRET_LENGTH]
        secrets[pubkey] = int.from_bytes(chunk, "big")
    return OpenedCache(secrets=secrets, stale=stale)


def cache_kdf_cost(kdf: CacheKdf) -> float:
    """The cache key's work in units of one standard scrypt (as `keystore.estimated_cost`)."""
    return kdf.n * kdf.r * kdf.p / (2**18 * 8)
