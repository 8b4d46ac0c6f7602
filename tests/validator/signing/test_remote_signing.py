"""Remote keys sign through a real ``validator signer`` API on loopback, every request held to
the official Web3Signer spec: every kind, the local record first, a wrong signature refused
and counted, a signer that is down refusing only its own keys, and a slot of many keys on
few kept-alive connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

import crypto_backend
from slashing_protection import SlashingProtection
from tests.validator.signing.metrics_support import refusals
from tests.validator.signing.support import GVR, Clock, attestation_data
from tests.validator.signing.web3signer_cases import HEAD
from validator.consensus.interop import interop_keypair
from validator.consensus.signing_roots import randao_reveal_signing_root
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    ContributionAndProof,
    SyncCommitteeContribution,
    ValidatorRegistrationV1,
    VoluntaryExit,
    electra,
)
from validator.consensus.ssz.blocks import parse_produced_block
from validator.consensus.ssz.codec import to_json
from validator.devnet.strict_mode.checkers import StrictClientChecker, StrictServerChecker
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec
from validator.signer_server import SignerApi, start_signer_api
from validator.signing.remote import RemoteSigner, RemoteSignerSettings
from validator.signing.signer import Signer
from validator.signing.types import (
    AttestationRequest,
    RefusalReason,
    SigningRefusedError,
    SyncSelectionRequest,
)

REMOTE = [interop_keypair(index) for index in range(10, 14)]
LOCAL = [interop_keypair(index) for index in range(20, 22)]
SETTINGS = RemoteSignerSettings(timeout=1.0, attempts=2, retry_delay=0.01)

ServeRemote = Callable[..., Awaitable[str]]


@pytest.fixture
async def serve_remote(
    tmp_path: Path, chain: ChainSpec, clock: Clock, web3signer_spec: BeaconApiSpec
) -> AsyncIterator[ServeRemote]:
    """A signer API holding ``keys`` over its own record (strict server side); its URL."""
    cleanups: list[Callable[[], Awaitable[None]]] = []
    records: list[SlashingProtection] = []
    checkers: list[StrictServerChecker] = []

    async def start(keys: list[tuple[int, bytes]], app: web.Application | None = None) -> str:
        if app is None:
            directory = tmp_path / f"remote-{len(records)}"
            directory.mkdir()
            record = SlashingProtection.open(directory, GVR, register=[pk for _, pk in keys])
            records.append(record)
            remote_signer = Signer(chain, record, clock=clock)
            await remote_signer.add_keys({pubkey: secret for secret, pubkey in keys})
            checker = StrictServerChecker(web3signer_spec)
            checkers.append(checker)
            api = SignerApi(remote_signer, chain, middlewares=[checker.middleware], clock=clock)
            runner = await start_signer_api(api, "127.0.0.1", 0)
        else:
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
        cleanups.append(runner.cleanup)
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    yield start
    for cleanup in reversed(cleanups):
        await cleanup()
    for record in records:
        record.close()
    assert [str(v) for checker in checkers for v in checker.violations] == []


@pytest.fixture
async def client_signer(
    tmp_path: Path, chain: ChainSpec, clock: Clock
) -> AsyncIterator[tuple[Signer, SlashingProtection]]:
    """The client's signer: local keys LOCAL, over its own record knowing every key."""
    directory = tmp_path / "client"
    directory.mkdir()
    keys = [pubkey for _, pubkey in REMOTE + LOCAL]
    with SlashingProtection.open(directory, GVR, register=keys) as record:
        signer = Signer(chain, record, clock=clock)
        await signer.add_keys({pubkey: secret for secret, pubkey in LOCAL})
        yield signer, record


async def _remote(
    url: str, spec: BeaconApiSpec, checkers: list[StrictClientChecker], **changes: Any
) -> RemoteSigner:
    checker = StrictClientChecker(spec)
    checkers.append(checker)
    settings = RemoteSignerSettings(**{**SETTINGS.__dict__, **changes})
    return RemoteSigner(url, settings, middlewares=[checker])


