"""Hostile node answers on the Gloas routes are refused with a counted reason, never signed.

A loopback HTTP server plays the node (real aiohttp, real client, real signer and record):
payload attestation data of another fork or slot, a PTC seat for another validator, a
produceBlockV4 answer of another fork, slot or proposer, an SSZ block without its headers.
Each one is counted in ``validator_duty_refusals_total{kind,reason}``, and nothing
reaches the publish routes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import REGISTRY

from slashing_protection import SlashingProtection
from tests.validator.signing.support import GVR, make_chain
from validator.beacon import BeaconNodeClient, ProposerDuty, RequestTimeouts
from validator.beacon.epbs import PtcDuty
from validator.consensus.forks import ForkName
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import gloas, to_json, to_ssz
from validator.duties.context import DutyContext
from validator.duties.gloas_proposal import GloasProposer
from validator.duties.metrics import DutyResult
from validator.duties.ptc import PayloadTimelinessDuties
from validator.duties.slot_clock import SlotClock
from validator.duties.tracker import DutyTracker
from validator.key_settings import ProposerSettings
from validator.signing.signer import Signer

KEYS = [interop_keypair(index) for index in range(3)]
HEAD = sha256(b"hostile head").digest()
SLOT = 41  # epoch 5: Gloas on the test chain


def refusals(kind: str, reason: str) -> float:
    labels = {"kind": kind, "reason": reason}
    return REGISTRY.get_sample_value("validator_duty_refusals_total", labels) or 0.0


Handler = Callable[[web.Request], web.Response]


class HostileNode:
    """Answers one scripted reply per route; records what was published."""

    def __init__(self) -> None:
        self.answers: dict[str, Handler] = {}
        self.published: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()

        async def answer(request: web.Request) -> web.StreamResponse:
            route = request.match_info.route.resource.canonical  # type: ignore[union-attr]
            if request.method == "POST":
                self.published.append(route)
                return web.Response(status=200)
            return self.answers[route](request)

        for path in (
            "/eth/v1/validator/payload_attestation_data",
            "/eth/v4/validator/blocks/{slot}",
        ):
            app.router.add_get(path, answer)
        for path in (
            "/eth/v1/beacon/pool/payload_attestations",
            "/eth/v2/beacon/blocks",
            "/eth/v1/beacon/execution_payload_envelopes",
        ):
            app.router.add_post(path, answer)
        return app


@pytest.fixture
def gloas_chain() -> ChainSpec:
    # Slots long enough that no deadline passes while the test runs.
    return make_chain(
        fork_epochs={ForkName.ELECTRA: 2, ForkName.FULU: 4, ForkName.GLOAS: 5},
        slot_duration_ms=600_000,
        genesis_time=int(time.time()) - SLOT * 600,
    )


@pytest.fixture
async def context(
    tmp_path: Path, gloas_chain: ChainSpec
) -> AsyncIterator[tuple[DutyContext, HostileNode]]:
    node = HostileNode()
    runner = web.AppRunner(node.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    with SlashingProtection.open(tmp_path, GVR, register=[pk for _, pk in KEYS]) as record:
        signer = Signer(gloas_chain, record)
        await signer.add_keys({pubkey: secret for secret, pubkey in KEYS})
        client = BeaconNodeClient([url], timeouts=RequestTimeouts.for_slot(4.0))
        async with client:
            tracker = DutyTracker(client, gloas_chain, signer.pubkeys)
            for index, (_, pubkey) in enumerate(KEYS):
                tracker.indices[pubkey] = index
            yield (
                DutyContext(
                    client, signer, gloas_chain, SlotClock(gloas_chain), tracker, ProposerSettings()
                ),
                node,
            )
    await runner.cleanup()


def _json_answer(body: Any, headers: dict[str, str] | None = None) -> Handler:
    return lambda request: web.json_response(body, headers=headers)


async def test_payload_attestation_data_of_another_fork_or_slot_is_refused(
    context: tuple[DutyContext, HostileNode],
) -> None:
    ctx, node = context
    duties = PayloadTimelinessDuties(ctx)
    seat = PtcDuty(KEYS[0][1], 0, SLOT)
    data = gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=SLOT, payload_present=True)
    route = "/eth/v1/validator/payload_attestation_data"
    cases = [
        ("wrong_version", {"version": "fulu", "data": to_json(data)}),
        (
            "wrong_slot",
            {
                "version": "gloas",
                "data": to_json(
                    gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=SLOT - 1)
                ),
            },
        ),
        ("unreadable", {"version": "gloas", "data": {"slot": str(SLOT)}}),
    ]
    for reason, body in cases:
        before = refusals("payload_attestation", reason)
        node.answers[route] = _json_answer(body)
        await duties.attest(SLOT, [seat])
        assert refusals("payload_attestation", reason) == before + 1, reason
    assert node.published == []
    # A seat that names one of the keys under another index: never signed.
    before = refusals("payload_attestation", "wrong_validator")
    node.answers[route] = _json_answer({"version": "gloas", "data": to_json(data)})
    await duties.attest(SLOT, [PtcDuty(KEYS[0][1], 7, SLOT)])
    assert refusals("payload_attestation", "wrong_validator") == before + 1
    assert node.published == []
    # 204: the node saw no block, so there is nothing to vote on.
    node.answers[route] = lambda request: web.Response(status=204)
    await duties.attest(SLOT, [seat])
    assert node.published == []
    # The honest answer is signed and published.
    node.answers[route] = _json_answer({"version": "gloas", "data": to_json(data)})
    await duties.attest(SLOT, [seat])
    assert node.published == ["/eth/v1/beacon/pool/payload_attestations"]


def _block(slot: int, proposer: int) -> Any:
    block = gloas.BeaconBlock(slot=slot, proposer_index=proposer, parent_root=HEAD)
    bid = block.body.signed_execution_payload_bid
    bid.message.slot = slot
    bid.message.builder_index = gloas.BUILDER_INDEX_SELF_BUILD
    return block


def _v4(block: Any, version: str = "gloas") -> dict[str, Any]:
    return {
        "version": version,
        "consensus_block_value": "0",
        "execution_payload_included": False,
        "data": to_json(block),
    }


async def test_hostile_v4_blocks_are_refused_and_never_signed(
    context: tuple[DutyContext, HostileNode],
) -> None:
    ctx, node = context
    signed: list[tuple[int, bytes]] = []
    proposer = GloasProposer(ctx, lambda slot, pubkey: signed.append((slot, pubkey)))
    route = "/eth/v4/validator/blocks/{slot}"
    cases: list[tuple[str, Handler]] = [
        ("wrong_version", _json_answer(_v4(_block(SLOT, 1), "fulu"))),
        ("wrong_slot", _json_answer(_v4(_block(SLOT + 1, 1)))),
        ("wrong_proposer", _json_answer(_v4(_block(SLOT, 2)))),
        (
            "missing_header",
            lambda request: web.Response(
                body=to_ssz(_block(SLOT, 1)),
                content_type="application/octet-stream",
                headers={"Eth-Consensus-Version": "gloas"},
            ),
        ),
    ]
    for reason, handler in cases:
        before = refusals("block", reason)
        node.answers[route] = handler
        result, detail = await proposer.propose(SLOT, ProposerDuty(KEYS[1][1], 1, SLOT))
        assert result is DutyResult.REFUSED, (reason, detail)
        assert refusals("block", reason) == before + 1, reason
    assert node.published == []
    # None of them reached the record: the honest block is still signed for the slot.
    node.answers[route] = _json_answer(_v4(_block(SLOT, 1)))
    result, detail = await proposer.propose(SLOT, ProposerDuty(KEYS[1][1], 1, SLOT))
    assert result is DutyResult.PUBLISHED, detail
    assert node.published == ["/eth/v2/beacon/blocks"]
    assert signed == [(SLOT, KEYS[1][1])]  # the slot is remembered as signed, once
