"""End-to-end fixtures: the simulated chain in its own process and the client as a process."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.official_vectors import REPO_ROOT
from validator.devnet import DevnetProcess
from validator.devnet.command.run import DevnetOptions, stop_chain
from validator.devnet.command.run import start_chain as start_devnet_chain

VALIDATORS = 16
SECONDS_PER_SLOT = 0.5
SLOTS_PER_EPOCH = 4


def devnet_options(directory: Path, **changes: Any) -> DevnetOptions:
    """Small, fast devnets: 16 validators, half-second slots, 4 slots per epoch."""
    options: dict[str, Any] = {
        "validators": VALIDATORS,
        "seconds_per_slot": SECONDS_PER_SLOT,
        "slots_per_epoch": SLOTS_PER_EPOCH,
        "validators_dir": directory,
        "progress": False,
        "genesis_delay": 1.5,
        "summary": directory.parent / f"{directory.name}-summary.json",
    }
    options.update(changes)
    return DevnetOptions(**options)


class ClientProcess:
    """``python -m validator run`` with JSON logs on stderr, read line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []

    async def wait_for(self, found: Callable[[dict[str, Any]], bool], timeout: float = 30) -> None:
        assert self.process.stderr is not None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.process.stderr.readline()
                assert raw, f"the client ended (exit {self.process.returncode}): {self.lines[-3:]}"
                entry = orjson.loads(raw)
                self.lines.append(entry)
                if found(entry):
                    return

    async def published(self, kind: str, count: int = 1, timeout: float = 30) -> None:
        seen = 0

        def found(entry: dict[str, Any]) -> bool:
            nonlocal seen
            if entry.get("kind") == kind and entry.get("result") == "published":
                seen += 1
            return seen >= count

        await self.wait_for(found, timeout)

    async def stop(self, sig: signal.Signals | None = signal.SIGTERM, timeout: float = 15) -> int:
        """Send ``sig`` (None: none, wait for it to end on its own) and collect the rest."""
        if sig is not None and self.process.returncode is None:
            self.process.send_signal(sig)
        async with asyncio.timeout(timeout):
            _, rest = await self.process.communicate()
        for line in rest.splitlines():
            # One JSON object per log line; the one-line "error: ..." of a refused start is text.
            parsed = orjson.loads(line) if line.startswith(b"{") else {"text": line.decode()}
            self.lines.append(parsed)
        assert self.process.returncode is not None
        return self.process.returncode


async def spawn_validator(command: str, url: str, directory: Path, *args: str) -> ClientProcess:
    """``python -m validator COMMAND`` (``run``, ``signer``) on a beacon node and a
    validators directory, logging JSON on stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "validator",
        command,
        "--beacon-node-url",
        url,
        "--validators-dir",
        str(directory),
        "--log-format",
        "json",
        *args,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    return ClientProcess(process)


ClientStarter = Callable[..., Awaitable[ClientProcess]]


@pytest.fixture
async def start_client() -> AsyncIterator[ClientStarter]:
    started: list[ClientProcess] = []

    async def start(url: str, directory: Path, *args: str) -> ClientProcess:
        client = await spawn_validator("run", url, directory, *args)
        started.append(client)
        return client

    yield start
    for client in started:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()


ChainStarter = Callable[..., Awaitable[tuple[DevnetProcess, dict[str, Any]]]]


@pytest.fixture
async def start_chain(tmp_path: Path) -> AsyncIterator[ChainStarter]:
    """The simulated chain as ``validator devnet`` runs it, state under ``<dir>/devnet``."""
    started: list[DevnetProcess] = []

    async def start(directory: Path, **changes: Any) -> tuple[DevnetProcess, dict[str, Any]]:
        chain = await start_devnet_chain(devnet_options(directory, **changes))
        started.append(chain)
        return chain, chain.ready

    yield start
    for chain in started:
        await stop_chain(chain)
