"""Fixtures shared by the crypto_backend tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import crypto_backend
from crypto_backend import lanes, selection
from crypto_backend.backend import Backend

PROJECT_VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "crypto"


def project_vectors(name: str) -> Any:
    return json.loads((PROJECT_VECTORS / name).read_text())


def unhex(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


@pytest.fixture(params=selection.BACKEND_NAMES)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend[Any, Any]]:
    """Each test runs once per backend, selected through the public ``use``."""
    previous = crypto_backend.backend_name()
    crypto_backend.use(request.param)
    try:
        yield selection.current()
    finally:
        crypto_backend.use(previous)


@pytest.fixture(params=[1, 2], ids=["one_lane", "two_lanes"], scope="module")
def lane_setting(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run a module's tests without lanes and with a pool of two lane processes."""
    lanes.set_lane_count(request.param)
    try:
        yield request.param
    finally:
        lanes.set_lane_count(None)


@pytest.fixture
def one_lane() -> Iterator[None]:
    lanes.set_lane_count(1)
    try:
        yield
    finally:
        lanes.set_lane_count(None)
