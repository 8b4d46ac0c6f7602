"""The record's verdicts: allowed, or why not; the bool interface is their `allowed`; and
rule.py's judging functions refuse positional arguments."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import RecordRefusal, SlashingProtection, Verdict, Watermark
from slashing_protection.rule import (
    attestation_allowed,
    attestations_allowed,
    batch_allowed_by_columns,
    block_allowed,
)
from tests.sp_support import ROOT, pubkey

A, B, C = pubkey(1), pubkey(2), pubkey(3)
UNKNOWN = pubkey(99)


@pytest.fixture
def record(tmp_path: Path):  # type: ignore[no-untyped-def]
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B, C]) as opened:
        yield opened


def _failing_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_verdict_is_allowed_exactly_without_a_reason() -> None:
    assert Verdict().allowed and Verdict().reason is None
    for reason in RecordRefusal:
        assert not Verdict(reason).allowed
    with pytest.raises(AttributeError):
        Verdict().reason = RecordRefusal.SLASHABLE  # type: ignore[misc]


def test_block_verdicts_name_the_reason(record: SlashingProtection) -> None:
    assert record.block_verdict(A, 5) == Verdict()
    assert record.record_block_verdict(A, 5) == Verdict()
    assert record.record_block_verdict(A, 5) == Verdict(RecordRefusal.SLASHABLE)
    assert record.record_block_verdict(A, 4).reason is RecordRefusal.SLASHABLE
    assert record.block_verdict(A, 5).reason is RecordRefusal.SLASHABLE
    assert record.block_verdict(UNKNOWN, 5).reason is RecordRefusal.NOT_REGISTERED
    assert record.record_block_verdict(UNKNOWN, 5).reason is RecordRefusal.NOT_REGISTERED
    assert record.watermark(A) == Watermark(5, None, None)
    assert not record.contains(UNKNOWN)


def test_attestation_verdicts_name_the_reason_per_item(record: SlashingProtection) -> None:
    assert record.record_attestations_verdicts([(A, 2, 3)]) == [Verdict()]
    verdicts = record.record_attestations_verdicts(
        [(A, 2, 3), (B, 0, 1), (UNKNOWN, 0, 1), (A, 1, 4), (B, 0, 1), (C, 5, 9)]
    )
    assert [verdict.reason for verdict in verdicts] == [
        RecordRefusal.SLASHABLE,  # the same target again
        None,
        RecordRefusal.NOT_REGISTERED,
        RecordRefusal.SLASHABLE,  # a lower source
        RecordRefusal.SLASHABLE,  # judged against its earlier item in this batch
        None,
    ]
    assert record.watermark(B) == Watermark(None, 0, 1)
    assert record.watermark(C) == Watermark(None, 5, 9)
    assert record.attestation_verdict(C, 5, 10) == Verdict()
    assert record.attestation_verdict(C, 4, 10).reason is RecordRefusal.SLASHABLE
    assert record.attestation_verdict(UNKNOWN, 0, 1).reason is RecordRefusal.NOT_REGISTERED
    assert record.record_attestations_verdicts([]) == []


def test_a_failed_write_is_its_own_reason_and_changes_nothing(
    record: SlashingProtection, monkeypatch: pytest.MonkeyPatch
) -> None:
    record.record_attestations([(A, 1, 2)])
    _failing_fsync(monkeypatch)
    verdicts = record.record_attestations_verdicts([(A, 1, 3), (A, 0, 9), (UNKNOWN, 1, 2)])
    assert [verdict.reason for verdict in verdicts] == [
        RecordRefusal.WRITE_FAILED,
        RecordRefusal.SLASHABLE,
        RecordRefusal.NOT_REGISTERED,
    ]
    assert record.record_block_verdict(A, 7).reason is RecordRefusal.WRITE_FAILED
    assert record.watermark(A) == Watermark(None, 1, 2)
    monkeypatch.undo()
    assert record.record_block_verdict(A, 7).allowed


@pytest.mark.parametrize("fail_writes", [False, True])
def test_the_bool_interface_answers_the_verdicts_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_writes: bool
) -> None:
    batches = [
        [(A, 0, 1), (B, 0, 1)],
        [(A, 0, 1), (B, 1, 2), (UNKNOWN, 0, 1)],
        [(A, 2, 3), (A, 3, 4), (C, 0, 0)],
    ]
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("record_block", (A, 3)),
        ("record_block", (A, 3)),
        ("record_block", (UNKNOWN, 3)),
        ("block_allowed", (A, 4)),
        ("block_allowed", (UNKNOWN, 0)),
        ("attestation_allowed", (B, 0, 5)),
        ("attestation_allowed", (UNKNOWN, 0, 5)),
    ]
    twins = {
        "record_block": "record_block_verdict",
        "block_allowed": "block_verdict",
        "attestation_allowed": "attestation_verdict",
    }
    answers: dict[str, list[Any]] = {}
    for kind in ("bool", "verdict"):
        directory = tmp_path / kind
        directory.mkdir()
        with SlashingProtection.open(directory, ROOT, register=[A, B, C]) as record:
            if fail_writes:
                _failing_fsync(monkeypatch)
            got: list[Any] = []
            for batch in batches:
                if kind == "bool":
                    got.append(record.record_attestations(batch))
                else:
                    got.append(
                        [v.allowed for v in record.record_attestations_verdicts(batch)]
                    )
            for name, args in calls:
                if kind == "bool":
                    got.append(getattr(record, name)(*args))
                else:
                    got.append(getattr(record, twins[name])(*args).allowed)
            monkeypatch.undo()
        answers[kind] = got
    assert answers["bool"] == answers["verdict"]
    assert answers["bool"][0] == ([False, False] if fail_writes else [True, True])


# ----------------------------------------------------------------------------- rule.py


def test_rule_functions_refuse_positional_arguments() -> None:
    with pytest.raises(TypeError):
        block_allowed(5, 6)  # type: ignore[misc]
    with pytest.raises(TypeError):
        attestation_allowed(1, 2, 3, 4)  # type: ignore[misc]
    with pytest.raises(TypeError):
        attestations_allowed([1], [0], [2], [1])  # type: ignore[misc]
    with pytest.raises(TypeError):
        batch_allowed_by_columns([0], [1], [0], [1], 1)  # type: ignore[misc]


def test_rule_functions_by_name() -> None:
    assert block_allowed(last_slot=5, slot=6)
    assert not block_allowed(last_slot=6, slot=5)
    # A swap of source and target, or of last and new, is no longer silent: named, the
    # same four numbers give the answers of the rule.
    assert attestation_allowed(last_source=1, last_target=2, source=1, target=3)
    assert not attestation_allowed(last_source=1, last_target=3, source=1, target=2)
    assert not attestation_allowed(last_source=2, last_target=3, source=1, target=4)
    assert attestations_allowed(
        sources=[1, 0], last_sources=[1, 1], targets=[3, 5], last_targets=[2, 2]
    ) == [True, False]
    assert batch_allowed_by_columns(
        last_sources=[0, 0], sources=[1, 0], last_targets=[1, 1], targets=[2, 1], items=1
    )
    assert not batch_allowed_by_columns(
        last_sources=[0, 0], sources=[1, 0], last_targets=[1, 1], targets=[2, 1], items=2
    )
