"""The test double's canned answers conform to the Beacon API spec.

Checked directly here (besides by the double's strict middleware at run time), so
a canned answer that drifts from the standard fails even if no test requests it.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.support import canned
from validator.beacon import routes
from validator.devnet.strict_mode.openapi_spec import (
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
)

JSON = {"Content-Type": "application/json"}
SIG = canned.signature(1)

CASES: list[tuple[str, HttpRequestParts, Any, dict[str, str]]] = [
    ("syncing", HttpRequestParts("GET", routes.NODE_SYNCING), canned.syncing(), {}),
    ("syncing, behind", HttpRequestParts("GET", routes.NODE_SYNCING),
     canned.syncing(is_syncing=True, distance=40), {}),
    ("version", HttpRequestParts("GET", routes.NODE_VERSION), canned.version(), {}),
    ("genesis", HttpRequestParts("GET", routes.GENESIS), canned.genesis(), {}),
    ("spec", HttpRequestParts("GET", routes.CONFIG_SPEC), canned.config_spec(), {}),
    ("fork schedule", HttpRequestParts("GET", routes.FORK_SCHEDULE), canned.fork_schedule(), {}),
    ("state fork", HttpRequestParts("GET", "/eth/v1/beacon/states/head/fork"),
     canned.state_fork(), {}),
    ("finality", HttpRequestParts("GET", "/eth/v1/beacon/states/head/finality_checkpoints"),
     canned.finality_checkpoints(), {}),
    ("validators", HttpRequestParts("POST", "/eth/v1/beacon/states/head/validators", (), JSON,
                                    b'{"ids":["1"]}'), canned.validators([1, 2]), {}),
    ("block root", HttpRequestParts("GET", "/eth/v1/beacon/blocks/head/root"),
     canned.block_root(), {}),
    ("attester duties", HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON,
                                         b'["1"]'), canned.attester_duties(3, [1, 2]), {}),
    ("proposer duties", HttpRequestParts("GET", "/eth/v1/validator/duties/proposer/3"),
     canned.proposer_duties(3), {}),
    ("sync duties", HttpRequestParts("POST", "/eth/v1/validator/duties/sync/3", (), JSON,
                                     b'["1"]'), canned.sync_duties([1]), {}),
    ("block", HttpRequestParts("GET", "/eth/v3/validator/blocks/9", [("randao_reveal", SIG)]),
     *canned.produced_block(9)),
    ("blinded block",
     HttpRequestParts("GET", "/eth/v3/validator/blocks/9", [("randao_reveal", SIG)]),
     *canned.produced_block(9, blinded=True)),
    ("attestation data", HttpRequestParts("GET", routes.ATTESTATION_DATA,
                                          [("slot", "9"), ("committee_index", "0")]),
     {"data": canned.attestation_data(9)}, {}),
    ("aggregate", HttpRequestParts("GET", routes.AGGREGATE_ATTESTATION_V2,
                                   [("attestation_data_root", canned.root(1)), ("slot", "9"),
                                    ("committee_index", "0")]),
     *canned.aggregate_attestation(9)),
    ("contribution", HttpRequestParts("GET", routes.SYNC_COMMITTEE_CONTRIBUTION,
                                      [("slot", "9"), ("subcommittee_index", "1"),
                                       ("beacon_block_root", canned.root(0x31))]),
     canned.contribution(9, 1, canned.root(0x31)), {}),
    ("pool failures", HttpRequestParts(
        "POST", routes.POOL_ATTESTATIONS_V2, (), {**JSON, "Eth-Consensus-Version": "electra"},
        orjson.dumps([canned.single_attestation(9, 1)])),
     canned.indexed_error([(0, "invalid signature")]), {}),
]  # fmt: skip

STATUS_OF = {"pool failures": 400}


@pytest.mark.parametrize(
    ("name", "request_parts", "body", "headers"), CASES, ids=[c[0] for c in CASES]
)
def test_canned_answer_conforms(
    beacon_api_spec: BeaconApiSpec,
    name: str,
    request_parts: HttpRequestParts,
    body: Any,
    headers: dict[str, str],
) -> None:
    assert beacon_api_spec.check_request(request_parts) == []
    response = HttpResponseParts(STATUS_OF.get(name, 200), {**JSON, **headers}, orjson.dumps(body))
    assert beacon_api_spec.check_response(request_parts, response) == []


SIGNED = [
    ("single attestations", routes.POOL_ATTESTATIONS_V2, [canned.single_attestation(9, 1)], True),
    ("aggregates", routes.AGGREGATE_AND_PROOFS_V2, [canned.signed_aggregate_and_proof(9, 1)], True),
    ("sync messages", routes.POOL_SYNC_COMMITTEES, [canned.sync_committee_message(9, 1)], False),
    ("contributions", routes.CONTRIBUTION_AND_PROOFS, [canned.signed_contribution_and_proof(9, 1)],
     False),
    ("registrations", routes.REGISTER_VALIDATOR, [canned.signed_registration(1)], False),
    ("exit", routes.POOL_VOLUNTARY_EXITS, canned.signed_voluntary_exit(1), False),
    ("block", routes.PUBLISH_BLOCK_V2, canned.signed_block_contents(9), True),
    ("blinded block", routes.PUBLISH_BLINDED_BLOCK_V2, canned.signed_blinded_block(9), True),
]  # fmt: skip


@pytest.mark.parametrize(("name", "route", "body", "versioned"), SIGNED, ids=[s[0] for s in SIGNED])
def test_canned_signed_messages_conform(
    beacon_api_spec: BeaconApiSpec, name: str, route: str, body: Any, versioned: bool
) -> None:
    headers = {**JSON, "Eth-Consensus-Version": "electra"} if versioned else JSON
    request = HttpRequestParts("POST", route, (), headers, orjson.dumps(body))
    assert beacon_api_spec.check_request(request) == []


def test_events_are_shaped_like_the_spec_examples() -> None:
    # The eventstream spec documents event payloads only as examples; the canned
    # ones carry every field of the head/block examples.
    assert set(canned.head_event_data(1)) == {
        "slot", "block", "state", "epoch_transition", "previous_duty_dependent_root",
        "current_duty_dependent_root", "execution_optimistic",
    }  # fmt: skip
    assert set(canned.block_event_data(1)) == {"slot", "block", "execution_optimistic"}
