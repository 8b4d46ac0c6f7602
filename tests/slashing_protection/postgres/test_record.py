"""The shared record on a real PostgreSQL, beyond what it shares with the file record
(test_record_contract.py runs the rule and the refusals on both): fail-closed opens,
another chain, another schema, one transaction per batch, the connection lost
mid-transaction, the replica-rollback alarm, and resuming when the database comes back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prometheus_client import REGISTRY

from slashing_protection import (
    ChainMismatchError,
    RecordMissingError,
    SlashingProtection,
    SlashingProtectionError,
    SlashingProtectionRecord,
    Watermark,
    open_offline_record,
    open_record,
)
from slashing_protection.postgres import (
    SCHEMA_VERSION,
    DatabaseUnavailableError,
    PostgresSlashingProtection,
    SchemaVersionError,
    db_init,
    describe_url,
)
from tests.slashing_protection.postgres.support import admin, snapshot
from tests.support.pg_cluster import Cluster
from tests.support.records import OTHER_ROOT, ROOT, entry, interchange, pubkey, verdicts_allowed

A, B, C = pubkey(1), pubkey(2), pubkey(3)
UNKNOWN = pubkey(99)


@pytest.fixture
def record(pg_url: str) -> Iterator[PostgresSlashingProtection]:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A, B]) as opened:
        yield opened


def _sample(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    return 0.0 if value is None else value


# ---------------------------------------------------------------------------------- batches


def test_batch_of_many_checkpoints_and_floors_raises_each_key_to_its_own(pg_url: str) -> None:
    """The one-statement batch sends each distinct (source, target, floors) once with its
    keys: keys interleaved across groups must still each get their own item's values."""
    keys = [pubkey(100 + n) for n in range(40)]
    with PostgresSlashingProtection.open(pg_url, ROOT, register=keys) as record:
        # Different histories, so this process's floors differ between keys too.
        first = [(k, n % 3, n % 3 + 1) for n, k in enumerate(keys)]
        assert all(verdicts_allowed(record.record_attestations(first)))
        items = [(k, 10 + n % 5, 20 + n % 7) for n, k in enumerate(keys)]
        assert all(verdicts_allowed(record.record_attestations(items)))
        for key, source, target in items:
            assert record.watermark(key) == Watermark(None, source, target)
        again = [(k, 10 + n % 5, 20 + n % 7) for n, k in enumerate(keys)]
        again[17] = (keys[17], 30, 40)
        assert verdicts_allowed(record.record_attestations(again)) == [n == 17 for n in range(40)]
        assert record.watermark(keys[17]) == Watermark(None, 30, 40)
        assert record.watermark(keys[18]) == Watermark(None, 10 + 18 % 5, 20 + 18 % 7)


def test_batch_is_one_transaction(record: PostgresSlashingProtection, pg_url: str) -> None:
    def commits() -> int:
        with psycopg.connect(pg_url, autocommit=True) as connection:
            row = connection.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            assert row is not None
            return int(row[0])

    keys = [pubkey(n) for n in range(100, 400)]
    record.register(keys)
    admin(pg_url, "SELECT pg_stat_clear_snapshot()")
    before = _sample("validator_slashing_protection_write_seconds_count")
    first = record.record_attestations([(key, 0, 1) for key in keys])
    assert verdicts_allowed(first) == [True] * len(keys)
    assert _sample("validator_slashing_protection_write_seconds_count") == before + 1
    # Statistics reach pg_stat_database asynchronously; what matters is that 300 keys
    # did not become 300 transactions.
    started = commits()
    second = record.record_attestations([(key, 1, 2) for key in keys])
    assert verdicts_allowed(second) == [True] * len(keys)
    time.sleep(0.6)
    assert commits() - started < 10


def test_malformed_chain_root_is_refused(pg_url: str) -> None:
    before = snapshot(pg_url)
    with pytest.raises(ValueError):
        PostgresSlashingProtection.open(pg_url, ROOT[:31])
    assert snapshot(pg_url) == before


