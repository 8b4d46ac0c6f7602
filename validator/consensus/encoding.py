"""The Beacon API's JSON encodings of integers and byte strings.

Integers travel as decimal strings ("12"), byte strings as 0x-prefixed hex.
Parsers raise ValueError with a message meant to be prefixed by the field name.
"""

from __future__ import annotations

import re

_DECIMAL = re.compile(r"[0-9]{1,100}\Z")
_HEX = re.compile(r"0x(?:[0-9a-fA-F]{2})*\Z")


def parse_uint(value: object, bits: int = 64) -> int:
    """An unsigned integer of ``bits`` bits from a decimal string (or a JSON integer).

    Signs, whitespace, hex, exponents and floats are refused: the API's quoted
    integers are plain decimal, and anything else is a malformed reply.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a decimal integer string, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        if not _DECIMAL.match(value):
            raise ValueError(f"expected a decimal integer string, got {_shorten(value)!r}")
        number = int(value)
    else:
        raise ValueError(f"expected a decimal integer string, got {type(value).__name__}")
    if not 0 <= number < 2**bits:
        raise ValueError(f"{number} does not fit in uint{bits}")
    return number


def parse_hex(value: object, length: int | None = None, *, max_length: int | None = None) -> bytes:
    """Bytes from 0x-prefixed hex, of exactly ``length`` or at most ``max_length`` bytes."""
    if not isinstance(value, str):
        raise ValueError(f"expected a 0x-prefixed hex string, got {type(value).__name__}")
    if not _HEX.match(value):
        raise ValueError(f"expected a 0x-prefixed hex string, got {_shorten(value)!r}")
    data = bytes.fromhex(value[2:])
    if length is not None and len(data) != length:
        raise ValueError(f"expected {length} bytes, got {len(data)}")
    if max_length is not None and len(data) > max_length:
        raise ValueError(f"expected at most {max_length} bytes, got {len(data)}")
    return data


def to_hex(data: bytes) -> str:
    """Lower-case 0x-prefixed hex, as the Beacon API writes it."""
    return "0x" + data.hex()


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
