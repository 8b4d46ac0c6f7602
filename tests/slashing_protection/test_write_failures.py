"""A write that fails signs nothing and changes nothing, in memory or on disk.

Failures are made three ways: monkeypatched os.write / os.fsync / os.replace raising, a
full disk (a tiny tmpfs filled up), and a read-only file system (a read-only bind mount
over the directory; permission bits do not stop root). Where mounting is impossible (not root,
no tmpfs) the disk-level cases raise the same errno from a monkeypatched os.write, so
they always assert the same thing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from slashing_protection import (
    RECORD_FILE,
    RecordUnreadableError,
    RecordWriteError,
    SlashingProtection,
    Watermark,
)
from slashing_protection.durable import temp_path_for
from tests.support.records import ROOT, entry, interchange, pubkey, record_bytes, verdicts_allowed

A, B, C = pubkey(1), pubkey(2), pubkey(3)


def _failures() -> float:
    value = REGISTRY.get_sample_value("validator_slashing_protection_write_failures_total")
    return 0.0 if value is None else value


def _prepared(directory: Path) -> SlashingProtection:
    record = SlashingProtection.open(directory, ROOT, register=[A, B])
    assert record.record_block(A, 5).allowed
    assert verdicts_allowed(record.record_attestations([(A, 1, 2)])) == [True]
    return record


def _assert_nothing_changes(record: SlashingProtection, directory: Path) -> None:
    before = record_bytes(directory)
    failures = _failures()
    assert record.record_block(A, 6).allowed is False
    assert (
        verdicts_allowed(record.record_attestations([(A, 2, 3), (B, 0, 1), (C, 1, 2)]))
        == [False] * 3
    )
    with pytest.raises(RecordWriteError, match="nothing was signed or changed"):
        record.import_interchange(interchange([entry(B, slots=(9,)), entry(C, slots=(1,))]))
    with pytest.raises(RecordWriteError):
        record.register([C])
    assert record_bytes(directory) == before
    assert record.watermark(A) == Watermark(5, 1, 2)
    assert record.watermark(B) == Watermark.never_signed()
    assert not record.contains(C)
    assert not temp_path_for(directory / RECORD_FILE).exists()
    assert _failures() == failures + 4


def _assert_recovers(record: SlashingProtection) -> None:
    assert record.record_block(A, 6).allowed is True
    assert verdicts_allowed(record.record_attestations([(A, 2, 3)])) == [True]


def _raise(code: int) -> Callable[..., None]:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    return broken


@pytest.mark.parametrize(
    ("function", "code"),
    [("write", errno.ENOSPC), ("fsync", errno.EIO), ("replace", errno.EROFS)],
)
def test_failing_system_call_signs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, function: str, code: int
) -> None:
    record = _prepared(tmp_path)
    try:
        monkeypatch.setattr(os, function, _raise(code))
        _assert_nothing_changes(record, tmp_path)
        monkeypatch.undo()
        _assert_recovers(record)
    finally:
        monkeypatch.undo()
        record.close()


@contextlib.contextmanager
def _tiny_tmpfs(where: Path) -> Iterator[Path | None]:
    """A 256 KiB tmpfs at `where`, or None when this process cannot mount one."""
    where.mkdir()
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(where)],
            capture_output=True,
        ).returncode
        == 0
    )
    try:
        yield where if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], check=True)


def test_full_disk_signs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _tiny_tmpfs(tmp_path / "disk") as disk:
        directory = disk or tmp_path / "disk"
        record = _prepared(directory)
        filler = directory / "filler"
        try:
            if disk is not None:
                fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * 4096)
                os.close(fd)
            else:
                monkeypatch.setattr(os, "write", _raise(errno.ENOSPC))
            _assert_nothing_changes(record, directory)
            monkeypatch.undo()
            filler.unlink(missing_ok=True)
            _assert_recovers(record)
        finally:
            record.close()


def test_read_only_file_system_signs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "validators"
    directory.mkdir()
    record = _prepared(directory)
    try:
        # A read-only bind mount over the directory: new writes there fail with EROFS
        # even for root, while the record's open lock file stays where it was.
        bound = os.geteuid() == 0 and (
            subprocess.run(
                ["mount", "--bind", "-o", "ro", str(directory), str(directory)],
                capture_output=True,
            ).returncode
            == 0
        )
        try:
            if not bound:
                monkeypatch.setattr(os, "open", _raise(errno.EROFS))
            _assert_nothing_changes(record, directory)
        finally:
            monkeypatch.undo()
            if bound:
                subprocess.run(["umount", str(directory)], check=True)
        _assert_recovers(record)
    finally:
        record.close()


def test_read_only_directory_refuses_to_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "validators"
    directory.mkdir()
    bound = os.geteuid() == 0 and (
        subprocess.run(
            ["mount", "--bind", "-o", "ro", str(directory), str(directory)], capture_output=True
        ).returncode
        == 0
    )
    try:
        if not bound:
            monkeypatch.setattr(os, "open", _raise(errno.EROFS))
        with pytest.raises(RecordUnreadableError, match="must be writable"):
            SlashingProtection.open(directory, ROOT, register=[A])
    finally:
        monkeypatch.undo()
        if bound:
            subprocess.run(["umount", str(directory)], check=True)
