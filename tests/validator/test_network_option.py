"""``--network``: ``validator signer --network sepolia`` starts without a beacon node and
signs with Sepolia's domains; ``validator run --network`` refuses a beacon node of another
chain at start, in one line naming both."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

import crypto_backend
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import GENESIS_VALIDATORS_ROOT, DutyNode
from tests.validator.conftest import ServiceRunner
from validator.consensus.encoding import to_hex
from validator.consensus.forks import ForkName
from validator.consensus.interop import interop_keypair
from validator.service import RunOptions, StartupError
from validator.signer_server import SignerOptions, SignerService

SEPOLIA_ROOT = bytes.fromhex("d8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078")
SEPOLIA_FULU = bytes.fromhex("90000075")  # eth-clients/sepolia metadata/config.yaml
SEPOLIA_ELECTRA = bytes.fromhex("90000074")
DOMAIN_RANDAO = bytes.fromhex("02000000")


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def randao_root_by_hand(epoch: int, fork_version: bytes, genesis_validators_root: bytes) -> bytes:
    """compute_signing_root(epoch, compute_domain(DOMAIN_RANDAO, version, root)), by hand."""
    fork_data_root = sha256(fork_version + bytes(28) + genesis_validators_root)
    domain = DOMAIN_RANDAO + fork_data_root[:28]
    object_root = epoch.to_bytes(8, "little") + bytes(24)
    return sha256(object_root + domain)


async def test_the_signer_with_network_sepolia_needs_no_beacon_node_and_uses_its_domains(
    validators_dir: Callable[..., Path],
) -> None:
    directory = validators_dir(2)
    service = SignerService(
        RunOptions(
            beacon_node_urls=[],
            validators_dir=directory,
            network="sepolia",
            init_slashing_protection=True,
            progress=False,
        ),
        SignerOptions(port=0),
    )
    stop = asyncio.Event()
    running = asyncio.create_task(service.run(stop))
    try:
        async with asyncio.timeout(30):
            while service.port is None:
                assert not running.done(), running.exception()
                await asyncio.sleep(0.05)
        assert service.running is not None and service.running.client is None
        epoch = 300_000  # in Sepolia's Fulu (from epoch 272640)
        body = {
            "type": "RANDAO_REVEAL",
            "fork_info": {
                "fork": {
                    "previous_version": to_hex(SEPOLIA_ELECTRA),
                    "current_version": to_hex(SEPOLIA_FULU),
                    "epoch": "272640",
                },
                "genesis_validators_root": to_hex(SEPOLIA_ROOT),
            },
            "randao_reveal": {"epoch": str(epoch)},
        }
        pubkey = interop_keypair(1)[1]
        url = f"http://127.0.0.1:{service.port}/api/v1/eth2/sign/{to_hex(pubkey)}"
        async with aiohttp.ClientSession() as http, http.post(url, json=body) as response:
            assert response.status == 200, await response.text()
            signature = bytes.fromhex((await response.text()).strip().strip('"')[2:])
        root = randao_root_by_hand(epoch, SEPOLIA_FULU, SEPOLIA_ROOT)
        assert crypto_backend.verify(pubkey, root, signature)
        # From epoch 353024 Sepolia runs Gloas; until this client knows it, nothing signs.
        gloas = {**body, "randao_reveal": {"epoch": "353100"}}
        async with aiohttp.ClientSession() as http, http.post(url, json=gloas) as response:
            refused = await response.text()
        if "gloas" not in {fork.value for fork in ForkName}:
            assert response.status == 400 and "353024" in refused, refused
        # The same request naming another chain's root is not Sepolia's: refused.
        body["fork_info"]["genesis_validators_root"] = to_hex(bytes(32))  # type: ignore[index]
        async with aiohttp.ClientSession() as http, http.post(url, json=body) as response:
            assert response.status == 400
    finally:
        stop.set()
        await running


async def test_run_with_network_refuses_a_beacon_node_of_another_chain_in_one_line(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    _, url = await start_node(DutyNode, validator_count=2)
    with pytest.raises(StartupError) as refused:
        await run_service(
            url, validators_dir(2), network="sepolia", init_slashing_protection=True
        )
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"--network sepolia: the beacon node {url} serves")
    assert f"serves another chain (genesis validators root {to_hex(GENESIS_VALIDATORS_ROOT)}" in (
        message
    )
    assert f"not sepolia ({to_hex(SEPOLIA_ROOT)}, genesis time 1655733600)" in message


def test_a_signer_with_neither_a_beacon_node_nor_a_network_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StartupError, match="give at least one --beacon-node-url"):
        SignerService(
            RunOptions(beacon_node_urls=[], validators_dir=tmp_path), SignerOptions(port=0)
        )
    with pytest.raises(StartupError, match="--network: unknown network 'goerli'"):
        SignerService(
            RunOptions(beacon_node_urls=[], validators_dir=tmp_path, network="goerli"),
            SignerOptions(port=0),
        )
