"""The validators directory: keystores, their passwords, per-key settings, remote keys.

Layout (docs/keymanager.md describes it for operators)::

    <validators-dir>/                      0700 when this store creates it
        keystores/0x<pubkey>.json          EIP-2335 keystore as imported, 0600
        secrets/0x<pubkey>                 its password (UTF-8 text), 0600
        validator_settings.json            settings and remote keys (keymanager.settings)

Every file is written with `write_durably` (temp file, fsync, rename, directory
fsync). On import the password is written before the keystore and on delete
the keystore is removed before the password, so the keystore file is the
commit point: a crash in between leaves at most an unused password file, never
a keystore that cannot be opened.

Every public method takes `lock` (re-entrant), so concurrent callers (HTTP
handlers in threads via `asyncio.to_thread`) never interleave; a caller that
needs several steps to be atomic holds `store.lock` around them. The store
assumes it is the only writer of the directory while it runs (the validator
holds the slashing-protection lock on the same directory); changes made by
other programs to `keystores/` are noticed by the listing, which rescans when
the directory changes.

Failures are loud: a file whose name disagrees with its pubkey, an unexpected
file in `keystores/`, a missing or unreadable password, a corrupt settings file
all raise `StoreCorruptionError` naming the file.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from keymanager.decrypt_pool import DecryptJob, decrypt_many
from keymanager.errors import (
    DuplicateKeyError,
    KeystoreError,
    KeystoreLoadError,
    LocalRemoteConflictError,
    MalformedKeystoreError,
    StoreCorruptionError,
    UnknownKeyError,
)
from keymanager.keystore import Keystore, decrypt_keystore, parse_keystore
from keymanager.keystore_crypto import normalize_password
from keymanager.pubkeys import format_pubkey
from keymanager.settings import (
    EMPTY_SETTINGS,
    SETTINGS_FILE_NAME,
    KeySettings,
    RemoteKeyEntry,
    SettingsFile,
    check_gas_limit,
    check_graffiti,
    check_remote_url,
    parse_fee_recipient,
    parse_settings,
)
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
class RemoteKey:
    """A key signed for by a remote signer (EIP-3030) at `url`."""

    pubkey: bytes
    url: str
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


class ValidatorStore:
    """Keys and settings in one validators directory."""

    def __init__(self, validators_dir: Path | str) -> None:
        self.validators_dir = Path(validators_dir)
        self.keystores_dir = self.validators_dir / KEYSTORES_DIR_NAME
        self.secrets_dir = self.validators_dir / SECRETS_DIR_NAME
        self.settings_path = self.validators_dir / SETTINGS_FILE_NAME
        self.lock = threading.RLock()
        self._infos: dict[bytes, KeystoreInfo] | None = None
        self._infos_signature: int | None = None
        # Changes whenever the listing may have changed, so a caller can cache what it
        # renders from it (the Keymanager API's GET /eth/v1/keystores answer).
        self._listing_version = 0
        self._settings: SettingsFile | None = None
        self._settings_signature: tuple[int, int, int] | None = None

    # --- paths -------------------------------------------------------------

    def keystore_path(self, pubkey: bytes) -> Path:
        return self.keystores_dir / f"{format_pubkey(pubkey)}.json"

    def secret_path(self, pubkey: bytes) -> Path:
        return self.secrets_dir / format_pubkey(pubkey)

    # --- local keystores: reading ------------------------------------------

    def local_pubkeys(self) -> list[bytes]:
        """Public keys of the keystores in `keystores/`, sorted; checks file names only."""
        with self.lock:
            return sorted(self._scan_keystore_names())

    def has_keystore(self, pubkey: bytes) -> bool:
        with self.lock:
            return os.path.lexists(self.keystore_path(pubkey))

    def list_keystores(self) -> list[KeystoreInfo]:
        """Every local keystore (pubkey, derivation path, readonly), sorted by pubkey.

        Served from memory; the files are read again only when `keystores/` changed.
        """
        with self.lock:
            return [info for _, info in sorted(self._keystore_infos().items())]

    def listing_version(self) -> int:
        """A number that changes whenever `list_keystores` may answer differently
        (rescanning `keystores/` first if it changed on disk)."""
        with self.lock:
            self._keystore_infos()
            return self._listing_version

    def list_keystores_versioned(self) -> tuple[int, list[KeystoreInfo]]:
        """`list_keystores` with the `listing_version` it belongs to."""
        with self.lock:
            infos = self.list_keystores()
            return self._listing_version, infos

    def keystore_info(self, pubkey: bytes) -> KeystoreInfo | None:
        with self.lock:
            return self._keystore_infos().get(pubkey)

    def read_keystore(self, pubkey: bytes) -> Keystore:
        """The stored keystore, checked against its file name; `UnknownKeyError` when absent."""
        with self.lock:
            _, keystore = self._read_keystore_file(pubkey)
            return keystore

    # --- local keystores: import and delete ---------------------------------

    def prepare_import(self, keystore_json: str | bytes, password: str) -> PreparedImport:
        """Parse and decrypt a keystore without touching the disk (and without the lock).

        Raises the `keymanager.keystore.KeystoreError` family: malformed or
        unsupported keystore, no pubkey, wrong password, secret that does not
        give the pubkey. Decryption is the slow part (the KDF), so an HTTP
        handler runs this first and holds the lock only for `save_import`.
        """
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
        self, keystores: Sequence[tuple[str | bytes, str]], *, labels: Sequence[str] | None = None
    ) -> list[PreparedImport]:
        """`prepare_import` for several (keystore JSON, password) pairs, all or nothing.

        Every keystore is parsed first; the KDFs then run on the decrypt pool
        (`decrypt_many`: worker processes when the work is worth it, this
        thread otherwise). Raises `KeystoreError` for the first pair that
        fails, its message starting with the pair's label (default
        ``keystores[i]``). Touches neither the disk nor the lock.
        """
        names = list(labels) if labels is not None else [
            f"keystores[{index}]" for index in range(len(keystores))
        ]
        if len(names) != len(keystores):
            raise ValueError("one label per keystore")
        parsed: list[tuple[bytes, Keystore]] = []
        for name, (keystore_json, password) in zip(names, keystores, strict=True):
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
            for name, (raw, _), (_, password) in zip(names, parsed, keystores, strict=True)
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
            for (raw, keystore), (_, password), secret in zip(
                parsed, keystores, secrets, strict=True
            )
            if keystore.pubkey is not None
        ]

    def save_import(self, prepared: PreparedImport) -> bytes:
        """Write a prepared keystore and its password durably; returns the pubkey.

        The keystore is stored byte for byte as given. Raises
        `DuplicateKeyError` when a keystore for the pubkey exists and
        `LocalRemoteConflictError` when it is a remote key; nothing is written then.
        """
        pubkey = prepared.pubkey
        with self.lock:
            if self.has_keystore(pubkey):
                raise DuplicateKeyError(f"a keystore for {format_pubkey(pubkey)} already exists")
            if pubkey in self._read_settings().remote_keys:
                raise LocalRemoteConflictError(
                    f"{format_pubkey(pubkey)} is a remote key; delete the remote key first"
                )
            self._ensure_directories()
            listing_before = self._keystores_signature()
            # Password first: the keystore file is what makes the key exist.
            write_durably(
                self.secret_path(pubkey), prepared.password.encode("utf-8"), mode=FILE_MODE
            )
            write_durably(self.keystore_path(pubkey), prepared.keystore_json, mode=FILE_MODE)
            self._remember_keystore(
                KeystoreInfo(pubkey=pubkey, derivation_path=prepared.keystore.path),
                listing_before,
            )
            return pubkey

    def import_keystore(self, keystore_json: str | bytes, password: str) -> bytes:
        """Decrypt and check a keystore, then store it with its password; returns the pubkey."""
        return self.save_import(self.prepare_import(keystore_json, password))

    def delete_keystore(self, pubkey: bytes) -> bool:
        """Remove a local keystore, its password and its settings; False when there was none.

        Only the files go: stopping the key from signing and keeping its
        slashing-protection history are the caller's job, before this call.
        """
        with self.lock:
            keystore_path = self.keystore_path(pubkey)
            if not os.path.lexists(keystore_path):
                return False
            settings = self._read_settings()  # a corrupt settings file stops us before any change
            listing_before = self._keystores_signature()
            remove_durably(keystore_path)
            self._forget_keystore(pubkey, listing_before)
            remove_durably(self.secret_path(pubkey))
            if pubkey in settings.validators:
                remaining = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
                self._write_settings(settings.model_copy(update={"validators": remaining}))
            return True

    # --- local keystores: decryption ----------------------------------------

    def load_keystore(self, pubkey: bytes) -> int:
        """Decrypt one stored keystore with its stored password (in this process)."""
        with self.lock:
            job = self._decrypt_job(pubkey)
        try:
            return decrypt_keystore(job.keystore_json, job.password)
        except KeystoreError as error:
            raise KeystoreLoadError(f"{job.label}: {error}") from None

    def load_all(
        self,
        *,
        include_disabled: bool = False,
        processes: int | None = None,
        progress: bool | None = None,
    ) -> dict[bytes, int]:
        """Decrypt every local keystore with its password: pubkey -> secret key.

        Keys whose settings say `enabled: false` are left out unless
        `include_disabled`. Decryption runs on a pool of `processes` spawned
        workers (default: every usable core) with a progress bar on a terminal.
        Fails closed: any bad file raises (`StoreCorruptionError`,
        `KeystoreLoadError`) naming it, and no key is returned.
        """
        with self.lock:
            settings = self._read_settings()
            infos = self._keystore_infos(force_rescan=True)
            conflicts = sorted(set(infos) & set(settings.remote_keys))
            if conflicts:
                raise StoreCorruptionError(
                    f"{self.settings_path}: {format_pubkey(conflicts[0])} is both a remote key "
                    f"and a local keystore ({self.keystore_path(conflicts[0])}); remove one"
                )
            pubkeys = [
                pubkey
                for pubkey in sorted(infos)
                if include_disabled or settings.validators.get(pubkey, KeySettings()).enabled
            ]
            jobs = [self._decrypt_job(pubkey) for pubkey in pubkeys]
            secrets = decrypt_many(jobs, processes=processes, progress=progress)
            return dict(zip(pubkeys, secrets, strict=True))

    # --- remote keys --------------------------------------------------------

    def remote_keys(self) -> list[RemoteKey]:
        with self.lock:
            return [
                RemoteKey(pubkey=pubkey, url=entry.url)
                for pubkey, entry in sorted(self._read_settings().remote_keys.items())
            ]

    def add_remote_key(self, pubkey: bytes, url: str) -> None:
        """Register a remote signer key; `DuplicateKeyError` if known, its subclass
        `LocalRemoteConflictError` if a local keystore holds it, `SettingsValueError` for a bad URL.
        """
        check_remote_url(url)
        with self.lock:
            if self.has_keystore(pubkey):
                raise LocalRemoteConflictError(
                    f"{format_pubkey(pubkey)} is a local keystore; delete it first"
                )
            settings = self._read_settings()
            if pubkey in settings.remote_keys:
                raise DuplicateKeyError(f"remote key {format_pubkey(pubkey)} already exists")
            remote = {**settings.remote_keys, pubkey: RemoteKeyEntry(url=url)}
            self._write_settings(settings.model_copy(update={"remote_keys": remote}))

    def delete_remote_key(self, pubkey: bytes) -> bool:
        """Remove a remote key and its settings (one write); False when it was not there."""
        with self.lock:
            settings = self._read_settings()
            if pubkey not in settings.remote_keys:
                return False
            remote = {pk: e for pk, e in settings.remote_keys.items() if pk != pubkey}
            validators = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
            self._write_settings(
                settings.model_copy(update={"remote_keys": remote, "validators": validators})
            )
            return True

    # --- per-key settings ---------------------------------------------------

    def is_known(self, pubkey: bytes) -> bool:
        """True for a local keystore or a remote key."""
        with self.lock:
            return self.has_keystore(pubkey) or pubkey in self._read_settings().remote_keys

    def settings(self, pubkey: bytes) -> KeySettings:
        """The key's settings (None fields: the process-wide default applies)."""
        with self.lock:
            settings = self._read_settings()
            self._require_known(pubkey, settings)
            return settings.validators.get(pubkey, KeySettings())

    def set_fee_recipient(self, pubkey: bytes, address: str | bytes) -> None:
        """`address`: 0x + 40 hex digits or 20 bytes; the zero address is refused."""
        self._update(pubkey, fee_recipient=parse_fee_recipient(address))

    def set_gas_limit(self, pubkey: bytes, gas_limit: int) -> None:
        self._update(pubkey, gas_limit=check_gas_limit(gas_limit))

    def set_graffiti(self, pubkey: bytes, graffiti: str) -> None:
        self._update(pubkey, graffiti=check_graffiti(graffiti))

    def set_enabled(self, pubkey: bytes, enabled: bool) -> None:
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool, got {type(enabled).__name__}")
        self._update(pubkey, enabled=enabled)

    def delete_fee_recipient(self, pubkey: bytes) -> None:
        self._update(pubkey, fee_recipient=None)

    def delete_gas_limit(self, pubkey: bytes) -> None:
        self._update(pubkey, gas_limit=None)

    def delete_graffiti(self, pubkey: bytes) -> None:
        self._update(pubkey, graffiti=None)

    def _update(self, pubkey: bytes, **changes: object) -> None:
        # Values arrive checked by the setters; model_copy does not validate again.
        with self.lock:
            settings = self._read_settings()
            self._require_known(pubkey, settings)
            current = settings.validators.get(pubkey, KeySettings())
            updated = current.model_copy(update=changes)
            if updated == current:
                return
            validators = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
            if not updated.is_default():
                validators[pubkey] = updated
            self._write_settings(settings.model_copy(update={"validators": validators}))

    def _require_known(self, pubkey: bytes, settings: SettingsFile) -> None:
        if not self.has_keystore(pubkey) and pubkey not in settings.remote_keys:
            raise UnknownKeyError(f"{format_pubkey(pubkey)} is not a key of this validator")

    # --- internals: settings file -------------------------------------------

    def _read_settings(self) -> SettingsFile:
        try:
            stat = os.stat(self.settings_path)
        except FileNotFoundError:
            self._settings, self._settings_signature = None, None
            return EMPTY_SETTINGS
        except OSError as error:
            raise StoreCorruptionError(f"{self.settings_path}: cannot read: {error}") from None
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if self._settings is None or signature != self._settings_signature:
            try:
                data = self.settings_path.read_bytes()
            except OSError as error:
                raise StoreCorruptionError(f"{self.settings_path}: cannot read: {error}") from None
            self._settings = parse_settings(data, self.settings_path)
            self._settings_signature = signature
        return self._settings

    def _write_settings(self, settings: SettingsFile) -> None:
        self._ensure_directories()
        write_durably(self.settings_path, settings.to_json(), mode=FILE_MODE)
        stat = os.stat(self.settings_path)
        self._settings = settings
        self._settings_signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)

    # --- internals: keystore files ------------------------------------------

    def _scan_keystore_names(self) -> set[bytes]:
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

    def _read_keystore_file(self, pubkey: bytes) -> tuple[bytes, Keystore]:
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

    def _decrypt_job(self, pubkey: bytes) -> DecryptJob:
        raw, _ = self._read_keystore_file(pubkey)
        return DecryptJob(
            label=str(self.keystore_path(pubkey)),
            keystore_json=raw,
            password=self._read_password(pubkey),
        )

    def _keystores_signature(self) -> int | None:
        try:
            return os.stat(self.keystores_dir).st_mtime_ns
        except FileNotFoundError:
            return None

    def _keystore_infos(self, *, force_rescan: bool = False) -> dict[bytes, KeystoreInfo]:
        signature = self._keystores_signature()
        if force_rescan or self._infos is None or signature != self._infos_signature:
            infos = {}
            for pubkey in self._scan_keystore_names():
                _, keystore = self._read_keystore_file(pubkey)
                infos[pubkey] = KeystoreInfo(pubkey=pubkey, derivation_path=keystore.path)
            self._infos, self._infos_signature = infos, signature
            self._listing_version += 1
        return self._infos

    def _remember_keystore(self, info: KeystoreInfo, listing_before: int | None) -> None:
        if self._infos is not None and self._infos_signature == listing_before:
            self._infos[info.pubkey] = info
            self._infos_signature = self._keystores_signature()
            self._listing_version += 1
        else:  # the directory changed under us too: rescan on the next listing
            self._infos = None

    def _forget_keystore(self, pubkey: bytes, listing_before: int | None) -> None:
        if self._infos is not None and self._infos_signature == listing_before:
            self._infos.pop(pubkey, None)
            self._infos_signature = self._keystores_signature()
            self._listing_version += 1
        else:
            self._infos = None

    def _ensure_directories(self) -> None:
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
