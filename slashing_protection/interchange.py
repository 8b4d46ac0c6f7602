"""EIP-3076 interchange format (version 5): strict streaming parse, minimal-form rendering.

Parsing reduces every key to its highest block slot, attestation source and attestation
target (each independently, as the minimal strategy asks) and never keeps the history
itself, so memory stays bounded by the number of keys, not the size of the file.

Two parsers share one contract:

* `_parse_exact` walks ijson's event stream (yajl2 C backend) with a small state machine.
  It accepts any valid document (any key order, whitespace, escapes, entries of any size,
  unknown members ignored) and produces the error messages.
* `_parse_fast` is an accelerator for the layout every client writes (metadata first, then
  data; no escapes). It cuts the data array into pieces at entry boundaries, parses each
  piece with orjson and validates whole columns of values at a time. Whenever it sees
  anything it is not sure about (an unusual layout, a parse or validation failure, an
  entry above `FAST_MAX_ENTRY_BYTES`), it gives up and the exact parser decides. It never
  accepts a document the exact parser would refuse, and when both accept they agree
  (tests/test_interchange_parser.py checks both properties).
"""

from __future__ import annotations

import gc
import io
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, itemgetter
from pathlib import Path
from typing import IO, Any

import ijson
import orjson

from slashing_protection.errors import InterchangeFormatError, InterchangeReadError
from slashing_protection.rule import NEVER, UINT64_MAX, Watermark

FORMAT_VERSION = "5"
PUBKEY_BYTES = 48
ROOT_BYTES = 32

InterchangeSource = bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes]
Progress = Callable[[int], None]

_HEX_RE = re.compile(r"[0-9a-fA-F]*")
_EXACT_BUFFER = 16 * 1024  # yajl2_c is fastest with a buffer that stays in cache
_JSON_WS = b" \t\r\n"


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
class _Accumulator:
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


# --------------------------------------------------------------------------- values


def parse_hex(value: object, length: int, what: str) -> bytes:
    """A 0x-prefixed hex string of exactly `length` bytes (either letter case)."""
    if (
        type(value) is not str
        or len(value) != 2 + 2 * length
        or not value.startswith("0x")
        or not _HEX_RE.fullmatch(value, 2)
    ):
        raise InterchangeFormatError(
            f"{what} must be a 0x-prefixed hex string of {length} bytes, found {_show(value)}"
        )
    return bytes.fromhex(value[2:])


def parse_pubkey(value: object, what: str = "pubkey") -> bytes:
    return parse_hex(value, PUBKEY_BYTES, what)


def _parse_uint(value: object, what: str) -> int:
    if type(value) is str and value.isascii() and value.isdigit():
        try:
            number = int(value)
        except ValueError:  # more digits than int() accepts
            number = UINT64_MAX + 1
        if number <= UINT64_MAX:
            return number
    raise InterchangeFormatError(
        f"{what} must be a decimal string of an unsigned 64-bit integer, found {_show(value)}"
    )


def _check_version(value: object, what: str) -> None:
    if value != FORMAT_VERSION:
        raise InterchangeFormatError(
            f"{what}: interchange_format_version is {_show(value)}; only version "
            f'"{FORMAT_VERSION}" (EIP-3076) is supported'
        )


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- exact parser


def _parse_exact(stream: IO[bytes], where: str) -> ParsedInterchange:
    it = iter(ijson.basic_parse(stream, buf_size=_EXACT_BUFFER))
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
        return f"{event} {_show(value)}"
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
    acc = _Accumulator()
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
    _check_version(version, where)
    return parse_hex(root, ROOT_BYTES, f"{where}: metadata.genesis_validators_root")


def _data(it: _Events, acc: _Accumulator, where: str) -> None:
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


def _entry(it: _Events, acc: _Accumulator, what: str) -> None:
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
                if slot is not None:
                    raise _duplicate(f"{item}.slot")
                event, value = next(it)
                slot = _parse_uint(
                    value if event == "string" else _NotString(event), f"{item}.slot"
                )
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
                if source is not None:
                    raise _duplicate(f"{item}.source_epoch")
                event, value = next(it)
                source = _parse_uint(
                    value if event == "string" else _NotString(event), f"{item}.source_epoch"
                )
            elif key == "target_epoch":
                if target is not None:
                    raise _duplicate(f"{item}.target_epoch")
                event, value = next(it)
                target = _parse_uint(
                    value if event == "string" else _NotString(event), f"{item}.target_epoch"
                )
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


# --------------------------------------------------------------------------- fast parser

