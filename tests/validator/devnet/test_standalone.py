"""``python -m validator.devnet``: the chain in a process of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from tests.support.official_vectors import REPO_ROOT
from validator.devnet import DevnetProcess, DevnetStateError

REPO = REPO_ROOT


def devnet_command(state_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "validator.devnet",
        "--state-dir",
        str(state_dir),
        "--validators",
        "4",
        "--seconds-per-slot",
        "0.3",
        "--slots-per-epoch",
        "4",
        "--log-level",
        "WARNING",
        *extra,
    ]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_runs_until_terminated_and_prints_its_summary(tmp_path: Path) -> None:
    summary_file = tmp_path / "summary.json"
    process = subprocess.Popen(
        devnet_command(tmp_path / "devnet", "--summary", str(summary_file)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=environment(),
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        assert ready["ready"] is True and ready["pid"] == process.pid
        with urllib.request.urlopen(f"{ready['url']}/eth/v1/beacon/genesis", timeout=10) as answer:
            genesis = json.load(answer)["data"]
        assert genesis["genesis_validators_root"] == ready["genesis_validators_root"]
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["validators"] == 4
    assert summary["genesis_validators_root"] == ready["genesis_validators_root"]
    assert json.loads(summary_file.read_text()) == summary


def test_stops_after_its_slots_and_refuses_another_validator_count(tmp_path: Path) -> None:
    done = subprocess.run(
        devnet_command(tmp_path / "devnet", "--slots", "2"),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=environment(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["slots"] >= 2
    refused = subprocess.run(
        [*devnet_command(tmp_path / "devnet"), "--validators", "5"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=environment(),
        timeout=60,
    )
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "validators = 4, this run asks for 5" in lines[0]


def test_strict_mode_without_the_spec_refuses_in_one_line(tmp_path: Path) -> None:
    refused = subprocess.run(
        [*devnet_command(tmp_path / "devnet", "--slots", "1"), "--strict"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**environment(), "VALIDATOR_BEACON_API_SPEC": str(tmp_path / "no-spec")},
        timeout=60,
    )
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "Beacon API spec not found" in lines[0] and "beacon-node-oapi.yaml" in lines[0]


async def test_devnet_process_starts_reports_and_refuses(tmp_path: Path) -> None:
    state_dir = tmp_path / "devnet"
    chain = await DevnetProcess.start(state_dir, 4, 0.3, 4)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{chain.url}/eth/v1/beacon/genesis") as answer:
                genesis = (await answer.json())["data"]
        assert genesis["genesis_time"] == str(chain.genesis_time)
        assert genesis["genesis_validators_root"] == "0x" + chain.genesis_validators_root.hex()
        with pytest.raises(DevnetStateError, match="already running"):
            await DevnetProcess.start(state_dir, 4, 0.3, 4)
    finally:
        summary = await chain.stop()
    assert summary["validators"] == 4 and summary["runs"] == 1
    with pytest.raises(DevnetStateError, match="validators = 4, this run asks for 6"):
        await DevnetProcess.start(state_dir, 6, 0.3, 4)
    # Killed outright, the chain leaves its directory usable (the kernel drops the lock).
    killed = await DevnetProcess.start(state_dir, 4, 0.3, 4)
    killed.kill()
    await killed.process.wait()
    again = await DevnetProcess.start(state_dir, 4, 0.3, 4)
    summary = await again.stop()
    assert summary["runs"] == 3
    assert (state_dir / "chain.log").is_file()
