"""What both records promise, run on each: the file record in a directory and the shared
record in a real PostgreSQL database. The rule, refusals that change nothing, batches,
pre-checks, import that never lowers and is all or nothing, export of named keys, and a
closed record. Each record's own concerns (durable writes and the lock; transactions,
connections and the rollback alarm) stay in test_record.py and postgres/test_record.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from slashing_protection import (
    ChainMismatchError,
    InterchangeFormatError,
    RecordClosedError,
    SlashingProtection,
    SlashingProtectionRecord,
    Watermark,
)
from slashing_protection.postgres import PostgresSlashingProtection
from tests.slashing_protection.postgres.support import snapshot
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


@dataclass
class Opened:
    """A record holding keys A and B, and two looks at what it has stored, taken from
    outside it: everything (to assert that nothing changed) and one key's watermark."""

    record: SlashingProtectionRecord
    stored: Callable[[], object]
    stored_watermark: Callable[[bytes], Watermark | None]


def _file_watermark(directory: Path, key: bytes) -> Watermark | None:
    document = json.loads(record_bytes(directory))
    for item in document["data"]:
        if item["pubkey"] == "0x" + key.hex():
            slots = [int(block["slot"]) for block in item["signed_blocks"]]
            votes = item["signed_attestations"]
            return Watermark(
                max(slots, default=None),
                max((int(vote["source_epoch"]) for vote in votes), default=None),
                max((int(vote["target_epoch"]) for vote in votes), default=None),
            )
    return None


def _database_watermark(url: str, key: bytes) -> Watermark | None:
    with PostgresSlashingProtection.open(url, ROOT) as other:  # another connection
        return other.watermark(key)


