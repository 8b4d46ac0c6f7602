"""EIP-2335 BLS12-381 keystores: typed parsing, decryption and encryption.

Supported modules, as the ERC defines them: the `scrypt` and `pbkdf2`
(hmac-sha256) KDFs, the `sha256` checksum and the `aes-128-ctr` cipher.
Anything else is refused with `UnsupportedKeystoreError`. The secret must be a
BLS12-381 secret key (32 bytes) and, when the keystore names a `pubkey`, the
secret must give exactly that public key.

The cryptographic steps themselves are in `keymanager.keystore_crypto`
(hashlib and cryptography primitives); this module is the format around them.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

import crypto_backend
from keymanager.errors import (
    InvalidSecretError,
    KeystoreError,
    MalformedKeystoreError,
    PubkeyMismatchError,
    UnsupportedKeystoreError,
)
from keymanager.errors import WrongPasswordError as WrongPasswordError  # re-exported
from keymanager.keystore_crypto import (
    Pbkdf2Input,
    ScryptInput,
    SealedSecret,
    open_secret,
    seal_secret,
)
from keymanager.keystore_crypto import normalize_password as normalize_password  # re-exported
from keymanager.pubkeys import format_pubkey, parse_pubkey

KEYSTORE_VERSION = 4
SECRET_LENGTH = 32
# The decryption key is split in two 16-byte halves: AES key, checksum input.
MIN_DKLEN = 32
# Keystores arrive over HTTP: bound the work a single one can demand.
MAX_SCRYPT_MEMORY = 1 << 30  # bytes; 128 * n * r (the standard 2^18, 8 needs 256 MiB)
MAX_SCRYPT_WORK = 1 << 25  # n * r * p; 16 times the standard 2^18 * 8 * 1
MAX_PBKDF2_ROUNDS = 1 << 24  # 64 times the standard 2^18
MAX_KEYSTORE_BYTES = 1 << 20


# --- hex fields ------------------------------------------------------------

_HEX = re.compile(r"(?:0[xX])?((?:[0-9a-fA-F]{2})*)")


def _hex_parser(*, exact: int | None = None, max_length: int = 1024) -> Any:
    def parse(value: object) -> bytes:
        if isinstance(value, bytes):
            raw = value
        elif isinstance(value, str):
            match = _HEX.fullmatch(value)
            if match is None:
                raise ValueError("must be a string of hex digit pairs")
            raw = bytes.fromhex(match.group(1))
        else:
            raise ValueError(f"must be a hex string, got {type(value).__name__}")
        if exact is not None and len(raw) != exact:
            raise ValueError(f"must be {exact} bytes, got {len(raw)}")
        if not 0 < len(raw) <= max_length:
            raise ValueError(f"must be 1 to {max_length} bytes, got {len(raw)}")
        return raw

    return parse


def _parse_keystore_pubkey(value: object) -> bytes:
    if isinstance(value, bytes) and len(value) == 48:
        return value
    if not isinstance(value, str):
        raise ValueError(f"must be a hex string, got {type(value).__name__}")
    return parse_pubkey(value, require_prefix=False)


_AS_HEX = PlainSerializer(lambda raw: raw.hex(), return_type=str)
Salt = Annotated[bytes, PlainValidator(_hex_parser()), _AS_HEX]
Iv = Annotated[bytes, PlainValidator(_hex_parser(exact=16)), _AS_HEX]
Digest = Annotated[bytes, PlainValidator(_hex_parser(exact=32)), _AS_HEX]
EncryptedSecret = Annotated[bytes, PlainValidator(_hex_parser(exact=SECRET_LENGTH)), _AS_HEX]
KeystorePubkey = Annotated[bytes, PlainValidator(_parse_keystore_pubkey), _AS_HEX]


# --- the keystore model ----------------------------------------------------


class _Params(BaseModel):
    # Unknown KDF or cipher parameters could change what the function computes.
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


class _Section(BaseModel):
    # Tools add descriptive fields (`name`, ...) around the crypto; ignore those.
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class ScryptParams(_Params):
    dklen: StrictInt
    n: StrictInt
    r: StrictInt
    p: StrictInt
    salt: Salt

    @model_validator(mode="after")
    def _check_cost(self) -> ScryptParams:
        _check_dklen(self.dklen)
        if self.n < 2 or self.n & (self.n - 1):
            raise ValueError(f"scrypt n must be a power of two above 1, got {self.n}")
        if self.r < 1 or self.p < 1:
            raise ValueError(f"scrypt r and p must be positive, got r={self.r} p={self.p}")
        if 128 * self.n * self.r > MAX_SCRYPT_MEMORY:
            raise ValueError(
                f"scrypt n={self.n} r={self.r} needs more than {MAX_SCRYPT_MEMORY >> 20} MiB"
            )
        if self.n * self.r * self.p > MAX_SCRYPT_WORK:
            raise ValueError(
                f"scrypt n*r*p={self.n * self.r * self.p} exceeds the limit {MAX_SCRYPT_WORK}"
            )
        return self


class Pbkdf2Params(_Params):
    dklen: StrictInt
    c: StrictInt
    prf: Literal["hmac-sha256"]
    salt: Salt

    @model_validator(mode="after")
    def _check_cost(self) -> Pbkdf2Params:
        _check_dklen(self.dklen)
        if not 1 <= self.c <= MAX_PBKDF2_ROUNDS:
            raise ValueError(f"pbkdf2 c must be 1 to {MAX_PBKDF2_ROUNDS}, got {self.c}")
        return self


def _check_dklen(dklen: int) -> None:
    if not MIN_DKLEN <= dklen <= 1024:
        raise ValueError(f"dklen must be {MIN_DKLEN} to 1024, got {dklen}")


class ScryptKdf(_Section):
    function: Literal["scrypt"]
    params: ScryptParams
    message: StrictStr


class Pbkdf2Kdf(_Section):
    function: Literal["pbkdf2"]
    params: Pbkdf2Params
    message: StrictStr


Kdf = Annotated[ScryptKdf | Pbkdf2Kdf, Field(discriminator="function")]


class NoParams(_Params):
    pass


class Sha256Checksum(_Section):
    function: Literal["sha256"]
    params: NoParams
    message: Digest


class AesCtrParams(_Params):
    iv: Iv


class Aes128CtrCipher(_Section):
    function: Literal["aes-128-ctr"]
    params: AesCtrParams
    message: EncryptedSecret


class KeystoreCrypto(_Section):
    kdf: Kdf
    checksum: Sha256Checksum
    cipher: Aes128CtrCipher


class Keystore(_Section):
    """An EIP-2335 version 4 keystore. Field order is the order deposit-cli writes."""

    crypto: KeystoreCrypto
    description: StrictStr = ""
    pubkey: KeystorePubkey | None = None
    path: StrictStr
    uuid: UUID
    version: Literal[4]

    def to_json(self) -> bytes:
        return self.model_dump_json(indent=4, exclude_none=True).encode()

    def sealed(self) -> SealedSecret:
        """The parts decryption needs, as plain values (what a decryption worker receives)."""
        crypto = self.crypto
        return SealedSecret(
            kdf=_kdf_input(crypto.kdf),
            checksum=crypto.checksum.message,
            iv=crypto.cipher.params.iv,
            ciphertext=crypto.cipher.message,
        )


def _kdf_input(kdf: ScryptKdf | Pbkdf2Kdf) -> ScryptInput | Pbkdf2Input:
    if isinstance(kdf, ScryptKdf):
        scrypt = kdf.params
        return ScryptInput(salt=scrypt.salt, dklen=scrypt.dklen, n=scrypt.n, r=scrypt.r, p=scrypt.p)
    pbkdf2 = kdf.params
    return Pbkdf2Input(salt=pbkdf2.salt, dklen=pbkdf2.dklen, c=pbkdf2.c)


# --- parsing ---------------------------------------------------------------

_SUPPORTED = {
    ("crypto", "kdf"): ("kdf function", "scrypt, pbkdf2"),
    ("crypto", "kdf", "pbkdf2", "params", "prf"): ("pbkdf2 prf", "hmac-sha256"),
    ("crypto", "checksum", "function"): ("checksum function", "sha256"),
    ("crypto", "cipher", "function"): ("cipher function", "aes-128-ctr"),
    ("version",): ("keystore version", str(KEYSTORE_VERSION)),
}


def parse_keystore(data: str | bytes) -> Keystore:
    """Parse keystore JSON; raises `MalformedKeystoreError` or `UnsupportedKeystoreError`."""
    if not isinstance(data, str | bytes):
        raise MalformedKeystoreError(
            f"malformed keystore: expected JSON text, got {type(data).__name__}"
        )
    if len(data) > MAX_KEYSTORE_BYTES:
        raise MalformedKeystoreError(
            f"malformed keystore: {len(data)} bytes is over the {MAX_KEYSTORE_BYTES} limit"
        )
    try:
        return Keystore.model_validate_json(data)
    except ValidationError as error:
        raise _keystore_error(error) from None


def _keystore_error(error: ValidationError) -> KeystoreError:
    problems = error.errors(include_url=False)
    unsupported = []
    for problem in problems:
        location = tuple(str(part) for part in problem["loc"])
        kind = problem["type"]
        if location in _SUPPORTED and kind in ("union_tag_invalid", "literal_error"):
            what, supported = _SUPPORTED[location]
            found = problem.get("input")
            if kind == "union_tag_invalid" and isinstance(found, dict):
                found = found.get("function")
            # A value of the wrong JSON type ("4" for 4) is malformed, not unsupported.
            expected_type = int if location == ("version",) else str
            if type(found) is expected_type:
                unsupported.append(f"unsupported {what} {found!r} (supported: {supported})")
    if unsupported:
        return UnsupportedKeystoreError("; ".join(unsupported))
    if problems and problems[0]["type"] == "json_invalid":
        return MalformedKeystoreError(f"malformed keystore: not valid JSON ({problems[0]['msg']})")
    described = []
    for problem in problems[:4]:
        where = ".".join(str(part) for part in problem["loc"])
        message = problem["msg"].removeprefix("Value error, ")
        described.append(f"{where}: {message}" if where else message)
    more = f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""
    return MalformedKeystoreError("malformed keystore: " + "; ".join(described) + more)


# --- decryption ------------------------------------------------------------


def _public_key(secret: int) -> bytes:
    try:
        return crypto_backend.sk_to_pk(secret)
    except crypto_backend.BlsError as error:
        raise InvalidSecretError(f"the secret is not a usable BLS secret key: {error}") from None


def checked_secret(secret_bytes: bytes, expected_pubkey: bytes | None) -> int:
    """The secret key in `secret_bytes`, refused unless it gives `expected_pubkey` (when named).

    Raises `InvalidSecretError` for zero or out-of-range secrets and
    `PubkeyMismatchError` when the public key differs.
    """
    secret = int.from_bytes(secret_bytes, "big")
    pubkey = _public_key(secret)
    if expected_pubkey is not None and pubkey != expected_pubkey:
        raise PubkeyMismatchError(
            f"the keystore names pubkey {format_pubkey(expected_pubkey)} but its secret "
            f"gives {format_pubkey(pubkey)}"
        )
    return secret


def decrypt_keystore(keystore: Keystore | str | bytes, password: str) -> int:
    """The BLS secret key held in `keystore`.

    Raises `WrongPasswordError` when the checksum does not match,
    `PubkeyMismatchError` when the secret does not give the keystore's pubkey,
    `InvalidSecretError` for a zero or out-of-range secret, and the parse errors
    of `parse_keystore` for JSON input.
    """
    if not isinstance(keystore, Keystore):
        keystore = parse_keystore(keystore)
    return checked_secret(open_secret(keystore.sealed(), password), keystore.pubkey)


# --- encryption ------------------------------------------------------------


@dataclass(frozen=True)
class ScryptCost:
    n: int
    r: int = 8
    p: int = 1


@dataclass(frozen=True)
class Pbkdf2Cost:
    c: int


KdfCost = ScryptCost | Pbkdf2Cost

# The EIP-2335 and deposit-cli default: about 256 MiB and a second per key.
STANDARD_SCRYPT = ScryptCost(n=2**18, r=8, p=1)
STANDARD_PBKDF2 = Pbkdf2Cost(c=2**18)
# DEVNET ONLY. A password behind this KDF falls to brute force almost at once;
# it exists so a local test chain with many keys starts in a blink.
DEVNET_INSECURE_KDF = Pbkdf2Cost(c=1024)


def _kdf_module(cost: KdfCost, salt: bytes) -> ScryptKdf | Pbkdf2Kdf:
    try:
        if isinstance(cost, ScryptCost):
            return ScryptKdf(
                function="scrypt",
                params=ScryptParams(dklen=32, n=cost.n, r=cost.r, p=cost.p, salt=salt),
                message="",
            )
        return Pbkdf2Kdf(
            function="pbkdf2",
            params=Pbkdf2Params(dklen=32, c=cost.c, prf="hmac-sha256", salt=salt),
            message="",
        )
    except ValidationError as error:
        raise KeystoreError(f"invalid KDF cost {cost}: {error.errors()[0]['msg']}") from None


def encrypt_keystore(
    secret: int,
    password: str,
    *,
    kdf: KdfCost = STANDARD_SCRYPT,
    path: str = "",
    description: str = "",
) -> Keystore:
    """A new keystore holding `secret` under `password` (fresh salt, IV and UUID).

    `kdf` defaults to the standard scrypt n=2^18. `DEVNET_INSECURE_KDF` is for
    devnet and test keys only: it makes a keystore that offers no protection
    against guessing the password, so never use it for a key that holds stake.
    """
    pubkey = _public_key(secret)
    kdf_module = _kdf_module(kdf, os.urandom(32))
    sealed = seal_secret(
        secret.to_bytes(SECRET_LENGTH, "big"), password, _kdf_input(kdf_module), os.urandom(16)
    )
    return Keystore(
        crypto=KeystoreCrypto(
            kdf=kdf_module,
            checksum=Sha256Checksum(function="sha256", params=NoParams(), message=sealed.checksum),
            cipher=Aes128CtrCipher(
                function="aes-128-ctr",
                params=AesCtrParams(iv=sealed.iv),
                message=sealed.ciphertext,
            ),
        ),
        description=description,
        pubkey=pubkey,
        path=path,
        uuid=uuid.uuid4(),
        version=4,
    )


def estimated_cost(keystore: Keystore) -> float:
    """Rough decryption work in units of one standard scrypt (n=2^18, r=8, p=1) derivation."""
    kdf = keystore.crypto.kdf
    if isinstance(kdf, ScryptKdf):
        return kdf.params.n * kdf.params.r * kdf.params.p / (2**18 * 8)
    # Measured here: PBKDF2-SHA256 with c=2^18 costs about a tenth of that scrypt.
    return kdf.params.c / 2**18 * 0.1
