"""``python -m validator run`` as a process: signals, exit codes, one-line errors, JSON logs."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import orjson
import pytest

from slashing_protection import RecordLockedError, SlashingProtection
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import GENESIS_VALIDATORS_ROOT, DutyNode
from tests.support.official_vectors import REPO_ROOT

VALIDATORS = 4


async def start_validator(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "validator",
        *args,
        cwd=REPO_ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def read_json_lines_until(
    process: asyncio.subprocess.Process, found: Callable[[dict[str, object]], bool]
) -> list[dict[str, object]]:
    """Read stderr (one JSON object per line) until a line satisfies ``found``."""
    assert process.stderr is not None
    lines: list[dict[str, object]] = []
    async with asyncio.timeout(30):
        while True:
            raw = await process.stderr.readline()
            assert raw, f"the validator ended early: {lines[-5:]}"
            entry = orjson.loads(raw)
            lines.append(entry)
            if found(entry):
                return lines


async def test_sigterm_stops_cleanly_exits_0_and_releases_the_lock(
    start_node: NodeStarter, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    directory = validators_dir(VALIDATORS)
    process = await start_validator(
        "run",
        "--beacon-node-url",
        url,
        "--validators-dir",
        str(directory),
        "--init-slashing-protection",
        "--log-format",
        "json",
        "--metrics",
        "--metrics-port",
        "0",
    )
    try:
        lines = await read_json_lines_until(
            process,
            lambda entry: entry.get("kind") == "attestation" and entry.get("result") == "published",
        )
        duty_line = lines[-1]
        assert {"ts", "level", "logger", "message", "slot", "validators"} <= set(duty_line)
        crypto_line = next(e for e in lines if str(e["message"]).startswith("crypto backend: "))
        assert "'backend': 'blst'" in str(crypto_line["message"])
        assert "'simd': " in str(crypto_line["message"])
        metrics_line = next(e for e in lines if str(e["message"]).startswith("metrics on "))
        metrics_url = str(metrics_line["message"]).removeprefix("metrics on ")
        async with aiohttp.ClientSession() as session, session.get(metrics_url) as response:
            assert response.status == 200
            text = await response.text()
        assert 'validator_duties_total{kind="attestation",result="published"}' in text
        assert "validator_beacon_node_request_seconds_bucket" in text
        assert "validator_slashing_protection_write_seconds_bucket" in text
        assert "validator_signatures_total" in text
        # While it runs, the directory is locked.
        with pytest.raises(RecordLockedError):
            SlashingProtection.open(directory, GENESIS_VALIDATORS_ROOT)
    except BaseException:
        process.kill()
        await process.wait()
        raise
    process.send_signal(signal.SIGTERM)
    async with asyncio.timeout(15):
        _, rest = await process.communicate()
    assert process.returncode == 0, rest.decode()[-2000:]
    tail = [orjson.loads(line) for line in rest.splitlines()]  # still one JSON object per line
    assert any("lock released" in str(entry["message"]) for entry in tail)
    with SlashingProtection.open(directory, GENESIS_VALIDATORS_ROOT) as record:
        assert all(record.contains(pubkey) for _, pubkey in node.keys)


async def test_a_refused_start_is_one_line_on_stderr_and_exit_1(
    start_node: NodeStarter, validators_dir: Callable[..., Path]
) -> None:
    _, url = await start_node(DutyNode, validator_count=2)
    directory = validators_dir(2)
    process = await start_validator(
        "run", "--beacon-node-url", url, "--validators-dir", str(directory)
    )
    async with asyncio.timeout(30):
        stdout, stderr = await process.communicate()
    assert process.returncode == 1
    errors = [line for line in stderr.decode().splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "no slashing-protection record" in errors[0]
    assert "--init-slashing-protection" in errors[0]
