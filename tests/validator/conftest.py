"""Fixtures for the client: validators directories with interop keys, a running service.

The duty-loop test double is served by the root conftest's ``start_node`` (with ``DutyNode``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.validators_dir import make_validators_dir
from validator.devnet.strict_mode.checkers import StrictClientChecker
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec
from validator.service import RunOptions, ValidatorService


@pytest.fixture
def validators_dir(tmp_path: Path) -> Callable[[int], Path]:
    def make(count: int, name: str = "validators") -> Path:
        return make_validators_dir(tmp_path / name, count)

    return make


ServiceRunner = Callable[..., Awaitable[ValidatorService]]


@pytest.fixture
async def run_service(beacon_api_spec: BeaconApiSpec) -> AsyncIterator[ServiceRunner]:
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
            checker = StrictClientChecker(beacon_api_spec)
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


@contextlib.asynccontextmanager
async def service_running(
    run_service: ServiceRunner,
    url: str,
    directory: Path,
    *,
    ready: Callable[[ValidatorService], bool],
    timeout: float = 30.0,
    **options: Any,
) -> AsyncIterator[ValidatorService]:
    """A service running in the background, given to the body once ``ready`` says so;
    stopped cleanly (and its own failure raised) when the body ends."""
    stop = asyncio.Event()
    services: list[ValidatorService] = []
    running = asyncio.create_task(
        run_service(url, directory, stop=stop, started=services.append, **options)
    )
    try:
        async with asyncio.timeout(timeout):
            while not services or not ready(services[0]):
                if running.done():
                    await running  # a failed start raises here
                await asyncio.sleep(0.05)
        yield services[0]
    finally:
        stop.set()
        await running


@dataclass(frozen=True)
class RunningKeymanager:
    """A running service's Keymanager API: where it listens and the token it wants."""

    service: ValidatorService
    base_url: str  # http://127.0.0.1:PORT/eth/v1
    token: str


@contextlib.asynccontextmanager
async def keymanager_running(
    run_service: ServiceRunner, url: str, directory: Path, **options: Any
) -> AsyncIterator[RunningKeymanager]:
    """A service (its record initialised) with its Keymanager API on a free port, given
    to the body once the API listens."""
    async with service_running(
        run_service,
        url,
        directory,
        ready=lambda service: service.keymanager_server is not None,
        init_slashing_protection=True,
        keymanager=True,
        keymanager_port=0,
        **options,
    ) as service:
        server = service.keymanager_server
        assert server is not None and isinstance(server.port, int)
        token = (directory / "api-token.txt").read_text().strip()
        yield RunningKeymanager(service, f"http://127.0.0.1:{server.port}/eth/v1", token)
