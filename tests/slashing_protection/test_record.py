"""The file record, beyond what it shares with the shared record (test_record_contract.py
runs the rule, pre-checks and import/export semantics on both): one durable write per
batch, reopening, registering, fail-closed opening, the lock, thread safety and metrics."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from prometheus_client import REGISTRY

from slashing_protection import (
    LOCK_FILE,
    RECORD_FILE,
    ChainMismatchError,
    InterchangeFormatError,
    RecordCorruptError,
    RecordLockedError,
    RecordMissingError,
    RecordUnreadableError,
    SlashingProtection,
    Watermark,
)
from slashing_protection.durable import temp_path_for
from tests.support.official_vectors import REPO_ROOT, official_vectors
from tests.support.records import (
    OTHER_ROOT,
    ROOT,
    entry,
    interchange,
    pubkey,
    record_bytes,
    verdicts_allowed,
)

A, B, C = pubkey(1), pubkey(2), pubkey(3)
UNKNOWN = pubkey(99)


@pytest.fixture
def record(tmp_path: Path):  # type: ignore[no-untyped-def]
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as opened:
        yield opened


# ---------------------------------------------------------------------------------- batches


def test_batch_is_one_durable_write(
    record: SlashingProtection, monkeypatch: pytest.MonkeyPatch
) -> None:
    import slashing_protection.record as record_module

    writes: list[int] = []
    real_write = record_module.write_durably

    def counting_write(path: Path, data: bytes, **options: Any) -> None:
        writes.append(len(data))
        real_write(path, data, **options)

    monkeypatch.setattr(record_module, "write_durably", counting_write)
    assert (
        verdicts_allowed(record.record_attestations([(A, 1, 2), (B, 1, 2), (A, 1, 3)]))
        == [True] * 3
    )
    assert len(writes) == 1
    assert verdicts_allowed(record.record_attestations([])) == []
    assert verdicts_allowed(record.record_attestations([(A, 1, 3), (UNKNOWN, 5, 6)])) == [
        False,
        False,
    ]
    assert len(writes) == 1, "a batch with nothing allowed writes nothing"


# ----------------------------------------------------------------------------- persistence


def test_reopen_restores_the_record(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B, C]) as record:
        assert record.record_block(A, 7).allowed
        assert verdicts_allowed(record.record_attestations([(A, 1, 2), (B, 0, 0)])) == [True, True]
    with SlashingProtection.open(tmp_path, ROOT) as record:
        assert record.pubkeys() == [A, B, C]
        assert record.watermark(A) == Watermark(7, 1, 2)
        assert record.watermark(B) == Watermark(None, 0, 0)
        assert record.watermark(C) == Watermark.never_signed()
        assert record.record_block(A, 7).allowed is False
        assert verdicts_allowed(record.record_attestations([(B, 0, 0)])) == [False]


def test_record_file_is_a_private_minimal_interchange(record: SlashingProtection) -> None:
    record.record_block(A, 3)
    record.record_attestations([(A, 1, 2)])
    path = record.path
    assert path.name == RECORD_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    document = json.loads(path.read_bytes())
    schema = json.loads(official_vectors("interchange", "schema.json").read_text())
    jsonschema.Draft7Validator(schema).validate(document)
    assert document["metadata"] == {
        "interchange_format_version": "5",
        "genesis_validators_root": "0x" + ROOT.hex(),
    }
    assert document["data"] == [
        {
            "pubkey": "0x" + A.hex(),
            "signed_blocks": [{"slot": "3"}],
            "signed_attestations": [{"source_epoch": "1", "target_epoch": "2"}],
        },
        {"pubkey": "0x" + B.hex(), "signed_blocks": [], "signed_attestations": []},
    ]


def test_register_adds_keys_and_never_lowers(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        assert record.record_block(A, 9).allowed
        assert verdicts_allowed(record.record_attestations([(A, 4, 5)])) == [True]
        record.register([A, B])
        record.register([B])
        assert record.contains(B) and not record.contains(C)
        assert record.watermark(A) == Watermark(9, 4, 5)
    with SlashingProtection.open(tmp_path, ROOT, register=[A, C]) as record:
        assert record.watermark(A) == Watermark(9, 4, 5)
        assert record.pubkeys() == [A, B, C]


def test_missing_record_is_refused_without_keys_to_register(tmp_path: Path) -> None:
    # The record names no caller's flag; the caller's hint (the validator's) is shown.
    with pytest.raises(RecordMissingError, match="never having signed") as refused:
        SlashingProtection.open(tmp_path, ROOT)
    assert "--init-slashing-protection" not in str(refused.value)
    hint = "if these keys have never signed anywhere, start once with --init-slashing-protection"
    with pytest.raises(RecordMissingError, match="--init-slashing-protection"):
        SlashingProtection.open(tmp_path, ROOT, missing_hint=hint)
    assert not (tmp_path / RECORD_FILE).exists()
    with SlashingProtection.open(tmp_path, ROOT, create=True) as record:
        assert record.pubkeys() == []
    with SlashingProtection.open(tmp_path, ROOT) as record:
        assert record.pubkeys() == []


# ----------------------------------------------------------------------------- fail closed


def _valid_record(tmp_path: Path) -> bytes:
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as record:
        record.record_block(A, 5)
    return record_bytes(tmp_path)


def _shape_empty(path: Path) -> None:
    path.write_bytes(b"")


def _shape_blank(path: Path) -> None:
    path.write_bytes(b" \n")


def _shape_truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-10])


def _shape_not_json(path: Path) -> None:
    path.write_bytes(b"\x00\x01garbage")


def _shape_wrong_version(path: Path) -> None:
    document = json.loads(path.read_bytes())
    document["metadata"]["interchange_format_version"] = "4"
    path.write_text(json.dumps(document))


def _shape_duplicate_key(path: Path) -> None:
    document = json.loads(path.read_bytes())
    document["data"].append(document["data"][0])
    path.write_text(json.dumps(document))


def _shape_not_minimal(path: Path) -> None:
    document = json.loads(path.read_bytes())
    document["data"][0]["signed_blocks"].append({"slot": "1"})
    path.write_text(json.dumps(document))


def _shape_data_not_a_list(path: Path) -> None:
    document = json.loads(path.read_bytes())
    document["data"] = {"item": document["data"][0]}
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    "damage",
    [
        _shape_empty,
        _shape_blank,
        _shape_truncated,
        _shape_not_json,
        _shape_wrong_version,
        _shape_duplicate_key,
        _shape_not_minimal,
        _shape_data_not_a_list,
    ],
)
def test_damaged_record_refuses_to_open(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    _valid_record(tmp_path)
    path = tmp_path / RECORD_FILE
    damage(path)
    damaged = path.read_bytes()
    with pytest.raises(RecordCorruptError) as raised:
        SlashingProtection.open(tmp_path, ROOT, register=[A, C])
    assert str(path) in str(raised.value)
    assert path.read_bytes() == damaged
    # the lock was released: a second attempt gets the same verdict, not "locked"
    with pytest.raises(RecordCorruptError):
        SlashingProtection.open_offline(tmp_path)


def test_record_of_another_chain_refuses_to_open(tmp_path: Path) -> None:
    before = _valid_record(tmp_path)
    with pytest.raises(ChainMismatchError, match="0x" + OTHER_ROOT.hex()):
        SlashingProtection.open(tmp_path, OTHER_ROOT, register=[A])
    assert record_bytes(tmp_path) == before


def test_directory_at_the_record_path_refuses_to_open(tmp_path: Path) -> None:
    (tmp_path / RECORD_FILE).mkdir()
    with pytest.raises(RecordUnreadableError, match="directory"):
        SlashingProtection.open(tmp_path, ROOT, register=[A])


def test_symlink_at_the_record_path_refuses_to_open(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    good = _valid_record(elsewhere)
    validators = tmp_path / "validators"
    validators.mkdir()
    (validators / RECORD_FILE).symlink_to(elsewhere / RECORD_FILE)
    with pytest.raises(RecordUnreadableError, match="symbolic link"):
        SlashingProtection.open(validators, ROOT, register=[A])
    (validators / RECORD_FILE).unlink()
    (validators / RECORD_FILE).symlink_to(tmp_path / "nothing-here")
    with pytest.raises(RecordUnreadableError, match="symbolic link"):
        SlashingProtection.open(validators, ROOT, register=[A])
    assert (elsewhere / RECORD_FILE).read_bytes() == good


def test_leftover_temp_file_is_removed_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = _valid_record(tmp_path)
    temp_path_for(tmp_path / RECORD_FILE).write_bytes(b'{"half a write')
    with caplog.at_level(logging.WARNING, logger="slashing_protection"):
        with SlashingProtection.open(tmp_path, ROOT) as record:
            assert record.leftover_removed
            assert record.watermark(A) == Watermark(5, None, None)
    assert "interrupted" in caplog.text
    assert not temp_path_for(tmp_path / RECORD_FILE).exists()
    assert record_bytes(tmp_path) == before


def test_leftover_temp_that_cannot_be_removed_refuses_to_open(tmp_path: Path) -> None:
    before = _valid_record(tmp_path)
    temp_path_for(tmp_path / RECORD_FILE).mkdir()
    with pytest.raises(RecordUnreadableError, match="remove it by hand"):
        SlashingProtection.open(tmp_path, ROOT)
    assert record_bytes(tmp_path) == before


def test_missing_validators_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordUnreadableError, match="does not exist"):
        SlashingProtection.open(tmp_path / "absent", ROOT, register=[A])


# ----------------------------------------------------------------------------- the lock

_HOLD_LOCK = """
import sys, time
from slashing_protection import SlashingProtection
record = SlashingProtection.open(sys.argv[1], bytes(range(32)), register=[b"\\x01" * 48])
print("locked", flush=True)
time.sleep(60)
"""

_TRY_LOCK = """
import sys
from slashing_protection import SlashingProtection, RecordLockedError
try:
    SlashingProtection.open(sys.argv[1], bytes(range(32)), register=[b"\\x01" * 48]).close()
