"""Web3Signer request bodies: built from the chain's messages, they pass the official spec,
parse back to the same message, and their root recomputed from body and fork_info alone is
the root the chain signs (on a chain with fork boundaries, so a wrong fork rule shows)."""

from __future__ import annotations

from hashlib import sha256
from typing import Any

import orjson
import pytest
from remerkleable.core import View

from tests.validator.signing.support import attestation_data
from validator.consensus import signing_roots
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    BeaconBlockHeader,
    ContributionAndProof,
    SyncAggregatorSelectionData,
    SyncCommitteeContribution,
    ValidatorRegistrationV1,
    VoluntaryExit,
    electra,
)
from validator.devnet.openapi_check import BeaconApiSpec, HttpRequestParts
from validator.signing.web3signer import (
    AggregationSlot,
    BodyError,
    RandaoReveal,
    SigningRequest,
    SignType,
    SyncCommitteeMessageData,
    parse_signature_response,
    parse_signing_request,
    request_for,
)

HEAD = sha256(b"head").digest()
PUBKEY_HEX = "0x" + "a" * 96


def _aggregate_and_proof() -> View:
    made = electra.AggregateAndProof(
        aggregator_index=9,
        aggregate=electra.Attestation(data=attestation_data(slot=23, source=1, target=2)),
        selection_proof=bytes(96),
    )
    made.aggregate.aggregation_bits.append(True)
    made.aggregate.committee_bits[0] = True
    return made


def _contribution_and_proof() -> View:
    contribution = SyncCommitteeContribution(slot=31, beacon_block_root=HEAD, subcommittee_index=2)
    contribution.aggregation_bits[5] = True
    return ContributionAndProof(
        aggregator_index=11, contribution=contribution, selection_proof=bytes(96)
    )


def _cases(chain: ChainSpec) -> list[tuple[SigningRequest, bytes]]:
    """One request per kind, with the root the chain's own rules give."""
    data = attestation_data(slot=31, source=2, target=4)  # slot in Electra, target in Fulu
    header = BeaconBlockHeader(slot=16, proposer_index=3, parent_root=HEAD, body_root=HEAD)
    aggregate = _aggregate_and_proof()
    contribution = _contribution_and_proof()
    exit_message = VoluntaryExit(epoch=3, validator_index=12)
    registration = ValidatorRegistrationV1(
        fee_recipient=bytes(range(20)), gas_limit=36_000_000, timestamp=1_700_000_123
    )
    selection = SyncAggregatorSelectionData(slot=30, subcommittee_index=2)
    made = [
        (SignType.ATTESTATION, data, signing_roots.attestation_signing_root(chain, data), {}),
        (
            SignType.BLOCK_V2,
            header,
            signing_roots.block_signing_root(chain, header),
            {"version": ForkName.ELECTRA},
        ),
        (
            SignType.AGGREGATION_SLOT,
            AggregationSlot(slot=15),
            signing_roots.selection_proof_signing_root(chain, 15),
            {},
        ),
        (
            SignType.AGGREGATE_AND_PROOF_V2,
            aggregate,
            signing_roots.aggregate_and_proof_signing_root(chain, aggregate),
            {"version": ForkName.ELECTRA},
        ),
        (
            SignType.RANDAO_REVEAL,
            RandaoReveal(epoch=4),
            signing_roots.randao_reveal_signing_root(chain, 4),
            {},
        ),
        (
            SignType.SYNC_COMMITTEE_MESSAGE,
            SyncCommitteeMessageData(beacon_block_root=HEAD, slot=32),
            signing_roots.sync_committee_message_signing_root(chain, 32, HEAD),
            {},
        ),
        (
            SignType.SYNC_COMMITTEE_SELECTION_PROOF,
            selection,
            signing_roots.sync_committee_selection_proof_signing_root(chain, 30, 2),
            {},
        ),
        (
            SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF,
            contribution,
            signing_roots.contribution_and_proof_signing_root(chain, contribution),
            {},
        ),
        (
            SignType.VOLUNTARY_EXIT,
            exit_message,
            signing_roots.voluntary_exit_signing_root(chain, exit_message, current_epoch=5),
            {"exit_current_epoch": 5},
        ),
        (
            SignType.VALIDATOR_REGISTRATION,
            registration,
            signing_roots.validator_registration_signing_root(chain, registration),
            {},
        ),
    ]
    return [
        (request_for(kind, chain, message, root, **extra), root)
        for kind, message, root, extra in made
    ]


