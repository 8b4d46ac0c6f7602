"""run_to_completion: a cancelled caller still waits for its thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from slashing_protection.blocking import run_to_completion


async def test_returns_the_result_and_raises_the_error() -> None:
    assert await run_to_completion(pow, 2, 10) == 1024
    with pytest.raises(ZeroDivisionError):
        await run_to_completion(divmod, 1, 0)


async def test_cancellation_waits_for_the_thread() -> None:
    started = threading.Event()
    release = threading.Event()
    done = threading.Event()

    def work() -> None:
        started.set()
        release.wait(10)
        done.set()

    task = asyncio.create_task(run_to_completion(work))
    assert await asyncio.to_thread(started.wait, 10)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()
    task.cancel()  # a second cancellation does not cut the wait short either
    await asyncio.sleep(0.05)
    assert not task.done()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert done.is_set()
