"""Doppelganger protection and halts on the simulated chain, the client run as a process."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import SlashingProtection
from tests.e2e.conftest import VALIDATORS, ChainStarter, ClientProcess, ClientStarter
from tests.support.official_vectors import REPO_ROOT
from tests.support.validators_dir import make_validators_dir
from validator.consensus.interop import interop_keypair
from validator.halts import HaltReason, HaltStore

pytestmark = pytest.mark.slow

PUBKEYS = [interop_keypair(index)[1] for index in range(VALIDATORS)]


def messages(client: ClientProcess, text: str) -> list[str]:
    return [str(e.get("message")) for e in client.lines if text in str(e.get("message", ""))]


def published(client: ClientProcess, kind: str = "attestation") -> list[dict[str, Any]]:
    return [e for e in client.lines if e.get("kind") == kind and e.get("result") == "published"]


async def resume(directory: Path, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "validator",
        "resume",
        "--validators-dir",
        str(directory),
        *args,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode()


def never_signed(directory: Path) -> bool:
    with SlashingProtection.open_offline(directory) as record:
        marks = [record.watermark(pubkey) for pubkey in PUBKEYS]
    return all(mark is None or mark == (None, None, None) for mark in marks)


async def test_a_second_client_with_doppelganger_protection_halts_exits_3_and_stays_halted(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    first_dir = make_validators_dir(tmp_path / "first", VALIDATORS)
    second_dir = make_validators_dir(tmp_path / "second", VALIDATORS)
    chain, ready = await start_chain(first_dir)
    url = str(ready["url"])
    first = await start_client(url, first_dir, "--init-slashing-protection")
    await first.published("attestation", count=6)  # more than an epoch of attestations

    second = await start_client(
        url, second_dir, "--init-slashing-protection", "--doppelganger-protection"
    )
    assert await second.stop(None, timeout=60) == 3
    assert published(second) == [] and published(second, "block") == []
    assert len(messages(second, "HALTED")) == VALIDATORS
    halts = HaltStore(second_dir).halts()
    assert set(halts) == set(PUBKEYS)
    assert {halt.reason for halt in halts.values()} == {HaltReason.DOPPELGANGER}
    assert never_signed(second_dir)

    # A restart (with or without the flag) refuses every halted key, by name.
    restarted = await start_client(url, second_dir, "--init-slashing-protection")
    await restarted.wait_for(lambda e: "signs nothing" in str(e.get("message")), timeout=30)
    code, output = await resume(second_dir, "--all")
    assert code == 1 and "in use by another process" in output, output
    await asyncio.sleep(3 * 2.0)  # three epochs of the chain
    assert await restarted.stop() == 0
    refusals = messages(restarted, "is halted and signs nothing")
    assert len(refusals) == VALIDATORS
    assert all(f"validator resume --validators-dir {second_dir}" in line for line in refusals)
    assert published(restarted) == [] and never_signed(second_dir)

    code, output = await resume(second_dir, "--pubkey", "0x" + PUBKEYS[0].hex())
    assert code == 0 and f"resumed 0x{PUBKEYS[0].hex()}" in output, output
    code, output = await resume(second_dir, "--all")
    assert code == 0 and output.count("resumed 0x") == VALIDATORS - 1, output
    assert HaltStore(second_dir).halts() == {}
    assert len(HaltStore(second_dir).cleared_log()) == VALIDATORS

    assert await first.stop() == 0
    summary = await chain.stop()
    assert summary is not None
    assert summary["slashable_messages"] == 0 and summary["invalid_signatures"] == 0


SLOT = 1.5  # a restart must begin within the epoch after the stop: 6 s epochs leave room
SLOTS_PER_EPOCH = 4


def epoch_of(entry: dict[str, Any]) -> int:
    return int(entry["slot"]) // SLOTS_PER_EPOCH


def start_epoch(client: ClientProcess) -> int:
    """The epoch the gate admitted the keys in ("... (now N)" of its lines)."""
    lines = messages(client, "wait skipped") + messages(client, "key(s) wait")
    return min(int(line.rsplit("(now ", 1)[1].split(")")[0]) for line in lines)


async def test_after_sigterm_the_restart_signs_at_once_and_after_kill_9_it_waits_2_epochs(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    directory = make_validators_dir(tmp_path / "validators", VALIDATORS)
    chain, ready = await start_chain(
        directory, seconds_per_slot=SLOT, slots_per_epoch=SLOTS_PER_EPOCH
    )
    url = str(ready["url"])
    first = await start_client(
        url, directory, "--init-slashing-protection", "--doppelganger-protection"
    )
    # A full epoch of attestations (its first may miss a slot as its keys are released),
    # then a stop right after the last slot of an epoch: every key signed in that epoch.
    await first.published("attestation", count=SLOTS_PER_EPOCH + 1, timeout=60)
    await first.wait_for(
        lambda e: (
            e.get("kind") == "attestation"
            and e.get("result") == "published"
            and int(e["slot"]) % SLOTS_PER_EPOCH == SLOTS_PER_EPOCH - 1
        ),
        timeout=60,
    )
    assert await first.stop() == 0
    assert (directory / "clean-shutdown.json").exists()

    restarted = await start_client(url, directory, "--doppelganger-protection")
    await restarted.published("attestation", count=2, timeout=60)
    skipped = messages(restarted, "doppelganger wait skipped")
    assert len(skipped) == VALIDATORS, restarted.lines[-5:]
    assert messages(restarted, "key(s) wait") == []
    assert not (directory / "clean-shutdown.json").exists()  # consumed
    assert epoch_of(published(restarted)[0]) <= start_epoch(restarted) + 1

    restarted.process.send_signal(signal.SIGKILL)
    await restarted.process.wait()
    after_crash = await start_client(url, directory, "--doppelganger-protection")
    await after_crash.published("attestation", count=1, timeout=90)
    assert messages(after_crash, "doppelganger wait skipped") == []
    assert any("no clean-shutdown marker" in line for line in messages(after_crash, "wait ("))
    begun = start_epoch(after_crash)
    assert epoch_of(published(after_crash)[0]) >= begun + 2
    assert messages(after_crash, "HALTED") == []  # its own last signatures are no doppelganger
    assert await after_crash.stop() == 0

    summary = await chain.stop()
    assert summary is not None
    assert summary["slashable_messages"] == 0 and summary["invalid_signatures"] == 0


async def test_a_doppelganger_started_later_is_found_through_the_chain_and_our_keys_halt(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    ours_dir = make_validators_dir(tmp_path / "ours", VALIDATORS)
    other_dir = make_validators_dir(tmp_path / "other", VALIDATORS)
    chain, ready = await start_chain(ours_dir)
    url = str(ready["url"])
    ours = await start_client(url, ours_dir, "--init-slashing-protection")
    await ours.published("attestation", count=3)
    # Not protected, its own record: it signs what ours signed, with other blocks (graffiti).
    other = await start_client(
        url, other_dir, "--init-slashing-protection", "--graffiti", "the other machine"
    )
    await ours.wait_for(lambda e: "HALTED" in str(e.get("message")), timeout=60)
    await asyncio.sleep(3 * 2.0)  # three more epochs
    assert await other.stop() == 0
    assert await ours.stop() == 0

    halts = HaltStore(ours_dir).halts()
    assert halts and {halt.reason for halt in halts.values()} == {HaltReason.SLASHED}
    # The chain announces each doubled proposal (a proposer_slashing event): the key halts
    # at once, before any status poll.
    assert any("proposer_slashing event" in halt.detail for halt in halts.values()), halts
    assert len(messages(ours, "HALTED")) == len(halts)
    # Nothing signed after the halt: at most what was in flight in the epoch it came.
    with SlashingProtection.open_offline(ours_dir) as record:
        for pubkey, halt in halts.items():
            mark = record.watermark(pubkey)
            assert mark is not None and halt.epoch is not None
            assert (mark.target or 0) <= halt.epoch + 1, (halt, mark)
    summary = await chain.stop()
    assert summary is not None and summary["slashable_messages"] > 0  # the doppelganger's
