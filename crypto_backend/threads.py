"""How many lanes (threads of the native core) a batch may use.

``VALIDATOR_BLS_LANES`` sets it (default: the usable cores of this process);
``set_lane_count`` overrides it for the process. Lanes are threads inside this
process: nothing is ever spawned, so any caller (a plain script, any thread, no
main guard) is safe. The native core reads the count when the ``blst`` backend
is first used and whenever ``set_lane_count`` changes it; with one lane it
starts no thread at all.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Final

LANES_ENV: Final = "VALIDATOR_BLS_LANES"

_lock = threading.Lock()
_configured: int | None = None


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def lane_count() -> int:
    """The lanes in use: ``set_lane_count``'s value, else the environment, else the cores."""
    if _configured is not None:
        return _configured
    raw = os.environ.get(LANES_ENV, "").strip()
    if not raw:
        return usable_cores()
    try:
        count = int(raw)
    except ValueError:
        raise ValueError(f"{LANES_ENV} must be a positive integer, got {raw!r}") from None
    if count < 1:
        raise ValueError(f"{LANES_ENV} must be a positive integer, got {raw!r}")
    return count


def set_lane_count(count: int | None) -> None:
    """Override ``VALIDATOR_BLS_LANES`` for this process (None: back to the environment)."""
    global _configured
    if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        raise ValueError(f"lane count must be a positive integer, got {count!r}")
    with _lock:
        _configured = count
        # The native core is loaded only when the blst backend is first used, and
        # then reads the count itself; once loaded it is told of every change.
        native = sys.modules.get("crypto_backend._native")
        if native is not None:
            native.set_lanes(lane_count())
