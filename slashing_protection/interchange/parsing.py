"""`parse_interchange`: the fast parser first where the input can be read twice, the exact
parser whenever the fast one is not sure (see `fast` and `exact`)."""

from __future__ import annotations

import gc
import io
import os
from pathlib import Path
from typing import IO, Any

from slashing_protection.errors import InterchangeFormatError, InterchangeReadError
from slashing_protection.interchange.exact import parse_exact
from slashing_protection.interchange.fast import GiveUp, parse_fast
from slashing_protection.interchange.model import InterchangeSource, ParsedInterchange, Progress


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
            return parse_fast(stream.read, where, progress)
        except (GiveUp, InterchangeFormatError, ValueError, TypeError, KeyError, AttributeError):
            pass
        finally:
            if gc_was_enabled:
                gc.enable()
        stream.seek(start)
    reader: Any = _CountingReader(stream, progress) if progress is not None else stream
    return parse_exact(reader, where)


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
