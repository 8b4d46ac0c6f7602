"""Limits on JSON text, checked before any JSON library sees it.

ijson's C backend (yajl2_c) crashes the interpreter on a number of more than 4,300
digits followed by a syntax error (CPython's int-conversion limit hands it a NULL), and
re-lexes a token that spans its read buffer from the token's start on every read, so one
huge string costs time quadratic in its length. Nothing this project reads needs either:
every number in an interchange, in the record and in a Keymanager request is a uint64 at
most (and the formats write them as strings anyway). So, outside strings:

* a number token (a run of `-+.0-9eE`) longer than `MAX_NUMBER_CHARS` is refused;
* a string token longer than `MAX_STRING_BYTES` (its raw bytes, quotes included) is
  refused;
* `check_document` (whole request bodies) also refuses nesting deeper than a given depth.

`JsonGuard` checks a document fed in chunks (any cut points) in time linear in its
length, with the string state carried from one chunk to the next; the scanning is done by
regular expressions and bytes methods, not per character in Python.
"""

from __future__ import annotations

import contextlib
import re
import reprlib
from collections.abc import Iterator
from itertools import accumulate
from typing import IO

from slashing_protection.errors import InterchangeFormatError

MAX_NUMBER_CHARS = 20
"""len("18446744073709551615"): the longest number a uint64 needs."""
MAX_STRING_BYTES = 1024 * 1024
"""The longest string token accepted, in raw bytes including its quotes (1 MiB)."""

_NUMBER_CHARS = b"-+.0123456789eE"
# A string that starts at its opening quote: closed, or running to the end of the chunk
# (possessive, so a string is scanned once and never retried from an escaped quote).
_STRING = re.compile(rb'("(?:[^"\\]++|\\[\s\S])*+(?:"|\\?\Z))')
# The rest of a string that began in an earlier chunk.
_STRING_REST = re.compile(rb'(?:[^"\\]++|\\[\s\S])*+(?P<end>"|\\?\Z)')
_NUMBER_RUN = re.compile(rb"[-+.0-9eE]*+")
_LONG_NUMBER = re.compile(rb"[-+.0-9eE]{%d}" % (MAX_NUMBER_CHARS + 1))
# The fast test for "a long number may follow a separator": number characters become
# "0", the places a JSON number may start after (`[`, `,`, `:`, a quote, whitespace)
# become "S", everything else "."; then one substring search (both steps run in C at
# about 1 ns a byte, a regular expression took 8).
_SEPARATOR_CLASSES = bytes(
    ord("0") if byte in _NUMBER_CHARS else ord("S") if byte in b'[,:" \t\r\n' else ord(".")
    for byte in range(256)
)
_SEPARATOR_THEN_LONG_NUMBER = b"S" + b"0" * (MAX_NUMBER_CHARS + 1)
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_BRACKET_STEP = [0] * 256
for _open in b"[{":
    _BRACKET_STEP[_open] = 1
for _close in b"]}":
    _BRACKET_STEP[_close] = -1


class JsonLimitError(InterchangeFormatError):
    """A JSON document exceeds one of this module's limits (refused before parsing)."""


def _too_long_number(where: str, offset: int | None) -> JsonLimitError:
    at = f" at byte {offset}" if offset is not None else ""
    return JsonLimitError(
        f"{where} has a number of more than {MAX_NUMBER_CHARS} characters{at}; no value in "
        "it can be larger than a uint64, so it was refused before parsing"
    )


def _too_long_string(where: str, offset: int | None) -> JsonLimitError:
    at = f" at byte {offset}" if offset is not None else ""
    return JsonLimitError(
        f"{where} has a string of more than {MAX_STRING_BYTES} bytes{at} "
        f"(the limit is {MAX_STRING_BYTES // (1024 * 1024)} MiB per string); it was refused "
        "before parsing"
    )


