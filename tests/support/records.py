"""Helpers shared by the slashing_protection tests."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import orjson

from slashing_protection import RECORD_FILE, Verdict

ROOT = bytes(range(32))
OTHER_ROOT = bytes(32)


def verdicts_allowed(verdicts: Sequence[Verdict]) -> list[bool]:
    """A batch's verdicts as allowed or not, item by item."""
    return [verdict.allowed for verdict in verdicts]


def pubkey(n: int) -> bytes:
    """A distinct 48-byte key per n (the record never checks that it is a curve point)."""
    return hashlib.sha384(n.to_bytes(8, "big")).digest()


def record_bytes(directory: Path) -> bytes:
    return (directory / RECORD_FILE).read_bytes()


def interchange(entries: list[dict[str, object]], root: bytes = ROOT, version: str = "5") -> bytes:
    document = {
        "metadata": {
            "interchange_format_version": version,
            "genesis_validators_root": "0x" + root.hex(),
        },
        "data": entries,
    }
    return orjson.dumps(document)


def entry(
    key: bytes,
    slots: tuple[int, ...] = (),
    attestations: tuple[tuple[int, int], ...] = (),
) -> dict[str, object]:
    return {
        "pubkey": "0x" + key.hex(),
        "signed_blocks": [{"slot": str(slot)} for slot in slots],
        "signed_attestations": [
            {"source_epoch": str(source), "target_epoch": str(target)}
            for source, target in attestations
        ],
    }