async def test_every_kind_signs_remotely(
    serve_remote: ServeRemote,
    client_signer: tuple[Signer, SlashingProtection],
    web3signer_spec: BeaconApiSpec,
) -> None:
    signer, record = client_signer
    url = await serve_remote(REMOTE)
    checkers: list[StrictClientChecker] = []
    remote = await _remote(url, web3signer_spec, checkers)
    pubkey = REMOTE[0][1]
    await signer.add_remote_keys({pubkey: remote})
    assert signer.is_remote(pubkey)
    try:
        block = electra.BeaconBlock(slot=20, proposer_index=7, parent_root=HEAD)
        produced = parse_produced_block(
            "electra", False, to_json(electra.BlockContents(block=block))
        )
        signed = await signer.sign_block(pubkey, produced)
        assert crypto_backend.verify(pubkey, signed.signing_root, signed.signature)
        [result] = await signer.sign_attestations(
            [AttestationRequest(pubkey, attestation_data(slot=39, source=3, target=4))]
        )
        assert result.signed, result.refusal
        await signer.sign_randao_reveal(pubkey, 5)
        await signer.sign_selection_proof(pubkey, 39)
        [proof] = await signer.sign_selection_proofs(39, [pubkey])
        assert proof.signed, proof.refusal
        await signer.sign_sync_committee_message(pubkey, 40, HEAD)
        [message] = await signer.sign_sync_committee_messages(40, HEAD, [pubkey])
        assert message.signed, message.refusal
        await signer.sign_sync_committee_selection_proof(pubkey, 40, 1)
        [selection] = await signer.sign_sync_committee_selection_proofs(
            [SyncSelectionRequest(pubkey, 40, 1)]
        )
        assert selection.signed, selection.refusal
        aggregate = electra.AggregateAndProof(
            aggregator_index=9,
            aggregate=electra.Attestation(data=attestation_data(slot=39, source=3, target=4)),
        )
        aggregate.aggregate.aggregation_bits.append(True)
        await signer.sign_aggregate_and_proof(pubkey, aggregate)
        contribution = ContributionAndProof(
            aggregator_index=3,
            contribution=SyncCommitteeContribution(slot=40, beacon_block_root=HEAD),
        )
        await signer.sign_contribution_and_proof(pubkey, contribution)
        await signer.sign_voluntary_exit(pubkey, VoluntaryExit(epoch=3, validator_index=12))
        registration = ValidatorRegistrationV1(gas_limit=30_000_000, pubkey=pubkey)
        await signer.sign_validator_registration(pubkey, registration)
        [registered] = await signer.sign_validator_registrations([registration])
        assert registered.signed, registered.refusal
    finally:
        await remote.close()
    # The local record recorded the block and the attestation before the requests.
    watermark = record.watermark(pubkey)
    assert watermark is not None
    assert (watermark.slot, watermark.source, watermark.target) == (20, 3, 4)
    assert sum(checker.checked_requests for checker in checkers) == 14  # one per call
    assert [str(v) for checker in checkers for v in checker.violations] == []


async def test_the_local_record_refuses_before_any_request(
    serve_remote: ServeRemote,
    client_signer: tuple[Signer, SlashingProtection],
    web3signer_spec: BeaconApiSpec,
) -> None:
    signer, _ = client_signer
    url = await serve_remote(REMOTE)
    checkers: list[StrictClientChecker] = []
    remote = await _remote(url, web3signer_spec, checkers)
    pubkey = REMOTE[1][1]
    await signer.add_remote_keys({pubkey: remote})
    try:
        [first] = await signer.sign_attestations(
            [AttestationRequest(pubkey, attestation_data(slot=39, source=3, target=4))]
        )
        sent = checkers[0].checked_requests
        [double] = await signer.sign_attestations(
            [AttestationRequest(pubkey, attestation_data(39, 3, 4, head=b"other"))]
        )
        header_slot = 20
        block = electra.BeaconBlock(slot=header_slot, proposer_index=7)
        produced = parse_produced_block(
            "electra", False, to_json(electra.BlockContents(block=block))
        )
        await signer.sign_block(pubkey, produced)
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_block(pubkey, produced)
    finally:
        await remote.close()
    assert first.signed
    assert double.refusal is not None and double.refusal.reason is RefusalReason.SLASHABLE
    assert refused.value.reason is RefusalReason.SLASHABLE
    assert checkers[0].checked_requests == sent + 1  # only the first block was asked


