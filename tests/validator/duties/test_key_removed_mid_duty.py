"""A key deleted through the Keymanager API while a duty of it is under way (the duty
waiting on the beacon node) is refused as ``key_removed``, never ``unknown_key``, for
every duty kind: the refusal metric's reasons each mean one thing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import REGISTRY

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode, Schedule
from tests.validator.conftest import ServiceRunner, keymanager_running
from validator.beacon import routes
from validator.consensus.encoding import to_hex

VALIDATORS = 8
#: Long enough for a Keymanager DELETE (an export, fsyncs) inside the slot on a loaded host.
SLOT_MS = 1500
#: Validators 0-3 sit in every sync subcommittee, so some of them aggregate in most slots.
SYNC_MEMBERS = {index: [0, 128, 256, 384] for index in range(4)}


def refusals(kind: str, reason: str) -> float:
    value = REGISTRY.get_sample_value(
        "validator_signature_refusals_total", {"kind": kind, "reason": reason}
    )
    return value or 0.0


def duties(kind: str, result: str) -> float:
    value = REGISTRY.get_sample_value("validator_duties_total", {"kind": kind, "result": result})
    return value or 0.0


def attesters(node: DutyNode, slot: int, committee: int | None = None) -> list[int]:
    epoch = node.chain.epoch_at_slot(slot)
    return [
        index
        for index in range(VALIDATORS)
        if node.attester_slot(epoch, index) == slot
        and (committee is None or node.committee_index(index) == committee)
    ]


@dataclass(frozen=True)
class MidDuty:
    """Where a duty waits on the node, the signing kind it refuses, and whose keys go."""

    duty: str
    route: str
    signing_kind: str
    doomed: Callable[[DutyNode, web.Request], list[int]]
    #: Without head events, members ask the node for the head root before signing.
    head_events: bool = True


CASES = [
    MidDuty(
        "block",
        routes.PRODUCE_BLOCK_V3,
        "block",
        lambda node, request: [node.proposer(int(request.match_info["slot"]))],
    ),
    MidDuty(
        "attestation",
        routes.ATTESTATION_DATA,
        "attestation",
        lambda node, request: attesters(node, int(request.query["slot"])),
    ),
    MidDuty(
        "aggregate",
        routes.AGGREGATE_ATTESTATION_V2,
        "aggregate_and_proof",
        lambda node, request: attesters(
            node, int(request.query["slot"]), int(request.query["committee_index"])
        ),
    ),
    MidDuty(
        "sync_committee_message",
        routes.BLOCK_ROOT,
        "sync_committee_message",
        lambda node, request: list(SYNC_MEMBERS),
        head_events=False,
    ),
    MidDuty(
        "sync_contribution",
        routes.SYNC_COMMITTEE_CONTRIBUTION,
        "contribution_and_proof",
        lambda node, request: list(SYNC_MEMBERS),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.duty for case in CASES])
async def test_a_key_deleted_while_its_duty_waits_on_the_node_is_refused_as_key_removed(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    case: MidDuty,
) -> None:
    node, url = await start_node(
        DutyNode,
        validator_count=VALIDATORS,
        slot_duration_ms=SLOT_MS,
        schedule=Schedule(sync_positions=SYNC_MEMBERS),
        **({} if case.head_events else {"head_delay": None}),
    )
    directory = validators_dir(VALIDATORS)
    removed_before = refusals(case.signing_kind, "key_removed")
    unknown_before = refusals(case.signing_kind, "unknown_key")
    refused_before = duties(case.duty, "refused")
    deleted = asyncio.get_running_loop().create_future()

    async with keymanager_running(run_service, url, directory) as api:
        headers = {"Authorization": f"Bearer {api.token}"}

        claimed = False

        async def delete_keys(request: web.Request) -> None:
            # Once, past the first slot: the duty that asked waits while its keys go (taken
            # before any await, so that a request answered meanwhile goes on untouched).
            nonlocal claimed
            doomed = case.doomed(node, request)
            # A duty of the slot now running (a late one from start-up may be abandoned).
            asked = request.match_info.get("slot") or request.query.get("slot")
            now = node.clock_slot()
            if claimed or now < 1 or not doomed or (asked is not None and int(asked) != now):
                return
            claimed = True
            pubkeys = [to_hex(node.keys[index][1]) for index in doomed]

            async def delete() -> None:
                try:
                    async with (
                        aiohttp.ClientSession(headers=headers) as http,
                        http.delete(
                            f"{api.base_url}/keystores", json={"pubkeys": pubkeys}
                        ) as response,
                    ):
                        assert response.status == 200
                        statuses = [item["status"] for item in (await response.json())["data"]]
                    deleted.set_result((pubkeys, statuses))
                except BaseException as error:
                    deleted.set_exception(error)
                    raise

            # Shielded: a duty abandoned at its deadline must not cut the deletion short.
            await asyncio.shield(asyncio.ensure_future(delete()))

        node.before_answer[case.route] = delete_keys
        pubkeys, statuses = await asyncio.wait_for(deleted, timeout=15)
        assert pubkeys and statuses == ["deleted"] * len(pubkeys)
        # The duty resumes with the answer, after its keys left; let it end.
        await asyncio.sleep(1.5 * SLOT_MS / 1000)

    assert refusals(case.signing_kind, "key_removed") > removed_before
    assert refusals(case.signing_kind, "unknown_key") == unknown_before
    assert duties(case.duty, "refused") > refused_before
