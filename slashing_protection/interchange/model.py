"""The EIP-3076 interchange (version 5) as this package sees it: the result of a parse
(every key reduced to its highest slot, source and target) and the value checks that both
parsers share, so that they accept the same values and word their errors the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from slashing_protection.errors import InterchangeFormatError
from slashing_protection.rule import NEVER, UINT64_MAX, Watermark

FORMAT_VERSION = "5"
PUBKEY_BYTES = 48
ROOT_BYTES = 32

InterchangeSource = bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes]
Progress = Callable[[int], None]

_HEX_RE = re.compile(r"[0-9a-fA-F]*")


@dataclass(frozen=True)
class ParsedInterchange:
    """An interchange reduced to the minimal form."""

    genesis_validators_root: bytes
    marks: dict[bytes, Watermark]
    """Per key, in order of first appearance: the highest slot, source and target."""
    repeated_pubkeys: tuple[bytes, ...] = ()
    """Keys listed in more than one entry (allowed in an import, refused in the record)."""
    minimal: bool = True
    """Every entry has at most one block and one attestation."""


@dataclass
class Accumulator:
    """Maxima per key, merged across repeated entries."""

    slot: dict[bytes, int] = field(default_factory=dict)
    source: dict[bytes, int] = field(default_factory=dict)
    target: dict[bytes, int] = field(default_factory=dict)
    repeated: list[bytes] = field(default_factory=list)
    minimal: bool = True

    def add(
        self, pubkey: bytes, slot: int, source: int, target: int, n_blocks: int, n_atts: int
    ) -> None:
        if n_blocks > 1 or n_atts > 1:
            self.minimal = False
        previous = self.slot.get(pubkey)
        if previous is None:
            self.slot[pubkey] = slot
            self.source[pubkey] = source
            self.target[pubkey] = target
            return
        self.repeated.append(pubkey)
        self.slot[pubkey] = max(previous, slot)
        self.source[pubkey] = max(self.source[pubkey], source)
        self.target[pubkey] = max(self.target[pubkey], target)

    def result(self, root: bytes) -> ParsedInterchange:
        def public(value: int) -> int | None:
            return None if value == NEVER else value

        marks = {
            pubkey: Watermark(
                public(slot), public(self.source[pubkey]), public(self.target[pubkey])
            )
            for pubkey, slot in self.slot.items()
        }
        return ParsedInterchange(root, marks, tuple(dict.fromkeys(self.repeated)), self.minimal)


def parse_hex(value: object, length: int, what: str) -> bytes:
    """A 0x-prefixed hex string of exactly `length` bytes (either letter case)."""
    if (
        type(value) is not str
        or len(value) != 2 + 2 * length
        or not value.startswith("0x")
        or not _HEX_RE.fullmatch(value, 2)
    ):
        raise InterchangeFormatError(
            f"{what} must be a 0x-prefixed hex string of {length} bytes, found {show(value)}"
        )
    return bytes.fromhex(value[2:])


def parse_pubkey(value: object, what: str = "pubkey") -> bytes:
    return parse_hex(value, PUBKEY_BYTES, what)


def parse_uint(value: object, what: str) -> int:
    if type(value) is str and value.isascii() and value.isdigit():
        try:
            number = int(value)
        except ValueError:  # more digits than int() accepts
            number = UINT64_MAX + 1
        if number <= UINT64_MAX:
            return number
    raise InterchangeFormatError(
        f"{what} must be a decimal string of an unsigned 64-bit integer, found {show(value)}"
    )


def check_version(value: object, what: str) -> None:
    if value != FORMAT_VERSION:
        raise InterchangeFormatError(
            f"{what}: interchange_format_version is {show(value)}; only version "
            f'"{FORMAT_VERSION}" (EIP-3076) is supported'
        )


def show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
