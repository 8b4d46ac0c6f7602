"""The directory hold survives a deleted lock file; temp names; directory fsync; cleanup
after a failed first import."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

import slashing_protection.durable as durable
from slashing_protection import (
    LOCK_FILE,
    RECORD_FILE,
    RecordLockedError,
    RecordWriteError,
    SlashingProtection,
    Watermark,
)
from tests.support.records import ROOT, entry, interchange, pubkey, record_bytes, verdicts_allowed

REPO = Path(__file__).resolve().parents[2]
A, B = pubkey(1), pubkey(2)

_SECOND_PROCESS = """
import sys
from slashing_protection import SlashingProtection, RecordLockedError
try:
    with SlashingProtection.open(sys.argv[1], bytes(range(32))) as record:
        print("opened", record.record_block(bytes.fromhex(sys.argv[2]), 10))
except RecordLockedError as error:
    print("locked:", error)
"""


def _second_process(directory: Path, key: bytes) -> str:
    result = subprocess.run(
        [sys.executable, "-c", _SECOND_PROCESS, str(directory), key.hex()],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_deleting_the_lock_file_lets_no_second_process_in(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        (tmp_path / LOCK_FILE).unlink()
        assert _second_process(tmp_path, A).startswith("locked:")
        # The same with the offline command, which once removed the holder's temp file.
        shown = subprocess.run(
            [sys.executable, "-m", "slashing_protection", "show", "--validators-dir", tmp_path],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert shown.returncode == 1 and "in use by another process" in shown.stderr
        assert record.watermark(A) == Watermark.never_signed()


def test_the_holder_stops_writing_once_its_lock_file_is_gone(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as record:
        assert record.record_block(A, 5).allowed
        before = record_bytes(tmp_path)
        (tmp_path / LOCK_FILE).unlink()
        assert record.record_block(A, 10).allowed is False
        assert verdicts_allowed(record.record_attestations([(B, 1, 2)])) == [False]
        # A new lock file at the path is not this process's lock: still refused.
        (tmp_path / LOCK_FILE).touch()
        assert record.record_block(A, 11).allowed is False
        with pytest.raises(RecordWriteError, match="lock .* was lost"):
            record.import_interchange(interchange([entry(B, slots=(3,))]))
        assert record_bytes(tmp_path) == before
        assert record.watermark(A) == Watermark(5, None, None)


def test_a_replaced_lock_file_in_another_process_cannot_double_propose(tmp_path: Path) -> None:
    """The report's case: record_block(K, 10) succeeded in two processes."""
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        (tmp_path / LOCK_FILE).unlink()
        other = _second_process(tmp_path, A)
        mine = record.record_block(A, 10).allowed
        assert not (other.startswith("opened True") and mine)
        assert other.startswith("locked:")


def test_a_second_open_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]):
        (tmp_path / LOCK_FILE).unlink()
        with pytest.raises(RecordLockedError):
            SlashingProtection.open(tmp_path, ROOT)


def test_each_process_writes_through_its_own_temp_file(tmp_path: Path) -> None:
    """The fixed name `slashing_protection.json.tmp` was shared by every process; a
    directory in its place now stops nobody's writes."""
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        (tmp_path / (RECORD_FILE + ".tmp")).mkdir()
        assert record.record_block(A, 3).allowed is True
    leftovers = [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    assert leftovers == [RECORD_FILE + ".tmp"]


def test_leftover_per_process_temp_files_are_removed_at_open(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]):
        pass
    leftover = tmp_path / f"{RECORD_FILE}.12345-deadbeef.tmp"
    leftover.write_bytes(b"half a rec")
    with SlashingProtection.open(tmp_path, ROOT) as record:
        assert record.leftover_removed
    assert not leftover.exists()


def test_a_failed_directory_fsync_leaves_memory_at_the_state_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rename happened, so the new record may survive: memory takes it too, and the
    write answers False (nothing is signed for it)."""
    real_fsync_directory = durable.fsync_directory

    def failing(directory: Path) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as record:
        assert record.record_block(A, 5).allowed
        monkeypatch.setattr(durable, "fsync_directory", failing)
        assert record.record_block(A, 6).allowed is False
        assert verdicts_allowed(record.record_attestations([(B, 2, 3)])) == [False]
        monkeypatch.setattr(durable, "fsync_directory", real_fsync_directory)
        assert b'"slot":"6"' in record_bytes(tmp_path)
        assert record.watermark(A) == Watermark(6, None, None)
        assert record.watermark(B) == Watermark(None, 2, 3)
        # Never judged against the older state again.
        assert record.record_block(A, 6).allowed is False
        assert record.check_attestation(B, 2, 3).allowed is False
        assert record.record_block(A, 7).allowed is True
    with SlashingProtection.open(tmp_path, ROOT) as reopened:
        assert reopened.watermark(A) == Watermark(7, None, None)


def test_a_failed_import_into_a_new_directory_leaves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(interchange([entry(A)]).replace(b'"5"', b'"4"'))
    target = tmp_path / "new" / "validators"
    result = subprocess.run(
        [sys.executable, "-m", "slashing_protection", "import", bad, "--validators-dir", target],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert not (tmp_path / "new").exists()


def test_a_failed_import_into_an_existing_directory_keeps_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{")
    target = tmp_path / "validators"
    target.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "slashing_protection", "import", bad, "--validators-dir", target],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert result.returncode == 1
    assert target.is_dir()
