"""``validator signer`` as the service runs it (against a beacon node double): HTTPS with its
certificate, the bearer token (required off loopback, created 0600 by default), the
Keymanager API beside it moving a key out, and the start-up refusals."""

from __future__ import annotations

import asyncio
import os
import ssl
import stat
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

import crypto_backend
from slashing_protection import RECORD_FILE
from slashing_protection.postgres import PostgresSlashingProtection
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.support.validators_dir import make_validators_dir
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_keypair
from validator.consensus.signing_roots import attestation_signing_root, randao_reveal_signing_root
from validator.consensus.ssz import AttestationData, Checkpoint
from validator.service import RunOptions, StartupError
from validator.signer_server import SIGNER_TOKEN_FILE, SignerOptions, SignerService
from validator.signing.web3signer import RandaoReveal, SignType, request_for

TOKEN = "5a" * 32

Started = Callable[..., Awaitable[SignerService]]


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert),
            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
async def start_signer() -> AsyncIterator[Started]:
    running: list[tuple[asyncio.Event, asyncio.Task[None]]] = []

    async def start(
        url: str, directory: Path, signer: SignerOptions, **options: Any
    ) -> SignerService:
        service = SignerService(
            RunOptions(beacon_node_urls=[url], validators_dir=directory, progress=False, **options),
            signer,
        )
        stop = asyncio.Event()
        task = asyncio.create_task(service.run(stop))
        running.append((stop, task))
        async with asyncio.timeout(30):
            while service.port is None:
                assert not task.done(), task.exception()
                await asyncio.sleep(0.05)
        return service

    yield start
    for stop, task in running:
        stop.set()
        await task


async def test_https_with_the_token_and_a_key_moved_out_through_the_keymanager_api(
    start_node: NodeStarter, start_signer: Started, tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=4)
    directory = make_validators_dir(tmp_path / "signer", 4)
    token_file = tmp_path / "token.txt"
    token_file.write_text(TOKEN + "\n")
    cert, key = certificate
    service = await start_signer(
        url,
        directory,
        SignerOptions(port=0, token_file=token_file, tls_cert=cert, tls_key=key),
        init_slashing_protection=True,
        keymanager=True,
        keymanager_port=0,
    )
    trust = ssl.create_default_context(cafile=str(cert))
    base = f"https://127.0.0.1:{service.port}"
    pubkey = node.keys[1][1]
    chain = service.chain
    assert chain is not None
    root = randao_reveal_signing_root(chain, 3)
    body = request_for(SignType.RANDAO_REVEAL, chain, RandaoReveal(epoch=3), root).to_json()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trust)) as http:
        async with http.get(f"{base}/api/v1/eth2/publicKeys") as response:
            assert response.status == 401
        async with http.get(f"{base}/upcheck") as response:
            assert response.status == 200
        authorized = {"Authorization": f"Bearer {TOKEN}"}
        async with http.get(f"{base}/api/v1/eth2/publicKeys", headers=authorized) as response:
            assert response.status == 200
            assert set(await response.json()) == {to_hex(pk) for _, pk in node.keys[:4]}
        sign_url = f"{base}/api/v1/eth2/sign/{to_hex(pubkey)}"
        async with http.post(sign_url, json=body, headers=authorized) as response:
            assert response.status == 200
            signature = bytes.fromhex((await response.text())[2:])
        assert crypto_backend.verify(pubkey, root, signature)

        # The key leaves through the Keymanager API (with its history); then 404.
        keymanager = f"http://127.0.0.1:{service.keymanager_server.port}/eth/v1/keystores"  # type: ignore[union-attr]
        manager_token = (directory / "api-token.txt").read_text().strip()
        async with http.delete(
            keymanager,
            json={"pubkeys": [to_hex(pubkey)]},
            headers={"Authorization": f"Bearer {manager_token}"},
        ) as response:
            assert response.status == 200
            answer = await response.json()
        assert [item["status"] for item in answer["data"]] == ["deleted"]
        history = orjson.loads(answer["slashing_protection"])
        assert [entry["pubkey"] for entry in history["data"]] == [to_hex(pubkey)]
        async with http.post(sign_url, json=body, headers=authorized) as response:
            assert response.status == 404
        # The signer signs with its keystores only: a remote key is refused, not stored.
        other = to_hex(interop_keypair(9)[1])
        remote = {"remote_keys": [{"pubkey": other, "url": "http://x:1"}]}
        async with http.post(
            keymanager.replace("keystores", "remotekeys"),
            json=remote,
            headers={"Authorization": f"Bearer {manager_token}"},
        ) as response:
            statuses = (await response.json())["data"]
        assert [item["status"] for item in statuses] == ["error"]
        assert "keystores only" in statuses[0]["message"]
        assert service.store.remote_keys() == []