async def test_a_wrong_signature_is_refused_and_counted(
    serve_remote: ServeRemote, client_signer: tuple[Signer, SlashingProtection]
) -> None:
    signer, _ = client_signer
    other_secret, _ = interop_keypair(30)

    async def lying(request: web.Request) -> web.Response:
        # A real signature, but by another key over the right root.
        body = await request.json()
        root = bytes.fromhex(body["signingRoot"][2:])
        return web.json_response(
            {"signature": "0x" + crypto_backend.sign(other_secret, root).hex()}
        )

    app = web.Application()
    app.router.add_post("/api/v1/eth2/sign/{identifier}", lying)
    url = await serve_remote([], app)
    remote = RemoteSigner(url, SETTINGS)
    pubkey = REMOTE[2][1]
    await signer.add_remote_keys({pubkey: remote})
    before = refusals("randao_reveal", "remote_signature_invalid")
    try:
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_randao_reveal(pubkey, 5)
    finally:
        await remote.close()
    assert refused.value.reason is RefusalReason.REMOTE_SIGNATURE_INVALID
    assert refusals("randao_reveal", "remote_signature_invalid") == before + 1


async def test_a_batch_checks_every_remote_answer_and_keeps_its_order(
    serve_remote: ServeRemote, client_signer: tuple[Signer, SlashingProtection]
) -> None:
    """Local and remote keys in one batch: each method signs its own keys, the remote
    answers are checked together, and the results come back in request order."""
    signer, _ = client_signer
    other_secret, _ = interop_keypair(31)

    async def lying(request: web.Request) -> web.Response:
        root = bytes.fromhex((await request.json())["signingRoot"][2:])
        return web.json_response(
            {"signature": "0x" + crypto_backend.sign(other_secret, root).hex()}
        )

    app = web.Application()
    app.router.add_post("/api/v1/eth2/sign/{identifier}", lying)
    liar = RemoteSigner(await serve_remote([], app), SETTINGS)
    lying_key = REMOTE[2][1]
    await signer.add_remote_keys({lying_key: liar})
    data = attestation_data(slot=39, source=3, target=4)
    before = refusals("attestation", "remote_signature_invalid")
    try:
        results = await signer.sign_attestations(
            [
                AttestationRequest(LOCAL[0][1], data),
                AttestationRequest(lying_key, data),
                AttestationRequest(LOCAL[1][1], data),
            ]
        )
    finally:
        await liar.close()
    assert [result.pubkey for result in results] == [LOCAL[0][1], lying_key, LOCAL[1][1]]
    assert results[0].signed and results[2].signed
    assert results[1].refusal is not None
    assert results[1].refusal.reason is RefusalReason.REMOTE_SIGNATURE_INVALID
    assert refusals("attestation", "remote_signature_invalid") == before + 1


async def test_a_down_signer_refuses_its_keys_only(
    client_signer: tuple[Signer, SlashingProtection], unused_url: Callable[[], str]
) -> None:
    signer, record = client_signer
    remote = RemoteSigner(unused_url(), SETTINGS)
    remote_key = REMOTE[3][1]
    await signer.add_remote_keys({remote_key: remote})
    data = attestation_data(slot=39, source=3, target=4)
    try:
        results = await signer.sign_attestations(
            [AttestationRequest(remote_key, data), AttestationRequest(LOCAL[0][1], data)]
        )
    finally:
        await remote.close()
    assert results[0].refusal is not None
    assert results[0].refusal.reason is RefusalReason.REMOTE_SIGNER_UNAVAILABLE
    assert results[1].signed
    # Recorded before the request: the record never lags a signature that may exist.
    watermark = record.watermark(remote_key)
    assert watermark is not None and watermark.target == 4