def test_both_records_satisfy_one_protocol(pg_url: str, tmp_path: Path) -> None:
    with open_record(pg_url, ROOT, register=[A]) as shared, open_record(
        tmp_path, ROOT, register=[A]
    ) as local:
        assert isinstance(shared, PostgresSlashingProtection)
        assert isinstance(local, SlashingProtection)
        records: list[SlashingProtectionRecord] = [shared, local]
        for one in records:
            assert verdicts_allowed(one.record_attestations([(A, 1, 2), (A, 1, 3), (B, 0, 1)])) == [
                True,
                True,
                False,
            ]
            assert one.record_block(A, 4).allowed and not one.record_block(A, 4).allowed
        assert shared.export_interchange() == local.export_interchange()
        unknown = bytes.fromhex("b" * 96)
        for one in records:
            # The status page's and doppelganger's one read of many keys answers what
            # the key-by-key read does, and leaves out keys without an entry.
            wanted = [A, unknown, A]
            assert one.watermarks(wanted) == {A: Watermark(4, 1, 3)}
            assert one.watermarks(wanted)[A] == one.watermark(A)
            assert one.watermarks([]) == {}


# ----------------------------------------------------------------------------- persistence


def test_reopen_and_other_connections_see_the_record(pg_url: str) -> None:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A, B, C]) as record:
        assert record.record_block(A, 7).allowed
        assert verdicts_allowed(record.record_attestations([(A, 1, 2), (B, 0, 0)])) == [True, True]
        with PostgresSlashingProtection.open(pg_url, ROOT) as second:
            assert second.record_block(A, 7).allowed is False
            assert verdicts_allowed(second.record_attestations([(B, 0, 0)])) == [False]
            assert verdicts_allowed(second.record_attestations([(B, 0, 1)])) == [True]
        assert verdicts_allowed(record.record_attestations([(B, 0, 1)])) == [False]
    with PostgresSlashingProtection.open(pg_url, ROOT) as record:
        assert record.pubkeys() == [A, B, C]
        assert record.watermark(A) == Watermark(7, 1, 2)
        assert record.watermark(B) == Watermark(None, 0, 1)
        assert record.watermark(C) == Watermark.never_signed()


def test_register_adds_keys_and_never_lowers(pg_url: str) -> None:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A]) as record:
        assert record.record_block(A, 9).allowed
        assert verdicts_allowed(record.record_attestations([(A, 4, 5)])) == [True]
        record.register([A, B])
        record.register([B])
        assert record.contains(B) and not record.contains(C)
        assert record.watermark(A) == Watermark(9, 4, 5)
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A, C]) as record:
        assert record.watermark(A) == Watermark(9, 4, 5)
        assert record.pubkeys() == [A, B, C]


def test_missing_record_is_refused_without_keys_to_register(pg_url: str) -> None:
    # The record knows no caller's flags: without a hint it gives the file record's advice
    # (the validator passes its own, see postgres/test_verdict.py).
    with pytest.raises(RecordMissingError, match="registering them as never having signed"):
        PostgresSlashingProtection.open(pg_url, ROOT)
    assert snapshot(pg_url) == ((), ())
    with PostgresSlashingProtection.open(pg_url, ROOT, create=True) as record:
        assert record.pubkeys() == [] and record.genesis_validators_root == ROOT
    with PostgresSlashingProtection.open(pg_url, ROOT) as record:
        assert record.pubkeys() == []


# ----------------------------------------------------------------------------- fail closed


def test_database_without_a_schema_refuses_to_open(empty_db: str) -> None:
    with pytest.raises(SchemaVersionError, match="db-init"):
        PostgresSlashingProtection.open(empty_db, ROOT, register=[A])
    with pytest.raises(SchemaVersionError, match="db-init"):
        open_offline_record(empty_db)


