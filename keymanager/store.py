"""The validators directory: keystores, their passwords, per-key settings, remote keys.

Layout (docs/keymanager.md describes it for operators)::

    <validators-dir>/                      0700 when this store creates it
        keystores/0x<pubkey>.json          EIP-2335 keystore as imported, 0600
        secrets/0x<pubkey>                 its password (UTF-8 text), 0600
        validator_settings.json            settings and remote keys (keymanager.settings)
        key-cache.json                     decrypted secrets under one scrypt (keymanager.key_cache)

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

import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import crypto_backend
from keymanager.decrypt_pool import DecryptJob, decrypt_many
from keymanager.errors import (
    DuplicateKeyError,
    KeystoreError,
    KeystoreLoadError,
    LocalRemoteConflictError,
    StoreCorruptionError,
    StoreError,
    UnknownKeyError,
)
from keymanager.key_cache import (
    KEY_CACHE_FILE_NAME,
    STANDARD_CACHE_KDF,
    CacheKdf,
    KeyCacheError,
    KeyMaterial,
    cache_kdf_cost,
    open_cache,
    write_cache,
)
from keymanager.keystore import Keystore, decrypt_keystore, estimated_cost, parse_keystore
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
from slashing_protection.durable import remove_durably

log = logging.getLogger("keymanager.store")


class ValidatorStore:
    """Keys and settings in one validators directory."""

    def __init__(
        self, validators_dir: Path | str, *, key_cache_kdf: CacheKdf = STANDARD_CACHE_KDF
    ) -> None:
        self.validators_dir = Path(validators_dir)
        self.key_cache_path = self.validators_dir / KEY_CACHE_FILE_NAME
        # Tests lower it; a smaller cost than the keystores' own would weaken them.
        self.key_cache_kdf = key_cache_kdf
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
            cached = self._cached_secrets_for_rewrite()
            self._local.remove(pubkey)
            self._settings.forget(settings, pubkey)
            self._rewrite_cache_without(cached, pubkey)
            return True

    def _cached_secrets_for_rewrite(self) -> dict[bytes, int] | None:
        """The cache's usable secrets, read while every key's password is still on disk;
        None when there is no usable cache."""
        if not self.key_cache_path.exists():
            return None
        try:
            return open_cache(self.key_cache_path, self._material(self._local.pubkeys())).secrets
        except (KeyCacheError, StoreError) as error:
            log.warning("key cache %s not usable (%s)", self.key_cache_path, error)
            return None

    def _rewrite_cache_without(self, cached: dict[bytes, int] | None, pubkey: bytes) -> None:
        """Keep the cache honest after a delete: the deleted key's secret leaves the file
        (rewritten under the remaining passwords), or the file goes."""
        if cached is None:
            if remove_durably(self.key_cache_path):
                log.warning("key cache %s removed: it could not be rewritten", self.key_cache_path)
            return
        cached.pop(pubkey, None)
        try:
            material = self._material(cached)
            write_cache(self.key_cache_path, cached, material, kdf=self.key_cache_kdf)
        except (OSError, StoreError) as error:
            log.warning(
                "key cache %s: rewrite failed (%s), removing it", self.key_cache_path, error
            )
            remove_durably(self.key_cache_path)

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
        use_cache: bool = True,
    ) -> dict[bytes, int]:
        """Decrypt every local keystore with its password: pubkey -> secret key.

        Keys whose settings say `enabled: false` are left out unless
        `include_disabled`. With `use_cache`, keys are taken from the key cache
        (`key-cache.json`, one scrypt for all of them) where it holds them for the
        exact keystore on disk; the others are decrypted and the cache rewritten. A
        cache that cannot be used is logged and ignored, never fatal. Decryption runs
        on a pool of `processes` spawned workers (default: every usable core) with a
        progress bar on a terminal; each phase's time is logged.
        Fails closed: any bad file raises (`StoreCorruptionError`,
        `KeystoreLoadError`) naming it, and no key is returned.
        """
        with self.lock:
            started = time.perf_counter()
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
            material = self._material(infos)
            log.info(
                "read %d keystore(s) and their passwords in %.2f s",
                len(infos),
                time.perf_counter() - started,
            )
            cached: dict[bytes, int] = {}
            stale = 0
            cache_opened = False
            if use_cache and self.key_cache_path.exists():
                phase = time.perf_counter()
                try:
                    opened = open_cache(self.key_cache_path, material)
                    cached = self._checked(opened.secrets)
                except KeyCacheError as error:
                    log.warning(
                        "key cache %s not used: %s; decrypting the keystores",
                        self.key_cache_path,
                        error,
                    )
                else:
                    cache_opened = True
                    stale = opened.stale
                    log.info(
                        "key cache: %d key(s) in %.2f s (%d stale entr%s dropped)",
                        len(cached),
                        time.perf_counter() - phase,
                        stale,
                        "y" if stale == 1 else "ies",
                    )
            to_decrypt = [pubkey for pubkey in pubkeys if pubkey not in cached]
            phase = time.perf_counter()
            jobs = [self._local.decrypt_job(pubkey) for pubkey in to_decrypt]
            decrypted = dict(
                zip(
                    to_decrypt,
                    decrypt_many(jobs, processes=processes, progress=progress),
                    strict=True,
                )
            )
            if jobs:
                log.info(
                    "decrypted %d keystore(s) in %.2f s", len(jobs), time.perf_counter() - phase
                )
            if use_cache and (
                (cache_opened and (decrypted or stale))
                or (not cache_opened and self._worth_caching(jobs))
            ):
                phase = time.perf_counter()
                self._write_cache({**cached, **decrypted}, material)
                log.info("key cache written in %.2f s", time.perf_counter() - phase)
            loaded = {**cached, **decrypted}
            log.info(
                "%d key(s) loaded in %.2f s (%d from the key cache, %d decrypted)",
                len(pubkeys),
                time.perf_counter() - started,
                len(pubkeys) - len(decrypted),
                len(decrypted),
            )
            return {pubkey: loaded[pubkey] for pubkey in pubkeys}

    def _material(self, pubkeys: Iterable[bytes]) -> dict[bytes, KeyMaterial]:
        return {pubkey: self._local.key_material(pubkey) for pubkey in pubkeys}

    def _checked(self, secrets: Mapping[bytes, int]) -> dict[bytes, int]:
        """The cached secrets, each proven to give its pubkey: cheap next to the KDF, and a
        wrongly written cache then never signs with a wrong key."""
        for pubkey, secret in secrets.items():
            try:
                derived = crypto_backend.sk_to_pk(secret)
            except crypto_backend.BlsError:
                derived = b""
            if derived != pubkey:
                raise KeyCacheError(f"the secret cached for {format_pubkey(pubkey)} is not its key")
        return dict(secrets)

    def _worth_caching(self, jobs: Sequence[DecryptJob]) -> bool:
        """A cache pays when the keystores cost more than its own KDF (cheap devnet and
        test keystores are not worth one scrypt)."""
        cost = sum(estimated_cost(parse_keystore(job.keystore_json)) for job in jobs)
        return cost >= 2 * cache_kdf_cost(self.key_cache_kdf)

    def _write_cache(
        self, secrets: dict[bytes, int], material: Mapping[bytes, KeyMaterial]
    ) -> None:
        """Write the cache; a failure is logged, never fatal (the keystores remain)."""
        try:
            self._local.ensure_directories()
            write_cache(self.key_cache_path, secrets, material, kdf=self.key_cache_kdf)
        except OSError as error:
            log.warning("key cache %s could not be written: %s", self.key_cache_path, error)

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
