"""The fast parser: an accelerator for the layout every client writes.

Metadata first, then data, no escapes: it cuts the data array into pieces at entry
boundaries, parses each piece with orjson and validates whole columns of values at a time.
Whenever it sees anything it is not sure about (an unusual layout, a parse or validation
failure, an entry above `FAST_MAX_ENTRY_BYTES`), it raises `GiveUp` and the exact parser
decides. It never accepts a document the exact parser would refuse, and when both accept
they agree (tests/slashing_protection/test_interchange.py checks both properties).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter
from typing import Any

import orjson

from slashing_protection.interchange.model import (
    FORMAT_VERSION,
    ROOT_BYTES,
    Accumulator,
    ParsedInterchange,
    Progress,
    parse_hex,
    parse_pubkey,
)
from slashing_protection.json_guard import piece_may_pass
from slashing_protection.rule import NEVER, UINT64_MAX

_JSON_WS = b" \t\r\n"

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


class GiveUp(Exception):
    """The fast parser is not sure; the exact parser decides."""


def _column_max(values: list[Any]) -> int:
    """Highest of a column of uint64 decimal strings; GiveUp on anything else."""
    joined = "".join(values)  # TypeError unless every value is a str
    if not (joined.isascii() and joined.isdigit()):
        raise GiveUp
    highest = max(map(int, values))  # ValueError for "" or an absurd number of digits
    if highest > UINT64_MAX:
        raise GiveUp
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
        raise GiveUp
    joined = "".join(roots)
    step = 2 + 2 * ROOT_BYTES
    if joined[0::step].count("0") != count or joined[1::step].count("x") != count:
        raise GiveUp
    if joined.encode().translate(None, _HEX_DIGITS) != b"x" * count:
        raise GiveUp
    return count


def _fast_piece(piece: bytes | bytearray, acc: Accumulator) -> None:
    """Parse and account for a run of whole entries; GiveUp if anything is unusual."""
    if b"\\" in piece:
        raise GiveUp  # escapes could hide a repeated key from the counts below
    # orjson itself is safe on any input; json_guard's limits are checked below so that
    # this path refuses what the exact parser's guard refuses.
    entries = orjson.loads(b"[" + piece + b"]")
    keys = sum(map(len, entries))
    only_known_members = keys == 3 * len(entries)
    for entry in entries:
        blocks = entry["signed_blocks"]
        atts = entry["signed_attestations"]
        if type(blocks) is not list or type(atts) is not list:
            raise GiveUp
        pubkey = parse_pubkey(entry["pubkey"])
        slot = source = target = NEVER
        if blocks:
            slot = _column_max(list(map(_get_slot, blocks)))
            roots = _check_roots(blocks)
            members = sum(map(len, blocks))
            keys += members
            only_known_members = only_known_members and members == len(blocks) + roots
        if atts:
            source = _column_max(list(map(_get_source, atts)))
            target = _column_max(list(map(_get_target, atts)))
            roots = _check_roots(atts)
            members = sum(map(len, atts))
            keys += members
            only_known_members = only_known_members and members == 2 * len(atts) + roots
        acc.add(pubkey, slot, source, target, len(blocks), len(atts))
    # orjson keeps the last of repeated keys, the exact parser refuses them. Every key is
    # followed by one colon, so as many colons as distinct keys in the objects above means
    # no key was repeated (and no colon hides in a string or a nested unknown object).
    if piece.count(b":") != keys:
        raise GiveUp
    # json_guard's limits (no number token beyond a uint64's digits, no string over 1 MiB).
    # Objects of only the known members hold nothing but the strings checked above (keys,
    # a pubkey, decimal strings int() accepted, roots), which keep to them; only a piece
    # with other members is scanned (the scan of every piece cost a fifth of the import).
    if not only_known_members and not piece_may_pass(piece):
        raise GiveUp


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


def parse_fast(
    read: Callable[[int], bytes], where: str, progress: Progress | None
) -> ParsedInterchange:
    """The common layout only; raises GiveUp for anything else (nothing is committed)."""
    buf = read(FAST_WINDOW_BYTES)
    eof = len(buf) < FAST_WINDOW_BYTES
    head = _FAST_HEAD.match(buf)
    if head is None:
        raise GiveUp
    metadata_text = head.group(1)
    if not piece_may_pass(metadata_text):
        raise GiveUp
    for key in (b'"interchange_format_version"', b'"genesis_validators_root"'):
        if metadata_text.count(key) != 1:
            raise GiveUp
    metadata = orjson.loads(metadata_text)
    if metadata.get("interchange_format_version") != FORMAT_VERSION:
        raise GiveUp
    root = parse_hex(metadata.get("genesis_validators_root"), ROOT_BYTES, "genesis_validators_root")
    acc = Accumulator()
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
                raise GiveUp
            piece = buf[pos:end]
            if piece.strip(_JSON_WS):
                _fast_piece(piece, acc)
            elif after_comma:
                raise GiveUp  # a trailing comma: let the exact parser word the error
            break
        cut = _last_entry_start(buf, pos, pos + window)
        if cut < 0:
            if window >= FAST_MAX_ENTRY_BYTES:
                raise GiveUp
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
