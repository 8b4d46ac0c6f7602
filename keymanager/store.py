"""The validators directory: keystores, their passwords, per-key settings, remote keys.

Layout (docs/keymanager.md describes it for operators)::

    <validators-dir>/                      0700 when this store creates it
        keystores/0x<pubkey>.json          EIP-2335 keystore as imported, 0600
        secrets/0x<pubkey>                 its password (UTF-8 text), 0600
        validator_settings.json            settings and remote keys (keymanager.settings)

One room per concept: `local_keystores` (the keystore and password files, the listing),
`settings_store` (the settings file and per-key settings), `remote_keys`. This module is
the one object callers use, `ValidatorStore`, and holds what spans them: the lock, and the
rules between local and remote keys (a key is one or the other; only a known key has
settings; deleting a key drops its settings). Every file is written with `write_durably`
(temp file, fsync, rename, directory fsync).

Every public method takes `lock` (re-entrant), so concurrent callers (HTTP
handlers in threads) never interleave; a caller that needs several steps to be
atomic holds `store.lock` around them. The store assumes it is the only writer
of the directory while it runs (the validator holds the slashing-protection
lock on the same directory); changes made by other programs to `keystores/`
are noticed by the listing, which rescans when the directory changes.

Failures are loud: a file whose name disagrees with its pubkey, an unexpected
file in `keystores/`, a missing or unreadable password, a corrupt settings file
all raise `StoreCorruptionError` naming the file.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from keymanager.decrypt_pool import decrypt_many
from keymanager.errors import (
    DuplicateKeyError,
    KeystoreError,
    KeystoreLoadError,
    LocalRemoteConflictError,
    StoreCorruptionError,
    UnknownKeyError,
)
from keymanager.keystore import Keystore, decrypt_keystore
from keymanager.local_keystores import (
    DIRECTORY_MODE,
    FILE_MODE,
    KEYSTORES_DIR_NAME,
    SECRETS_DIR_NAME,
    KeystoreInfo,
    LocalKeystores,
    PreparedImport,
    prepare_import,
    prepare_imports,
)
from keymanager.pubkeys import format_pubkey
from keymanager.remote_keys import RemoteKey, RemoteKeys
from keymanager.settings import (
    KeySettings,
    check_gas_limit,
    check_graffiti,
    check_remote_url,
    parse_fee_recipient,
)
from keymanager.settings_store import SettingsStore


class ValidatorStore:
    """Keys and settings in one validators directory."""

    def __init__(self, validators_dir: Path | str) -> None:
        self.validators_dir = Path(validators_dir)
        self._local = LocalKeystores(self.validators_dir)
        self._settings = SettingsStore(self.validators_dir, self._local.ensure_directories)
        self._remote = RemoteKeys(self._settings)
        self.keystores_dir = self._local.keystores_dir
        self.secrets_dir = self._local.secrets_dir
        self.settings_path = self._settings.path
        self.lock = threading.RLock()

    # --- paths -------------------------------------------------------------

    def keystore_path(self, pubkey: bytes) -> Path:
        return self._local.keystore_path(pubkey)

    def secret_path(self, pubkey: bytes) -> Path:
        return self._local.secret_path(pubkey)

    # --- local keystores: reading ------------------------------------------

    def local_pubkeys(self) -> list[bytes]:
        """Public keys of the keystores in `keystores/`, sorted; checks file names only."""
        with self.lock:
            return sorted(self._local.pubkeys())

    def has_keystore(self, pubkey: bytes) -> bool:
        with self.lock:
            return self._local.has(pubkey)

    def list_keystores(self) -> list[KeystoreInfo]:
        """Every local keystore (pubkey, derivation path, readonly), sorted by pubkey.

        Served from memory; the files are read again only when `keystores/` changed.
        """
        with self.lock:
            return [info for _, info in sorted(self._local.infos().items())]

    def listing_version(self) -> int:
        """A number that changes whenever `list_keystores` may answer differently
        (rescanning `keystores/` first if it changed on disk)."""
        with self.lock:
            self._local.infos()
            return self._local.listing_version

    def list_keystores_versioned(self) -> tuple[int, list[KeystoreInfo]]:
        """`list_keystores` with the `listing_version` it belongs to."""
        with self.lock:
            infos = self.list_keystores()
            return self._local.listing_version, infos

    def keystore_info(self, pubkey: bytes) -> KeystoreInfo | None:
        with self.lock:
            return self._local.infos().get(pubkey)

    def read_keystore(self, pubkey: bytes) -> Keystore:
        """The stored keystore, checked against its file name; `UnknownKeyError` when absent."""
        with self.lock:
            _, keystore = self._local.read(pubkey)
            return keystore

    # --- local keystores: import and delete ---------------------------------

    def prepare_import(self, keystore_json: str | bytes, password: str) -> PreparedImport:
        """Parse and decrypt a keystore without touching the disk (and without the lock).

        Raises the `keymanager.keystore.KeystoreError` family: malformed or
        unsupported keystore, no pubkey, wrong password, secret that does not
        give the pubkey. Decryption is the slow part (the KDF), so an HTTP
        handler runs this first and holds the lock only for `save_import`.
        """
        return prepare_import(keystore_json, password)

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
        return prepare_imports(keystores, names)

    def save_import(self, prepared: PreparedImport) -> bytes:
        """Write a prepared keystore and its password durably; returns the pubkey.

        The keystore is stored byte for byte as given. Raises
        `DuplicateKeyError` when a keystore for the pubkey exists and
        `LocalRemoteConflictError` when it is a remote key; nothing is written then.
        """
        pubkey = prepared.pubkey
        with self.lock:
            if self._local.has(pubkey):
                raise DuplicateKeyError(f"a keystore for {format_pubkey(pubkey)} already exists")
            if pubkey in self._remote:
                raise LocalRemoteConflictError(
                    f"{format_pubkey(pubkey)} is a remote key; delete the remote key first"
                )
            self._local.save(prepared)
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
            if not self._local.has(pubkey):
                return False
            settings = self._settings.read()  # a corrupt settings file stops us before any change
            self._local.remove(pubkey)
            self._settings.forget(settings, pubkey)
            return True

    # --- local keystores: decryption ----------------------------------------

    def load_keystore(self, pubkey: bytes) -> int:
        """Decrypt one stored keystore with its stored password (in this process)."""
        with self.lock:
            job = self._local.decrypt_job(pubkey)
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
            settings = self._settings.read()
            infos = self._local.infos(force_rescan=True)
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
            jobs = [self._local.decrypt_job(pubkey) for pubkey in pubkeys]
            secrets = decrypt_many(jobs, processes=processes, progress=progress)
            return dict(zip(pubkeys, secrets, strict=True))

    # --- remote keys --------------------------------------------------------

    def remote_keys(self) -> list[RemoteKey]:
        with self.lock:
            return self._remote.all()

    def add_remote_key(self, pubkey: bytes, url: str) -> None:
        """Register a remote signer key; `DuplicateKeyError` if known, its subclass
        `LocalRemoteConflictError` if a local keystore holds it, `SettingsValueError` for a bad URL.
        """
        check_remote_url(url)
        with self.lock:
            if self._local.has(pubkey):
                raise LocalRemoteConflictError(
                    f"{format_pubkey(pubkey)} is a local keystore; delete it first"
                )
            self._remote.add(pubkey, url)

    def delete_remote_key(self, pubkey: bytes) -> bool:
        """Remove a remote key and its settings (one write); False when it was not there."""
        with self.lock:
            return self._remote.delete(pubkey)

    # --- per-key settings ---------------------------------------------------

    def is_known(self, pubkey: bytes) -> bool:
        """True for a local keystore or a remote key."""
        with self.lock:
            return self._local.has(pubkey) or pubkey in self._remote

    def settings(self, pubkey: bytes) -> KeySettings:
        """The key's settings (None fields: the process-wide default applies)."""
        with self.lock:
            self._require_known(pubkey)
            return self._settings.of(pubkey)

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
        with self.lock:
            self._require_known(pubkey)
            self._settings.update(pubkey, **changes)

    def _require_known(self, pubkey: bytes) -> None:
        if not self._local.has(pubkey) and pubkey not in self._remote:
            raise UnknownKeyError(f"{format_pubkey(pubkey)} is not a key of this validator")


__all__ = [
    "DIRECTORY_MODE",
    "FILE_MODE",
    "KEYSTORES_DIR_NAME",
    "SECRETS_DIR_NAME",
    "KeystoreInfo",
    "PreparedImport",
    "RemoteKey",
    "ValidatorStore",
]
