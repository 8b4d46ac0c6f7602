"""The interface every slashing-protection record offers, whichever store is behind it.

`SlashingProtection` (the file record of one validators directory) and
`PostgresSlashingProtection` (the record several hosts share) both satisfy it, so the
signer, the Keymanager API and the CLI cannot tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Protocol

from slashing_protection.interchange import InterchangeSource, Progress
from slashing_protection.rule import Watermark


class SlashingProtectionRecord(Protocol):
    """The minimal EIP-3076 record: check, durable record, only then True."""

    @property
    def genesis_validators_root(self) -> bytes: ...

    @property
    def exists(self) -> bool: ...

    def pubkeys(self) -> list[bytes]: ...

    def contains(self, pubkey: bytes) -> bool: ...

    def watermark(self, pubkey: bytes) -> Watermark | None: ...

    def block_allowed(self, pubkey: bytes, slot: int) -> bool: ...

    def attestation_allowed(self, pubkey: bytes, source: int, target: int) -> bool: ...

    def record_block(self, pubkey: bytes, slot: int) -> bool: ...

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[bool]: ...

    def register(self, pubkeys: Iterable[bytes]) -> None: ...

    def import_interchange(
        self, data: InterchangeSource, *, progress: Progress | None = None
    ) -> frozenset[bytes]: ...

    def export_interchange(self, pubkeys: Iterable[bytes] | None = None) -> bytes: ...

    def close(self) -> None: ...

    def __enter__(self) -> SlashingProtectionRecord: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
