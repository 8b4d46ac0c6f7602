"""The exclusive hold on a validators directory, which no file deletion can break.

An `flock` on `slashing_protection.lock` alone is a lock on that file's inode: after
`rm slashing_protection.lock` the next process creates a new file, locks it, and two
processes sign with the same keys. So `DirectoryLock` takes two locks, both released by
the kernel when the holder dies (a crash never leaves a stale lock):

1. an `flock` on the validators directory itself, which cannot be replaced from under the
   holder while it exists: every other open of the directory is refused, whatever happened
   to the lock file;
2. the `flock` on `slashing_protection.lock`, as before, so that an older client (which
   only knows the file) is refused too, and the file still shows who holds the directory.

`check()` tells the holder whether it still holds what it locked: the lock file and the
directory at their paths must still be the inodes it locked. The record calls it before
every durable write and refuses to write (so refuses to sign) once it fails; a lost hold is
never taken back.

Each writer also uses its own temp file name (`unique_temp_path`), so that two writers,
even of different versions, never share one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path

from slashing_protection.errors import RecordLockedError, RecordUnreadableError

LOCK_FILE = "slashing_protection.lock"


class LockLostError(RecordLockedError):
    """The holder no longer holds the directory (its lock file or directory was replaced)."""

    def __init__(self, directory: Path, problem: str) -> None:
        super().__init__(directory)
        self.args = (
            f"the lock on the slashing-protection record in {directory} was lost ({problem}); "
            "this process signs nothing more with its keys: stop it, check that no other "
            "process uses the directory, then restart",
        )


def _flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _same_inode(path: Path, fd: int) -> bool:
    try:
        at_path = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (at_path.st_dev, at_path.st_ino) == (held.st_dev, held.st_ino)


class DirectoryLock:
    """Both locks on one validators directory (see the module docstring)."""

    def __init__(self, directory: Path, directory_fd: int, file_fd: int) -> None:
        self.directory = directory
        self._directory_fd: int | None = directory_fd
        self._file_fd: int | None = file_fd
        self._lost: str | None = None

    @classmethod
    def acquire(cls, directory: Path) -> DirectoryLock:
        """Lock `directory`; RecordLockedError when another process holds it,
        RecordUnreadableError when it cannot be locked at all."""
        try:
            directory_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise RecordUnreadableError(
                f"cannot open the validators directory {directory}: {exc.strerror or exc}"
            ) from None
        try:
            if not _flock(directory_fd):
                raise RecordLockedError(directory)
            path = directory / LOCK_FILE
            try:
                file_fd = os.open(
                    path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
                )
            except OSError as exc:
                raise RecordUnreadableError(
                    f"cannot lock {path}: {exc.strerror or exc}; the validators directory "
                    "must be writable"
                ) from None
            try:
                if not _flock(file_fd):
                    raise RecordLockedError(directory)
            except BaseException:
                os.close(file_fd)
                raise
        except BaseException:
            os.close(directory_fd)
            raise
        return cls(directory, directory_fd, file_fd)

    def check(self) -> None:
        """Raise LockLostError unless the lock file and the directory at their paths are
        still the ones locked (once lost, always lost)."""
        if self._lost is None:
            if self._file_fd is None or self._directory_fd is None:
                self._lost = "it was released"
            elif not _same_inode(self.directory / LOCK_FILE, self._file_fd):
                self._lost = f"{LOCK_FILE} was removed or replaced"
            elif not _same_inode(self.directory, self._directory_fd):
                self._lost = "the directory was moved or replaced"
        if self._lost is not None:
            raise LockLostError(self.directory, self._lost)

    @property
    def lost(self) -> bool:
        return self._lost is not None

    def release(self) -> None:
        """Release both locks (closing the descriptors releases the flocks)."""
        for name in ("_file_fd", "_directory_fd"):
            fd = getattr(self, name)
            setattr(self, name, None)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def unique_temp_path(path: Path) -> Path:
    """A temp file name beside `path` that no other process uses (pid and random part)."""
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


def leftover_temp_paths(path: Path) -> list[Path]:
    """Temp files of `path` left by interrupted writes: the fixed name older versions used
    and the per-process names of `unique_temp_path` (only call while holding the lock)."""
    found = [path.with_name(path.name + ".tmp")]
    found += path.parent.glob(f"{path.name}.*-*.tmp")
    return [candidate for candidate in found if os.path.lexists(candidate)]


def topmost_missing(directory: Path) -> Path | None:
    """The highest ancestor of `directory` (or itself) that does not exist yet; None if it
    exists. What `remove_created` may remove after a failed first use."""
    missing = None
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def remove_created(directory: Path, topmost: Path) -> None:
    """Undo the creation of `directory` (and its new parents up to `topmost`): remove the
    lock file, then each directory if it is empty. Anything else found there is kept."""
    with contextlib.suppress(OSError):
        (directory / LOCK_FILE).unlink()
    current = directory
    while True:
        try:
            current.rmdir()
        except OSError:
            return
        if current == topmost or current.parent == current:
            return
        current = current.parent