def test_schema_of_another_version_refuses_to_open(pg_url: str) -> None:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A]):
        pass
    admin(
        pg_url,
        "INSERT INTO slashing_protection_schema (version, why) VALUES (%s, 'from the future')",
        SCHEMA_VERSION + 1,
    )
    before = snapshot(pg_url)
    with pytest.raises(SchemaVersionError, match="newer than this client"):
        PostgresSlashingProtection.open(pg_url, ROOT, register=[A])
    with pytest.raises(SchemaVersionError, match="nothing was changed"):
        db_init(pg_url)
    admin(pg_url, "DELETE FROM slashing_protection_schema")
    with pytest.raises(SchemaVersionError, match="db-init"):
        PostgresSlashingProtection.open(pg_url, ROOT, register=[A])
    assert snapshot(pg_url) == before


def test_db_init_can_run_again(empty_db: str) -> None:
    assert db_init(empty_db) == [SCHEMA_VERSION]
    with PostgresSlashingProtection.open(empty_db, ROOT, register=[A]) as record:
        assert record.record_block(A, 3).allowed
    before = snapshot(empty_db)
    assert db_init(empty_db) == []
    assert snapshot(empty_db) == before


def test_record_of_another_chain_refuses_to_open(pg_url: str) -> None:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A]) as record:
        record.record_block(A, 5)
    before = snapshot(pg_url)
    with pytest.raises(ChainMismatchError, match="0x" + OTHER_ROOT.hex()):
        PostgresSlashingProtection.open(pg_url, OTHER_ROOT, register=[A, B])
    with pytest.raises(ChainMismatchError):
        PostgresSlashingProtection.open(pg_url, OTHER_ROOT, create=True)
    assert snapshot(pg_url) == before


