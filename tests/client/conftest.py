"""Fixtures for the duty loop: the strict test double, validators directories, a running service."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.duty_node import DutyNode
from tests.official_vectors import official_vectors
from validator.devnet.keys import write_interop_keystores
from validator.devnet.openapi_check import BeaconApiSpec, load_beacon_api_spec
from validator.devnet.openapi_checkers import StrictClientChecker
from validator.service import RunOptions, ValidatorService


@pytest.fixture(scope="session")
def beacon_spec() -> BeaconApiSpec:
    return load_beacon_api_spec(official_vectors("beacon-api"))


def make_validators_dir(path: Path, count: int) -> Path:
    """A validators directory with interop keys 0 .. count-1 (cheap devnet keystores)."""
    path.mkdir(parents=True, exist_ok=True)
    write_interop_keystores(path, range(count))
    return path


@pytest.fixture
def validators_dir(tmp_path: Path) -> Callable[[int], Path]:
    def make(count: int, name: str = "validators") -> Path:
        return make_validators_dir(tmp_path / name, count)

    return make


NodeStarter = Callable[..., Awaitable[tuple[DutyNode, str]]]


@pytest.fixture
async def duty_node(beacon_spec: BeaconApiSpec, aiohttp_server: Any) -> AsyncIterator[NodeStarter]:
    """Start strict duty nodes; at the end, assert that none saw a spec violation."""
    started: list[DutyNode] = []

    async def start(*, strict: bool = True, **options: Any) -> tuple[DutyNode, str]:
        node = DutyNode(beacon_spec if strict else None, **options)
        server = await aiohttp_server(node.app())
        started.append(node)
        return node, str(server.make_url("")).rstrip("/")

    yield start
    for node in started:
        node.release()
    violations = [str(v) for node in started if node.checker for v in node.checker.violations]
    assert violations == [], "the client or the double broke the Beacon API spec"


ServiceRunner = Callable[..., Awaitable[ValidatorService]]


@pytest.fixture
async def run_service(beacon_spec: BeaconApiSpec) -> AsyncIterator[ServiceRunner]:
    """Run a ValidatorService until its last slot, ``stop_after`` seconds or ``stop``; returns
    it after a clean stop. The client checks every exchange against the spec unless
    ``strict=False`` (timing tests); no violation may be seen."""
    checkers: list[StrictClientChecker] = []

    async def run(
        url: str,
        directory: Path,
        *,
        stop_after: float | None = None,
        stop: asyncio.Event | None = None,
        strict: bool = True,
        started: Callable[[ValidatorService], None] | None = None,
        **options: Any,
    ) -> ValidatorService:
        middlewares = []
        if strict:
            checker = StrictClientChecker(beacon_spec)
            checkers.append(checker)
            middlewares.append(checker)
        # The driver's hooks go to run(), not to the client's options.
        last_slot = options.pop("last_slot", None)
        on_slot = options.pop("on_slot", None)
        options.setdefault("progress", False)
        options.setdefault("stop_grace", 1.0)
        service = ValidatorService(
            RunOptions(
                beacon_node_urls=[url],
                validators_dir=directory,
                middlewares=middlewares,
                **options,
            )
        )
        if started is not None:
            started(service)
        stop = stop or asyncio.Event()
        stopper = None
        if stop_after is not None:
            stopper = asyncio.get_running_loop().call_later(stop_after, stop.set)
        try:
            async with asyncio.timeout(60):
                await service.run(stop, last_slot=last_slot, on_slot=on_slot)
        finally:
            if stopper is not None:
                stopper.cancel()
        return service

    yield run
    assert [str(v) for checker in checkers for v in checker.violations] == []
