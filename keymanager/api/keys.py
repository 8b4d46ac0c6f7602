"""Adding and removing keys at run time, with their slashing-protection history.

The order of the steps is what keeps a moved key from being slashed:

Import (POST /eth/v1/keystores)
  1. judge the history: it must be an EIP-3076 v5 interchange for the chain
     this validator runs on; if it is not, every key answers `error` and
     nothing is written or loaded;
  2. decrypt every keystore (the decrypt pool, off the event loop); a keystore
     that cannot be opened (wrong password, malformed) answers `error` with its
     reason and the others go on (import_each.py); when none can be opened,
     nothing is written;
  then, holding the key-change lock (so a DELETE cannot come in between):
  3. merge the history into the record by maximum (one durable write) before
     any key is saved, so no key can be on disk, and so load at the next start,
     ahead of its history;
  4. save each key (keystore and password, durably);
  5. register the saved keys in the record (one write; keys the history
     covered keep their entries) and only then hand them to the signer.
  A key that fails at 4 or 5 is not left on disk; the history stays in the
  record (it only ever raises watermarks).

Delete (DELETE /eth/v1/keystores), holding the same lock:
  1. take the keys out of the signer, which returns only once no signature
     with them can appear any more;
  2. remove their files;
  3. export the record's entries for exactly those keys (and for requested keys
     that are already gone but have history: `not_active`), with the chain's
     real genesis_validators_root. The record keeps every entry.

Every blocking call (store, record, decryption) runs in a thread; those that
change the record or the key files, and every call made under the key-change
lock, through `slashing_protection.blocking.run_to_completion`, so a cancelled
request never releases the lock (or returns) while its write still runs. The
history is parsed, and its chain checked, once: before decryption, and the
record merges that parse.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from keymanager.api.context import KeymanagerContext
from keymanager.api.http import ApiError
from keymanager.api.import_each import prepare_each
from keymanager.errors import (
    DuplicateKeyError,
    KeystoreError,
    LocalRemoteConflictError,
    RemoteKeyRefusedError,
    StoreError,
)
from keymanager.pubkeys import format_pubkey
from keymanager.settings import SettingsValueError
from keymanager.store import PreparedImport
from slashing_protection import ParsedInterchange, SlashingProtectionError, parse_interchange
from slashing_protection.blocking import run_to_completion

log = logging.getLogger("keymanager.api")


class Status(StrEnum):
    IMPORTED = "imported"
    DUPLICATE = "duplicate"
    DELETED = "deleted"
    NOT_ACTIVE = "not_active"
    NOT_FOUND = "not_found"
    ERROR = "error"


@dataclass(frozen=True)
class KeyStatus:
    """One key's outcome, as the spec's `{status, message}`."""

    status: Status
    message: str | None = None

    def to_json(self) -> dict[str, str]:
        if self.message is None:
            return {"status": self.status.value}
        return {"status": self.status.value, "message": self.message}


def _error(message: str) -> KeyStatus:
    return KeyStatus(Status.ERROR, message)


@dataclass(frozen=True)
class DeleteResult:
    statuses: list[KeyStatus]
    slashing_protection: bytes
    """EIP-3076 interchange (JSON) of the `deleted` and `not_active` keys."""


class KeyChanges:
    """Import and delete of local keystores and remote keys, one change at a time."""

    def __init__(self, context: KeymanagerContext) -> None:
        self._context = context
        self._lock = asyncio.Lock()

    @property
    def lock(self) -> asyncio.Lock:
        """Held for the whole of every key import and delete."""
        return self._lock

    # ------------------------------------------------------------------ local keystores

    async def import_keystores(
        self,
        keystores: Sequence[str],
        passwords: Sequence[str],
        slashing_protection: str | None,
    ) -> list[KeyStatus]:
        """The steps of the module docstring; `ApiError` (400) for a keystore that cannot
        be opened or a password count that does not match."""
        if len(keystores) != len(passwords):
            raise ApiError(
                400,
                f"{len(keystores)} keystores but {len(passwords)} passwords: passwords[i] "
                "must unlock keystores[i]",
            )
        if not keystores:
            return []
        history: ParsedInterchange | None = None
        if slashing_protection is not None:
            history, problem = await asyncio.to_thread(self._judge_history, slashing_protection)
            if problem is not None:
                log.warning("keystore import refused: %s", problem)
                return [_error(problem)] * len(keystores)
        store = self._context.store
        # import_each.py: a keystore that cannot be opened is its own `error` (the spec's
        # "decrypting error"); the others are imported.
        each = await asyncio.to_thread(
            prepare_each, store, list(zip(keystores, passwords, strict=True))
        )
        prepared = [item for item in each if not isinstance(item, KeystoreError)]
        if not prepared:
            return [_error(f"{item}; it was not imported") for item in each]
        async with self._lock:
            if history is not None:
                problem = await self._import_history(history)
                if problem is not None:
                    return [_error(problem)] * len(keystores)
            done = iter(await self._save_and_load(prepared))
        return [
            _error(f"{item}; it was not imported") if isinstance(item, KeystoreError)
            else next(done)
            for item in each
        ]

    def _judge_history(self, text: str) -> tuple[ParsedInterchange | None, str | None]:
        """(the parsed interchange, None) when it may be imported, else (None, why not)."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None, "slashing_protection is not valid Unicode; no key was imported"
        try:
            parsed = parse_interchange(data, name="slashing_protection")
        except SlashingProtectionError as error:
            return None, f"{error}; no key was imported"
        expected = self._context.genesis_validators_root
        if parsed.genesis_validators_root != expected:
            return None, (
                "slashing_protection is for the chain with genesis_validators_root "
                f"0x{parsed.genesis_validators_root.hex()}, but this validator runs on "
                f"0x{expected.hex()}; no key was imported"
            )
        return parsed, None

    async def _import_history(self, history: ParsedInterchange) -> str | None:
        try:
            covered = await run_to_completion(self._context.record.import_interchange, history)
        except SlashingProtectionError as error:
            log.error("keystore import refused, its history could not be imported: %s", error)
            return f"the slashing protection history could not be imported: {error}"
        log.info("imported slashing protection history for %d keys", len(covered))
        return None

    async def _save_and_load(self, prepared: Sequence[PreparedImport]) -> list[KeyStatus]:
        store = self._context.store
        statuses: list[KeyStatus | None] = [None] * len(prepared)
        saved: dict[bytes, int] = {}
        for index, item in enumerate(prepared):
            label = format_pubkey(item.pubkey)
            if item.pubkey in saved:
                statuses[index] = KeyStatus(Status.DUPLICATE)
                continue
            try:
                await run_to_completion(store.save_import, item)
            except LocalRemoteConflictError as error:
                statuses[index] = _error(str(error))
            except DuplicateKeyError:
                statuses[index] = KeyStatus(Status.DUPLICATE)
            except (StoreError, OSError) as error:
                log.error("could not save keystore %s: %s", label, error)
                statuses[index] = _error(f"could not save the keystore: {error}")
            else:
                saved[item.pubkey] = index
        if saved:
            problem = await self._register_and_load(
                {item.pubkey: item.secret for item in prepared if item.pubkey in saved}
            )
            for index in saved.values():
                statuses[index] = KeyStatus(Status.IMPORTED) if problem is None else _error(problem)
        done = [status for status in statuses if status is not None]
        assert len(done) == len(prepared)
        return done

    async def _register_and_load(self, secrets: dict[bytes, int]) -> str | None:
        """Register the saved keys and give them to the signer; on failure remove them again."""
        context = self._context
        try:
            await run_to_completion(context.record.register, list(secrets))
        except SlashingProtectionError as error:
            problem = f"the key could not be registered for slashing protection: {error}"
        else:
            try:
                await context.signer.add_keys(secrets)
            except Exception as error:  # the keys are on disk: never leave them half-imported
                problem = f"the key could not be loaded for signing: {error}"
            else:
                for pubkey in secrets:
                    log.info("imported keystore %s", format_pubkey(pubkey))
                return None
        log.error("keystore import failed, removing the saved keystores: %s", problem)
        for pubkey in secrets:
            try:
                await run_to_completion(context.store.delete_keystore, pubkey)
            except (StoreError, OSError) as error:
                log.error(
                    "could not remove keystore %s after a failed import: %s; it is not "
                    "loaded, remove it before the next start",
                    format_pubkey(pubkey),
                    error,
                )
        return problem + "; the keystore was not kept"

    async def delete_keystores(self, pubkeys: Sequence[bytes]) -> DeleteResult:
        """The delete steps of the module docstring, in the order of `pubkeys`."""
        context = self._context
        store, signer, record = context.store, context.signer, context.record
        async with self._lock:
            wanted = list(dict.fromkeys(pubkeys))
            present = await run_to_completion(
                lambda: {pubkey for pubkey in wanted if store.has_keystore(pubkey)}
            )
            active = [pubkey for pubkey in wanted if pubkey in present or signer.has_key(pubkey)]
            outcome: dict[bytes, KeyStatus] = {}
            if active:
                try:
                    await signer.remove_keys(active)
                except Exception as error:
                    log.error("could not stop keys signing: %s", error)
                    for pubkey in active:
                        outcome[pubkey] = _error(f"the key could not be stopped: {error}")
            for pubkey in active:
                if pubkey in outcome:
                    continue
                try:
                    if pubkey in present:
                        await run_to_completion(store.delete_keystore, pubkey)
                except (StoreError, OSError) as error:
                    log.error("could not delete keystore %s: %s", format_pubkey(pubkey), error)
                    outcome[pubkey] = _error(
                        f"the key no longer signs, but its files could not be removed: {error}"
                    )
                else:
                    log.info("deleted keystore %s", format_pubkey(pubkey))
                    outcome[pubkey] = KeyStatus(Status.DELETED)
            has_history = await run_to_completion(
                lambda: {pubkey for pubkey in wanted if record.contains(pubkey)}
            )
            statuses: list[KeyStatus] = []
            reported: set[bytes] = set()
            for pubkey in pubkeys:
                status = outcome.get(pubkey)
                if status is None or (pubkey in reported and status.status is Status.DELETED):
                    # Gone already (or earlier in this request): its history, if any.
                    status = KeyStatus(
                        Status.NOT_ACTIVE if pubkey in has_history else Status.NOT_FOUND
                    )
                reported.add(pubkey)
                statuses.append(status)
            exported = [
                pubkey
                for pubkey, status in zip(pubkeys, statuses, strict=True)
                if status.status in (Status.DELETED, Status.NOT_ACTIVE)
            ]
            try:
                interchange = await run_to_completion(record.export_interchange, exported)
            except SlashingProtectionError as error:
                # Keep the statuses honest: a key whose history cannot be returned is an error.
                log.error("could not export the deleted keys' history: %s", error)
                message = f"the key was removed but its history could not be exported: {error}"
                statuses = [
                    _error(message)
                    if status.status in (Status.DELETED, Status.NOT_ACTIVE)
                    else status
                    for status in statuses
                ]
                interchange = await run_to_completion(record.export_interchange, [])
            return DeleteResult(statuses, interchange)

    # ------------------------------------------------------------------ remote keys

    async def import_remote_keys(self, keys: Sequence[tuple[bytes, str]]) -> list[KeyStatus]:
        store = self._context.store
        statuses = []
        async with self._lock:
            for pubkey, url in keys:
                try:
                    await run_to_completion(store.add_remote_key, pubkey, url)
                except LocalRemoteConflictError as error:
                    statuses.append(_error(str(error)))
                except DuplicateKeyError:
                    statuses.append(KeyStatus(Status.DUPLICATE))
                except SettingsValueError as error:
                    statuses.append(_error(str(error)))
                except (StoreError, OSError) as error:
                    log.error("could not add remote key %s: %s", format_pubkey(pubkey), error)
                    statuses.append(_error(f"could not store the remote key: {error}"))
                else:
                    statuses.append(await self._start_remote_key(pubkey, url))
        return statuses

    async def _start_remote_key(self, pubkey: bytes, url: str) -> KeyStatus:
        """Register a stored remote key in the record (an entry is never lowered), then sign
        with it; on failure the stored key goes again, so a restart does not bring it back."""
        context = self._context
        try:
            await run_to_completion(context.record.register, [pubkey])
            await context.signer.add_remote_key(pubkey, url)
        except (SlashingProtectionError, RemoteKeyRefusedError) as error:
            await run_to_completion(context.store.delete_remote_key, pubkey)
            log.error("remote key %s not started: %s", format_pubkey(pubkey), error)
            return _error(f"the remote key cannot sign here: {error}")
        log.info("imported remote key %s (%s)", format_pubkey(pubkey), url)
        return KeyStatus(Status.IMPORTED)

    async def delete_remote_keys(self, pubkeys: Sequence[bytes]) -> list[KeyStatus]:
        store = self._context.store
        statuses = []
        async with self._lock:
            for pubkey in pubkeys:
                remote = await asyncio.to_thread(store.remote_keys)
                if any(key.pubkey == pubkey for key in remote):
                    # Nothing signs with it once this returns; only then is it forgotten.
                    await self._context.signer.remove_keys([pubkey])
                try:
                    removed = await run_to_completion(store.delete_remote_key, pubkey)
                except (StoreError, OSError) as error:
                    log.error("could not delete remote key %s: %s", format_pubkey(pubkey), error)
                    statuses.append(_error(f"could not remove the remote key: {error}"))
                    continue
                if removed:
                    log.info("deleted remote key %s", format_pubkey(pubkey))
                statuses.append(KeyStatus(Status.DELETED if removed else Status.NOT_FOUND))
        return statuses
