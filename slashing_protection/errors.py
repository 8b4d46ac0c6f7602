"""Errors of the slashing-protection record, each with a message an operator can act on.

Every refusal to open the record, to import an interchange or to write a change raises a
subclass of `SlashingProtectionError`. Signing-time refusals are not errors: the record
answers False.
"""

from __future__ import annotations

from pathlib import Path


class SlashingProtectionError(Exception):
    """Base class: the record could not be opened, read, imported into or written."""


class RecordLockedError(SlashingProtectionError):
    """Another process holds the directory's lock."""

    def __init__(self, directory: Path) -> None:
        super().__init__(
            f"the slashing-protection record in {directory} is in use by another process "
            "(a running validator or slashing-protection command); stop it first, "
            "two processes must never sign with the same keys"
        )
        self.directory = directory


class RecordMissingError(SlashingProtectionError):
    """There is no record in the directory and nothing may create one."""


class RecordUnreadableError(SlashingProtectionError):
    """The record exists but is not a file this client can read (directory, symlink, I/O error)."""


class RecordCorruptError(SlashingProtectionError):
    """The record file is empty, malformed, duplicated or otherwise not a minimal interchange."""


class ChainMismatchError(SlashingProtectionError):
    """A record or interchange names a different genesis_validators_root."""


class InterchangeFormatError(SlashingProtectionError):
    """An interchange file is not a valid EIP-3076 version 5 document."""


class InterchangeReadError(SlashingProtectionError):
    """An interchange file could not be read (missing, a directory, an I/O error)."""


class RecordWriteError(SlashingProtectionError):
    """A durable write of the record failed; nothing was changed."""


class RecordClosedError(SlashingProtectionError):
    """The record was used after close()."""