def test_unreachable_or_malformed_database_refuses_to_open(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    nowhere = f"postgresql://postgres@/postgres?host={tmp_path}&port=5432&connect_timeout=2"
    with pytest.raises(DatabaseUnavailableError, match="cannot connect"):
        PostgresSlashingProtection.open(nowhere, ROOT, register=[A])
    with pytest.raises(DatabaseUnavailableError, match="cannot connect"):
        open_record(pg_cluster.url("no_such_database"), ROOT, register=[A])
    with pytest.raises(DatabaseUnavailableError, match="malformed"):
        open_record("postgresql://host/db?nonsense=1", ROOT, register=[A])
    assert issubclass(DatabaseUnavailableError, SlashingProtectionError)


def test_password_never_appears_in_messages() -> None:
    url = "postgresql://alice:s3cret@db.example:5433/sp?sslmode=require"
    assert describe_url(url) == "postgresql://alice@db.example:5433/sp"


# ----------------------------------------------------------------------------- losing the database


def _terminate(url: str, pid: int) -> None:
    admin(url, "SELECT pg_terminate_backend(%s)", pid)


def test_connection_killed_mid_transaction_signs_nothing(
    record: PostgresSlashingProtection, pg_url: str
) -> None:
    """The batch waits for a row that another host holds locked; its server process is
    killed meanwhile. The batch answers False for every item and the database shows that
    nothing of it was recorded; the next batch reconnects and is judged normally."""
    before = snapshot(pg_url)
    holder = psycopg.connect(pg_url)
    holder.execute("SELECT * FROM slashing_protection_keys WHERE pubkey = %s FOR UPDATE", (B,))
    verdicts: list[list[bool]] = []
    worker = threading.Thread(
        target=lambda: verdicts.append(
            verdicts_allowed(record.record_attestations([(A, 1, 2), (B, 1, 2)]))
        )
    )
    worker.start()
    pid = record.backend_pid
    assert pid is not None
    with psycopg.connect(pg_url, autocommit=True) as watcher:
        for _ in range(200):
            row = watcher.execute(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()
            if row and row[0] == "Lock":
                break
            time.sleep(0.02)
        else:
            pytest.fail("the batch never waited for the locked row")
    _terminate(pg_url, pid)
    worker.join(timeout=30)
    holder.rollback()
    holder.close()
    assert verdicts == [[False, False]]
    assert snapshot(pg_url) == before
    time.sleep(1.1)  # reconnection is tried at most once a second
    assert verdicts_allowed(record.record_attestations([(A, 1, 2), (B, 1, 2)])) == [True, True]
    assert record.backend_pid != pid


def test_database_away_signs_nothing_logs_once_and_resumes(
    record: PostgresSlashingProtection,
    pg_url: str,
    pg_cluster: Cluster,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert verdicts_allowed(record.record_attestations([(A, 0, 1)])) == [True]
    incidents = _sample("validator_slashing_protection_db_incidents_total")
    failures = _sample("validator_slashing_protection_write_failures_total")
    admin(pg_cluster.url(), "ALTER DATABASE " + _dbname(pg_url) + " ALLOW_CONNECTIONS false")
    try:
        pid = record.backend_pid
        assert pid is not None
        _terminate(pg_cluster.url(), pid)
        with caplog.at_level("ERROR", logger="slashing_protection"):
            for target in range(2, 6):
                assert verdicts_allowed(record.record_attestations([(A, 0, target)])) == [False]
                assert record.record_block(A, target).allowed is False
                time.sleep(0.3)
        # The pre-checks answer from what this process saw, so the signer can tell "the
        # record could not be written" from "slashable".
        assert record.contains(A) and record.check_attestation(A, 0, 2).allowed
        # A display read answers from the same memory (B: registered, never signed).
        assert record.watermarks([A, B]) == {A: Watermark(None, 0, 1), B: Watermark.never_signed()}
    finally:
        admin(pg_cluster.url(), "ALTER DATABASE " + _dbname(pg_url) + " ALLOW_CONNECTIONS true")
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert _sample("validator_slashing_protection_db_incidents_total") == incidents + 1
    assert _sample("validator_slashing_protection_write_failures_total") >= failures + 8
    deadline = time.monotonic() + 5
    while verdicts_allowed(record.record_attestations([(A, 0, 2)])) != [True]:
        assert time.monotonic() < deadline, "the record did not resume"
        time.sleep(0.2)
    assert record.watermark(A) == Watermark(None, 0, 2)
    assert record.watermarks([A, B]) == {A: Watermark(None, 0, 2), B: Watermark.never_signed()}


def _dbname(url: str) -> str:
    return url.split("/")[3].split("?")[0]


# ----------------------------------------------------------------------------- the alarm


def test_rolled_back_watermark_is_refused_and_counted(
    record: PostgresSlashingProtection, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A database that lost committed transactions (a promoted replica that was behind)
    would allow what this process already signed: the process refuses those keys."""
    assert record.record_block(A, 20).allowed
    assert verdicts_allowed(record.record_attestations([(A, 5, 6), (B, 1, 2)])) == [True, True]
    # What a failover to a replica that missed the last commits looks like:
    admin(
        pg_url,
        "UPDATE slashing_protection_keys SET block_slot = 3, source_epoch = 2, "
        "target_epoch = 3 WHERE pubkey = %s",
        A,
    )
    alarms = _sample("validator_slashing_protection_rollback_alarms_total")
    with caplog.at_level("ERROR", logger="slashing_protection"):
        assert verdicts_allowed(record.record_attestations([(A, 5, 6), (B, 1, 3)])) == [False, True]
        assert record.record_block(A, 20).allowed is False
        assert record.record_block(A, 21).allowed is False
        assert not record.check_attestation(A, 6, 7).allowed
        # A display read never shows the rolled-back values as the key's watermark.
        assert record.watermark(A) is None
        assert record.watermarks([A, B]) == {B: Watermark(None, 1, 3)}
    assert _sample("validator_slashing_protection_rollback_alarms_total") >= alarms + 2
    assert "ALARM" in caplog.text and A.hex() in caplog.text
    # Importing an export that covers what was lost ends the refusal.
    record.import_interchange(interchange([entry(A, slots=(20,), attestations=((5, 6),))]))
    assert verdicts_allowed(record.record_attestations([(A, 5, 7)])) == [True]
    assert record.record_block(A, 21).allowed is True
    # A process that never saw the higher watermark has no way to know (which is why the
    # database must not lose commits: synchronous replication, see the docs).
    admin(pg_url, "UPDATE slashing_protection_keys SET target_epoch = 3 WHERE pubkey = %s", A)
    with PostgresSlashingProtection.open(pg_url, ROOT) as fresh:
        assert verdicts_allowed(fresh.record_attestations([(A, 5, 6)])) == [True]


# ----------------------------------------------------------------------------- import / export


def test_import_raises_watermarks_names_the_chain_and_survives(empty_db: str) -> None:
    db_init(empty_db)
    with open_offline_record(empty_db) as record:
        assert not record.exists
        with pytest.raises(RecordMissingError):
            record.genesis_validators_root  # noqa: B018
        covered = record.import_interchange(
            interchange(
                [entry(A, slots=(3, 40, 7), attestations=((1, 2), (6, 5), (3, 9))), entry(C)]
            )
        )
        assert covered == {A, C} and record.exists
        assert record.watermark(A) == Watermark(40, 6, 9)
        assert record.watermark(C) == Watermark.never_signed()
    with PostgresSlashingProtection.open(empty_db, ROOT) as record:
        assert record.record_block(A, 40).allowed is False
        batch = record.record_attestations([(A, 5, 10), (A, 6, 10)])
        assert verdicts_allowed(batch) == [False, True]
    with pytest.raises(ChainMismatchError):
        PostgresSlashingProtection.open(empty_db, OTHER_ROOT, register=[A])


def test_concurrent_connections_never_double_sign(pg_url: str) -> None:
    """Four records (four connections, as four hosts would have) race on one key."""
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A]):
        pass
    approved: list[list[int]] = [[] for _ in range(4)]

    def attest(worker: int) -> None:
        with PostgresSlashingProtection.open(pg_url, ROOT) as mine:
            for target in range(1, 31):
                if verdicts_allowed(mine.record_attestations([(A, 0, target)])) == [True]:
                    approved[worker].append(target)
                if mine.record_block(A, target).allowed:
                    approved[worker].append(-target)

    threads = [threading.Thread(target=attest, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    signed = [value for worker in approved for value in worker]
    assert len(signed) == len(set(signed)), "a target or slot was approved twice"
    with PostgresSlashingProtection.open(pg_url, ROOT) as record:
        assert record.watermark(A) == Watermark(
            max(-v for v in signed if v < 0), 0, max(v for v in signed if v > 0)
        )


def test_batch_locks_its_rows_in_key_order(pg_url: str) -> None:
    """The row locks are taken above the sort by pubkey, so every batch locks in one
    order and two batches cannot deadlock (the plan, not a comment, is checked)."""
    from slashing_protection.postgres.batch import LOCK_ROWS, keys_param

    with psycopg.connect(pg_url, autocommit=True) as connection:
        plan = [
            row[0]
            for row in connection.execute(
                b"EXPLAIN " + LOCK_ROWS.encode(), keys_param([A, B, C])
            ).fetchall()
        ]
    lock = next(i for i, line in enumerate(plan) if "LockRows" in line)
    sort = next(i for i, line in enumerate(plan) if "Sort" in line and i > lock)
    assert "pubkey" in plan[sort + 1], plan
    assert plan[lock].index("LockRows") < plan[sort].index("Sort"), plan


def test_database_that_changed_chain_under_a_running_record_signs_nothing(
    record: PostgresSlashingProtection, pg_url: str
) -> None:
    """After a reconnection the schema and chain are checked again: a database replaced
    by another chain's (a wrong restore, a wrong failover target) is refused."""
    assert verdicts_allowed(record.record_attestations([(A, 0, 1)])) == [True]
    admin(pg_url, "UPDATE slashing_protection_chain SET genesis_validators_root = %s", OTHER_ROOT)
    pid = record.backend_pid
    assert pid is not None
    _terminate(pg_url, pid)
    time.sleep(1.1)
    for target in (2, 3):
        assert verdicts_allowed(record.record_attestations([(A, 0, target)])) == [False]
        time.sleep(1.1)
    admin(pg_url, "UPDATE slashing_protection_chain SET genesis_validators_root = %s", ROOT)
    time.sleep(1.1)
    assert verdicts_allowed(record.record_attestations([(A, 0, 2)])) == [True]
