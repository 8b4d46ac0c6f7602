"""Locate the official test suites that live outside the repository.

They are read in place from ``../shared/vectors`` (relative to the repository
root) or from the directory named by ``VALIDATOR_VECTORS_DIR``. A missing suite
skips its tests with a message saying where to get it, except under
``CI=true``, where it fails them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
VECTORS_ENV = "VALIDATOR_VECTORS_DIR"
DEFAULT_VECTORS_DIR = REPO_ROOT.parent / "shared" / "vectors"


def vectors_root() -> Path:
    override = os.environ.get(VECTORS_ENV)
    return Path(override) if override else DEFAULT_VECTORS_DIR


def official_vectors(*parts: str) -> Path:
    """Path to an official suite, or skip (fail under CI=true) when it is missing."""
    path = vectors_root().joinpath(*parts)
    if not path.exists():
        message = (
            f"official test vectors not found at {path}; put the suites in ../shared/vectors "
            f"next to the repository or set {VECTORS_ENV} (docs/testing.md lists the upstream "
            "sources and versions)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
