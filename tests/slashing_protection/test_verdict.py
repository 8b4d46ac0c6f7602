"""The record's verdicts: allowed, or why not and the bound it hit; one method per question;
and rule.py's judging functions refuse positional arguments."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from slashing_protection import (
    RecordRefusal,
    SlashingProtection,
    SlashingProtectionRecord,
    Verdict,
    Watermark,
)
from slashing_protection.rule import (
    Rule,
    attestations_safe,
    batch_safe_by_columns,
    broken_attestation_rule,
    broken_block_rule,
)
from tests.support.records import ROOT, pubkey

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
    assert record.check_block(A, 5) == Verdict()
    assert record.record_block(A, 5) == Verdict()
    assert record.record_block(A, 5) == Verdict(RecordRefusal.SLASHABLE, Rule.BLOCK_SLOT, 5)
    assert record.record_block(A, 4).reason is RecordRefusal.SLASHABLE
    assert record.check_block(A, 5).reason is RecordRefusal.SLASHABLE
    assert record.check_block(UNKNOWN, 5).reason is RecordRefusal.NOT_REGISTERED
    assert record.record_block(UNKNOWN, 5).reason is RecordRefusal.NOT_REGISTERED
    assert record.watermark(A) == Watermark(5, None, None)
    assert not record.contains(UNKNOWN)


def test_attestation_verdicts_name_the_reason_per_item(record: SlashingProtection) -> None:
    assert record.record_attestations([(A, 2, 3)]) == [Verdict()]
    verdicts = record.record_attestations(
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
    assert record.check_attestation(C, 5, 10) == Verdict()
    assert record.check_attestation(C, 4, 10).reason is RecordRefusal.SLASHABLE
    assert record.check_attestation(UNKNOWN, 0, 1).reason is RecordRefusal.NOT_REGISTERED
    assert record.record_attestations([]) == []


def test_a_failed_write_is_its_own_reason_and_changes_nothing(
    record: SlashingProtection, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert record.record_attestations([(A, 1, 2)]) == [Verdict()]
    _failing_fsync(monkeypatch)
    verdicts = record.record_attestations([(A, 1, 3), (A, 0, 9), (UNKNOWN, 1, 2)])
    assert [verdict.reason for verdict in verdicts] == [
        RecordRefusal.WRITE_FAILED,
        RecordRefusal.SLASHABLE,
        RecordRefusal.NOT_REGISTERED,
    ]
    assert record.record_block(A, 7).reason is RecordRefusal.WRITE_FAILED
    assert record.watermark(A) == Watermark(None, 1, 2)
    monkeypatch.undo()
    assert record.record_block(A, 7).allowed


def test_a_refusal_carries_the_rule_and_the_watermark_it_hit(
    record: SlashingProtection,
) -> None:
    assert record.record_block(A, 7).allowed
    below = record.check_block(A, 7)
    assert (below.rule, below.watermark) == (Rule.BLOCK_SLOT, 7)
    assert "highest block slot for this key is 7" in below.explain()
    assert record.record_attestations([(B, 3, 5)]) == [Verdict()]
    lower_source, same_target = record.record_attestations([(B, 2, 9), (B, 3, 5)])
    assert (lower_source.rule, lower_source.watermark) == (Rule.ATTESTATION_SOURCE, 3)
    assert "source epoch for this key is 3" in lower_source.explain()
    assert (same_target.rule, same_target.watermark) == (Rule.ATTESTATION_TARGET, 5)
    # The second item of a key is judged by the first, which the batch took in.
    first, in_batch = record.record_attestations([(C, 0, 2), (C, 0, 2)])
    assert first.allowed
    assert (in_batch.rule, in_batch.watermark) == (Rule.ATTESTATION_TARGET, 2)
    assert record.check_attestation(C, 0, 2).watermark == 2
    assert record.check_attestation(UNKNOWN, 0, 1).rule is None
    assert Verdict().explain() == ""


def test_a_verdict_is_not_a_bool() -> None:
    # Read as a bool a refusal would pass as allowed: asking is an error instead.
    with pytest.raises(TypeError, match="allowed"):
        bool(Verdict(RecordRefusal.SLASHABLE))


def test_one_method_per_question() -> None:
    for twin in (
        "block_allowed",
        "attestation_allowed",
        "block_verdict",
        "attestation_verdict",
        "record_block_verdict",
        "record_attestations_verdicts",
    ):
        assert not hasattr(SlashingProtection, twin)
        assert not hasattr(SlashingProtectionRecord, twin)


# ----------------------------------------------------------------------------- rule.py


def test_rule_functions_refuse_positional_arguments() -> None:
    with pytest.raises(TypeError):
        broken_block_rule(5, 6)  # type: ignore[misc]
    with pytest.raises(TypeError):
        broken_attestation_rule(1, 2, 3, 4)  # type: ignore[misc]
    with pytest.raises(TypeError):
        attestations_safe([1], [0], [2], [1])  # type: ignore[misc]
    with pytest.raises(TypeError):
        batch_safe_by_columns([0], [1], [0], [1], 1)  # type: ignore[misc]


def test_rule_functions_by_name() -> None:
    assert broken_block_rule(last_slot=5, slot=6) is None
    assert broken_block_rule(last_slot=6, slot=5) is Rule.BLOCK_SLOT
    # A swap of source and target, or of last and new, is no longer silent: named, the
    # same four numbers give the answers of the rule.
    assert broken_attestation_rule(last_source=1, last_target=2, source=1, target=3) is None
    assert (
        broken_attestation_rule(last_source=1, last_target=3, source=1, target=2)
        is Rule.ATTESTATION_TARGET
    )
    assert (
        broken_attestation_rule(last_source=2, last_target=3, source=1, target=4)
        is Rule.ATTESTATION_SOURCE
    )
    assert attestations_safe(
        sources=[1, 0], last_sources=[1, 1], targets=[3, 5], last_targets=[2, 2]
    ) == [True, False]
    assert batch_safe_by_columns(
        last_sources=[0, 0], sources=[1, 0], last_targets=[1, 1], targets=[2, 1], items=1
    )
    assert not batch_safe_by_columns(
        last_sources=[0, 0], sources=[1, 0], last_targets=[1, 1], targets=[2, 1], items=2
    )
