"""``validator run`` with every key remote, signing through ``validator signer`` (processes,
the simulated chain): every duty kind done, through a kill -9 of the signer and its restart;
two clients pointed at one signer for the same keys (the doppelganger mistake) sign each
message once, because the signer's record says so; the chain's slasher counts 0; and the
running signer answers forged, foreign, slashable, unknown and malformed requests with
their status, recording (so signing) nothing."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from slashing_protection import RECORD_FILE, SlashingProtection
from tests.e2e.conftest import (
    SLOTS_PER_EPOCH,
    VALIDATORS,
    ChainStarter,
    ClientProcess,
    ClientStarter,
    spawn_validator,
)
from tests.e2e.test_shared_record import Readers, count_of, published, until_published
from tests.support.validators_dir import make_validators_dir
from validator.consensus.interop import interop_keypair
from validator.consensus.signing_roots import attestation_signing_root
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import AttestationData, Checkpoint
from validator.signing.web3signer import SignType, request_for

pytestmark = pytest.mark.slow

# Each remote signature is a round trip and a check: one-second slots leave a loaded
# two-core machine (chain, signer and client processes) the time the duties need.
SECONDS_PER_SLOT = 1.0
DUTY_KINDS = ("attestation", "block", "aggregate", "sync_committee_message", "sync_contribution")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


SignerStarter = Callable[..., Awaitable[ClientProcess]]


@pytest.fixture
async def start_signer() -> AsyncIterator[SignerStarter]:
    """``validator signer`` processes, killed at the end if still running."""
    started: list[ClientProcess] = []

    async def start(beacon: str, directory: Path, port: int, *args: str) -> ClientProcess:
        signer = await spawn_validator("signer", beacon, directory, "--port", str(port), *args)
        started.append(signer)
        await signer.wait_for(lambda entry: "listening on" in str(entry.get("message", "")), 60)
        return signer

    yield start
    for signer in started:
        if signer.process.returncode is None:
            signer.process.kill()
            await signer.process.wait()


def kinds_published(clients: list[ClientProcess]) -> Counter[str]:
    seen: Counter[str] = Counter()
    for client in clients:
        for entry in client.lines:
            if entry.get("result") == "published":
                seen[entry.get("kind", "")] += len(entry.get("validators", []))
    return seen


async def every_kind_published(client: ClientProcess, timeout: float = 60) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not all(kinds_published([client])[kind] for kind in DUTY_KINDS):
                assert client.process.returncode is None, client.lines[-3:]
                await asyncio.sleep(0.2)
    except TimeoutError:
        missing = [kind for kind in DUTY_KINDS if not kinds_published([client])[kind]]
        last = [entry.get("message") for entry in client.lines if entry.get("kind") in missing]
        raise AssertionError(f"never published: {missing}; {last[-3:]}") from None


def check_record_covers(directory: Path, clients: list[ClientProcess]) -> None:
    """No published attestation or block is above the record of ``directory``."""
    highest_target: dict[int, int] = {}
    highest_block: dict[int, int] = {}
    for (kind, slot, index), _ in published(clients).items():
        if kind == "attestation":
            epoch = slot // SLOTS_PER_EPOCH
            highest_target[index] = max(highest_target.get(index, 0), epoch)
        else:
            highest_block[index] = max(highest_block.get(index, 0), slot)
    with SlashingProtection.open_offline(directory) as record:
        for index, target in highest_target.items():
            watermark = record.watermark(interop_keypair(index)[1])
            assert watermark is not None and watermark.target >= target, (index, watermark)
        for index, slot in highest_block.items():
            watermark = record.watermark(interop_keypair(index)[1])
            assert watermark is not None and watermark.slot >= slot, (index, watermark)


async def refusals_sign_nothing(beacon: str, signer_url: str, signer_dir: Path) -> None:
    """Forged root, another chain, slashable, unknown key, malformed: their status, and the
    running signer's record file unchanged (nothing was recorded, so nothing signed)."""
    async with aiohttp.ClientSession() as http:
        answers = []
        for route in ("beacon/genesis", "config/spec", "config/fork_schedule"):
            async with http.get(f"{beacon}/eth/v1/{route}") as response:
                answers.append(await response.json())
        chain = ChainSpec.from_responses(*answers)
        current = chain.current_epoch()

        def body(source: int, target: int) -> dict[str, Any]:
            data = AttestationData(
                slot=chain.start_slot_of_epoch(target),
                source=Checkpoint(epoch=source),
                target=Checkpoint(epoch=target),
            )
            root = attestation_signing_root(chain, data)
            return request_for(SignType.ATTESTATION, chain, data, root).to_json()

        forged = body(current, current + 1)
        forged["signingRoot"] = "0x" + "11" * 32
        other_chain = body(current, current + 1)
        other_chain["fork_info"]["genesis_validators_root"] = "0x" + "22" * 32
        malformed = body(current, current + 1)
        del malformed["attestation"]
        key = "0x" + interop_keypair(0)[1].hex()
        unknown = "0x" + interop_keypair(VALIDATORS + 5)[1].hex()
        cases = [
            (key, forged, 400),
            (key, other_chain, 400),
            (key, body(0, 1), 412),  # below what the signer recorded for the key
            (unknown, body(current, current + 1), 404),
            (key, malformed, 400),
        ]
        before = (signer_dir / RECORD_FILE).read_bytes()
        for identifier, request, status in cases:
            url = f"{signer_url}/api/v1/eth2/sign/{identifier}"
            async with http.post(url, json=request) as response:
                assert response.status == status, await response.text()
        assert (signer_dir / RECORD_FILE).read_bytes() == before