except RecordLockedError as exc:
    print("refused:", exc)
    sys.exit(3)
print("opened")
"""


def _python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def test_lock_refuses_a_second_opener_in_the_same_process(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]):
        with pytest.raises(RecordLockedError, match=str(tmp_path)):
            SlashingProtection.open(tmp_path, ROOT)
        with pytest.raises(RecordLockedError):
            SlashingProtection.open_offline(tmp_path)
    with SlashingProtection.open(tmp_path, ROOT) as record:  # close() released it
        assert record.contains(A)


def test_lock_refuses_a_second_process_and_is_free_after_kill_9(tmp_path: Path) -> None:
    cwd = REPO_ROOT
    holder = subprocess.Popen(
        _python(_HOLD_LOCK, str(tmp_path)), stdout=subprocess.PIPE, text=True, cwd=cwd
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        second = subprocess.run(
            _python(_TRY_LOCK, str(tmp_path)), capture_output=True, text=True, cwd=cwd, timeout=30
        )
        assert second.returncode == 3, second.stderr
        assert "in use by another process" in second.stdout
        assert time.monotonic() - started < 10, "the second process must not wait for the lock"
        with pytest.raises(RecordLockedError):
            SlashingProtection.open(tmp_path, ROOT)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert (tmp_path / LOCK_FILE).exists()  # the file stays; the kernel dropped the lock
    third = subprocess.run(
        _python(_TRY_LOCK, str(tmp_path)), capture_output=True, text=True, cwd=cwd, timeout=30
    )
    assert third.returncode == 0 and "opened" in third.stdout, third.stderr


# ----------------------------------------------------------------------------- import / export


def test_import_raises_watermarks_and_survives_a_restart(record: SlashingProtection) -> None:
    covered = record.import_interchange(
        interchange([entry(A, slots=(3, 40, 7), attestations=((1, 2), (6, 5), (3, 9))), entry(C)])
    )
    assert covered == {A, C}
    assert record.watermark(A) == Watermark(40, 6, 9)
    assert record.watermark(C) == Watermark.never_signed()
    assert record.record_block(A, 40).allowed is False
    assert verdicts_allowed(record.record_attestations([(A, 5, 10), (A, 6, 10)])) == [False, True]
    directory = record.path.parent
    record.close()
    with SlashingProtection.open(directory, ROOT) as reopened:
        assert reopened.watermark(A) == Watermark(40, 6, 10)


def test_export_round_trips_through_a_fresh_directory(
    record: SlashingProtection, tmp_path: Path
) -> None:
    record.record_block(A, 4)
    record.record_attestations([(B, 2, 3)])
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    with SlashingProtection.open_offline(fresh) as other:
        assert not other.exists
        other.import_interchange(record.export_interchange())
        assert other.genesis_validators_root == ROOT
        assert other.export_interchange() == record.export_interchange()


def test_offline_open_of_an_empty_directory_creates_nothing_until_an_import(
    tmp_path: Path,
) -> None:
    with SlashingProtection.open_offline(tmp_path) as record:
        with pytest.raises(RecordMissingError):
            record.genesis_validators_root  # noqa: B018
        with pytest.raises(InterchangeFormatError):
            record.import_interchange(b"{}")
        assert not (tmp_path / RECORD_FILE).exists()
        record.import_interchange(interchange([], root=OTHER_ROOT))
    with SlashingProtection.open(tmp_path, OTHER_ROOT) as record:
        assert record.pubkeys() == []


# ----------------------------------------------------------------------------- threads, metrics


def test_concurrent_threads_never_double_sign(tmp_path: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        approved: list[list[int]] = [[] for _ in range(4)]

        def attest(worker: int) -> None:
            for target in range(1, 61):
                if verdicts_allowed(record.record_attestations([(A, 0, target)])) == [True]:
                    approved[worker].append(target)
                if record.check_block(A, target).allowed and record.record_block(A, target).allowed:
                    approved[worker].append(-target)

        threads = [threading.Thread(target=attest, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        signed = [value for worker in approved for value in worker]
        assert len(signed) == len(set(signed)), "a target or slot was approved twice"
        assert record.watermark(A) == Watermark(max(-v for v in signed if v < 0), 0, max(signed))


def _sample(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    return 0.0 if value is None else value


def test_writes_are_timed_in_the_metrics(record: SlashingProtection) -> None:
    before = _sample("validator_slashing_protection_write_seconds_count")
    record.record_block(A, 1)
    record.record_attestations([(A, 1, 2), (B, 1, 2)])
    assert _sample("validator_slashing_protection_write_seconds_count") == before + 2


def test_in_use_lock_file_is_private(record: SlashingProtection) -> None:
    assert stat.S_IMODE(os.stat(record.path.parent / LOCK_FILE).st_mode) == 0o600
