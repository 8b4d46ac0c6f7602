"""Validator public keys as text: the one place that parses and formats them.

On disk and in the Keymanager API a public key is ``0x`` followed by 96 hex
digits; in Python it is the 48 compressed bytes.
"""

from __future__ import annotations

import re

PUBKEY_LENGTH = 48

_HEX_PUBKEY = re.compile(r"(0[xX])?([0-9a-fA-F]{96})")
_CANONICAL_PUBKEY = re.compile(r"0x[0-9a-f]{96}")


def parse_pubkey(text: str, *, require_prefix: bool = True) -> bytes:
    """The 48 bytes of a hex public key (case-insensitive).

    `require_prefix=False` also accepts the bare form that EIP-2335 keystores
    written by the deposit CLI use.
    """
    if not isinstance(text, str):
        raise ValueError(f"public key must be a hex string, got {type(text).__name__}")
    match = _HEX_PUBKEY.fullmatch(text)
    if match is None or (require_prefix and match.group(1) is None):
        shown = text if len(text) <= 120 else text[:117] + "..."
        expected = "0x followed by 96 hex digits" if require_prefix else "96 hex digits"
        raise ValueError(f"public key must be {expected} (48 bytes), got {shown!r}")
    return bytes.fromhex(match.group(2))


def is_canonical_pubkey(text: str) -> bool:
    """True for the form this package writes: ``0x`` and 96 lowercase hex digits."""
    return _CANONICAL_PUBKEY.fullmatch(text) is not None


def format_pubkey(pubkey: bytes) -> str:
    """``0x`` and 96 lowercase hex digits."""
    if len(pubkey) != PUBKEY_LENGTH:
        raise ValueError(f"public key must be {PUBKEY_LENGTH} bytes, got {len(pubkey)}")
    return "0x" + pubkey.hex()
