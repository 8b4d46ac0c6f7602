"""``validator signer``'s API over real HTTP on loopback: every kind signs and verifies, and
the refusals (forged root, another fork or chain, slashable, unknown key, malformed) answer
the right status with nothing signed and the record untouched. Every exchange is held to
the official Web3Signer spec: the conforming ones by strict middlewares on both sides, the
refused ones by checking each response against the spec here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

import crypto_backend
from slashing_protection import SlashingProtection
from tests.validator.signing.metrics_support import signatures
from tests.validator.signing.support import GVR, Clock, attestation_data, make_chain
from tests.validator.signing.web3signer_cases import (
    aggregate_and_proof,
    cases,
    contribution_and_proof,
)
from validator.consensus import signing_roots
from validator.consensus.forks import ForkName
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz.preset import MINIMAL
from validator.devnet.strict_mode.checkers import StrictClientChecker, StrictServerChecker
from validator.devnet.strict_mode.openapi_spec import (
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
)
from validator.signer_server import SignerApi, start_signer_api
from validator.signing.signer import Signer
from validator.signing.web3signer import SignType, request_for

KEYS = [interop_keypair(index) for index in range(4)]
PUBKEYS = [pubkey for _, pubkey in KEYS]
TOKEN = "ab" * 32


class Served:
    """A running signer API and a session to it."""

    def __init__(
        self, url: str, session: aiohttp.ClientSession, record: SlashingProtection
    ) -> None:
        self.url = url
        self.session = session
        self.record = record

    async def sign(
        self, pubkey: bytes | str, body: Any, headers: dict[str, str] | None = None
    ) -> tuple[int, str, bytes]:
        identifier = pubkey if isinstance(pubkey, str) else "0x" + pubkey.hex()
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        async with self.session.post(
            f"{self.url}/api/v1/eth2/sign/{identifier}",
            data=data,
            headers={"Content-Type": "application/json", **(headers or {})},
        ) as response:
            return response.status, response.content_type, await response.read()


ServerFactory = Callable[..., Awaitable[Served]]


@pytest.fixture
def chain() -> ChainSpec:
    return make_chain()


@pytest.fixture
async def serve(
    tmp_path: Path, chain: ChainSpec, web3signer_spec: BeaconApiSpec
) -> AsyncIterator[ServerFactory]:
    """Start the API over a record registering the keys; strict on both sides unless not."""
    cleanups: list[Callable[[], Awaitable[None]]] = []
    checkers: list[StrictClientChecker | StrictServerChecker] = []
    records: list[SlashingProtection] = []

    async def start(*, strict: bool = True, token: str | None = None) -> Served:
        record = SlashingProtection.open(tmp_path, GVR, register=PUBKEYS)
        records.append(record)
        clock = Clock()
        signer = Signer(chain, record, clock=clock)
        await signer.add_keys({pubkey: secret for secret, pubkey in KEYS})
        middlewares = []
        client_middlewares = []
        if strict:
            server_checker = StrictServerChecker(web3signer_spec)
            client_checker = StrictClientChecker(web3signer_spec)
            checkers.extend([server_checker, client_checker])
            middlewares.append(server_checker.middleware)
            client_middlewares.append(client_checker)
        api = SignerApi(signer, chain, token=token, middlewares=middlewares, clock=clock)
        runner = await start_signer_api(api, "127.0.0.1", 0)
        cleanups.append(runner.cleanup)
        port = runner.addresses[0][1]
        session = aiohttp.ClientSession(middlewares=client_middlewares)
        cleanups.append(session.close)
        return Served(f"http://127.0.0.1:{port}", session, record)

    yield start
    for cleanup in reversed(cleanups):
        await cleanup()
    for record in records:
        record.close()
    assert [str(v) for checker in checkers for v in checker.violations] == []


def _conforms(
    spec: BeaconApiSpec, body: Any, status: int, content_type: str, answer: bytes
) -> None:
    request = HttpRequestParts(
        "post",
        "/api/v1/eth2/sign/0x" + PUBKEYS[0].hex(),
        headers={"Content-Type": "application/json"},
        body=orjson.dumps(body),
    )
    response = HttpResponseParts(status, {"Content-Type": content_type}, answer)
    assert spec.check_response(request, response) == []


async def test_every_kind_signs_and_verifies(serve: ServerFactory, chain: ChainSpec) -> None:
    served = await serve()
    pubkey = PUBKEYS[1]
    for request, root in cases(chain, pubkey):
        status, content_type, answer = await served.sign(
            pubkey, request.to_json(), {"Accept": "application/json"}
        )
        assert (status, content_type) == (200, "application/json"), (request.type, answer)
        signature = bytes.fromhex(orjson.loads(answer)["signature"][2:])
        assert crypto_backend.verify(pubkey, root, signature), request.type
    watermark = served.record.watermark(pubkey)
    assert watermark is not None
    # The block (slot 16) and the attestation (2 -> 4) are on record.
    assert (watermark.slot, watermark.source, watermark.target) == (16, 2, 4)


async def test_a_signature_as_text_without_accept_json(
    serve: ServerFactory, chain: ChainSpec
) -> None:
    served = await serve()
    request, root = cases(chain)[4]  # RANDAO_REVEAL
    assert request.type is SignType.RANDAO_REVEAL
    status, content_type, answer = await served.sign(PUBKEYS[0], request.to_json())
    assert (status, content_type) == (200, "text/plain")
    assert crypto_backend.verify(PUBKEYS[0], root, bytes.fromhex(answer.decode()[2:]))


def _attestation_body(chain: ChainSpec, source: int, target: int, head: bytes = b"head") -> Any:
    data = attestation_data(slot=39, source=source, target=target, head=head)
    root = signing_roots.attestation_signing_root(chain, data)
    return request_for(SignType.ATTESTATION, chain, data, root).to_json()


async def test_refusals_sign_nothing(
    serve: ServerFactory, chain: ChainSpec, web3signer_spec: BeaconApiSpec
) -> None:
    served = await serve(strict=False)
    pubkey = PUBKEYS[2]
    status, _, _ = await served.sign(pubkey, _attestation_body(chain, 3, 4))
    assert status == 200
    before = served.record.watermark(pubkey)
    made = signatures("attestation")

    forged = _attestation_body(chain, 3, 5)
    forged["signingRoot"] = "0x" + "11" * 32
    other_fork = _attestation_body(chain, 3, 5)
    fork = other_fork["fork_info"]["fork"]
    fork["current_version"] = fork["previous_version"]  # Electra's version for a Fulu target
    other_fork.pop("signingRoot")
    other_chain = _attestation_body(chain, 3, 5)
    other_chain["fork_info"]["genesis_validators_root"] = "0x" + "22" * 32
    other_chain.pop("signingRoot")
    double_vote = _attestation_body(chain, 3, 4, head=b"another head")
    surround = _attestation_body(chain, 2, 4)
    unknown = interop_keypair(9)[1]
    missing_data = _attestation_body(chain, 3, 5)
    missing_data.pop("attestation")

    refused: list[tuple[str, bytes | str, Any, int]] = [
        ("forged signingRoot", pubkey, forged, 400),
        ("another fork's fork_info", pubkey, other_fork, 400),
        ("another chain's fork_info", pubkey, other_chain, 400),
        ("double vote", pubkey, double_vote, 412),
        ("surround vote", pubkey, surround, 412),
        ("unknown key", unknown, _attestation_body(chain, 3, 5), 404),
        ("malformed body", pubkey, missing_data, 400),
        ("not JSON", pubkey, b"{", 400),
        ("bad identifier", "0x1234", _attestation_body(chain, 3, 5), 400),
    ]
    for what, key, body, expected in refused:
        status, content_type, answer = await served.sign(key, body)
        assert status == expected, (what, answer)
        assert b"message" in answer, what
        if not isinstance(body, bytes):
            _conforms(web3signer_spec, body, status, content_type, answer)
    assert served.record.watermark(pubkey) == before
    assert signatures("attestation") == made


async def test_a_slashable_block_answers_412(serve: ServerFactory, chain: ChainSpec) -> None:
    served = await serve()
    block = next(request for request, _ in cases(chain) if request.type is SignType.BLOCK_V2)
    first, _, _ = await served.sign(PUBKEYS[0], block.to_json())
    again, _, answer = await served.sign(PUBKEYS[0], block.to_json())
    assert (first, again) == (200, 412)
    assert b"slashable" in answer
    # The body says why: the rule the block broke and the record's watermark it hit.
    slot = int(block.to_json()["beacon_block"]["block_header"]["slot"])
    assert f"highest block slot for this key is {slot}".encode() in answer
    assert b"block_slot" in answer


async def test_concurrent_attestations_for_many_keys_are_one_batch(
    serve: ServerFactory, chain: ChainSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = await serve()
    writes: list[int] = []
    real = served.record.record_attestations

    def counted(items: Any) -> Any:
        writes.append(len(items))
        return real(items)

    monkeypatch.setattr(served.record, "record_attestations", counted)
    body = _attestation_body(chain, 3, 4)
    import asyncio

    answers = await asyncio.gather(*(served.sign(pubkey, body) for pubkey in PUBKEYS))
    assert [status for status, _, _ in answers] == [200] * len(PUBKEYS)
    assert sum(writes) == len(PUBKEYS)
    assert len(writes) < len(PUBKEYS)


async def test_public_keys_upcheck_and_healthcheck(serve: ServerFactory) -> None:
    served = await serve()
    async with served.session.get(f"{served.url}/api/v1/eth2/publicKeys") as response:
        assert response.status == 200
        assert await response.json() == sorted("0x" + pubkey.hex() for pubkey in PUBKEYS)
    async with served.session.get(f"{served.url}/upcheck") as response:
        assert (response.status, await response.text()) == (200, "OK")
    async with served.session.get(f"{served.url}/healthcheck") as response:
        assert response.status == 200
        assert (await response.json())["outcome"] == "UP"


async def test_the_token_is_required_when_set(serve: ServerFactory, chain: ChainSpec) -> None:
    served = await serve(strict=False, token=TOKEN)
    request, _ = cases(chain)[4]
    status, _, _ = await served.sign(PUBKEYS[0], request.to_json())
    assert status == 401
    status, _, _ = await served.sign(
        PUBKEYS[0], request.to_json(), {"Authorization": "Bearer " + "cd" * 32}
    )
    assert status == 401
    status, _, _ = await served.sign(
        PUBKEYS[0], request.to_json(), {"Authorization": f"Bearer {TOKEN}"}
    )
    assert status == 200
    async with served.session.get(f"{served.url}/upcheck") as response:
        assert response.status == 200


async def test_a_version_that_is_not_the_chains_fork_is_refused(
    serve: ServerFactory, chain: ChainSpec
) -> None:
    served = await serve(strict=False)
    by_type = {request.type: request for request, _ in cases(chain)}
    block = by_type[SignType.BLOCK_V2].to_json()  # slot 16: Electra
    block["beacon_block"]["version"] = "DENEB"
    aggregate = by_type[SignType.AGGREGATE_AND_PROOF_V2].to_json()
    aggregate["aggregate_and_proof"]["version"] = "FULU"
    for body in (block, aggregate):
        status, _, answer = await served.sign(PUBKEYS[3], body)
        assert status == 400, answer
    # Still as registered (never signed), like a key no request named.
    assert served.record.watermark(PUBKEYS[3]) == served.record.watermark(PUBKEYS[2])


@pytest.mark.parametrize("chain", [make_chain(preset=MINIMAL)], ids=["minimal"])
async def test_a_minimal_chain_signs_its_own_aggregates_and_contributions(
    serve: ServerFactory, chain: ChainSpec
) -> None:
    """On a minimal-preset chain the bodies are read as that preset's containers: an
    Electra aggregate's committee bits are 4 long (64 on mainnet) and a sync contribution's
    bits 8 (128), so mainnet's containers would refuse them or give another root."""
    # Not strict: the official schema writes mainnet's bitfield lengths.
    served = await serve(strict=False)
    pubkey = PUBKEYS[1]
    aggregate = aggregate_and_proof(MINIMAL)
    contribution = contribution_and_proof(MINIMAL)
    requests = [
        (
            SignType.AGGREGATE_AND_PROOF_V2,
            aggregate,
            signing_roots.aggregate_and_proof_signing_root(chain, aggregate),
            ForkName.ELECTRA,
        ),
        (
            SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF,
            contribution,
            signing_roots.contribution_and_proof_signing_root(chain, contribution),
            None,
        ),
    ]
    for sign_type, message, root, version in requests:
        request = request_for(sign_type, chain, message, root, version=version)
        status, _, answer = await served.sign(
            pubkey, request.to_json(), {"Accept": "application/json"}
        )
        assert status == 200, (sign_type, answer)
        signature = bytes.fromhex(orjson.loads(answer)["signature"][2:])
        assert crypto_backend.verify(pubkey, root, signature), sign_type
