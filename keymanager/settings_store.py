"""`validator_settings.json` on disk: per-key settings and the remote keys, in one file.

`SettingsStore` reads the file (again only when it changed on disk, so a hand edit is
seen) and replaces it durably; the file's model and its checks are `keymanager.settings`'.
The per-key settings are changed here; the remote keys, which live in the same file, by
`keymanager.remote_keys`. No locking and no knowledge of keystores: `ValidatorStore` holds
the lock and says which keys exist.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from keymanager.errors import StoreCorruptionError
from keymanager.settings import (
    EMPTY_SETTINGS,
    SETTINGS_FILE_NAME,
    KeySettings,
    SettingsFile,
    parse_settings,
)
from slashing_protection.durable import write_durably

FILE_MODE = 0o600


class SettingsStore:
    """The settings file of one validators directory (see the module docstring).

    `prepare_directory` runs before every write (the store creates its directories then).
    """

    def __init__(self, validators_dir: Path, prepare_directory: Callable[[], None]) -> None:
        self.path = validators_dir / SETTINGS_FILE_NAME
        self._prepare_directory = prepare_directory
        self._settings: SettingsFile | None = None
        self._signature: tuple[int, int, int] | None = None

    def read(self) -> SettingsFile:
        """The file's content (empty when there is none); StoreCorruptionError if unreadable."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self._settings, self._signature = None, None
            return EMPTY_SETTINGS
        except OSError as error:
            raise StoreCorruptionError(f"{self.path}: cannot read: {error}") from None
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if self._settings is None or signature != self._signature:
            try:
                data = self.path.read_bytes()
            except OSError as error:
                raise StoreCorruptionError(f"{self.path}: cannot read: {error}") from None
            self._settings = parse_settings(data, self.path)
            self._signature = signature
        return self._settings

    def write(self, settings: SettingsFile) -> None:
        self._prepare_directory()
        write_durably(self.path, settings.to_json(), mode=FILE_MODE)
        stat = os.stat(self.path)
        self._settings = settings
        self._signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)

    # --- per-key settings ---------------------------------------------------

    def of(self, pubkey: bytes) -> KeySettings:
        """The key's settings (None fields: the process-wide default applies)."""
        return self.read().validators.get(pubkey, KeySettings())

    def update(self, pubkey: bytes, **changes: object) -> None:
        """Change some of the key's settings (values arrive checked: model_copy does not
        validate again); a key back at every default leaves the file."""
        settings = self.read()
        current = settings.validators.get(pubkey, KeySettings())
        updated = current.model_copy(update=changes)
        if updated == current:
            return
        validators = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
        if not updated.is_default():
            validators[pubkey] = updated
        self.write(settings.model_copy(update={"validators": validators}))

    def forget(self, settings: SettingsFile, pubkey: bytes) -> None:
        """Drop the key's settings from `settings` (the file as read) in one write, if any."""
        if pubkey in settings.validators:
            remaining = {pk: s for pk, s in settings.validators.items() if pk != pubkey}
            self.write(settings.model_copy(update={"validators": remaining}))
