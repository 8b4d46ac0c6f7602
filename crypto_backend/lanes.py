"""Lanes: a pool of worker processes for large batches.

pyblst holds the GIL, so threads cannot run two pairings at once; processes
can. The pool is started lazily by the first batch that needs it (or by
``start_lanes()``) and reused; it uses the ``spawn`` start method, never
``fork``, because the client runs an asyncio loop and threads whose locks a
forked child would inherit mid-state. ``VALIDATOR_BLS_LANES`` sets the number of
workers (default: one per usable core); 1 means no pool at all.

Failure handling is fail-closed by recomputation: if a lane dies, times out,
raises, or answers anything but a well-formed result, that chunk is computed
again on the calling thread and the local answer is returned (or the local
exception raised). A lane failure therefore never becomes a True verdict nor a
missing signature. A broken pool is discarded and the next batch starts a new
one; after ``MAX_CONSECUTIVE_POOL_FAILURES`` the process stops using lanes.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, TypeVar

LANES_ENV: Final = "VALIDATOR_BLS_LANES"
#: A chunk that takes longer than this is treated as a dead lane. Chunks take
#: milliseconds to seconds; this only catches a stuck worker.
LANE_TIMEOUT_SECONDS: Final = 120.0
MAX_CONSECUTIVE_POOL_FAILURES: Final = 3

_log = logging.getLogger(__name__)

Result = TypeVar("Result")

_lock = threading.Lock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None
_pool_size = 0
_configured_count: int | None = None
_consecutive_failures = 0
_disabled = False
# True inside a lane process: a lane never starts lanes of its own.
_in_lane = False


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def lane_count() -> int:
    """How many lanes a batch may be split over (1: everything on the calling thread)."""
    if _in_lane or _disabled:
        return 1
    if _configured_count is not None:
        return _configured_count
    raw = os.environ.get(LANES_ENV, "").strip()
    if not raw:
        return _usable_cores()
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"{LANES_ENV} must be a positive integer, got {raw!r}") from None
    if count < 1:
        raise ValueError(f"{LANES_ENV} must be a positive integer, got {raw!r}")
    return count


def set_lane_count(count: int | None) -> None:
    """Override ``VALIDATOR_BLS_LANES`` for this process (None: back to the environment).

    A running pool of another size is shut down; the next batch that needs lanes
    starts one of the new size. Also clears a previous "lanes disabled after failures" state.
    """
    global _configured_count, _disabled, _consecutive_failures
    if count is not None and (not isinstance(count, int) or count < 1):
        raise ValueError("lane count must be a positive integer")
    with _lock:
        _configured_count = count
        _disabled = False
        _consecutive_failures = 0
    if lane_count() != _pool_size:
        shutdown_lanes()


def _init_lane() -> None:
    global _in_lane
    _in_lane = True
    # Ctrl-C goes to the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A lane holds both ends of its task queue's pipe, so it never sees EOF when
    # the parent is killed (SIGKILL, OOM): watch the parent and leave with it.
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(
            target=_exit_with_parent, args=(parent,), name="bls-lane-parent-watch", daemon=True
        ).start()


def _exit_with_parent(parent: multiprocessing.process.BaseProcess) -> None:
    parent.join()  # returns when the parent process has ended, however it ended
    os._exit(0)


def _lane_ready() -> int:
    return os.getpid()


def _get_pool() -> concurrent.futures.ProcessPoolExecutor | None:
    global _pool, _pool_size
    count = lane_count()
    if count <= 1:
        return None
    with _lock:
        if _disabled:
            return None
        if _pool is not None and _pool_size == count:
            return _pool
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
        _pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=count,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_lane,
        )
        _pool_size = count
        return _pool


def start_lanes() -> int:
    """Start the lane processes now instead of at the first large batch; returns the
    lane count (1 when lanes are off)."""
    pool = _get_pool()
    if pool is None:
        return 1
    futures = [pool.submit(_lane_ready) for _ in range(_pool_size)]
    try:
        for future in futures:
            future.result(timeout=LANE_TIMEOUT_SECONDS)
    except Exception as error:  # any start failure means: no lanes now
        _pool_failed(pool, error)
        return 1
    _pool_succeeded()
    return _pool_size


def _pool_failed(pool: concurrent.futures.ProcessPoolExecutor, error: BaseException) -> None:
    global _pool, _consecutive_failures, _disabled
    with _lock:
        if _pool is pool:
            _pool = None
            _consecutive_failures += 1
            if _consecutive_failures >= MAX_CONSECUTIVE_POOL_FAILURES:
                _disabled = True
                _log.error(
                    "BLS lanes failed %d times in a row (%r); batches now run on the "
                    "calling thread", _consecutive_failures, error,
                )
            else:
                _log.warning("BLS lane pool failed (%r); it will be restarted", error)
    _terminate(pool)


def _pool_succeeded() -> None:
    global _consecutive_failures
    _consecutive_failures = 0


def _terminate(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    # A stuck worker would keep shutdown() waiting forever; kill what is left.
    # ProcessPoolExecutor has no public kill before Python 3.14.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.kill()


def run(
    task: Callable[..., Result],
    chunks: Sequence[tuple[Any, ...]],
    *,
    accept: Callable[[object, tuple[Any, ...]], bool],
    local: Callable[..., Result],
) -> list[Result]:
    """``[task(*chunk) for chunk in chunks]``, each chunk on a lane when lanes are on.

    A chunk whose lane fails, or whose answer ``accept`` refuses, is computed by
    ``local(*chunk)`` on the calling thread instead. ``task`` must be a
    module-level function (it is pickled by name).
    """
    pool = _get_pool()
    if pool is None:
        return [local(*chunk) for chunk in chunks]
    futures: list[concurrent.futures.Future[Result] | None] = []
    for chunk in chunks:
        try:
            futures.append(pool.submit(task, *chunk))
        except (BrokenProcessPool, RuntimeError) as error:
            # RuntimeError: the pool was shut down by another thread meanwhile.
            _pool_failed(pool, error)
            futures.append(None)
    results: list[Result] = []
    pool_ok = True
    for chunk, future in zip(chunks, futures, strict=True):
        if future is None:
            pool_ok = False
            results.append(local(*chunk))
            continue
        try:
            value = future.result(timeout=LANE_TIMEOUT_SECONDS)
        except (BrokenProcessPool, concurrent.futures.TimeoutError,
                concurrent.futures.CancelledError) as error:
            pool_ok = False
            _pool_failed(pool, error)
            results.append(local(*chunk))
            continue
        except Exception as error:  # the local run re-raises what is real
            _log.warning("BLS lane task raised %r; recomputing on the calling thread", error)
            results.append(local(*chunk))
            continue
        if not accept(value, chunk):
            _log.warning("BLS lane returned a malformed result; recomputing on the calling thread")
            results.append(local(*chunk))
            continue
        results.append(value)
    if pool_ok:
        _pool_succeeded()
    return results


def shutdown_lanes() -> None:
    """Stop the lane processes and wait for them (safe to call at any time, and
    more than once); a later batch starts them again."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def pool_pids() -> list[int]:
    """Process ids of the running lanes (for operators' diagnostics and tests)."""
    with _lock:
        pool = _pool
    if pool is None:
        return []
    return sorted(getattr(pool, "_processes", None) or {})


atexit.register(shutdown_lanes)
