"""Lanes: worker processes for large batches.

Same verdicts and signatures with and without lanes, batches on both sides of
the chunking threshold, and fail-closed behaviour when a lane dies, raises or
answers nonsense (the chunk is recomputed on the calling thread).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil
import pytest

import crypto_backend
from crypto_backend import batch, lanes
from crypto_backend.backend import Backend
from tests.support.official_vectors import REPO_ROOT

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module", autouse=True)
def two_lanes() -> Iterator[None]:
    lanes.set_lane_count(2)
    try:
        yield
    finally:
        lanes.shutdown_lanes()
        lanes.set_lane_count(None)


@pytest.fixture(autouse=True)
def healthy_lanes() -> Iterator[None]:
    # Every test starts from a working two-lane setting, whatever the last one broke.
    lanes.set_lane_count(2)
    yield


# Module-level stand-ins for the lane entry points (pickled by name into the lanes).


def lane_answers_one(backend: str, sets: Any) -> int:
    return 1


def lane_answers_text(backend: str, sets: Any) -> str:
    return "True"


def lane_raises(backend: str, sets: Any) -> bool:
    raise RuntimeError("lane bug")


def lane_dies(backend: str, sets: Any) -> bool:
    os._exit(3)


def lane_hangs(backend: str, sets: Any) -> bool:
    time.sleep(60)
    return True


def lane_signs_too_few(backend: str, sks: Any, message: bytes) -> list[bytes]:
    return [b"\x00" * 96] * (len(sks) - 1)


def lane_signs_short_strings(backend: str, sks: Any, message: bytes) -> list[bytes]:
    return [b"\x00" * 48 for _ in sks]


Set = tuple[list[bytes], bytes, bytes]


def _signed_sets(count: int, messages: int, seed: int = 1) -> list[Set]:
    sets = []
    for index in range(count):
        sk = 1000 * seed + index + 1
        message = bytes([index % messages]) * 32
        sets.append(([crypto_backend.sk_to_pk(sk)], message, crypto_backend.sign(sk, message)))
    return sets


def _break(sets: list[Any], position: int) -> list[Any]:
    broken = list(sets)
    keys, message, signature = broken[position]
    broken[position] = (keys, message + b"?", signature)
    return broken


def _wait_dead(pid: int) -> None:
    # Never reap it (psutil's wait() would): multiprocessing must collect its own
    # children, or it believes them alive forever and spins at shutdown.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.01)
    raise AssertionError(f"lane {pid} still running after SIGKILL")


class RunSpy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[list[tuple[Any, ...]]] = []
        real = lanes.run

        def spy(task: Any, chunks: Any, **kwargs: Any) -> Any:
            self.calls.append(list(chunks))
            return real(task, chunks, **kwargs)

        monkeypatch.setattr(lanes, "run", spy)


# -- same results with and without lanes ------------------------------------------


@pytest.mark.parametrize(
    ("count", "messages"),
    [(3, 3), (4, 4), (5, 5), (6, 6), (9, 9), (16, 1), (17, 1), (18, 1), (24, 2), (33, 33)],
)
def test_batches_straddling_the_chunk_threshold(
    backend: Backend[Any, Any], monkeypatch: pytest.MonkeyPatch, count: int, messages: int
) -> None:
    sets = _signed_sets(count, messages)
    spy = RunSpy(monkeypatch)
    assert crypto_backend.verify_signature_sets(sets)
    split = bool(spy.calls)
    checked = batch.normalize_sets(sets)
    assert split is (len(batch.plan_set_chunks(checked, 2)) > 1)
    positions = sorted({0, 1, count // 2 - 1, count // 2, count - 2, count - 1} & set(range(count)))
    for position in positions:
        assert crypto_backend.verify_signature_sets(_break(sets, position)) is False, position
    if split:
        assert all(len(call) == 2 for call in spy.calls)
        assert lanes.pool_pids()


def test_the_threshold_sits_inside_the_tested_range() -> None:
    def chunks(count: int, messages: int) -> int:
        return len(batch.plan_set_chunks(batch.normalize_sets(_signed_sets(count, messages)), 2))

    assert chunks(3, 3) == 1 and chunks(9, 9) == 2
    assert chunks(16, 1) == 1 and chunks(18, 1) == 2


@pytest.mark.parametrize("count", [1, 15, 16, 17, 40])
def test_sign_many_equals_sign_with_lanes(backend: Backend[Any, Any], count: int) -> None:
    secrets = [7_000_000 + index for index in range(count)]
    expected = [crypto_backend.sign(sk, b"lanes") for sk in secrets]
    assert crypto_backend.sign_many(secrets, b"lanes") == expected


def test_lanes_are_spawned_processes_that_use_the_callers_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sets = _signed_sets(12, 12)
    spy = RunSpy(monkeypatch)
    previous = crypto_backend.backend_name()
    try:
        crypto_backend.use("arkworks")
        assert crypto_backend.verify_signature_sets(sets)
    finally:
        crypto_backend.use(previous)
    assert {chunk[0] for call in spy.calls for chunk in call} == {"arkworks"}
    pids = lanes.pool_pids()
    assert len(pids) == 2 and os.getpid() not in pids
    assert lanes._pool is not None
    assert lanes._pool._mp_context.get_start_method() == "spawn"  # type: ignore[attr-defined]


def test_one_lane_starts_no_process() -> None:
    lanes.set_lane_count(1)
    assert lanes.pool_pids() == []
    assert crypto_backend.verify_signature_sets(_signed_sets(20, 20))
    assert crypto_backend.sign_many(list(range(1, 40)), b"x")
    assert lanes.pool_pids() == []


# -- fail closed -----------------------------------------------------------------


@pytest.mark.parametrize("task", [lane_answers_one, lane_answers_text, lane_raises, lane_dies])
def test_a_failing_lane_never_turns_into_true(
    monkeypatch: pytest.MonkeyPatch, task: Any
) -> None:
    sets = _signed_sets(12, 12)
    monkeypatch.setattr(batch, "check_sets_in_lane", task)
    for position in (0, 11):
        assert crypto_backend.verify_signature_sets(_break(sets, position)) is False
    # The local recomputation gives the true verdict, not a blanket False.
    assert crypto_backend.verify_signature_sets(sets) is True


@pytest.mark.parametrize("task", [lane_signs_too_few, lane_signs_short_strings, lane_dies])
def test_a_failing_signing_lane_is_recomputed(monkeypatch: pytest.MonkeyPatch, task: Any) -> None:
    secrets = list(range(1, 41))
    expected = [crypto_backend.sign(sk, b"m") for sk in secrets[:3]]
    monkeypatch.setattr(batch, "sign_in_lane", task)
    signatures = crypto_backend.sign_many(secrets, b"m")
    assert len(signatures) == 40 and signatures[:3] == expected


def test_a_killed_lane_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    sets = _signed_sets(12, 12)
    assert crypto_backend.verify_signature_sets(sets)
    victims = lanes.pool_pids()
    assert victims
    os.kill(victims[0], signal.SIGKILL)
    _wait_dead(victims[0])
    assert crypto_backend.verify_signature_sets(_break(sets, 3)) is False
    assert crypto_backend.verify_signature_sets(sets) is True
    assert crypto_backend.verify_signature_sets(sets) is True
    assert victims[0] not in lanes.pool_pids()


def test_a_stuck_lane_is_killed_and_its_chunk_recomputed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sets = _signed_sets(12, 12)
    assert crypto_backend.verify_signature_sets(sets)
    stuck = lanes.pool_pids()
    monkeypatch.setattr(lanes, "LANE_TIMEOUT_SECONDS", 0.5)
    monkeypatch.setattr(batch, "check_sets_in_lane", lane_hangs)
    started = time.monotonic()
    assert crypto_backend.verify_signature_sets(_break(sets, 7)) is False
    assert time.monotonic() - started < 30
    for pid in stuck:
        _wait_dead(pid)
    monkeypatch.undo()
    assert crypto_backend.verify_signature_sets(sets) is True
    assert not set(stuck) & set(lanes.pool_pids())


def test_repeated_pool_failures_turn_lanes_off(monkeypatch: pytest.MonkeyPatch) -> None:
    sets = _signed_sets(12, 12)
    monkeypatch.setattr(batch, "check_sets_in_lane", lane_dies)
    for _ in range(lanes.MAX_CONSECUTIVE_POOL_FAILURES):
        assert lanes.lane_count() == 2
        assert crypto_backend.verify_signature_sets(sets) is True
    assert lanes.lane_count() == 1
    assert lanes.pool_pids() == []
    lanes.set_lane_count(2)
    assert lanes.lane_count() == 2


# -- threads, shutdown, configuration ----------------------------------------------


def test_concurrent_calls_from_threads() -> None:
    valid = _signed_sets(12, 12, seed=2)
    invalid = _break(valid, 5)
    secrets = list(range(100, 140))
    expected_signatures = [crypto_backend.sign(sk, b"threads") for sk in secrets]
    barrier = threading.Barrier(6)

    def job(kind: int) -> bool:
        barrier.wait(timeout=30)
        for _ in range(3):
            if kind % 3 == 0 and crypto_backend.verify_signature_sets(valid) is not True:
                return False
            if kind % 3 == 1 and crypto_backend.verify_signature_sets(invalid) is not False:
                return False
            if kind % 3 == 2 and crypto_backend.sign_many(secrets, b"threads") != (
                expected_signatures
            ):
                return False
        return True

    with ThreadPoolExecutor(max_workers=6) as pool:
        assert all(pool.map(job, range(6)))


def test_shutdown_stops_the_processes_and_a_later_batch_restarts_them() -> None:
    sets = _signed_sets(12, 12)
    assert crypto_backend.verify_signature_sets(sets)
    pids = lanes.pool_pids()
    assert pids
    crypto_backend.shutdown_lanes()
    crypto_backend.shutdown_lanes()
    assert lanes.pool_pids() == []
    assert not any(psutil.pid_exists(pid) for pid in pids)
    assert crypto_backend.verify_signature_sets(sets)
    assert lanes.pool_pids()


_PARENT_SCRIPT = """
import time
import crypto_backend
from crypto_backend import lanes
lanes.set_lane_count(2)
crypto_backend.start_lanes()
print(*lanes.pool_pids(), flush=True)
time.sleep(120)
"""


def test_lanes_exit_when_their_parent_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT_SCRIPT], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    lane_pids: list[int] = []
    try:
        assert parent.stdout is not None
        lane_pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(lane_pids) == 2
        parent.kill()
        parent.wait(timeout=10)
        for pid in lane_pids:
            _wait_dead(pid)
    finally:
        parent.kill()
        parent.wait(timeout=10)
        for pid in lane_pids:
            # Only if the test failed: do not leave the orphans behind.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_start_lanes_starts_every_worker() -> None:
    crypto_backend.shutdown_lanes()
    assert crypto_backend.start_lanes() == 2
    assert len(lanes.pool_pids()) == 2


def test_lane_count_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    lanes.set_lane_count(None)
    monkeypatch.setenv(lanes.LANES_ENV, "3")
    assert crypto_backend.lane_count() == 3
    monkeypatch.setenv(lanes.LANES_ENV, "1")
    assert crypto_backend.lane_count() == 1
    for bad in ("0", "-2", "two"):
        monkeypatch.setenv(lanes.LANES_ENV, bad)
        with pytest.raises(ValueError, match=lanes.LANES_ENV):
            crypto_backend.lane_count()
    monkeypatch.delenv(lanes.LANES_ENV)
    assert crypto_backend.lane_count() == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError):
        lanes.set_lane_count(0)