async def test_all_keys_remote_through_a_signer_killed_and_restarted(
    tmp_path: Path,
    start_chain: ChainStarter,
    start_client: ClientStarter,
    start_signer: SignerStarter,
) -> None:
    signer_dir = make_validators_dir(tmp_path / "signer", VALIDATORS)
    client_dir = tmp_path / "client"
    client_dir.mkdir()
    chain, ready = await start_chain(tmp_path / "chain", seconds_per_slot=SECONDS_PER_SLOT)
    beacon = str(ready["url"])
    port = free_port()
    signer_url = f"http://127.0.0.1:{port}"
    readers = Readers()
    signer = await start_signer(beacon, signer_dir, port, "--init-slashing-protection")
    readers.follow(signer)
    client = await start_client(
        beacon,
        client_dir,
        "--init-slashing-protection",
        "--remote-signer-url",
        signer_url,
    )
    readers.follow(client)
    await until_published([client], "attestation", 2 * VALIDATORS, timeout=60)
    await until_published([client], "block", 2, timeout=60)
    # Every duty kind goes through the remote signer: the client holds no keystore.
    await every_kind_published(client)

    # kill -9 of the signer mid-run: the client keeps running; its remote keys miss duties.
    signer.process.send_signal(signal.SIGKILL)
    await signer.process.wait()
    await readers.finish(signer)
    await asyncio.sleep(3 * SECONDS_PER_SLOT)  # three slots without a signer
    assert client.process.returncode is None, client.lines[-3:]
    unavailable = [
        entry for entry in client.lines if "remote_signer_unavailable" in str(entry.get("message"))
    ]
    assert unavailable, "the client did not log its signer's outage"
    check_record_covers(signer_dir, [client])

    restarted = await start_signer(beacon, signer_dir, port)
    readers.follow(restarted)
    resumed_from = count_of([client], "attestation")
    await until_published([client], "attestation", resumed_from + 2 * VALIDATORS, timeout=60)
    await until_published([client], "block", count_of([client], "block"), timeout=60)

    await readers.stop_following(client)
    assert await client.stop() == 0, client.lines[-3:]
    await readers.stop_following(restarted)
    assert await restarted.stop() == 0, restarted.lines[-3:]
    check_record_covers(signer_dir, [client])
    check_record_covers(client_dir, [client])
    summary: dict[str, Any] | None = await chain.stop()
    assert summary is not None
    assert summary["slashable_messages"] == 0, summary["slashings"][:3]
    assert summary["invalid_signatures"] == 0
    print({key: summary[key] for key in ("attestations_received", "blocks_proposed")})


async def test_two_clients_one_signer_sign_each_message_once(
    tmp_path: Path,
    start_chain: ChainStarter,
    start_client: ClientStarter,
    start_signer: SignerStarter,
) -> None:
    signer_dir = make_validators_dir(tmp_path / "signer", VALIDATORS)
    chain, ready = await start_chain(tmp_path / "chain", seconds_per_slot=SECONDS_PER_SLOT)
    beacon = str(ready["url"])
    port = free_port()
    readers = Readers()
    signer = await start_signer(beacon, signer_dir, port, "--init-slashing-protection")
    readers.follow(signer)
    clients = []
    for name in ("first", "second"):
        directory = tmp_path / name
        directory.mkdir()
        client = await start_client(
            beacon,
            directory,
            "--init-slashing-protection",
            "--remote-signer-url",
            f"http://127.0.0.1:{port}",
        )
        readers.follow(client)
        clients.append(client)
    await until_published(clients, "attestation", 3 * VALIDATORS, timeout=60)
    await until_published(clients, "block", 3, timeout=60)
    for client in clients:
        await readers.stop_following(client)
        assert await client.stop() == 0, client.lines[-3:]
    await refusals_sign_nothing(beacon, f"http://127.0.0.1:{port}", signer_dir)
    await readers.stop_following(signer)
    assert await signer.stop() == 0
    summary: dict[str, Any] | None = await chain.stop()
    assert summary is not None
    assert summary["slashable_messages"] == 0, summary["slashings"][:3]
    assert summary["invalid_signatures"] == 0
    assert summary["duplicate_attestations"] == 0
    assert summary["duplicate_blocks"] == 0
    twice = {key: n for key, n in published(clients).items() if n > 1}
    assert not twice, sorted(twice)[:5]
    # The second client's duties were refused by the signer's record, not by its own.
    refused_by_signer = [
        entry
        for client in clients
        for entry in client.lines
        if "remote_signer_refused" in str(entry.get("message"))
    ]
    assert refused_by_signer