def _sign_request(body: Any) -> HttpRequestParts:
    return HttpRequestParts(
        method="post",
        path=f"/api/v1/eth2/sign/{PUBKEY_HEX}",
        headers={"Content-Type": "application/json"},
        body=orjson.dumps(body),
    )


def test_every_kind_is_covered(chain: ChainSpec) -> None:
    assert {request.type for request, _ in _cases(chain)} == set(SignType)


def test_bodies_pass_the_spec_and_roots_agree(
    chain: ChainSpec, web3signer_spec: BeaconApiSpec
) -> None:
    for request, chain_root in _cases(chain):
        body = request.to_json()
        assert web3signer_spec.check_request(_sign_request(body)) == [], request.type
        parsed = parse_signing_request(orjson.loads(orjson.dumps(body)))
        assert parsed.type is request.type
        assert parsed.message.hash_tree_root() == request.message.hash_tree_root()
        assert parsed.fork_info == request.fork_info
        assert parsed.signing_root == chain_root
        assert parsed.version == request.version
        recomputed = parsed.computed_root(chain.slots_per_epoch, chain.genesis_fork_version)
        assert recomputed == chain_root, request.type


def test_a_fork_info_of_another_fork_gives_another_root(chain: ChainSpec) -> None:
    # The attestation's target is in Fulu; claim the fork of its slot (Electra) instead.
    data = attestation_data(slot=31, source=2, target=4)
    root = signing_roots.attestation_signing_root(chain, data)
    body = request_for(SignType.ATTESTATION, chain, data, root).to_json()
    body["fork_info"]["fork"]["current_version"] = body["fork_info"]["fork"]["previous_version"]
    parsed = parse_signing_request(body)
    assert parsed.computed_root(chain.slots_per_epoch, chain.genesis_fork_version) != root


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda body: body.pop("fork_info"), "missing field 'fork_info'"),
        (lambda body: body.update(type="DEPOSIT"), "type: 'DEPOSIT'"),
        (lambda body: body.update(signingRoot="0x12"), "signingRoot: expected 32 bytes"),
        (lambda body: body["attestation"].pop("slot"), "missing field 'slot'"),
        (lambda body: body["attestation"].update(extra=1), "unexpected field 'extra'"),
        (
            lambda body: body["fork_info"]["fork"].update(epoch="-1"),
            "fork_info.fork.epoch: expected a decimal integer string",
        ),
        (
            lambda body: body["fork_info"].update(genesis_validators_root="0x00"),
            "fork_info.genesis_validators_root: expected 32 bytes",
        ),
        (lambda body: body.pop("attestation"), "missing field 'attestation'"),
    ],
)
def test_malformed_bodies_are_refused_by_name(chain: ChainSpec, change: Any, message: str) -> None:
    data = attestation_data(slot=31, source=2, target=4)
    body = request_for(
        SignType.ATTESTATION, chain, data, signing_roots.attestation_signing_root(chain, data)
    ).to_json()
    change(body)
    with pytest.raises(BodyError, match=message.replace("(", r"\(")):
        parse_signing_request(body)


def test_blocks_before_bellatrix_are_refused(chain: ChainSpec) -> None:
    header = BeaconBlockHeader(slot=16, proposer_index=3)
    root = signing_roots.block_signing_root(chain, header)
    body = request_for(SignType.BLOCK_V2, chain, header, root, version=ForkName.ELECTRA).to_json()
    body["beacon_block"]["version"] = "ALTAIR"
    with pytest.raises(BodyError, match="from Bellatrix on"):
        parse_signing_request(body)


def test_signature_answers_in_json_and_text() -> None:
    signature = bytes(range(96))
    hex_signature = "0x" + signature.hex()
    json_answer = orjson.dumps({"signature": hex_signature})
    assert parse_signature_response("application/json", json_answer) == signature
    assert parse_signature_response("text/plain; charset=utf-8", hex_signature.encode()) == (
        signature
    )
    with pytest.raises(BodyError, match="expected 96 bytes"):
        parse_signature_response("text/plain", b"0x1234")
    with pytest.raises(BodyError, match="not JSON"):
        parse_signature_response("application/json", b"{")
