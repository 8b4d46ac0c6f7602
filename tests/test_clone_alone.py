"""A clone without the official suites beside it: every test collects, and those
that need a suite skip with the standard message (or fail under ``CI=true``).

Run as subprocesses so that the suites' location is what a fresh clone sees; the
spec variables that override it for one API are dropped too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.official_vectors import REPO_ROOT, VECTORS_ENV

SPEC_OVERRIDES = ("VALIDATOR_BEACON_API_SPEC", "VALIDATOR_WEB3SIGNER_API_SPEC")
STANDARD_MESSAGE = "official test vectors not found at"
# Reads the Keymanager API spec at collection time to parametrize its tests.
SPEC_PARAMETRIZED = "tests/keymanager/api/test_auth.py"


def _pytest_without_suites(
    empty: Path, *arguments: str, ci: bool = False
) -> subprocess.CompletedProcess[str]:
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in SPEC_OVERRIDES and name != "CI" and not name.startswith("PYTEST_")
    }
    environment[VECTORS_ENV] = str(empty)
    if ci:
        environment["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *arguments],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=environment,
        timeout=300,
    )


def test_the_whole_suite_collects_without_the_official_suites(tmp_path: Path) -> None:
    collected = _pytest_without_suites(tmp_path, "--collect-only", "-q")
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert "error" not in collected.stdout.splitlines()[-1], collected.stdout[-3000:]


def test_a_missing_suite_skips_with_the_standard_message_and_fails_under_ci(
    tmp_path: Path,
) -> None:
    skipped = _pytest_without_suites(tmp_path, "-rs", "-q", SPEC_PARAMETRIZED)
    assert skipped.returncode == 0, skipped.stdout[-3000:]
    assert STANDARD_MESSAGE in skipped.stdout and "skipped" in skipped.stdout.splitlines()[-1]
    failed = _pytest_without_suites(tmp_path, "-q", SPEC_PARAMETRIZED, ci=True)
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert STANDARD_MESSAGE in failed.stdout