FAST_WINDOW_BYTES = 1024 * 1024
"""How much text the fast parser hands to orjson at once (whole entries only)."""
FAST_MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""An entry larger than this goes to the exact parser, which needs no memory per entry."""

_WS = rb"[ \t\r\n]*"
_FAST_HEAD = re.compile(
    _WS + rb"\{" + _WS + rb'"metadata"' + _WS + rb":" + _WS + rb"(\{[^{}\[\]\\]*\})"
    + _WS + rb"," + _WS + rb'"data"' + _WS + rb":" + _WS + rb"\["
)
_FAST_TAIL = re.compile(rb"\]" + _WS + rb"\}" + _WS)
_FAST_ENTRY_KEYS = (b'"pubkey"', b'"signed_blocks"', b'"signed_attestations"')
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_get_source = itemgetter("source_epoch")
_get_target = itemgetter("target_epoch")
_get_slot = itemgetter("slot")


_ABSENT = object()  # a signing_root that is null is present (and invalid), not absent


class _GiveUp(Exception):
    """The fast parser is not sure; the exact parser decides."""


def _column_max(values: list[Any]) -> int:
    """Highest of a column of uint64 decimal strings; _GiveUp on anything else."""
    joined = "".join(values)  # TypeError unless every value is a str
    if not (joined.isascii() and joined.isdigit()):
        raise _GiveUp
    highest = max(map(int, values))  # ValueError for "" or an absurd number of digits
    if highest > UINT64_MAX:
        raise _GiveUp
    return highest


def _check_roots(objects: list[Any]) -> int:
    """Validate every signing_root present in a column of objects; return how many there are."""
    roots: list[Any] = list(map(dict.get, objects, repeat("signing_root"), repeat(_ABSENT)))
    absent = roots.count(_ABSENT)
    if absent == len(roots):
        return 0
    if absent:
        roots = [root for root in roots if root is not _ABSENT]
    count = len(roots)
    if set(map(len, roots)) != {2 + 2 * ROOT_BYTES}:
        raise _GiveUp
    joined = "".join(roots)
    step = 2 + 2 * ROOT_BYTES
    if joined[0::step].count("0") != count or joined[1::step].count("x") != count:
        raise _GiveUp
    if joined.encode().translate(None, _HEX_DIGITS) != b"x" * count:
        raise _GiveUp
    return count


def _fast_piece(piece: bytes | bytearray, acc: _Accumulator) -> None:
    """Parse and account for a run of whole entries; _GiveUp if anything is unusual."""
    if b"\\" in piece:
        raise _GiveUp  # escapes could hide a repeated key from the counts below
    entries = orjson.loads(b"[" + piece + b"]")
    keys = sum(map(len, entries))
    for entry in entries:
        blocks = entry["signed_blocks"]
        atts = entry["signed_attestations"]
        if type(blocks) is not list or type(atts) is not list:
            raise _GiveUp
        pubkey = parse_pubkey(entry["pubkey"])
        slot = source = target = NEVER
        if blocks:
            slot = _column_max(list(map(_get_slot, blocks)))
            _check_roots(blocks)
            keys += sum(map(len, blocks))
        if atts:
            source = _column_max(list(map(_get_source, atts)))
            target = _column_max(list(map(_get_target, atts)))
            _check_roots(atts)
            keys += sum(map(len, atts))
        acc.add(pubkey, slot, source, target, len(blocks), len(atts))
    # orjson keeps the last of repeated keys, the exact parser refuses them. Every key is
    # followed by one colon, so as many colons as distinct keys in the objects above means
    # no key was repeated (and no colon hides in a string or a nested unknown object).
    if piece.count(b":") != keys:
        raise _GiveUp


def _last_entry_start(buf: bytes, low: int, high: int) -> int:
    """Index of the comma before the last entry that starts in buf[low:high], or -1.

    An entry start is a comma, then `{`, then one of the entry's own keys. A wrong guess
    (say, inside an unknown member) only makes orjson or the counts fail, and the exact
    parser then decides.
    """
    best = -1
    for key in _FAST_ENTRY_KEYS:
        index = buf.rfind(key, low, high)
        if index <= best:
            continue
        j = index - 1
        while j > low and buf[j] in _JSON_WS:
            j -= 1
        if buf[j] != 0x7B:  # {
            continue
        j -= 1
        while j > low and buf[j] in _JSON_WS:
            j -= 1
        if j > low and buf[j] == 0x2C:  # ,
            best = max(best, j)
    return best


def _parse_fast(
    read: Callable[[int], bytes], where: str, progress: Progress | None
) -> ParsedInterchange:
    """The common layout only; raises _GiveUp for anything else (nothing is committed)."""
    buf = read(FAST_WINDOW_BYTES)
    eof = len(buf) < FAST_WINDOW_BYTES
    head = _FAST_HEAD.match(buf)
    if head is None:
        raise _GiveUp
    metadata_text = head.group(1)
    for key in (b'"interchange_format_version"', b'"genesis_validators_root"'):
        if metadata_text.count(key) != 1:
            raise _GiveUp
    metadata = orjson.loads(metadata_text)
    if metadata.get("interchange_format_version") != FORMAT_VERSION:
        raise _GiveUp
    root = parse_hex(metadata.get("genesis_validators_root"), ROOT_BYTES, "genesis_validators_root")
    acc = _Accumulator()
    pos = head.end()
    consumed = 0  # bytes of the stream before buf[0]
    after_comma = False
    window = FAST_WINDOW_BYTES
    while True:
        if not eof and len(buf) - pos < window:
            more = read(max(window, FAST_WINDOW_BYTES))
            eof = not more
            consumed += pos
            buf = buf[pos:] + more
            pos = 0
            continue
        if eof:
            end = buf.rfind(b"]")
            if end < pos or _FAST_TAIL.fullmatch(buf, end) is None:
                raise _GiveUp
            piece = buf[pos:end]
            if piece.strip(_JSON_WS):
                _fast_piece(piece, acc)
            elif after_comma:
                raise _GiveUp  # a trailing comma: let the exact parser word the error
            break
        cut = _last_entry_start(buf, pos, pos + window)
        if cut < 0:
            if window >= FAST_MAX_ENTRY_BYTES:
                raise _GiveUp
            window *= 2
            continue
        _fast_piece(buf[pos:cut], acc)
        pos = cut + 1
        after_comma = True
        window = FAST_WINDOW_BYTES
        if progress is not None:
            progress(consumed + pos)
    if progress is not None:
        progress(consumed + len(buf))
    return acc.result(root)


# --------------------------------------------------------------------------- entry point


def parse_interchange(
    source: InterchangeSource, *, progress: Progress | None = None, name: str | None = None
) -> ParsedInterchange:
    """Parse and validate a whole interchange, reduced to maxima per key.

    `source` is the document (bytes, or str holding JSON text), a path (`os.PathLike`), or
    a binary file object. Paths and seekable files are streamed; memory does not grow with
    the length of the history. `progress` is called with the number of bytes read so far.
    `name` is how error messages refer to the document. Raises InterchangeFormatError (or
    InterchangeReadError for a file that cannot be read).
    """
    if isinstance(source, str):
        source = source.encode()
    if isinstance(source, bytes | bytearray | memoryview):
        return _parse_stream(io.BytesIO(bytes(source)), name or "the interchange", progress)
    if isinstance(source, os.PathLike):
        path = Path(source)
        try:
            with open(path, "rb") as stream:
                return _parse_stream(stream, name or str(path), progress)
        except OSError as exc:
            raise InterchangeReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    return _parse_stream(source, name or "the interchange", progress)


def _parse_stream(stream: IO[bytes], where: str, progress: Progress | None) -> ParsedInterchange:
    seekable = stream.seekable()
    if seekable:
        start = stream.tell()
        gc_was_enabled = gc.isenabled()
        # The fast parser makes many short-lived objects and no cycles; collecting them
        # generation by generation costs more than the parse.
        gc.disable()
        try:
            return _parse_fast(stream.read, where, progress)
        except (_GiveUp, InterchangeFormatError, ValueError, TypeError, KeyError, AttributeError):
            pass
        finally:
            if gc_was_enabled:
                gc.enable()
        stream.seek(start)
    reader: Any = _CountingReader(stream, progress) if progress is not None else stream
    return _parse_exact(reader, where)


class _CountingReader(io.RawIOBase):
    """Reports bytes read to a progress callback (for the exact parser)."""

    def __init__(self, stream: IO[bytes], progress: Progress) -> None:
        super().__init__()
        self._stream = stream
        self._progress = progress
        self._total = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        self._total += len(chunk)
        self._progress(self._total)
        return chunk


# --------------------------------------------------------------------------- rendering
#
# The record is always written in one layout: compact JSON, one entry per line, e.g.
#
#   {"metadata":{"interchange_format_version":"5","genesis_validators_root":"0x…"},"data":[
#   {"pubkey":"0x…","signed_blocks":[{"slot":"5"}],"signed_attestations":[{"source_epoch":
#   "0","target_epoch":"2"}]},
#   {"pubkey":"0x…","signed_blocks":[],"signed_attestations":[]}
#   ]}
#
# (the second entry is on one line; broken here only to fit). Each entry is rendered in two
# pieces: its start, up to the attestation list, which only a block or an import changes,
# and its end, the attestation and the separator before the next entry, which every
# recorded attestation changes.

_ATTESTED_END = b'"}]}'  # closes the attestation, its list and the entry
_UNATTESTED_END = b"]}"  # closes an empty attestation list and the entry
_SOURCE_OPEN = b'{"source_epoch":"'
_TARGET_OPEN = b'","target_epoch":"'

RENDER_FOOTER = b"\n]}\n"
RENDER_SEPARATOR = b",\n"


def render_header(genesis_validators_root: bytes) -> bytes:
    return (
        b'{"metadata":{"interchange_format_version":"%s","genesis_validators_root":"0x%s"},'
        b'"data":[\n' % (FORMAT_VERSION.encode(), genesis_validators_root.hex().encode())
    )


def render_entry_start(pubkey: bytes, slot: int) -> bytes:
    """A key's entry up to its attestation list (slot NEVER: no block signed)."""
    block = b"" if slot == NEVER else b'{"slot":"%d"}' % slot
    return b'{"pubkey":"0x%s","signed_blocks":[%s],"signed_attestations":[' % (
        pubkey.hex().encode(),
        block,
    )


