"""Concurrent batches from several connections are serializable.

Hypothesis draws a few batches of attestations and blocks for each of three connections
(three hosts sharing the database); threads run them all at once, released together by a
barrier, each batch on its connection's record. The verdicts and the final record must
be exactly those of applying the same batches one after another in some order that keeps
each connection's own order: every interleaving is searched for one that matches.
Independently, no two allowed messages of a key may be slashable with each other.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slashing_protection.postgres import PostgresSlashingProtection, db_init
from slashing_protection.rule import NEVER, broken_attestation_rule, broken_block_rule
from tests.support.pg_cluster import Cluster
from tests.support.postgres import fresh_database
from tests.support.records import ROOT, pubkey, verdicts_allowed

KEYS = [pubkey(n) for n in range(4)]  # key 3 is never registered
CONNECTIONS = 3
epoch = st.integers(0, 5)

# One batch: ("attest", [(key, source, target), ...]) or ("block", key, slot).
batch = st.one_of(
    st.tuples(
        st.just("attest"),
        st.lists(st.tuples(st.integers(0, 3), epoch, epoch), min_size=1, max_size=6),
    ),
    st.tuples(st.just("block"), st.integers(0, 3), epoch),
)
programs = st.lists(
    st.lists(batch, min_size=1, max_size=3), min_size=CONNECTIONS, max_size=CONNECTIONS
)

State = dict[bytes, tuple[int, int, int]]  # key -> (slot, source, target)


def _apply(state: State, op: tuple[Any, ...]) -> Any:
    """The rule on the minimal record, one batch; returns the batch's verdicts."""
    if op[0] == "block":
        key, slot = KEYS[op[1]], op[2]
        if key not in state or broken_block_rule(last_slot=state[key][0], slot=slot) is not None:
            return False
        state[key] = (slot, state[key][1], state[key][2])
        return True
    verdicts = []
    for index, source, target in op[1]:
        key = KEYS[index]
        mark = state.get(key)
        allowed = mark is not None and (
            broken_attestation_rule(
                last_source=mark[1], last_target=mark[2], source=source, target=target
            )
            is None
        )
        if allowed:
            assert mark is not None
            state[key] = (mark[0], source, target)
        verdicts.append(allowed)
    return verdicts


def _run(record: PostgresSlashingProtection, op: tuple[Any, ...]) -> Any:
    if op[0] == "block":
        return record.record_block(KEYS[op[1]], op[2]).allowed
    return verdicts_allowed(record.record_attestations([(KEYS[i], s, t) for i, s, t in op[1]]))


def _interleavings(lengths: list[int]) -> Any:
    """Every order of (connection, index) that keeps each connection's own order."""
    slots = [c for c, n in enumerate(lengths) for _ in range(n)]
    for order in set(itertools.permutations(slots)):
        yield list(order)


def _database(pg_cluster: Cluster) -> str:
    url = fresh_database(pg_cluster)
    db_init(url)
    return url


def _slashable(first: tuple[int, int], second: tuple[int, int]) -> bool:
    (s1, t1), (s2, t2) = first, second
    return t1 == t2 or (s1 < s2 and t2 < t1) or (s2 < s1 and t1 < t2)


def test_concurrent_batches_equal_some_serial_order(pg_cluster: Cluster) -> None:
    @settings(
        deadline=None,
        max_examples=40,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(programs)
    def check(program: list[list[tuple[Any, ...]]]) -> None:
        url = _database(pg_cluster)
        with PostgresSlashingProtection.open(url, ROOT, register=KEYS[:3]):
            pass
        records = [PostgresSlashingProtection.open(url, ROOT) for _ in range(CONNECTIONS)]
        results: list[list[Any]] = [[] for _ in range(CONNECTIONS)]
        barrier = threading.Barrier(CONNECTIONS)
        failures: list[BaseException] = []

        def host(number: int) -> None:
            try:
                barrier.wait(timeout=30)
                for op in program[number]:
                    results[number].append(_run(records[number], op))
            except BaseException as exc:  # reported below, in the test's thread
                failures.append(exc)

        threads = [threading.Thread(target=host, args=(n,)) for n in range(CONNECTIONS)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert not failures, failures
            final = {key: records[0].watermark(key) for key in KEYS}
        finally:
            for record in records:
                record.close()
        stored: State = {}
        for key, mark in final.items():
            if mark is not None:
                stored[key] = tuple(NEVER if v is None else v for v in mark)  # type: ignore[assignment]

        matched = False
        for order in _interleavings([len(ops) for ops in program]):
            state: State = {key: (NEVER, NEVER, NEVER) for key in KEYS[:3]}
            positions = [0] * CONNECTIONS
            expected: list[list[Any]] = [[] for _ in range(CONNECTIONS)]
            for connection in order:
                op = program[connection][positions[connection]]
                positions[connection] += 1
                expected[connection].append(_apply(state, op))
            if expected == results and state == stored:
                matched = True
                break
        assert matched, (program, results, final)

        for index in range(3):
            pairs = [
                (s, t)
                for number in range(CONNECTIONS)
                for op, verdict in zip(program[number], results[number], strict=True)
                if op[0] == "attest"
                for (k, s, t), ok in zip(op[1], verdict, strict=True)
                if ok and k == index
            ]
            for i, first in enumerate(pairs):
                for second in pairs[i + 1 :]:
                    assert not _slashable(first, second), (index, first, second)
            slots = [
                op[2]
                for number in range(CONNECTIONS)
                for op, verdict in zip(program[number], results[number], strict=True)
                if op[0] == "block" and op[1] == index and verdict
            ]
            assert len(slots) == len(set(slots))

    check()