class JsonGuard:
    """Checks a JSON document chunk by chunk (see the module docstring)."""

    def __init__(self, where: str, *, max_depth: int | None = None) -> None:
        self._where = where
        self._max_depth = max_depth
        self._offset = 0  # bytes fed before the current chunk
        self._in_string = False
        self._escape_pending = False  # the last chunk ended inside a string on a backslash
        self._string_len = 0  # bytes so far of the string the last chunk ended in
        self._number_len = 0  # chars so far of the number the last chunk ended in
        self._depth = 0

    def feed(self, chunk: bytes) -> None:
        """Check the next piece of the document; raises JsonLimitError."""
        try:
            self._feed(chunk)
        finally:
            self._offset += len(chunk)

    def _feed(self, chunk: bytes) -> None:
        size = len(chunk)
        pos = 0
        if self._in_string:
            if self._escape_pending:
                if not size:
                    return
                pos, self._escape_pending = 1, False
                self._string_len += 1
            rest = _STRING_REST.match(chunk, pos)
            assert rest is not None  # the pattern matches at any position
            self._string_len += rest.end() - pos
            if self._string_len > MAX_STRING_BYTES:
                raise _too_long_string(self._where, None)
            if rest.group("end") != b'"':
                self._escape_pending = rest.group("end") == b"\\"
                return
            self._in_string = False
            pos = rest.end()
        if self._number_len:
            run = _NUMBER_RUN.match(chunk, pos)
            assert run is not None
            self._number_len += run.end() - pos
            if self._number_len > MAX_NUMBER_CHARS:
                raise _too_long_number(self._where, None)
            pos = run.end()
            if pos == size:
                return
            self._number_len = 0
        body = chunk[pos:] if pos else chunk
        if b"\\" in body:
            outside = self._split_strings_escaped(body)
        else:
            outside = self._split_strings_plain(body)
        structure = b"S".join(outside)
        long_number = _LONG_NUMBER.search(structure)
        if long_number is not None:
            raise _too_long_number(self._where, self._offset_of_long_number(chunk))
        if not self._in_string:
            self._number_len = len(structure) - len(structure.rstrip(_NUMBER_CHARS))
        if self._max_depth is not None:
            brackets = structure.translate(None, _NOT_BRACKETS)
            if brackets:
                deepest = max(accumulate(map(_BRACKET_STEP.__getitem__, brackets),
                                         initial=self._depth))
                if deepest > self._max_depth:
                    raise JsonLimitError(
                        f"{self._where} is nested more than {self._max_depth} levels deep"
                    )
                self._depth += sum(map(_BRACKET_STEP.__getitem__, brackets))

    def _split_strings_plain(self, body: bytes) -> list[bytes]:
        """The text outside strings of a chunk without backslashes (so every quote opens or
        closes a string); notes a string left open at the end."""
        parts = body.split(b'"')
        if len(parts) % 2 == 0:  # an odd number of quotes: the last string is still open
            self._in_string = True
            self._string_len = len(parts[-1]) + 1  # its opening quote and content so far
            if self._string_len > MAX_STRING_BYTES:
                raise _too_long_string(self._where, None)
            parts[-1] = b""
        contents = parts[1::2]
        if contents and max(map(len, contents)) + 2 > MAX_STRING_BYTES:
            raise _too_long_string(self._where, None)
        return parts[0::2]

    def _split_strings_escaped(self, body: bytes) -> list[bytes]:
        """`_split_strings_plain` for a chunk with backslashes (escapes), by regex."""
        parts = _STRING.split(body)
        strings = parts[1::2]
        if strings:
            if max(map(len, strings)) > MAX_STRING_BYTES:
                raise _too_long_string(self._where, None)
            last = strings[-1]
            if not parts[-1]:  # the chunk ends with a string: closed, or not yet
                end = _STRING_REST.match(last, 1)
                assert end is not None
                if end.group("end") != b'"':
                    self._in_string = True
                    self._string_len = len(last)
                    self._escape_pending = end.group("end") == b"\\"
        return parts[0::2]

    def _offset_of_long_number(self, chunk: bytes) -> int | None:
        """Where the refused number starts (the error path only)."""
        pos = 0
        while pos < len(chunk):
            if chunk[pos] == 0x22:  # "
                string = _STRING.match(chunk, pos)
                assert string is not None
                pos = string.end()
                continue
            run = _NUMBER_RUN.match(chunk, pos)
            assert run is not None
            if run.end() - pos > MAX_NUMBER_CHARS:
                return self._offset + pos
            pos = max(run.end(), pos + 1)
        return None


def check_document(data: bytes | bytearray, where: str, *, max_depth: int | None = None) -> None:
    """Check a whole document; raises JsonLimitError."""
    JsonGuard(where, max_depth=max_depth).feed(bytes(data))


def piece_may_pass(piece: bytes | bytearray) -> bool:
    """For the fast interchange parser: False when the piece might break a limit.

    A cheap test first (the piece is shorter than the string limit, so it holds no string
    over it, and no run of number characters follows a separator); only a piece that fails
    it is checked exactly, as if it were a whole document. False means "not sure"; the
    exact parser, with its own guard, then decides.
    """
    if (
        len(piece) <= MAX_STRING_BYTES
        and _SEPARATOR_THEN_LONG_NUMBER not in piece.translate(_SEPARATOR_CLASSES)
    ):
        return True
    try:
        check_document(piece, "")
    except JsonLimitError:
        return False
    return True


class GuardedReader:
    """A binary stream that checks everything read through it with a `JsonGuard`.

    Seeking (back to where a parse started) starts the check afresh.
    """

    def __init__(self, stream: IO[bytes], where: str) -> None:
        self._stream = stream
        self._where = where
        self._guard = JsonGuard(where)

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        self._guard.feed(chunk)
        return chunk

    def seekable(self) -> bool:
        return self._stream.seekable()

    def tell(self) -> int:
        return self._stream.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        self._guard = JsonGuard(self._where)
        return self._stream.seek(offset, whence)


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 60
_REPR.maxother = 60


def safe_repr(value: object) -> str:
    """repr for error messages, bounded in depth and length (a 1,000-deep array from a
    hostile document would make plain repr raise RecursionError)."""
    return _REPR.repr(value)


@contextlib.contextmanager
def parse_failures_as_format_errors(where: str) -> Iterator[None]:
    """Turns what a hostile document could still make a JSON library or the interpreter
    raise into InterchangeFormatError, so every refusal is one readable line."""
    try:
        yield
    except InterchangeFormatError:
        raise
    except (RecursionError, SystemError, MemoryError, OverflowError) as exc:
        detail = " ".join(str(exc).split())[:120]
        raise InterchangeFormatError(
            f"{where} could not be parsed ({type(exc).__name__}: {detail})"
        ) from None
