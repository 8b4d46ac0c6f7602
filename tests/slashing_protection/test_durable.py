from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from slashing_protection.durable import temp_path_for, write_durably


def test_write_replaces_content_with_private_mode(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    write_durably(target, b"first")
    write_durably(target, b"second")
    assert target.read_bytes() == b"second"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not temp_path_for(target).exists()


def test_leftover_temp_with_wide_mode_is_not_reused(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    leftover = temp_path_for(target)
    leftover.write_bytes(b"junk")
    os.chmod(leftover, 0o666)
    write_durably(target, b"data")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_symlink_at_temp_path_is_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "record.json"
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    temp_path_for(target).symlink_to(victim)
    write_durably(target, b"data")
    assert victim.read_bytes() == b"keep"
    assert target.read_bytes() == b"data"


def test_failed_fsync_leaves_old_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "record.json"
    write_durably(target, b"old")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "simulated I/O error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        write_durably(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert not temp_path_for(target).exists()
