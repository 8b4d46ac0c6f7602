"""SSZ objects to and from the Beacon API's JSON and from SSZ bytes.

One generic walk over remerkleable types, so every container gets the same
rules: integers as decimal strings, byte vectors and lists as 0x-hex,
bitfields as the hex of their SSZ bytes (bitlists with the delimiter bit),
lists and vectors as arrays, containers as objects with exactly their fields.
Every malformed input raises :class:`SszInputError` naming the path to it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from remerkleable.basic import boolean, uint, uint8
from remerkleable.bitfields import Bitlist, Bitvector
from remerkleable.byte_arrays import ByteList, ByteVector
from remerkleable.complex import Container, List, Vector
from remerkleable.core import View
from remerkleable.progressive import ProgressiveBitlist, ProgressiveList

from validator.consensus.encoding import parse_hex, parse_uint, to_hex

V = TypeVar("V")
JSONValue = Any


class SszInputError(ValueError):
    """JSON or SSZ bytes that do not describe a value of the expected SSZ type."""


class _PathError(Exception):
    """A decoding failure on its way up, collecting the path to the bad value."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def from_json(ssz_type: type[V], value: JSONValue) -> V:
    """The ``ssz_type`` value that the Beacon API JSON ``value`` describes."""
    try:
        decoded: V = _decode(ssz_type, value)
        return decoded
    except _PathError as failure:
        where = "".join(failure.path).lstrip(".")
        prefix = f"{ssz_type.__name__}.{where}" if where else ssz_type.__name__
        raise SszInputError(f"{prefix}: {failure.message}") from None


def to_json(view: View) -> JSONValue:
    """The Beacon API JSON form of an SSZ value (integers as decimal strings)."""
    if isinstance(view, boolean):
        return bool(view)
    if isinstance(view, uint):
        return str(int(view))
    if isinstance(view, (ByteVector, ByteList)):
        return to_hex(bytes(view))
    if isinstance(view, (Bitlist, Bitvector, ProgressiveBitlist)):
        return to_hex(view.encode_bytes())
    if isinstance(view, ProgressiveList) and _is_byte(type(view).element_cls()):
        # Gloas (EIP-7688) byte strings without a bound: transactions, block access lists.
        return to_hex(view.encode_bytes())
    if isinstance(view, (List, Vector, ProgressiveList)):
        return [to_json(item) for item in view]
    if isinstance(view, Container):
        return {name: to_json(getattr(view, name)) for name in type(view).fields()}
    raise TypeError(f"no Beacon API JSON form for {type(view).__name__}")


def from_ssz(ssz_type: type[V], data: bytes) -> V:
    """Decode SSZ bytes, refusing anything remerkleable cannot read exactly."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SszInputError(f"{ssz_type.__name__}: expected SSZ bytes, got {type(data).__name__}")
    data = bytes(data)
    view_type: Any = ssz_type
    low, high = view_type.min_byte_length(), view_type.max_byte_length()
    if not low <= len(data) <= high:
        raise SszInputError(
            f"{ssz_type.__name__}: {len(data)} bytes of SSZ is outside the type's "
            f"{low}..{high} bytes"
        )
    try:
        decoded: V = view_type.decode_bytes(data)
        return decoded
    except Exception as failure:  # remerkleable raises bare Exception for some malformations
        raise SszInputError(f"{ssz_type.__name__}: malformed SSZ: {failure}") from None


def to_ssz(view: View) -> bytes:
    return bytes(view.encode_bytes())


def hash_tree_root(view: View) -> bytes:
    return bytes(view.hash_tree_root())


def _decode(ssz_type: Any, value: JSONValue) -> Any:
    if issubclass(ssz_type, boolean):
        if not isinstance(value, bool):
            raise _PathError(f"expected true or false, got {value!r}")
        return ssz_type(value)
    if issubclass(ssz_type, uint):
        return ssz_type(_checked(parse_uint, value, ssz_type.type_byte_length() * 8))
    if issubclass(ssz_type, ByteVector):
        return ssz_type(_checked(parse_hex, value, ssz_type.type_byte_length()))
    if issubclass(ssz_type, ByteList):
        return ssz_type(_checked(parse_hex, value, None, max_length=ssz_type.limit()))
    if issubclass(ssz_type, Bitvector):
        raw = _checked(parse_hex, value, (ssz_type.vector_length() + 7) // 8)
        return _bits_from_bytes(ssz_type, raw)
    if issubclass(ssz_type, Bitlist):
        raw = _checked(parse_hex, value, None, max_length=ssz_type.limit() // 8 + 1)
        return _bits_from_bytes(ssz_type, raw)
    if issubclass(ssz_type, ProgressiveBitlist):
        return _bits_from_bytes(ssz_type, _checked(parse_hex, value, None))
    if issubclass(ssz_type, ProgressiveList):
        if _is_byte(ssz_type.element_cls()):
            return ssz_type.decode_bytes(_checked(parse_hex, value, None))
        return ssz_type(_decode_items(ssz_type.element_cls(), _array(value)))
    if issubclass(ssz_type, List):
        items = _array(value)
        if len(items) > ssz_type.limit():
            raise _PathError(f"{len(items)} items exceed the limit of {ssz_type.limit()}")
        return ssz_type(_decode_items(ssz_type.element_cls(), items))
    if issubclass(ssz_type, Vector):
        items = _array(value)
        if len(items) != ssz_type.vector_length():
            raise _PathError(f"expected exactly {ssz_type.vector_length()} items, got {len(items)}")
        return ssz_type(_decode_items(ssz_type.element_cls(), items))
    if issubclass(ssz_type, Container):
        return _decode_container(ssz_type, value)
    raise TypeError(f"no Beacon API JSON form for {ssz_type.__name__}")


def _decode_container(ssz_type: Any, value: JSONValue) -> Any:
    if not isinstance(value, dict):
        raise _PathError(f"expected an object, got {_json_kind(value)}")
    fields = ssz_type.fields()
    missing = [name for name in fields if name not in value]
    if missing:
        raise _PathError(f"missing field {missing[0]!r}")
    unexpected = [name for name in value if name not in fields]
    if unexpected:
        # An unknown field means another fork's object: signing our reading of it would
        # sign a root the node does not expect.
        raise _PathError(f"unexpected field {unexpected[0]!r}")
    decoded = {}
    for name, field_type in fields.items():
        try:
            decoded[name] = _decode(field_type, value[name])
        except _PathError as failure:
            failure.path.insert(0, f".{name}")
            raise
    return ssz_type(**decoded)


def _decode_items(element_type: Any, items: list[JSONValue]) -> list[Any]:
    decoded = []
    for position, item in enumerate(items):
        try:
            decoded.append(_decode(element_type, item))
        except _PathError as failure:
            failure.path.insert(0, f"[{position}]")
            raise
    return decoded


def _bits_from_bytes(ssz_type: Any, raw: bytes) -> Any:
    try:
        return ssz_type.decode_bytes(raw)
    except Exception as failure:  # remerkleable reports bitfield errors as bare Exception
        raise _PathError(str(failure)) from None


def _is_byte(element_type: Any) -> bool:
    return isinstance(element_type, type) and issubclass(element_type, uint8)


def _array(value: JSONValue) -> list[JSONValue]:
    if not isinstance(value, list):
        raise _PathError(f"expected an array, got {_json_kind(value)}")
    return value


def _checked(parse: Any, value: JSONValue, *args: Any, **kwargs: Any) -> Any:
    try:
        return parse(value, *args, **kwargs)
    except ValueError as failure:
        raise _PathError(str(failure)) from None


def _json_kind(value: JSONValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__
