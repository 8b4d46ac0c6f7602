"""The client as a process against the chain: crashes, a second client, a doppelganger."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import VALIDATORS, ChainStarter, ClientProcess, ClientStarter
from tests.support.official_vectors import REPO_ROOT
from tests.support.validators_dir import make_validators_dir

pytestmark = pytest.mark.slow


async def test_kill_9_then_restart_continues_with_nothing_slashable_and_a_second_client_is_refused(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    directory = make_validators_dir(tmp_path / "validators", VALIDATORS)
    chain, ready = await start_chain(directory)
    url = str(ready["url"])

    first = await start_client(url, directory, "--init-slashing-protection")
    await first.published("attestation", count=3)
    # While it runs, a second client on the same directory stops at once.
    second = await start_client(url, directory)
    assert await second.stop(None, timeout=30) == 1
    errors = [entry for entry in second.lines if "in use by another process" in str(entry)]
    assert errors, second.lines[-3:]

    # Killed mid-run: no clean stop, no chance to flush anything.
    await first.published("block", count=1)
    first.process.send_signal(signal.SIGKILL)
    await first.process.wait()

    # The kernel released the lock; the restart continues from the record on disk.
    restarted = await start_client(url, directory)
    await restarted.published("attestation", count=4)
    await restarted.published("block", count=1)
    assert await restarted.stop() == 0

    summary = await chain.stop()
    assert summary is not None
    assert summary["slashable_messages"] == 0
    assert summary["invalid_signatures"] == 0
    assert summary["attestations_received"] > 0


async def test_the_same_keys_from_two_directories_are_caught_only_by_the_chains_slasher(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    """Two directories, two records: each record knows only its own client's signatures.

    Neither client can see the other, so each record allows what the other already
    signed. Both ask the same beacon node, so their attestations are identical (not
    slashable) while they see the same head; their blocks differ by graffiti, so every
    proposal is doubled and the chain's slasher sees it. docs/running.md records
    this; it is what doppelganger protection exists for.
    """
    first_dir = make_validators_dir(tmp_path / "first", VALIDATORS)
    second_dir = make_validators_dir(tmp_path / "second", VALIDATORS)
    chain, ready = await start_chain(first_dir)
    url = str(ready["url"])
    first = await start_client(url, first_dir, "--init-slashing-protection")
    second = await start_client(
        url, second_dir, "--init-slashing-protection", "--graffiti", "the other machine"
    )
    await asyncio.gather(
        first.published("attestation", count=4), second.published("attestation", count=4)
    )
    await asyncio.gather(first.published("block", count=2), second.published("block", count=2))
    assert await first.stop() == 0
    assert await second.stop() == 0
    summary = await chain.stop()
    assert summary is not None
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] > 0
    kinds = {finding["kind"] for finding in summary["slashings"]}
    # Blocks always differ (graffiti). Attestations are identical only while both
    # clients see the same head; on a loaded machine one may attest a slot late at
    # another head, which is a double vote, and the chain's slasher must see that too.
    assert "double_proposal" in kinds, summary["slashings"][:3]
    assert kinds <= {"double_proposal", "double_vote"}, summary["slashings"][:3]


async def test_devnet_with_slots_0_runs_until_interrupted_and_leaves_no_chain_behind(
    tmp_path: Path,
) -> None:
    summary_file = tmp_path / "summary.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "validator",
        "devnet",
        "--slots",
        "0",
        "--validators",
        str(VALIDATORS),
        "--seconds-per-slot",
        "0.5",
        "--slots-per-epoch",
        "4",
        "--validators-dir",
        str(tmp_path / "validators"),
        "--summary",
        str(summary_file),
        "--log-format",
        "json",
        "--log-level",
        "info",
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    client = ClientProcess(process)
    try:
        await client.published("attestation", count=4)
    except BaseException:
        process.kill()
        await process.wait()
        raise
    chain_line = next(e for e in client.lines if "simulated beacon node on" in str(e["message"]))
    port = int(str(chain_line["message"]).rsplit("port ", 1)[1].rstrip(")"))
    assert await client.stop(signal.SIGINT, timeout=30) == 0
    summary = orjson.loads(summary_file.read_bytes())
    assert summary["slashable_messages"] == 0 and summary["invalid_signatures"] == 0
    assert summary["attestations_received"] >= 4
    assert any(entry.get("message") == "devnet summary" for entry in client.lines)
    # The chain stopped with the command: nothing listens on its port any more.
    with pytest.raises(OSError):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