@pytest.fixture(params=["file", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    if request.param == "file":
        with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as record:
            yield Opened(
                record,
                lambda: record_bytes(tmp_path),
                lambda key: _file_watermark(tmp_path, key),
            )
    else:
        url: str = request.getfixturevalue("pg_url")
        with PostgresSlashingProtection.open(url, ROOT, register=[A, B]) as shared:
            yield Opened(shared, lambda: snapshot(url), lambda key: _database_watermark(url, key))


# ----------------------------------------------------------------------------- the rule


def test_block_slot_zero_is_signable_exactly_once(opened: Opened) -> None:
    assert opened.record.record_block(A, 0).allowed is True
    assert opened.record.record_block(A, 0).allowed is False


@pytest.mark.parametrize(
    ("first", "second", "allowed"),
    [(5, 6, True), (5, 5, False), (5, 4, False), (5, 2**64 - 1, True)],
)
def test_block_needs_a_higher_slot(
    opened: Opened, first: int, second: int, allowed: bool
) -> None:
    assert opened.record.record_block(A, first).allowed
    assert opened.record.record_block(A, second).allowed is allowed
    expected = Watermark(second if allowed else first, None, None)
    assert opened.record.watermark(A) == expected
    assert opened.stored_watermark(A) == expected


@pytest.mark.parametrize(
    ("first", "second", "allowed"),
    [
        ((0, 0), (0, 0), False),  # genesis attestation once only
        ((2, 5), (2, 5), False),  # byte-identical re-sign is refused (documented deviation)
        ((2, 5), (3, 5), False),  # double vote: same target
        ((2, 5), (1, 6), False),  # surrounds the earlier one (lower source)
        ((2, 5), (3, 4), False),  # surrounded by the earlier one (lower target)
        ((2, 5), (2, 6), True),
        ((2, 5), (4, 6), True),
        ((2, 5), (5, 9), True),
        ((2, 5), (2**64 - 1, 2**64 - 1), True),  # the largest uint64 is stored exactly
        ((8, 7), (8, 8), True),  # imported source above target still orders later votes
    ],
)
def test_attestation_rule(
    opened: Opened, first: tuple[int, int], second: tuple[int, int], allowed: bool
) -> None:
    assert verdicts_allowed(opened.record.record_attestations([(A, *first)])) == [True]
    assert verdicts_allowed(opened.record.record_attestations([(A, *second)])) == [allowed]
    expected = second if allowed else first
    assert opened.stored_watermark(A) == Watermark(None, *expected)


def test_unknown_key_is_refused_and_changes_nothing(opened: Opened) -> None:
    before = opened.stored()
    assert opened.record.record_block(UNKNOWN, 1).allowed is False
    assert verdicts_allowed(opened.record.record_attestations([(UNKNOWN, 1, 2)])) == [False]
    assert not opened.record.contains(UNKNOWN) and opened.record.watermark(UNKNOWN) is None
    assert opened.stored() == before


def test_batch_judges_a_repeated_key_against_its_earlier_verdict(opened: Opened) -> None:
    items = [(A, 1, 2), (B, 0, 1), (A, 1, 2), (A, 0, 3), (A, 2, 3), (UNKNOWN, 1, 2), (B, 0, 1)]
    assert verdicts_allowed(opened.record.record_attestations(items)) == [
        True, True, False, False, True, False, False,
    ]
    assert opened.stored_watermark(A) == Watermark(None, 2, 3)
    assert opened.stored_watermark(B) == Watermark(None, 0, 1)


def test_batch_with_some_refused_records_the_others(opened: Opened) -> None:
    assert verdicts_allowed(opened.record.record_attestations([(A, 3, 4)])) == [True]
    items = [(A, 2, 5), (B, 1, 2), (UNKNOWN, 0, 1)]
    assert verdicts_allowed(opened.record.record_attestations(items)) == [
        False,
        True,
        False,
    ]
    assert opened.stored_watermark(A) == Watermark(None, 3, 4)
    assert opened.stored_watermark(B) == Watermark(None, 1, 2)


def test_malformed_arguments_raise_and_change_nothing(opened: Opened) -> None:
    record = opened.record
    before = opened.stored()
    with pytest.raises(ValueError):
        record.record_block(A[:47], 1)
    with pytest.raises(ValueError):
        record.record_block(A, -1)
    with pytest.raises(ValueError):
        record.record_block(A, 2**64)
    with pytest.raises(ValueError):
        record.record_attestations([(A, 1, True)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        record.record_attestations([(A, 1)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        record.record_attestations([(A, -1, 2)])
    with pytest.raises(ValueError):
        record.record_attestations([(A[:47], 1, 2)])
    with pytest.raises(ValueError):
        record.record_attestations([(bytearray(A), 1, 2)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        record.record_attestations([(B, 1, 2), (A, "1", 2)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        record.record_attestations([(B, 1, 2), (A, 1, 2.5)])  # type: ignore[list-item]
    assert record.watermark(A) == Watermark(None, None, None)
    assert opened.stored() == before


def test_prechecks_follow_the_rule_and_record_nothing(opened: Opened) -> None:
    record = opened.record
    assert record.record_block(A, 10).allowed
    assert verdicts_allowed(record.record_attestations([(A, 3, 4)])) == [True]
    before = opened.stored()
    assert record.check_block(A, 11).allowed and not record.check_block(A, 10).allowed
    assert record.check_attestation(A, 3, 5).allowed
    assert not record.check_attestation(A, 2, 5).allowed
    assert not record.check_attestation(A, 3, 4).allowed
    assert record.check_block(B, 0).allowed and record.check_attestation(B, 0, 0).allowed
    assert not record.check_block(UNKNOWN, 1).allowed
    assert not record.check_attestation(UNKNOWN, 1, 2).allowed
    assert opened.stored() == before
    assert record.record_block(A, 11).allowed  # the pre-check recorded nothing


# ----------------------------------------------------------------------------- import / export


def test_import_never_lowers_a_watermark(opened: Opened) -> None:
    assert opened.record.record_block(A, 100).allowed
    assert verdicts_allowed(opened.record.record_attestations([(A, 20, 21)])) == [True]
    opened.record.import_interchange(
        interchange([entry(A, slots=(5,), attestations=((30, 10),))])
    )
    assert opened.stored_watermark(A) == Watermark(100, 30, 21)


def test_import_merges_a_repeated_key_by_maximum(opened: Opened) -> None:
    opened.record.import_interchange(
        interchange(
            [entry(A, slots=(9,), attestations=((1, 8),)), entry(A, attestations=((4, 5),))]
        )
    )
    assert opened.stored_watermark(A) == Watermark(9, 4, 8)


def test_import_of_another_chain_changes_nothing(opened: Opened) -> None:
    before = opened.stored()
    with pytest.raises(ChainMismatchError, match="nothing was imported"):
        opened.record.import_interchange(interchange([entry(A, slots=(5,))], root=OTHER_ROOT))
    assert opened.stored() == before
    assert opened.record.watermark(A) == Watermark.never_signed()


def test_import_is_all_or_nothing(opened: Opened) -> None:
    before = opened.stored()
    document = interchange([entry(A, slots=(5,)), entry(C, slots=(6,))]).replace(b'"6"', b'"-6"')
    with pytest.raises(InterchangeFormatError, match=r"data\[1\]\.signed_blocks\[0\]\.slot"):
        opened.record.import_interchange(document)
    for bad in (b"", b"{}", b"[]", interchange([], version="4")):
        with pytest.raises(InterchangeFormatError):
            opened.record.import_interchange(bad)
    assert opened.stored() == before
    assert opened.record.watermark(A) == Watermark.never_signed()
    assert not opened.record.contains(C)


def test_import_accepts_a_path_and_a_stream(opened: Opened, tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_bytes(interchange([entry(A, slots=(5,))]))
    assert opened.record.import_interchange(path) == {A}
    with open(path, "rb") as stream:
        assert opened.record.import_interchange(stream) == {A}
    assert opened.record.import_interchange(interchange([entry(B, slots=(2,))]).decode()) == {B}
    assert opened.stored_watermark(A) == Watermark(5, None, None)
    assert opened.stored_watermark(B) == Watermark(2, None, None)


def test_export_all_or_named_keys(opened: Opened) -> None:
    opened.record.record_block(A, 4)
    opened.record.record_attestations([(B, 2, 3)])
    everything = json.loads(opened.record.export_interchange())
    assert everything["metadata"]["genesis_validators_root"] == "0x" + ROOT.hex()
    assert [item["pubkey"] for item in everything["data"]] == ["0x" + A.hex(), "0x" + B.hex()]
    named = json.loads(opened.record.export_interchange([B, UNKNOWN, B]))
    assert named["data"] == [
        {
            "pubkey": "0x" + B.hex(),
            "signed_blocks": [],
            "signed_attestations": [{"source_epoch": "2", "target_epoch": "3"}],
        }
    ]
    assert json.loads(opened.record.export_interchange([UNKNOWN]))["data"] == []


def test_closed_record_refuses_everything(opened: Opened) -> None:
    record = opened.record
    record.close()
    record.close()  # idempotent
    with pytest.raises(RecordClosedError):
        record.record_block(A, 1)
    with pytest.raises(RecordClosedError):
        record.record_attestations([(A, 1, 2)])
    with pytest.raises(RecordClosedError):
        record.import_interchange(interchange([]))
    with pytest.raises(RecordClosedError):
        record.export_interchange()