async def test_many_keys_share_few_kept_alive_connections(
    tmp_path: Path, chain: ChainSpec, clock: Clock
) -> None:
    keys = [interop_keypair(index) for index in range(100, 164)]
    peers: set[Any] = set()

    @web.middleware
    async def note_peer(request: web.Request, handler: Any) -> web.StreamResponse:
        peers.add(request.transport.get_extra_info("peername") if request.transport else None)
        return await handler(request)

    # The API's own middleware sees each request's client address: one per connection.
    directory = tmp_path / "counted"
    directory.mkdir()
    with SlashingProtection.open(directory, GVR, register=[pk for _, pk in keys]) as served:
        remote_signer = Signer(chain, served, clock=clock)
        await remote_signer.add_keys({pubkey: secret for secret, pubkey in keys})
        runner = await start_signer_api(
            SignerApi(remote_signer, chain, middlewares=[note_peer], clock=clock), "127.0.0.1", 0
        )
        try:
            counted_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
            client_dir = tmp_path / "many"
            client_dir.mkdir()
            with SlashingProtection.open(
                client_dir, GVR, register=[pk for _, pk in keys]
            ) as record:
                signer = Signer(chain, record, clock=clock)
                remote = RemoteSigner(counted_url, RemoteSignerSettings(max_connections=4))
                await signer.add_remote_keys({pubkey: remote for _, pubkey in keys})
                data = attestation_data(slot=39, source=3, target=4)
                try:
                    results = await signer.sign_attestations(
                        [AttestationRequest(pubkey, data) for _, pubkey in keys]
                    )
                finally:
                    await remote.close()
        finally:
            await runner.cleanup()
    assert all(result.signed for result in results)
    assert 1 <= len(peers) <= 4


async def test_a_5xx_is_retried_and_a_slow_signer_times_out(
    serve_remote: ServeRemote, client_signer: tuple[Signer, SlashingProtection]
) -> None:
    signer, _ = client_signer
    secret, pubkey = REMOTE[0]
    calls: list[str] = []

    async def flaky(request: web.Request) -> web.Response:
        body = await request.json()
        calls.append(body["type"])
        if len(calls) == 1:
            return web.json_response({"code": 503, "message": "busy"}, status=503)
        root = bytes.fromhex(body["signingRoot"][2:])
        return web.Response(text="0x" + crypto_backend.sign(secret, root).hex())

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response(status=500)

    flaky_app, slow_app = web.Application(), web.Application()
    flaky_app.router.add_post("/api/v1/eth2/sign/{identifier}", flaky)
    slow_app.router.add_post("/api/v1/eth2/sign/{identifier}", slow)
    flaky_remote = RemoteSigner(await serve_remote([], flaky_app), SETTINGS)
    slow_remote = RemoteSigner(
        await serve_remote([], slow_app), RemoteSignerSettings(timeout=0.2, attempts=2)
    )
    slow_key = REMOTE[1][1]
    await signer.add_remote_keys({pubkey: flaky_remote, slow_key: slow_remote})
    try:
        signature = await signer.sign_randao_reveal(pubkey, 5)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_randao_reveal(slow_key, 5)
        waited = loop.time() - started
    finally:
        await flaky_remote.close()
        await slow_remote.close()
    assert calls == ["RANDAO_REVEAL", "RANDAO_REVEAL"]  # the 503 was asked again
    assert crypto_backend.verify(pubkey, randao_reveal_signing_root(signer.chain, 5), signature)
    assert refused.value.reason is RefusalReason.REMOTE_SIGNER_UNAVAILABLE
    assert "timed out" in refused.value.refusal.detail
    assert waited < 1.5  # two attempts of 0.2 s, not the signer's 2 s
