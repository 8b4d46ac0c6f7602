"""Web3Signer request bodies: built from the chain's messages, they pass the official spec,
parse back to the same message, and their root recomputed from body and fork_info alone is
the root the chain signs (on a chain with fork boundaries, so a wrong fork rule shows)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.validator.signing.support import attestation_data
from tests.validator.signing.web3signer_cases import PUBKEY_HEX, cases
from validator.consensus import signing_roots
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    BeaconBlockHeader,
)
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec, HttpRequestParts
from validator.signing.web3signer import (
    GLOAS_TYPES,
    BodyError,
    SignType,
    parse_signature_response,
    parse_signing_request,
    request_for,
)


def _sign_request(body: Any) -> HttpRequestParts:
    return HttpRequestParts(
        method="post",
        path=f"/api/v1/eth2/sign/{PUBKEY_HEX}",
        headers={"Content-Type": "application/json"},
        body=orjson.dumps(body),
    )


def test_every_kind_is_covered(chain: ChainSpec) -> None:
    # The staged official spec predates the Gloas types; test_gloas_signing.py covers them.
    assert {request.type for request, _ in cases(chain)} == set(SignType) - GLOAS_TYPES


def test_bodies_pass_the_spec_and_roots_agree(
    chain: ChainSpec, web3signer_spec: BeaconApiSpec
) -> None:
    for request, chain_root in cases(chain):
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