def render_entry_end(source: int, target: int) -> bytes:
    """The rest of a key's entry and the separator (source NEVER: never attested)."""
    if source == NEVER:
        return _UNATTESTED_END + RENDER_SEPARATOR
    return b"%s%d%s%d%s" % (
        _SOURCE_OPEN,
        source,
        _TARGET_OPEN,
        target,
        _ATTESTED_END + RENDER_SEPARATOR,
    )


# Marks the end of each (source, target) pair in the column rendering below. It is a value
# no source or target takes (they are uint64 or NEVER), so its text cannot be mistaken.
_PAIR_END = -2


def render_entry_ends(sources: list[int], targets: list[int]) -> list[bytes]:
    """`render_entry_end` for whole columns at once (a 10,000-key batch).

    orjson renders all the numbers in one call as "[s,t,-2,s,t,-2,…]"; three replacements
    turn the separators into the text around the numbers, and one split cuts the entries
    apart, so that no per-key work runs in Python except for keys that never attested.
    """
    count = len(sources)
    if count == 0:
        return []
    first_source, first_target = sources[0], targets[0]
    if sources.count(first_source) == count and targets.count(first_target) == count:
        # Every key at the same source and target, as after a slot in which the whole
        # record attested (one checkpoint pair per epoch): one rendering serves all.
        return [render_entry_end(first_source, first_target)] * count
    numbers = [_PAIR_END] * (3 * count)
    numbers[0::3] = sources
    numbers[1::3] = targets
    text = orjson.dumps(numbers)[1 : -len(b",-2]")]  # b"s,t,-2,s,t,-2,…,s,t"
    between_entries = _ATTESTED_END + RENDER_SEPARATOR + b"\0" + _SOURCE_OPEN
    ends = (
        text.replace(b",-2,", b"\0")
        .replace(b",", _TARGET_OPEN)
        .replace(b"\0", between_entries)
        .split(b"\0")
    )
    ends[0] = _SOURCE_OPEN + ends[0]
    ends[-1] += _ATTESTED_END + RENDER_SEPARATOR
    if NEVER in sources:
        for index in compress(range(count), map(eq, sources, repeat(NEVER))):
            ends[index] = _UNATTESTED_END + RENDER_SEPARATOR
    return ends


def write_minimal(out: io.BytesIO, genesis_validators_root: bytes, pieces: list[bytes]) -> None:
    """Write, at out's position, the minimal interchange of entries rendered as pieces
    (`render_entry_start`, `render_entry_end`, …): header, entries, footer."""
    out.write(render_header(genesis_validators_root))
    out.writelines(pieces)
    if pieces:  # the last entry is followed by the footer, not a separator
        out.seek(-len(RENDER_SEPARATOR), io.SEEK_CUR)
    out.write(RENDER_FOOTER)


def render_minimal(genesis_validators_root: bytes, pieces: list[bytes]) -> bytes:
    """`write_minimal` as bytes."""
    out = io.BytesIO()
    write_minimal(out, genesis_validators_root, pieces)
    return out.getvalue()
