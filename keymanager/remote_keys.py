"""Remote keys (EIP-3030): keys a remote signer signs for, kept in the settings file.

A remote key's per-key settings go with it: deleting the key drops them in the same write.
Whether a key is also a local keystore is `ValidatorStore`'s question, which holds the
lock around these calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from keymanager.errors import DuplicateKeyError
from keymanager.pubkeys import format_pubkey
from keymanager.settings import RemoteKeyEntry, check_remote_url
from keymanager.settings_store import SettingsStore


@dataclass(frozen=True)
class RemoteKey:
    """A key signed for by a remote signer (EIP-3030) at `url`."""

    pubkey: bytes
    url: str
    readonly: bool = False


class RemoteKeys:
    """The remote keys of one settings file."""

    def __init__(self, settings: SettingsStore) -> None:
        self._settings = settings

    def all(self) -> list[RemoteKey]:
        """Every remote key, sorted by pubkey."""
        return [
            RemoteKey(pubkey=pubkey, url=entry.url)
            for pubkey, entry in sorted(self._settings.read().remote_keys.items())
        ]

    def __contains__(self, pubkey: bytes) -> bool:
        return pubkey in self._settings.read().remote_keys

    def pubkeys(self) -> set[bytes]:
        return set(self._settings.read().remote_keys)

    def add(self, pubkey: bytes, url: str) -> None:
        """`DuplicateKeyError` if known; `SettingsValueError` for a bad URL."""
        check_remote_url(url)
        settings = self._settings.read()
        if pubkey in settings.remote_keys:
            raise DuplicateKeyError(f"remote key {format_pubkey(pubkey)} already exists")
        remote = {**settings.remote_keys, pubkey: RemoteKeyEntry(url=url)}
        self._settings.write(settings.model_copy(update={"remote_keys": remote}))

    def delete(self, pubkey: bytes) -> bool:
        """Remove the key and its settings (one write); False when it was not there."""
        settings = self._settings.read()
        if pubkey not in settings.remote_keys:
            return False
        remote = {pk: e for pk, e in settings.remote_keys.items() if pk != pubkey}
        validators = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
        self._settings.write(
            settings.model_copy(update={"remote_keys": remote, "validators": validators})
        )
        return True
