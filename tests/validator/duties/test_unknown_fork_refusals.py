"""At an epoch of a fork this client does not know, nothing is signed and every duty that
would have signed is counted as an ``unsupported_fork`` refusal, never logged as a duty that
"failed unexpectedly" (issue 13, item 9)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from tests.client.conftest import NodeStarter, ServiceRunner
from tests.client.duty_node import Schedule
from validator.beacon import routes
from validator.consensus.encoding import to_hex

VALIDATORS = 8
UNKNOWN_FORK_EPOCH = 1
UNKNOWN_VERSION = bytes.fromhex("0700de7e")


def signature_refusals(kind: str) -> float:
    labels = {"kind": kind, "reason": "unsupported_fork"}
    return REGISTRY.get_sample_value("validator_signature_refusals_total", labels) or 0.0


def duty_refusals(kind: str) -> float:
    labels = {"kind": kind, "reason": "unsupported_fork"}
    return REGISTRY.get_sample_value("validator_duty_refusals_total", labels) or 0.0


async def test_duties_past_an_unknown_fork_are_counted_refusals(
    duty_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    node, url = await duty_node(
        validator_count=VALIDATORS, schedule=Schedule(sync_positions={0: [0], 1: [130]})
    )
    schedule = node.config.fork_schedule_response()
    last = schedule["data"][-1]["current_version"]
    schedule["data"].append(
        {
            "previous_version": last,
            "current_version": to_hex(UNKNOWN_VERSION),
            "epoch": str(UNKNOWN_FORK_EPOCH),
        }
    )
    node.misbehave(routes.FORK_SCHEDULE, body=schedule)
    kinds = ["selection_proof", "sync_committee_message", "sync_committee_selection_proof"]
    before = {kind: signature_refusals(kind) for kind in kinds}
    attestations_before = duty_refusals("attestation")
    first_unknown_slot = UNKNOWN_FORK_EPOCH * node.chain.slots_per_epoch
    caplog.set_level(logging.WARNING)
    await run_service(
        url,
        validators_dir(VALIDATORS),
        init_slashing_protection=True,
        last_slot=first_unknown_slot + 2,
    )
    assert "failed unexpectedly" not in caplog.text
    for kind in kinds:
        assert signature_refusals(kind) > before[kind], kind
    assert duty_refusals("attestation") > attestations_before
    # Nothing of the unknown fork's epochs reached the node.
    for route in (routes.POOL_ATTESTATIONS_V2, routes.POOL_SYNC_COMMITTEES):
        for arrival in node.published(route):
            for item in arrival.body:
                slot = int(item["data"]["slot"] if "data" in item else item["slot"])
                assert slot < first_unknown_slot, (route, slot)
