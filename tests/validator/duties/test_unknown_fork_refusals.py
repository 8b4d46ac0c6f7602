"""At an epoch of a fork this client does not know, nothing is signed and every duty that
would have signed is counted as an ``unsupported_fork`` refusal, never logged as a duty that
"failed unexpectedly"."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from slashing_protection import SlashingProtection
from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode, Schedule
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_keypair
from validator.signing.signer import Signer
from validator.signing.types import RefusalReason, SyncSelectionRequest

VALIDATORS = 8
UNKNOWN_FORK_EPOCH = 1
UNKNOWN_VERSION = bytes.fromhex("0800de7e")  # after Gloas: a fork this client does not know


def signature_refusals(kind: str) -> float:
    labels = {"kind": kind, "reason": "unsupported_fork"}
    return REGISTRY.get_sample_value("validator_signature_refusals_total", labels) or 0.0


def duty_refusals(kind: str) -> float:
    labels = {"kind": kind, "reason": "unsupported_fork"}
    return REGISTRY.get_sample_value("validator_duty_refusals_total", labels) or 0.0


async def test_duties_past_an_unknown_fork_are_counted_refusals(
    start_node: NodeStarter,
    run_service: ServiceRunner,
    validators_dir: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    node, url = await start_node(DutyNode,
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
    # The attester refuses before asking the signer (no selection proof is signed for an
    # aggregation that cannot happen); the sync committee duties ask and are refused.
    kinds = ["sync_committee_message", "sync_committee_selection_proof"]
    before = {kind: signature_refusals(kind) for kind in kinds}
    attestations_before = duty_refusals("attestation")
    aggregates_before = duty_refusals("aggregate")
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
    assert duty_refusals("aggregate") > aggregates_before
    # Nothing of the unknown fork's epochs reached the node.
    for route in (routes.POOL_ATTESTATIONS_V2, routes.POOL_SYNC_COMMITTEES):
        for arrival in node.published(route):
            for item in arrival.body:
                slot = int(item["data"]["slot"] if "data" in item else item["slot"])
                assert slot < first_unknown_slot, (route, slot)


async def test_the_signers_batches_refuse_an_unknown_forks_epochs(tmp_path: Path) -> None:
    chain = SimulatedChainConfig(
        genesis_time=1_700_000_000, genesis_validators_root=bytes(range(32))
    ).chain_spec()
    chain = dataclasses.replace(chain, unknown_fork_epoch=UNKNOWN_FORK_EPOCH)
    secret, pubkey = interop_keypair(0)
    slot = UNKNOWN_FORK_EPOCH * chain.slots_per_epoch
    gvr = chain.genesis_validators_root
    with SlashingProtection.open(tmp_path, gvr, register=[pubkey]) as record:
        signer = Signer(chain, record)
        await signer.add_keys({pubkey: secret})
        before = signature_refusals("selection_proof")
        results = [
            *await signer.sign_selection_proofs(slot, [pubkey]),
            *await signer.sign_sync_committee_messages(slot, bytes(32), [pubkey]),
            *await signer.sign_sync_committee_selection_proofs(
                [SyncSelectionRequest(pubkey, slot, 0)]
            ),
        ]
    assert [r.refusal.reason if r.refusal else None for r in results] == [
        RefusalReason.UNSUPPORTED_FORK
    ] * 3
    assert not any(result.signed for result in results)
    assert signature_refusals("selection_proof") == before + 1
