"""``validator run --remote-signer-url``: remote keys beside local ones, against a beacon node
double. A remote signer that lists its keys and then never answers a signing request in
time costs its keys their duties (refused, counted) and holds back no local key: the local
keys' attestations reach the node within their slot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner
from tests.validator.signing.metrics_support import refusals
from validator.beacon import routes
from validator.consensus.encoding import to_hex
from validator.duties.doppelganger import KeyState
from validator.halts import HaltReason, HaltStore

LOCAL = 4  # interop keys 0..3 in the directory; 4..7 behind the stalled signer


async def test_a_stalled_remote_signer_holds_back_no_local_key(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    aiohttp_server: object,
) -> None:
    node, url = await start_node(DutyNode, validator_count=2 * LOCAL)
    directory = validators_dir(LOCAL)
    asked: list[str] = []

    async def public_keys(request: web.Request) -> web.Response:
        return web.json_response([to_hex(pubkey) for _, pubkey in node.keys[LOCAL:]])

    async def stalled(request: web.Request) -> web.Response:
        asked.append(request.match_info["identifier"])
        await asyncio.sleep(3)
        return web.Response(status=500)

    app = web.Application()
    app.router.add_get("/api/v1/eth2/publicKeys", public_keys)
    app.router.add_post("/api/v1/eth2/sign/{identifier}", stalled)
    signer = await aiohttp_server(app)  # type: ignore[operator]
    before = refusals("selection_proof", "remote_signer_unavailable")
    service = await run_service(
        url,
        directory,
        stop_after=6 * node.chain.seconds_per_slot + 3,
        init_slashing_protection=True,
        remote_signer_urls=[f"http://127.0.0.1:{signer.port}"],
    )
    assert service.scheduler is not None
    arrivals = node.published(routes.POOL_ATTESTATIONS_V2)
    local_in_time = {
        int(item["attester_index"])
        for arrival in arrivals
        for item in arrival.body
        # Published within the attestation's own slot: nothing waited on the signer.
        if arrival.at < node.slot_start(int(item["data"]["slot"]) + 1)
    }
    remote_indices = set(range(LOCAL, 2 * LOCAL))
    published = {int(item["attester_index"]) for arrival in arrivals for item in arrival.body}
    assert set(range(LOCAL)) <= local_in_time
    assert not published & remote_indices
    assert asked, "the remote keys' requests were sent"
    # Counted where the timeout ran out inside a duty's time (slots here are 0.6 s, the
    # timeout at least 1 s: most remote duties are abandoned at their deadline first).
    assert refusals("selection_proof", "remote_signer_unavailable") > before


def _listing_signer(pubkeys: list[bytes]) -> web.Application:
    async def public_keys(request: web.Request) -> web.Response:
        return web.json_response([to_hex(pubkey) for pubkey in pubkeys])

    app = web.Application()
    app.router.add_get("/api/v1/eth2/publicKeys", public_keys)
    return app


async def test_a_halted_remote_key_is_refused_at_start_like_a_local_one(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    aiohttp_server: object,
) -> None:
    node, url = await start_node(DutyNode, validator_count=2 * LOCAL)
    directory = validators_dir(LOCAL)
    remote = [pubkey for _, pubkey in node.keys[LOCAL:]]
    HaltStore(directory).halt(remote[0], HaltReason.SLASHED, "slashed in epoch 2", 2)
    signer = await aiohttp_server(_listing_signer(remote))  # type: ignore[operator]
    service = await run_service(
        url,
        directory,
        stop_after=2 * node.chain.seconds_per_slot,
        init_slashing_protection=True,
        remote_signer_urls=[f"http://127.0.0.1:{signer.port}"],
    )
    assert service.gate is not None
    held = set(service.gate.signer.pubkeys())
    assert remote[0] not in held
    assert set(remote[1:]) <= held


async def test_remote_keys_wait_under_doppelganger_protection_like_local_ones(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    aiohttp_server: object,
) -> None:
    """No clean-shutdown marker: every key waits, the remote ones too, none is in the signer."""
    node, url = await start_node(DutyNode, validator_count=2 * LOCAL)
    remote = [pubkey for _, pubkey in node.keys[LOCAL:]]
    signer = await aiohttp_server(_listing_signer(remote))  # type: ignore[operator]
    service = await run_service(
        url,
        validators_dir(LOCAL),
        stop_after=2 * node.chain.seconds_per_slot,
        init_slashing_protection=True,
        doppelganger_protection=True,
        remote_signer_urls=[f"http://127.0.0.1:{signer.port}"],
    )
    gate = service.gate
    assert gate is not None
    assert set(remote) <= set(gate.waiting())
    assert not set(remote) & set(gate.signer.pubkeys())
    assert all(gate.states[pubkey] is KeyState.WAITING for pubkey in remote)
