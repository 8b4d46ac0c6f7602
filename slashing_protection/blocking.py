"""Calling the blocking record from asyncio, never letting a cancellation outrun the call.

The record's methods block (a durable write is an fsync or two). A caller on an event
loop runs them in a thread; with a plain `asyncio.to_thread`, cancelling the caller would
let it go on (release a key hold or the Keymanager's key-change lock, say) while the
write still runs. `run_to_completion` waits for the thread first. The signer (its record
calls and signatures) and the Keymanager API (its record and key-file changes) use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


async def run_to_completion(func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread`` that, when the caller is cancelled, still waits for the thread.

    A thread cannot be stopped, so a plain ``to_thread`` would let the caller
    release its key hold (and a key removal return) while a signature or a
    record write is still being made. Here the cancellation is re-raised only
    once the work has finished.
    """
    work = asyncio.ensure_future(asyncio.to_thread(func, *args, **kwargs))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        while not work.done():
            try:
                await asyncio.shield(work)
            except asyncio.CancelledError:
                continue
            except BaseException:
                break
        raise
