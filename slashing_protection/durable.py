"""Durable file replacement: temp file, fsync, rename, directory fsync.

After `write_durably` returns, the new content is what a reader finds at `path`
even if the machine loses power immediately afterwards; if it raises, `path`
still holds its previous content. Shared by the slashing-protection record and
the keymanager's files so that there is one implementation of the sequence.
"""

from __future__ import annotations

import os
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_path_for(path: Path) -> Path:
    """The temp file that `write_durably` uses for `path` (same directory, fixed name)."""
    return path.with_name(path.name + TEMP_SUFFIX)


def fsync_directory(directory: Path) -> None:
    """Flush a directory entry change (create, rename, unlink) to disk."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class DirectorySyncError(OSError):
    """The rename succeeded but the directory could not be flushed: the new content is
    at `path` now and may or may not survive a power loss."""


def write_durably(
    path: Path, data: bytes, *, mode: int = 0o600, temp: Path | None = None
) -> None:
    """Replace `path` with `data` durably.

    The temp file (`temp`, by default `temp_path_for(path)`) is created fresh with O_EXCL
    (after removing any leftover), so it never inherits an old file's mode and is never
    written through a symlink. Raises DirectorySyncError when only the final directory
    flush failed (the new content is then in place), another OSError when `path` still
    holds its previous content.
    """
    path = Path(path)
    directory = path.parent
    temp = temp_path_for(path) if temp is None else temp
    try:
        os.unlink(temp)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    try:
        fsync_directory(directory)
    except OSError as exc:
        raise DirectorySyncError(exc.errno, exc.strerror, str(directory)) from exc


def remove_durably(path: Path) -> bool:
    """Unlink `path` and flush the directory; False when it was already absent."""
    path = Path(path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    fsync_directory(path.parent)
    return True
