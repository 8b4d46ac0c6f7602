"""Local keystores: `keystores/0x<pubkey>.json` (EIP-2335, as imported) and their
passwords in `secrets/0x<pubkey>`, both 0600 in 0700 directories.

On import the password is written before the keystore and on delete the keystore is
removed before the password, so the keystore file is the commit point: a crash in
between leaves at most an unused password file, never a keystore that cannot be opened.
The listing (pubkey and derivation path of every keystore) is kept in memory and read
again only when `keystores/` changed on disk.

`LocalKeystores` does no locking and knows nothing of remote keys or settings:
`keymanager.store.ValidatorStore` holds the lock and applies the rules that span them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from keymanager.decrypt_pool import DecryptJob, decrypt_many
from keymanager.errors import (
    KeystoreError,
    KeystoreLoadError,
    MalformedKeystoreError,
    StoreCorruptionError,
    UnknownKeyError,
)
from keymanager.key_cache import KeyMaterial
from keymanager.keystore import Keystore, decrypt_keystore, parse_keystore
from keymanager.keystore_crypto import normalize_password
from keymanager.pubkeys import format_pubkey
from slashing_protection.durable import fsync_directory, remove_durably, write_durably

KEYSTORES_DIR_NAME = "keystores"
SECRETS_DIR_NAME = "secrets"
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700

_KEYSTORE_NAME = re.compile(r"(0x[0-9a-f]{96})\.json")
_LEFTOVER_TEMP_NAME = re.compile(r"0x[0-9a-f]{96}\.json\.tmp")


@dataclass(frozen=True)
class KeystoreInfo:
    """What GET /eth/v1/keystores shows for a local key, read without the password."""

    pubkey: bytes
    derivation_path: str
    # Every key in the directory can be deleted through the API.
    readonly: bool = False


@dataclass(frozen=True)
class PreparedImport:
    """A keystore already decrypted and checked, ready for `ValidatorStore.save_import`."""

    pubkey: bytes
    keystore: Keystore = field(repr=False)
    keystore_json: bytes = field(repr=False)
    password: str = field(repr=False)
    secret: int = field(repr=False)


def _keystore_bytes(keystore_json: object) -> bytes:
    if isinstance(keystore_json, str):
        try:
            return keystore_json.encode("utf-8")
        except UnicodeEncodeError:
            raise MalformedKeystoreError("malformed keystore: not valid Unicode") from None
    if isinstance(keystore_json, bytes | bytearray | memoryview):
        return bytes(keystore_json)
    raise MalformedKeystoreError(
        f"malformed keystore: expected JSON text, got {type(keystore_json).__name__}"
    )


def prepare_import(keystore_json: str | bytes, password: str) -> PreparedImport:
    """Parse and decrypt a keystore without touching the disk (see
    `ValidatorStore.prepare_import`)."""
    raw = _keystore_bytes(keystore_json)
    keystore = parse_keystore(raw)
    if keystore.pubkey is None:
        raise MalformedKeystoreError(
            "malformed keystore: it has no pubkey (this client stores and lists keys by it)"
        )
    normalize_password(password)  # refuses a password that cannot be stored as UTF-8
    secret = decrypt_keystore(keystore, password)
    return PreparedImport(
        pubkey=keystore.pubkey,
        keystore=keystore,
        keystore_json=raw,
        password=password,
        secret=secret,
    )


def prepare_imports(
    keystores: Sequence[tuple[str | bytes, str]], labels: Sequence[str]
) -> list[PreparedImport]:
    """`prepare_import` for several pairs, all or nothing, the KDFs on the decrypt pool (see
    `ValidatorStore.prepare_imports`)."""
    parsed: list[tuple[bytes, Keystore]] = []
    for name, (keystore_json, password) in zip(labels, keystores, strict=True):
        try:
            raw = _keystore_bytes(keystore_json)
            keystore = parse_keystore(raw)
            if keystore.pubkey is None:
                raise MalformedKeystoreError(
                    "malformed keystore: it has no pubkey (this client stores and lists "
                    "keys by it)"
                )
            if not isinstance(password, str):
                raise MalformedKeystoreError("the password must be text")
            normalize_password(password)
        except KeystoreError as error:
            raise type(error)(f"{name}: {error}") from None
        parsed.append((raw, keystore))
    jobs = [
        DecryptJob(label=name, keystore_json=raw, password=password)
        for name, (raw, _), (_, password) in zip(labels, parsed, keystores, strict=True)
    ]
    try:
        secrets = decrypt_many(jobs, progress=False)
    except KeystoreLoadError as error:
        # Its message names the label and what is wrong (wrong password, ...).
        raise KeystoreError(str(error)) from None
    return [
        PreparedImport(
            pubkey=keystore.pubkey,
            keystore=keystore,
            keystore_json=raw,
            password=password,
            secret=secret,
        )
        for (raw, keystore), (_, password), secret in zip(parsed, keystores, secrets, strict=True)
        if keystore.pubkey is not None
    ]


class LocalKeystores:
    """The keystore and password files of one validators directory (see the module
    docstring); the caller holds the store's lock around every call."""

    def __init__(self, validators_dir: Path) -> None:
        self.validators_dir = validators_dir
        self.keystores_dir = validators_dir / KEYSTORES_DIR_NAME
        self.secrets_dir = validators_dir / SECRETS_DIR_NAME
        self._infos: dict[bytes, KeystoreInfo] | None = None
        self._infos_signature: int | None = None
        # Changes whenever the listing may have changed, so a caller can cache what it
        # renders from it (the Keymanager API's GET /eth/v1/keystores answer).
        self.listing_version = 0

    # --- paths -------------------------------------------------------------

    def keystore_path(self, pubkey: bytes) -> Path:
        return self.keystores_dir / f"{format_pubkey(pubkey)}.json"

    def secret_path(self, pubkey: bytes) -> Path:
        return self.secrets_dir / format_pubkey(pubkey)

    # --- reading -----------------------------------------------------------

    def has(self, pubkey: bytes) -> bool:
        return os.path.lexists(self.keystore_path(pubkey))

    def pubkeys(self) -> set[bytes]:
        """Public keys of the keystores in `keystores/`; checks file names only."""
        try:
            entries = list(os.scandir(self.keystores_dir))
        except FileNotFoundError:
            return set()
        except OSError as error:
            raise StoreCorruptionError(f"{self.keystores_dir}: cannot list: {error}") from None
        pubkeys = set()
        for entry in entries:
            if _LEFTOVER_TEMP_NAME.fullmatch(entry.name):
                continue  # an interrupted durable write; the real file is intact or absent
            match = _KEYSTORE_NAME.fullmatch(entry.name)
            if match is None:
                raise StoreCorruptionError(
                    f"{entry.path}: unexpected file in {KEYSTORES_DIR_NAME}/ (only "
                    "0x<pubkey>.json written by a keystore import belongs there); move it away "
                    "or import it through the Keymanager API"
                )
            if not entry.is_file():
                raise StoreCorruptionError(f"{entry.path}: not a regular file")
            pubkeys.add(bytes.fromhex(match.group(1)[2:]))
        return pubkeys

    def infos(self, *, force_rescan: bool = False) -> dict[bytes, KeystoreInfo]:
        """Every keystore's listing entry, from memory unless `keystores/` changed."""
        signature = self._signature()
        if force_rescan or self._infos is None or signature != self._infos_signature:
            infos = {}
            for pubkey in self.pubkeys():
                _, keystore = self.read(pubkey)
                infos[pubkey] = KeystoreInfo(pubkey=pubkey, derivation_path=keystore.path)
            self._infos, self._infos_signature = infos, signature
            self.listing_version += 1
        return self._infos

    def read(self, pubkey: bytes) -> tuple[bytes, Keystore]:
        """The stored keystore's bytes and content, checked against its file name."""
        path = self.keystore_path(pubkey)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise UnknownKeyError(f"no keystore for {format_pubkey(pubkey)} ({path})") from None
        except OSError as error:
            raise StoreCorruptionError(f"{path}: cannot read: {error}") from None
        try:
            keystore = parse_keystore(raw)
        except KeystoreError as error:
            raise StoreCorruptionError(f"{path}: {error}") from None
        if keystore.pubkey != pubkey:
            named = "no pubkey" if keystore.pubkey is None else format_pubkey(keystore.pubkey)
            raise StoreCorruptionError(
                f"{path}: the file name says {format_pubkey(pubkey)} but the keystore holds {named}"
            )
        return raw, keystore

    def decrypt_job(self, pubkey: bytes) -> DecryptJob:
        raw, _ = self.read(pubkey)
        return DecryptJob(
            label=str(self.keystore_path(pubkey)),
            keystore_json=raw,
            password=self._read_password(pubkey),
        )

    def key_material(self, pubkey: bytes) -> KeyMaterial:
        """The keystore's bytes and its password, unparsed (the key cache compares the bytes
        with what it cached; `infos` has already checked every file)."""
        path = self.keystore_path(pubkey)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise UnknownKeyError(f"no keystore for {format_pubkey(pubkey)} ({path})") from None
        except OSError as error:
            raise StoreCorruptionError(f"{path}: cannot read: {error}") from None
        return KeyMaterial(keystore_json=raw, password=self._read_password(pubkey))

    def _read_password(self, pubkey: bytes) -> str:
        path = self.secret_path(pubkey)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise StoreCorruptionError(
                f"{path}: missing: no password for keystore {self.keystore_path(pubkey)}"
            ) from None
        except OSError as error:
            raise StoreCorruptionError(f"{path}: cannot read password: {error}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise StoreCorruptionError(f"{path}: password is not valid UTF-8") from None

    # --- writing -----------------------------------------------------------

    def save(self, prepared: PreparedImport) -> None:
        """Write the password, then the keystore (the commit point), durably."""
        pubkey = prepared.pubkey
        self.ensure_directories()
        listing_before = self._signature()
        write_durably(self.secret_path(pubkey), prepared.password.encode("utf-8"), mode=FILE_MODE)
        write_durably(self.keystore_path(pubkey), prepared.keystore_json, mode=FILE_MODE)
        info = KeystoreInfo(pubkey=pubkey, derivation_path=prepared.keystore.path)
        if self._infos is not None and self._infos_signature == listing_before:
            self._infos[pubkey] = info
            self._infos_signature = self._signature()
            self.listing_version += 1
        else:  # the directory changed under us too: rescan on the next listing
            self._infos = None

    def remove(self, pubkey: bytes) -> None:
        """Remove the keystore (the commit point), then its password, durably."""
        listing_before = self._signature()
        remove_durably(self.keystore_path(pubkey))
        if self._infos is not None and self._infos_signature == listing_before:
            self._infos.pop(pubkey, None)
            self._infos_signature = self._signature()
            self.listing_version += 1
        else:
            self._infos = None
        remove_durably(self.secret_path(pubkey))

    def ensure_directories(self) -> None:
        """The validators directory and both key directories, 0700 when created here."""
        for directory in (self.validators_dir, self.keystores_dir, self.secrets_dir):
            if directory.is_dir():
                continue
            directory.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.mkdir(directory, DIRECTORY_MODE)
            except FileExistsError:
                if not directory.is_dir():
                    raise StoreCorruptionError(
                        f"{directory}: exists and is not a directory"
                    ) from None
                continue
            os.chmod(directory, DIRECTORY_MODE)  # the umask may have narrowed mkdir's mode
            fsync_directory(directory.parent)

    def _signature(self) -> int | None:
        try:
            return os.stat(self.keystores_dir).st_mtime_ns
        except FileNotFoundError:
            return None
