"""Halted keys: a marker per key in the validators directory that only ``validator resume`` clears.

A key is halted when this client saw it live on the chain while it was not signing
with it (a doppelganger), or when the chain reports it slashed. The halt must
outlive the process: a systemd or docker restart, ``--init-slashing-protection``,
or a delete and re-import through the Keymanager API must not bring the key back
to signing. So each halt is a file, ``halts/0x<pubkey>.json``, written like the
slashing-protection record (temp file, fsync, rename, directory fsync), and the
only code that removes it is :func:`resume`, which takes the directory's lock (so
it refuses while a validator runs there) and first appends who cleared what, and
when, to ``halts/cleared.jsonl``.

Fail closed: a file in ``halts/`` named after a key that cannot be read or parsed
still halts that key (its reason is ``unreadable``).
"""

from __future__ import annotations

import getpass
import os
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from slashing_protection.durable import fsync_directory, remove_durably, write_durably
from slashing_protection.errors import RecordLockedError, RecordUnreadableError
from slashing_protection.lock import DirectoryLock

HALTS_DIRECTORY = "halts"
CLEARED_LOG = "cleared.jsonl"
_MARKER = re.compile(r"0x([0-9a-f]{96})\.json\Z")


class HaltReason(StrEnum):
    DOPPELGANGER = "doppelganger"
    SLASHED = "slashed"
    #: A marker file that cannot be read: the key stays halted all the same.
    UNREADABLE = "unreadable"


class HaltError(Exception):
    """A halt cannot be written, read or cleared; the message is one line."""


def _now_text(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()}"


@dataclass(frozen=True)
class Halt:
    pubkey: bytes
    reason: HaltReason
    detail: str
    epoch: int | None
    halted_at: str
    by: str

    def describe(self) -> str:
        what = {
            HaltReason.DOPPELGANGER: "a doppelganger was found",
            HaltReason.SLASHED: "the chain reports it slashed",
            HaltReason.UNREADABLE: "its halt marker cannot be read",
        }[self.reason]
        when = f" at epoch {self.epoch}" if self.epoch is not None else ""
        return f"{what}{when} ({self.detail}; halted {self.halted_at} by {self.by})"

    def to_json(self) -> dict[str, Any]:
        return {
            "pubkey": "0x" + self.pubkey.hex(),
            "reason": self.reason.value,
            "detail": self.detail,
            "epoch": self.epoch,
            "halted_at": self.halted_at,
            "by": self.by,
        }


def marker_name(pubkey: bytes) -> str:
    return f"0x{pubkey.hex()}.json"


def resume_command(directory: Path, pubkey: bytes) -> str:
    return f"validator resume --validators-dir {directory} --pubkey 0x{pubkey.hex()}"


def refusal_message(directory: Path, halt: Halt) -> str:
    """The one line a start (or an import) logs for a halted key."""
    return (
        f"key 0x{halt.pubkey.hex()} is halted and signs nothing: {halt.describe()}; "
        f"once you know no other client signs with it, clear the halt with "
        f"`{resume_command(directory, halt.pubkey)}` (or --all)"
    )


def _parse_marker(pubkey: bytes, raw: bytes) -> Halt:
    content = orjson.loads(raw)
    if not isinstance(content, dict) or content.get("pubkey") != "0x" + pubkey.hex():
        raise ValueError("not a halt marker of this key")
    epoch = content.get("epoch")
    if epoch is not None and (type(epoch) is not int or epoch < 0):
        raise ValueError("bad epoch")
    return Halt(
        pubkey=pubkey,
        reason=HaltReason(content["reason"]),
        detail=str(content.get("detail", "")),
        epoch=epoch,
        halted_at=str(content.get("halted_at", "?")),
        by=str(content.get("by", "?")),
    )


