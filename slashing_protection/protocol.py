"""The interface every slashing-protection record offers, whichever store is behind it.

`SlashingProtection` (the file record of one validators directory) and
`PostgresSlashingProtection` (the record several hosts share) both satisfy it, so the
signer (`validator.signing.signer.SlashingRecord`), the Keymanager API
(`keymanager.api.KeymanagerRecord`) and the CLI use this one protocol and cannot tell them
apart. One method per question: each about a block or an attestation answers a
`slashing_protection.Verdict` (allowed, or why not and the bound it hit), whether it
records or only checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Protocol

from slashing_protection.interchange import InterchangeSource, ParsedInterchange, Progress
from slashing_protection.rule import Watermark
from slashing_protection.verdict import Verdict


class SlashingProtectionRecord(Protocol):
    """The minimal EIP-3076 record: check, durable record, only then allowed."""

    @property
    def genesis_validators_root(self) -> bytes: ...

    @property
    def exists(self) -> bool: ...

    def pubkeys(self) -> list[bytes]: ...

    def contains(self, pubkey: bytes) -> bool: ...

    def watermark(self, pubkey: bytes) -> Watermark | None: ...

    def watermarks(self, pubkeys: Iterable[bytes]) -> dict[bytes, Watermark]: ...

    def check_block(self, pubkey: bytes, slot: int) -> Verdict: ...

    def check_attestation(self, pubkey: bytes, source: int, target: int) -> Verdict: ...

    def record_block(self, pubkey: bytes, slot: int) -> Verdict: ...

    def record_attestations(self, items: Sequence[tuple[bytes, int, int]]) -> list[Verdict]: ...

    def register(self, pubkeys: Iterable[bytes]) -> None: ...

    def import_interchange(
        self, data: InterchangeSource | ParsedInterchange, *, progress: Progress | None = None
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
