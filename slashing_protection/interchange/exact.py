"""The exact parser: any valid EIP-3076 v5 document, streamed, with the error messages.

It walks ijson's event stream (yajl2 C backend) with a small state machine and accepts any
valid document (any key order, whitespace, escapes, entries of any size, unknown members
ignored). Memory does not grow with the history: each entry is reduced as it is read.
`parse_exact` is public on purpose: bench/slashing_protection.py times it as the baseline
of the fast parser.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import ijson

from slashing_protection.errors import InterchangeFormatError
from slashing_protection.interchange.model import (
    ROOT_BYTES,
    Accumulator,
    ParsedInterchange,
    check_version,
    parse_hex,
    parse_pubkey,
    parse_uint,
    show,
)
from slashing_protection.json_guard import GuardedReader
from slashing_protection.rule import NEVER

_EXACT_BUFFER = 16 * 1024  # yajl2_c is fastest with a buffer that stays in cache


def parse_exact(stream: IO[bytes], where: str) -> ParsedInterchange:
    it = iter(ijson.basic_parse(GuardedReader(stream, where), buf_size=_EXACT_BUFFER))
    try:
        return _document(it, where)
    except ijson.JSONError as exc:
        reason = (str(exc).strip().splitlines() or ["no detail"])[0]  # yajl adds a drawing
        raise InterchangeFormatError(f"{where} is not valid JSON ({reason})") from None
    except UnicodeDecodeError:
        raise InterchangeFormatError(f"{where} is not valid UTF-8 JSON") from None
    except StopIteration:
        raise InterchangeFormatError(f"{where} ends before the JSON document does") from None


_Events = Iterator[tuple[str, Any]]


def _expect(it: _Events, event: str, what: str, kind: str) -> None:
    got, value = next(it)
    if got != event:
        raise InterchangeFormatError(f"{what} must be {kind}, found {_describe(got, value)}")


def _describe(event: str, value: object) -> str:
    if event in ("string", "number", "boolean", "null"):
        return f"{event} {show(value)}"
    return {"start_map": "an object", "start_array": "an array"}.get(event, event)


def _string(it: _Events, what: str) -> str:
    event, value = next(it)
    if event != "string":
        raise InterchangeFormatError(f"{what} must be a string, found {_describe(event, value)}")
    return str(value)


def _duplicate(what: str) -> InterchangeFormatError:
    return InterchangeFormatError(f"{what} appears twice in the same object")


def _skip_value(it: _Events) -> None:
    event, _ = next(it)
    if event not in ("start_map", "start_array"):
        return
    depth = 1
    for event, _ in it:
        if event in ("start_map", "start_array"):
            depth += 1
        elif event in ("end_map", "end_array"):
            depth -= 1
            if depth == 0:
                return
    raise StopIteration


def _document(it: _Events, where: str) -> ParsedInterchange:
    _expect(it, "start_map", f"{where}: the top level", "an object with metadata and data")
    root: bytes | None = None
    have_data = False
    acc = Accumulator()
    for event, key in it:
        if event == "end_map":
            break
        if key == "metadata":
            if root is not None:
                raise _duplicate(f"{where}: metadata")
            root = _metadata(it, where)
        elif key == "data":
            if have_data:
                raise _duplicate(f"{where}: data")
            _data(it, acc, where)
            have_data = True
        else:
            _skip_value(it)
    else:
        raise StopIteration
    for _ in it:
        raise InterchangeFormatError(f"{where} has content after the end of the JSON document")
    if root is None:
        raise InterchangeFormatError(f"{where} has no metadata")
    if not have_data:
        raise InterchangeFormatError(f"{where} has no data array")
    return acc.result(root)


def _metadata(it: _Events, where: str) -> bytes:
    _expect(it, "start_map", f"{where}: metadata", "an object")
    version: str | None = None
    root: str | None = None
    for event, key in it:
        if event == "end_map":
            break
        if key == "interchange_format_version":
            if version is not None:
                raise _duplicate(f"{where}: metadata.interchange_format_version")
            version = _string(it, f"{where}: metadata.interchange_format_version")
        elif key == "genesis_validators_root":
            if root is not None:
                raise _duplicate(f"{where}: metadata.genesis_validators_root")
            root = _string(it, f"{where}: metadata.genesis_validators_root")
        else:
            _skip_value(it)
    else:
        raise StopIteration
    if version is None:
        raise InterchangeFormatError(f"{where}: metadata has no interchange_format_version")
    if root is None:
        raise InterchangeFormatError(f"{where}: metadata has no genesis_validators_root")
    check_version(version, where)
    return parse_hex(root, ROOT_BYTES, f"{where}: metadata.genesis_validators_root")


def _data(it: _Events, acc: Accumulator, where: str) -> None:
    _expect(it, "start_array", f"{where}: data", "an array")
    index = 0
    for event, value in it:
        if event == "end_array":
            return
        if event != "start_map":
            raise InterchangeFormatError(
                f"{where}: data[{index}] must be an object, found {_describe(event, value)}"
            )
        _entry(it, acc, f"{where}: data[{index}]")
        index += 1
    raise StopIteration


def _entry(it: _Events, acc: Accumulator, what: str) -> None:
    pubkey: bytes | None = None
    blocks: tuple[int, int] | None = None
    attestations: tuple[int, int, int] | None = None
    for event, key in it:
        if event == "end_map":
            break
        if key == "pubkey":
            if pubkey is not None:
                raise _duplicate(f"{what}.pubkey")
            pubkey = parse_pubkey(_string(it, f"{what}.pubkey"), f"{what}.pubkey")
        elif key == "signed_blocks":
            if blocks is not None:
                raise _duplicate(f"{what}.signed_blocks")
            blocks = _blocks(it, f"{what}.signed_blocks")
        elif key == "signed_attestations":
            if attestations is not None:
                raise _duplicate(f"{what}.signed_attestations")
            attestations = _attestations(it, f"{what}.signed_attestations")
        else:
            _skip_value(it)
    else:
        raise StopIteration
    for name, value in (
        ("pubkey", pubkey),
        ("signed_blocks", blocks),
        ("signed_attestations", attestations),
    ):
        if value is None:
            raise InterchangeFormatError(f"{what} has no {name}")
    assert pubkey is not None and blocks is not None and attestations is not None
    slot, n_blocks = blocks
    source, target, n_atts = attestations
    acc.add(pubkey, slot, source, target, n_blocks, n_atts)


def _signing_root(it: _Events, what: str) -> None:
    event, value = next(it)
    if event != "string":
        raise InterchangeFormatError(f"{what} must be a string, found {_describe(event, value)}")
    parse_hex(value, ROOT_BYTES, what)


def _blocks(it: _Events, what: str) -> tuple[int, int]:
    _expect(it, "start_array", what, "an array")
    highest = NEVER
    count = 0
    for event, value in it:
        if event == "end_array":
            return highest, count
        item = f"{what}[{count}]"
        if event != "start_map":
            raise InterchangeFormatError(
                f"{item} must be an object, found {_describe(event, value)}"
            )
        slot: int | None = None
        has_root = False
        for event, key in it:
            if event == "end_map":
                break
            if key == "slot":
                slot = _uint_field(it, f"{item}.slot", slot)
            elif key == "signing_root":
                if has_root:
                    raise _duplicate(f"{item}.signing_root")
                _signing_root(it, f"{item}.signing_root")
                has_root = True
            else:
                _skip_value(it)
        else:
            raise StopIteration
        if slot is None:
            raise InterchangeFormatError(f"{item} has no slot")
        if slot > highest:
            highest = slot
        count += 1
    raise StopIteration


def _uint_field(it: _Events, where: str, seen: int | None) -> int:
    """The uint64 string value of a field met once per object (a second one is refused)."""
    if seen is not None:
        raise _duplicate(where)
    event, value = next(it)
    return parse_uint(value if event == "string" else _NotString(event), where)


def _attestations(it: _Events, what: str) -> tuple[int, int, int]:
    _expect(it, "start_array", what, "an array")
    top_source = top_target = NEVER
    count = 0
    for event, value in it:
        if event == "end_array":
            return top_source, top_target, count
        item = f"{what}[{count}]"
        if event != "start_map":
            raise InterchangeFormatError(
                f"{item} must be an object, found {_describe(event, value)}"
            )
        source: int | None = None
        target: int | None = None
        has_root = False
        for event, key in it:
            if event == "end_map":
                break
            if key == "source_epoch":
                source = _uint_field(it, f"{item}.source_epoch", source)
            elif key == "target_epoch":
                target = _uint_field(it, f"{item}.target_epoch", target)
            elif key == "signing_root":
                if has_root:
                    raise _duplicate(f"{item}.signing_root")
                _signing_root(it, f"{item}.signing_root")
                has_root = True
            else:
                _skip_value(it)
        else:
            raise StopIteration
        if source is None:
            raise InterchangeFormatError(f"{item} has no source_epoch")
        if target is None:
            raise InterchangeFormatError(f"{item} has no target_epoch")
        if source > top_source:
            top_source = source
        if target > top_target:
            top_target = target
        count += 1
    raise StopIteration


class _NotString:
    """Stands for a non-string JSON value in an error message (its content is not needed)."""

    def __init__(self, event: str) -> None:
        self.event = event

    def __repr__(self) -> str:
        return {"start_map": "an object", "start_array": "an array"}.get(self.event, self.event)