class HaltStore:
    """The halt markers of one validators directory."""

    def __init__(self, validators_dir: Path) -> None:
        self.validators_dir = Path(validators_dir)
        self.directory = self.validators_dir / HALTS_DIRECTORY

    def halts(self) -> dict[bytes, Halt]:
        """Every halted key; HaltError when the directory cannot be listed."""
        try:
            names = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise HaltError(
                f"cannot list the halted keys in {self.directory}: {error.strerror or error}"
            ) from None
        found: dict[bytes, Halt] = {}
        for name in names:
            match = _MARKER.match(name)
            if match is not None:
                pubkey = bytes.fromhex(match.group(1))
                found[pubkey] = self._read(pubkey)
        return found

    def get(self, pubkey: bytes) -> Halt | None:
        path = self.directory / marker_name(pubkey)
        if not path.exists() and not path.is_symlink():
            return None
        return self._read(pubkey)

    def _read(self, pubkey: bytes) -> Halt:
        path = self.directory / marker_name(pubkey)
        try:
            return _parse_marker(pubkey, path.read_bytes())
        except (OSError, ValueError, KeyError, TypeError) as error:
            return Halt(
                pubkey=pubkey,
                reason=HaltReason.UNREADABLE,
                detail=f"{path}: {error}",
                epoch=None,
                halted_at="?",
                by="?",
            )

    def halt(self, pubkey: bytes, reason: HaltReason, detail: str, epoch: int | None) -> Halt:
        """Write the key's marker durably (an existing one is kept: the first reason stands)."""
        existing = self.get(pubkey)
        if existing is not None:
            return existing
        halt = Halt(
            pubkey=pubkey,
            reason=reason,
            detail=detail,
            epoch=epoch,
            halted_at=_now_text(time.time()),
            by=f"validator pid {os.getpid()} on {socket.gethostname()}",
        )
        try:
            self.directory.mkdir(mode=0o700, exist_ok=True)
            write_durably(
                self.directory / marker_name(pubkey),
                orjson.dumps(halt.to_json(), option=orjson.OPT_INDENT_2) + b"\n",
            )
        except OSError as error:
            raise HaltError(
                f"cannot write the halt marker of 0x{pubkey.hex()} in {self.directory}: "
                f"{error.strerror or error}"
            ) from None
        return halt

    def clear(self, pubkeys: Iterable[bytes], *, who: str | None = None) -> list[Halt]:
        """Remove these keys' markers, each logged in ``cleared.jsonl`` before its removal.

        The caller holds the directory's lock (``resume`` does).
        """
        halts = self.halts()
        cleared = []
        who = who or _who()
        log_path = self.directory / CLEARED_LOG
        for pubkey in dict.fromkeys(pubkeys):
            halt = halts.get(pubkey)
            if halt is None:
                continue
            entry = {
                "pubkey": "0x" + pubkey.hex(),
                "cleared_at": _now_text(time.time()),
                "cleared_by": who,
                "pid": os.getpid(),
                "halt": halt.to_json(),
            }
            try:
                # Appended and flushed before the marker goes: a crash in between leaves the
                # key halted, never cleared without a trace.
                fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    os.write(fd, orjson.dumps(entry) + b"\n")
                    os.fsync(fd)
                finally:
                    os.close(fd)
                fsync_directory(self.directory)
                remove_durably(self.directory / marker_name(pubkey))
            except OSError as error:
                raise HaltError(
                    f"cannot clear the halt of 0x{pubkey.hex()} in {self.directory}: "
                    f"{error.strerror or error}"
                ) from None
            cleared.append(halt)
        return cleared

    def cleared_log(self) -> list[dict[str, Any]]:
        """Every clearing so far, oldest first (for the operator and tests)."""
        try:
            raw = (self.directory / CLEARED_LOG).read_bytes()
        except FileNotFoundError:
            return []
        return [orjson.loads(line) for line in raw.splitlines() if line.strip()]


def resume(
    validators_dir: Path, pubkeys: Iterable[bytes] | None, *, who: str | None = None
) -> list[Halt]:
    """Clear halts (``None``: every halt) under the directory's lock; the cleared halts.

    HaltError (one line) when a validator holds the directory, or when a named key is
    not halted (nothing is cleared then).
    """
    directory = Path(validators_dir)
    if not directory.is_dir():
        raise HaltError(f"the validators directory {directory} does not exist")
    try:
        lock = DirectoryLock.acquire(directory)
    except RecordLockedError:
        raise HaltError(
            f"cannot resume keys: {directory} is in use by another process (a running "
            "validator or slashing-protection command); stop it first"
        ) from None
    except RecordUnreadableError as error:
        raise HaltError(str(error)) from None
    try:
        store = HaltStore(directory)
        halts = store.halts()
        if pubkeys is None:
            wanted = list(halts)
        else:
            wanted = list(dict.fromkeys(pubkeys))
            missing = [pubkey for pubkey in wanted if pubkey not in halts]
            if missing:
                shown = ", ".join("0x" + pubkey.hex() for pubkey in missing)
                raise HaltError(f"not halted in {directory}: {shown}; nothing was cleared")
        lock.check()
        return store.clear(wanted, who=who)
    finally:
        lock.release()
