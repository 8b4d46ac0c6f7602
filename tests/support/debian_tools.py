"""Debian programs some tests drive (Prometheus, promtool, chromium and its driver).

Without one, its tests skip with the command that installs it; under CI=true that is
a failure instead (.ci/run installs them).
"""

from __future__ import annotations

import os
import shutil

import pytest


def debian_tool(program: str, package: str) -> str:
    """The path of ``program``; skips (fails under CI) when it is not installed."""
    path = shutil.which(program)
    if path is None:
        message = f"{program} is not installed: apt-get install {package}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
