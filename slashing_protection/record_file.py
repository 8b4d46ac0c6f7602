"""Opening the record file: the directory's lock, and a fail-closed read of what is on disk.

Everything here runs before a `SlashingProtection` answers anything: `lock_directory`
takes the exclusive lock, `remove_leftover` clears a temp file an interrupted write left,
and `load_entries` reads the record and refuses (with a message an operator can act on)
anything that is not a minimal interchange this client wrote for the expected chain: an
empty, malformed, duplicated, non-minimal or other-chain record stops the process.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

import filelock

from slashing_protection.durable import remove_durably, temp_path_for
from slashing_protection.entries import Entries, to_internal
from slashing_protection.errors import (
    ChainMismatchError,
    InterchangeFormatError,
    RecordCorruptError,
    RecordLockedError,
    RecordUnreadableError,
)
from slashing_protection.interchange import parse_interchange

RECORD_FILE = "slashing_protection.json"
LOCK_FILE = "slashing_protection.lock"

log = logging.getLogger("slashing_protection")


def lock_directory(directory: Path, *, create_directory: bool) -> filelock.BaseFileLock:
    """The directory's exclusive lock, taken (RecordLockedError when another process holds it)."""
    if create_directory:
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise RecordUnreadableError(
                f"cannot create the validators directory {directory}: {exc.strerror or exc}"
            ) from None
    if not directory.is_dir():
        raise RecordUnreadableError(
            f"the validators directory {directory} does not exist or is not a directory"
        )
    lock = filelock.UnixFileLock(
        directory / LOCK_FILE, mode=0o600, thread_local=False, fallback_to_soft=False
    )
    try:
        lock.acquire(blocking=False)
    except filelock.Timeout:
        raise RecordLockedError(directory) from None
    except OSError as exc:
        raise RecordUnreadableError(
            f"cannot lock {directory / LOCK_FILE}: {exc.strerror or exc}; the validators "
            "directory must be writable"
        ) from None
    return lock


def remove_leftover(path: Path) -> bool:
    """Remove the temp file an interrupted write of `path` left; True when there was one."""
    temp = temp_path_for(path)
    if not os.path.lexists(temp):
        return False
    try:
        remove_durably(temp)
    except OSError as exc:
        raise RecordUnreadableError(
            f"cannot remove {temp}, left by an interrupted write ({exc.strerror}); "
            "remove it by hand (the record itself is not affected)"
        ) from None
    log.warning(
        "removed %s, left by a write that was interrupted; the record itself is intact", temp
    )
    return True


def load_entries(path: Path, expected_root: bytes | None) -> tuple[bytes, Entries] | None:
    """The record's chain and entries; None only when there is no record file at all.

    `expected_root` None takes the record's own chain (the offline commands).
    """
    data = _read(path)
    if data is None:
        return None
    if not data.strip():
        raise RecordCorruptError(
            f"{path} is empty (a crash or a full disk may have truncated it); restore "
            "it from a backup or import an interchange export, never delete it to start over "
            "unless these keys have signed nothing anywhere"
        )
    try:
        parsed = parse_interchange(data, name=str(path))
    except InterchangeFormatError as exc:
        raise RecordCorruptError(
            f"{exc}; the record cannot be trusted, restore it from a backup or an "
            "interchange export"
        ) from None
    if parsed.repeated_pubkeys:
        raise RecordCorruptError(
            f"{path} lists the key 0x{parsed.repeated_pubkeys[0].hex()} more than once; "
            "this client never writes that, so the file was edited or damaged: merge it "
            "with 'slashing-protection import' into a fresh directory instead"
        )
    if not parsed.minimal:
        raise RecordCorruptError(
            f"{path} holds more than one block or attestation for a key, so it was "
            "not written by this client; import it with 'slashing-protection import' "
            "into a fresh directory instead"
        )
    root = parsed.genesis_validators_root
    if expected_root is not None and root != expected_root:
        raise ChainMismatchError(
            f"{path} is the record of the chain with genesis_validators_root "
            f"0x{root.hex()}, but the beacon node is on 0x{expected_root.hex()}; "
            "point the validator at the right beacon node or the right --validators-dir"
        )
    entries = Entries.empty().with_entries(
        {
            pubkey: (to_internal(m.slot), to_internal(m.source), to_internal(m.target))
            for pubkey, m in parsed.marks.items()
        }
    )
    return root, entries


def _read(path: Path) -> bytes | None:
    """The record's bytes; None only when nothing is there at all."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if os.path.lexists(path):  # a dangling symlink is not "absent"
            raise _unreadable(path, "is a symbolic link") from None
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _unreadable(path, "is a symbolic link") from None
        raise _unreadable(path, f"cannot be opened ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise _unreadable(path, f"is {kind}")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _unreadable(path, f"cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)


def _unreadable(path: Path, problem: str) -> RecordUnreadableError:
    return RecordUnreadableError(
        f"{path} {problem}; the record must be a regular file this process can read, "
        "fix it (or restore it from a backup) before starting"
    )
