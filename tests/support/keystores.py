"""Small helpers shared by the keymanager tests: cheap keystores and a reference encryptor."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import crypto_backend
from keymanager.keystore import Pbkdf2Cost, encrypt_keystore

# Fast enough for dozens of keys per test; the real-cost vectors run separately.
CHEAP_KDF = Pbkdf2Cost(c=2)
PASSWORD = "correct horse battery staple"


def cheap_keystore_json(
    secret: int, password: str = PASSWORD, path: str = "m/12381/3600/0/0/0"
) -> bytes:
    return encrypt_keystore(secret, password, kdf=CHEAP_KDF, path=path).to_json()


def pubkey_of(secret: int) -> bytes:
    return crypto_backend.sk_to_pk(secret)


def craft_keystore(
    secret_bytes: bytes, password_bytes: bytes, pubkey_hex: str | None
) -> dict[str, Any]:
    """A pbkdf2 (c=2) keystore built straight from the ERC's steps, independent of keymanager."""
    salt, iv = os.urandom(32), os.urandom(16)
    key = hashlib.pbkdf2_hmac("sha256", password_bytes, salt, 2, 32)
    encryptor = Cipher(algorithms.AES(key[:16]), modes.CTR(iv)).encryptor()
    message = encryptor.update(secret_bytes) + encryptor.finalize()
    keystore: dict[str, Any] = {
        "crypto": {
            "kdf": {
                "function": "pbkdf2",
                "params": {"dklen": 32, "c": 2, "prf": "hmac-sha256", "salt": salt.hex()},
                "message": "",
            },
            "checksum": {
                "function": "sha256",
                "params": {},
                "message": hashlib.sha256(key[16:32] + message).hexdigest(),
            },
            "cipher": {
                "function": "aes-128-ctr",
                "params": {"iv": iv.hex()},
                "message": message.hex(),
            },
        },
        "description": "",
        "path": "m/12381/3600/0/0/0",
        "uuid": str(uuid.uuid4()),
        "version": 4,
    }
    if pubkey_hex is not None:
        keystore["pubkey"] = pubkey_hex
    return keystore


def dumps(document: dict[str, Any]) -> bytes:
    return json.dumps(document).encode()
