"""The pinned Gloas pyspec (eth-consensus-specs==1.7.0b4) as a test oracle, in its own Python.

The pyspec needs Python >= 3.12 and the project runs on 3.11, so the pyspec lives in a
separate environment (``make gloas-oracle`` or ``.ci/run`` creates ``.venv-gloas-oracle``
with python3.12; ``VALIDATOR_GLOAS_ORACLE_PYTHON`` names another interpreter) and
answers over a pipe (tests/support/gloas_pyspec_oracle.py). Without it the tests skip
with a message saying how to make it, and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.official_vectors import REPO_ROOT

ORACLE_ENV = "VALIDATOR_GLOAS_ORACLE_PYTHON"
DEFAULT_ORACLE_PYTHON = REPO_ROOT / ".venv-gloas-oracle" / "bin" / "python"
PINNED_PYSPEC = "eth-consensus-specs==1.7.0b4"
WORKER = Path(__file__).with_name("gloas_pyspec_oracle.py")


def oracle_python() -> Path:
    """The oracle's interpreter, or skip (fail under CI=true) when it is missing."""
    override = os.environ.get(ORACLE_ENV)
    path = Path(override) if override else DEFAULT_ORACLE_PYTHON
    if not path.exists():
        message = (
            f"the Gloas pyspec oracle ({PINNED_PYSPEC} under python3.12) is not at {path}; "
            f"run `make gloas-oracle` or set {ORACLE_ENV} (docs/testing.md)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


class GloasOracle:
    """One long-lived pyspec process; ask it one request at a time."""

    def __init__(self, python: Path) -> None:
        self._process = subprocess.Popen(
            [str(python), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )

    def ask(self, **request: Any) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("the pyspec oracle exited")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise AssertionError(f"the pyspec refused {request.get('type')}: {reply['error']}")
        return reply

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)
