"""Before Electra this client refuses attesting and aggregating by design; it refuses them
before signing anything or asking the node for anything: no selection
proof, no attestation data, no aggregate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prometheus_client import REGISTRY

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner
from validator.beacon import routes
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName

VALIDATORS = 8


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_deneb_chain_gets_no_selection_proofs_and_no_attestation_requests(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    served = node.config
    deneb = SimulatedChainConfig(
        genesis_time=served.genesis_time,
        genesis_validators_root=served.genesis_validators_root,
        slot_duration_ms=served.slot_duration_ms,
        slots_per_epoch=served.slots_per_epoch,
        fork_epochs={ForkName.ELECTRA: FAR_FUTURE_EPOCH},
    )
    node.misbehave(routes.CONFIG_SPEC, body=deneb.spec_response())
    node.misbehave(routes.FORK_SCHEDULE, body=deneb.fork_schedule_response())
    proofs = sample("validator_signatures_total", kind="selection_proof")
    proof_refusals = sample(
        "validator_signature_refusals_total", kind="selection_proof", reason="unsupported_fork"
    )
    attest_refusals = sample(
        "validator_duty_refusals_total", kind="attestation", reason="unsupported_fork"
    )
    aggregate_refusals = sample(
        "validator_duty_refusals_total", kind="aggregate", reason="unsupported_fork"
    )
    await run_service(url, validators_dir(VALIDATORS), init_slashing_protection=True, last_slot=5)
    assert sample("validator_signatures_total", kind="selection_proof") == proofs
    assert (
        sample(
            "validator_signature_refusals_total", kind="selection_proof", reason="unsupported_fork"
        )
        == proof_refusals
    )
    assert node.requests_to(routes.ATTESTATION_DATA) == []
    assert node.requests_to(routes.AGGREGATE_ATTESTATION_V2) == []
    assert node.published(routes.POOL_ATTESTATIONS_V2) == []
    assert node.published(routes.AGGREGATE_AND_PROOFS_V2) == []
    # Every attester duty was still counted as refused, attestation and aggregation alike.
    assert (
        sample("validator_duty_refusals_total", kind="attestation", reason="unsupported_fork")
        > attest_refusals
    )
    assert (
        sample("validator_duty_refusals_total", kind="aggregate", reason="unsupported_fork")
        > aggregate_refusals
    )
