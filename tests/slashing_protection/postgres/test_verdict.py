"""The shared record's verdicts on a real PostgreSQL: the same reasons as the file record
and bounds (side by side), a failed commit and a database away as `WRITE_FAILED`, the
rollback alarm as `SLASHABLE`; a parsed interchange imported as is; the caller's hint for a missing
record; and a real signer over the shared record telling the reasons apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import (
    ChainMismatchError,
    RecordMissingError,
    RecordRefusal,
    SlashingProtection,
    SlashingProtectionRecord,
    Verdict,
    Watermark,
    open_record,
    parse_interchange,
)
from slashing_protection.postgres import PostgresSlashingProtection
from slashing_protection.rule import Rule
from tests.slashing_protection.postgres.support import admin, allow_commits, fail_commits, snapshot
from tests.support.pg_cluster import Cluster
from tests.support.records import OTHER_ROOT, ROOT, entry, interchange, pubkey

A, B, C = pubkey(1), pubkey(2), pubkey(3)
UNKNOWN = pubkey(99)
ALLOWED = None
SLASHABLE = RecordRefusal.SLASHABLE
NOT_REGISTERED = RecordRefusal.NOT_REGISTERED
WRITE_FAILED = RecordRefusal.WRITE_FAILED


def reasons(answer: Verdict | list[Verdict]) -> RecordRefusal | None | list[RecordRefusal | None]:
    """A verdict's reason (a batch's, item by item)."""
    if isinstance(answer, list):
        return [verdict.reason for verdict in answer]
    return answer.reason


@pytest.fixture
def record(pg_url: str) -> Iterator[PostgresSlashingProtection]:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A, B, C]) as opened:
        yield opened


# ----------------------------------------------------------------------------- the reasons


def test_verdicts_equal_the_file_records_side_by_side(pg_url: str, tmp_path: Path) -> None:
    """One script of checks and records against both records: every verdict the same."""
    script: list[tuple[str, tuple[Any, ...]]] = [
        ("check_block", (A, 5)),
        ("record_block", (A, 5)),
        ("record_block", (A, 5)),
        ("record_block", (A, 4)),
        ("check_block", (A, 6)),
        ("check_block", (UNKNOWN, 5)),
        ("record_block", (UNKNOWN, 5)),
        ("record_attestations", ([(A, 2, 3)],)),
        (
            "record_attestations",
            ([(A, 2, 3), (B, 0, 1), (UNKNOWN, 0, 1), (A, 1, 4), (B, 0, 1), (C, 5, 9)],),
        ),
        ("record_attestations", ([(B, 0, 2), (C, 5, 10)],)),
        ("record_attestations", ([],)),
        ("check_attestation", (C, 5, 11)),
        ("check_attestation", (C, 4, 11)),
        ("check_attestation", (C, 5, 10)),
        ("check_attestation", (UNKNOWN, 0, 1)),
    ]
    answers: list[list[Any]] = []
    with open_record(pg_url, ROOT, register=[A, B, C]) as shared, open_record(
        tmp_path, ROOT, register=[A, B, C]
    ) as local:
        records: list[SlashingProtectionRecord] = [shared, local]
        for one in records:
            answers.append([getattr(one, name)(*args) for name, args in script])
        assert shared.export_interchange() == local.export_interchange()
    shared_answers, file_answers = answers
    assert shared_answers == file_answers
    assert [reasons(answer) for answer in shared_answers[:7]] == [
        ALLOWED,
        ALLOWED,
        SLASHABLE,
        SLASHABLE,
        ALLOWED,
        NOT_REGISTERED,
        NOT_REGISTERED,
    ]
    assert shared_answers[1] == Verdict()
    assert shared_answers[2] == Verdict(SLASHABLE, Rule.BLOCK_SLOT, 5)
    assert reasons(shared_answers[8]) == [
        SLASHABLE,  # the same target again
        ALLOWED,
        NOT_REGISTERED,
        SLASHABLE,  # a lower source
        SLASHABLE,  # judged against its earlier item in this batch
        ALLOWED,
    ]
    assert reasons(shared_answers[9]) == [ALLOWED, ALLOWED]
    assert shared_answers[8][3] == Verdict(SLASHABLE, Rule.ATTESTATION_SOURCE, 2)


def test_prechecks_record_nothing(record: PostgresSlashingProtection, pg_url: str) -> None:
    before = snapshot(pg_url)
    assert reasons(record.check_block(A, 1)) == ALLOWED
    assert reasons(record.check_attestation(A, 0, 1)) == ALLOWED
    assert snapshot(pg_url) == before


# ----------------------------------------------------------------------------- failures


def test_a_failed_commit_is_its_own_reason_and_changes_nothing(
    record: PostgresSlashingProtection, pg_url: str
) -> None:
    assert reasons(record.record_attestations([(A, 1, 2)])) == [ALLOWED]
    before = snapshot(pg_url)
    fail_commits(pg_url)
    verdicts = record.record_attestations([(A, 1, 3), (A, 0, 9), (UNKNOWN, 1, 2)])
    # Judged under the row locks: the refusals keep their reason; the allowed item was
    # not committed.
    assert reasons(verdicts) == [WRITE_FAILED, SLASHABLE, NOT_REGISTERED]
    assert reasons(record.record_block(A, 7)) == WRITE_FAILED
    assert reasons(record.record_block(UNKNOWN, 7)) == NOT_REGISTERED
    assert snapshot(pg_url) == before
    assert record.watermark(A) == Watermark(None, 1, 2)
    allow_commits(pg_url)
    assert reasons(record.record_block(A, 7)) == ALLOWED
    assert reasons(record.record_attestations([(A, 1, 3)])) == [ALLOWED]


def test_database_away_answers_write_failed(
    record: PostgresSlashingProtection, pg_url: str, pg_cluster: Cluster
) -> None:
    """Nothing can be judged: every recording answers WRITE_FAILED (never a reason the
    database did not give); the pre-checks answer from what this process saw, and a key
    it never saw as WRITE_FAILED too, not as unregistered."""
    assert reasons(record.record_attestations([(A, 0, 1)])) == [ALLOWED]
    name = pg_url.split("/")[3].split("?")[0]
    admin(pg_cluster.url(), f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    try:
        pid = record.backend_pid
        assert pid is not None
        admin(pg_cluster.url(), "SELECT pg_terminate_backend(%s)", pid)
        assert reasons(record.record_attestations([(A, 0, 2), (A, 0, 1), (UNKNOWN, 0, 1)])) == [
            WRITE_FAILED
        ] * 3
        assert reasons(record.record_block(A, 5)) == WRITE_FAILED
        assert reasons(record.check_attestation(A, 0, 2)) == ALLOWED
        assert reasons(record.check_attestation(A, 0, 1)) == SLASHABLE
        assert reasons(record.check_block(UNKNOWN, 5)) == WRITE_FAILED
    finally:
        admin(pg_cluster.url(), f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


def test_rolled_back_key_is_refused_as_slashable(
    record: PostgresSlashingProtection, pg_url: str
) -> None:
    assert reasons(record.record_block(A, 20)) == ALLOWED
    assert reasons(record.record_attestations([(A, 5, 6)])) == [ALLOWED]
    admin(
        pg_url,
        "UPDATE slashing_protection_keys SET block_slot = 3, target_epoch = 3 WHERE pubkey = %s",
        A,
    )
    assert reasons(record.check_block(A, 21)) == SLASHABLE
    assert reasons(record.check_attestation(A, 5, 7)) == SLASHABLE
    assert reasons(record.record_block(A, 21)) == SLASHABLE
    assert "rolled-back database" in record.check_block(A, 21).explain()
    assert reasons(record.record_attestations([(A, 5, 7), (B, 0, 1)])) == [SLASHABLE, ALLOWED]


# ----------------------------------------------------------------------------- import, open


def test_a_parsed_interchange_is_imported_as_is(
    record: PostgresSlashingProtection, pg_url: str
) -> None:
    parsed = parse_interchange(
        interchange([entry(A, slots=(9,), attestations=((2, 4),)), entry(UNKNOWN, slots=(1,))])
    )
    assert record.import_interchange(parsed) == frozenset({A, UNKNOWN})
    assert record.watermark(A) == Watermark(9, 2, 4)
    assert reasons(record.record_block(UNKNOWN, 1)) == SLASHABLE
    before = snapshot(pg_url)
    other = parse_interchange(interchange([entry(B, slots=(99,))], root=OTHER_ROOT))
    with pytest.raises(ChainMismatchError):
        record.import_interchange(other)
    assert snapshot(pg_url) == before


def test_missing_record_names_the_callers_hint(pg_url: str) -> None:
    hint = "start it once with --register-these-keys"
    with pytest.raises(RecordMissingError, match="--register-these-keys") as refused:
        PostgresSlashingProtection.open(pg_url, ROOT, missing_hint=hint)
    assert "--slashing-protection-db" in str(refused.value)
    with pytest.raises(RecordMissingError, match="--register-these-keys"):
        open_record(pg_url, ROOT, missing_hint=hint)
    assert snapshot(pg_url) == ((), ())


def test_one_protocol_for_the_record_the_signer_and_the_keymanager() -> None:
    from keymanager.api import KeymanagerRecord
    from validator.signing.signer import SlashingRecord

    assert SlashingRecord is SlashingProtectionRecord
    assert KeymanagerRecord is SlashingProtectionRecord
    for name in (
        "check_block",
        "check_attestation",
        "record_block",
        "record_attestations",
        "import_interchange",
    ):
        assert callable(getattr(PostgresSlashingProtection, name))
        assert callable(getattr(SlashingProtection, name))