async def test_off_loopback_the_token_is_made_and_required(
    start_node: NodeStarter, start_signer: Started, tmp_path: Path
) -> None:
    _, url = await start_node(DutyNode, validator_count=2)
    directory = make_validators_dir(tmp_path / "signer", 2)
    service = await start_signer(
        url, directory, SignerOptions(address="0.0.0.0", port=0), init_slashing_protection=True
    )
    token_path = directory / SIGNER_TOKEN_FILE
    assert stat.S_IMODE(os.stat(token_path).st_mode) == 0o600
    token = token_path.read_text().strip()
    async with aiohttp.ClientSession() as http:
        keys_url = f"http://127.0.0.1:{service.port}/api/v1/eth2/publicKeys"
        async with http.get(keys_url) as response:
            assert response.status == 401
        async with http.get(keys_url, headers={"Authorization": f"Bearer {token}"}) as response:
            assert response.status == 200


async def test_start_up_refusals(start_node: NodeStarter, tmp_path: Path) -> None:
    _, url = await start_node(DutyNode, validator_count=2)
    directory = make_validators_dir(tmp_path / "signer", 2)
    options = RunOptions(beacon_node_urls=[url], validators_dir=directory, progress=False)
    with pytest.raises(StartupError, match="--tls-cert and --tls-key together"):
        SignerService(options, SignerOptions(tls_cert=tmp_path / "cert.pem"))
    missing = SignerService(
        options,
        SignerOptions(port=0, tls_cert=tmp_path / "none.pem", tls_key=tmp_path / "none.key"),
    )
    with pytest.raises(StartupError, match="cannot use --tls-cert"):
        await missing.run(asyncio.Event())
    # No record and no --init-slashing-protection: refused, as validator run refuses.
    with pytest.raises(StartupError, match="no slashing-protection record"):
        await SignerService(options, SignerOptions(port=0)).run(asyncio.Event())


async def test_the_shared_record_in_postgresql(
    start_node: NodeStarter, start_signer: Started, tmp_path: Path, pg_url: str
) -> None:
    url = pg_url
    node, beacon = await start_node(DutyNode, validator_count=2)
    directory = make_validators_dir(tmp_path / "signer", 2)
    service = await start_signer(
        beacon,
        directory,
        SignerOptions(port=0),
        init_slashing_protection=True,
        slashing_protection_db=url,
    )
    chain = service.chain
    assert chain is not None
    pubkey = node.keys[0][1]
    # The double's genesis time is a whole second, which may lie a moment ahead (and the
    # far-future guard counts from it).
    await asyncio.sleep(max(0.0, chain.genesis_time - time.time() + 0.05))
    current = chain.current_epoch()
    data = AttestationData(
        slot=chain.start_slot_of_epoch(current),
        source=Checkpoint(epoch=max(0, current - 1)),
        target=Checkpoint(epoch=current + 1),
    )
    root = attestation_signing_root(chain, data)
    body = request_for(SignType.ATTESTATION, chain, data, root).to_json()
    async with aiohttp.ClientSession() as http:
        sign_url = f"http://127.0.0.1:{service.port}/api/v1/eth2/sign/{to_hex(pubkey)}"
        async with http.post(sign_url, json=body) as response:
            assert response.status == 200
        async with http.post(sign_url, json=body) as response:
            assert response.status == 412
    # Recorded in the database (and no file record in the directory).
    assert not (directory / RECORD_FILE).exists()
    with PostgresSlashingProtection.open_offline(url) as shared:
        watermark = shared.watermark(pubkey)
    assert watermark is not None and watermark.target == current + 1
