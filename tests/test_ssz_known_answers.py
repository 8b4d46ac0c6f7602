"""Roots and domains that nobody in this project computed, from ../shared/vectors/ssz.

- consensus-spec-tests v1.6.0-beta.0 mainnet ``ssz_static`` cases: every case in
  MANIFEST.json must reproduce its root through our containers and JSON codec,
  and survive SSZ and JSON round trips.
- flashbots go-boost-utils: a real signed (Kiln, Bellatrix) blinded block whose
  proposer signature verifies over the signing root we derive, a registration
  root confirmed by a real signature, and compute_domain vectors.
- ethstaker deposit-cli: fork-data root, deposit domain and a signing root.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import crypto_backend
from tests.official_vectors import official_vectors, vectors_root
from validator.consensus import ssz
from validator.consensus.domains import (
    DOMAIN_APPLICATION_BUILDER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_DEPOSIT,
    compute_domain,
    compute_fork_data_root,
    compute_signing_root,
)
from validator.consensus.ssz import bellatrix, deneb, electra, fulu, phase0

SPEC_TESTS = "consensus-spec-tests_v1.6.0-beta.0"

# (type name, fork group in the vector folder) -> container
CONTAINERS: dict[tuple[str, str], Any] = {
    ("AttestationData", "phase0_to_fulu"): ssz.AttestationData,
    ("Checkpoint", "phase0_to_fulu"): ssz.Checkpoint,
    ("ForkData", "phase0_to_fulu"): ssz.ForkData,
    ("SigningData", "phase0_to_fulu"): ssz.SigningData,
    ("VoluntaryExit", "phase0_to_fulu"): ssz.VoluntaryExit,
    ("SyncCommitteeMessage", "altair_to_fulu"): ssz.SyncCommitteeMessage,
    ("ContributionAndProof", "altair_to_fulu"): ssz.ContributionAndProof,
    ("SyncAggregatorSelectionData", "altair_to_fulu"): ssz.SyncAggregatorSelectionData,
    ("SingleAttestation", "electra_fulu"): electra.SingleAttestation,
    ("AggregateAndProof", "electra_fulu"): electra.AggregateAndProof,
    ("BeaconBlock", "electra_fulu"): electra.BeaconBlock,
    ("BeaconBlock", "deneb"): deneb.BeaconBlock,
}


def _manifest_cases() -> list[Any]:
    manifest = vectors_root() / "ssz" / SPEC_TESTS / "MANIFEST.json"
    if not manifest.exists():
        return [pytest.param(None, id="suite-missing")]
    cases = json.loads(manifest.read_text())["cases"]
    return [
        pytest.param(case, id=f"{case['type']}-{case['forks']}-{case['case']}") for case in cases
    ]


def _load_case(case: dict[str, Any]) -> tuple[Any, dict[str, Any], str]:
    folder = official_vectors("ssz", SPEC_TESTS, case["path"])
    value_text = (folder / "value.yaml").read_text()
    assert hashlib.sha256(value_text.encode()).hexdigest() == case["value_sha256"]
    roots = yaml.safe_load((folder / "roots.yaml").read_text())
    assert roots["root"] == case["root"], "MANIFEST.json and roots.yaml disagree"
    return CONTAINERS[(case["type"], case["forks"])], yaml.safe_load(value_text), roots["root"]


@pytest.mark.parametrize("case", _manifest_cases())
def test_spec_tests_root(case: dict[str, Any] | None) -> None:
    if case is None:
        official_vectors("ssz", SPEC_TESTS, "MANIFEST.json")
        return
    container, value, root = _load_case(case)
    # The YAML uses the Beacon API's field names and hex forms; integers are plain numbers.
    parsed = ssz.from_json(container, value)
    assert "0x" + ssz.hash_tree_root(parsed).hex() == root


@pytest.mark.parametrize("case", _manifest_cases())
def test_spec_tests_round_trips(case: dict[str, Any] | None) -> None:
    if case is None:
        official_vectors("ssz", SPEC_TESTS, "MANIFEST.json")
        return
    container, value, root = _load_case(case)
    parsed = ssz.from_json(container, value)
    from_bytes = ssz.from_ssz(container, ssz.to_ssz(parsed))
    assert "0x" + ssz.hash_tree_root(from_bytes).hex() == root
    api_json = ssz.to_json(parsed)
    assert "0x" + ssz.hash_tree_root(ssz.from_json(container, api_json)).hex() == root
    assert ssz.to_json(from_bytes) == api_json


def test_manifest_covers_every_signed_kind_and_all_cases() -> None:
    manifest = official_vectors("ssz", SPEC_TESTS, "MANIFEST.json")
    cases = json.loads(manifest.read_text())["cases"]
    assert len(cases) == 49
    assert {(case["type"], case["forks"]) for case in cases} == set(CONTAINERS)


def test_fulu_block_is_the_electra_block() -> None:
    # The vectors' "electra_fulu" BeaconBlock cases rely on this identity.
    assert fulu.BeaconBlock is electra.BeaconBlock
    assert fulu.BlindedBeaconBlock is electra.BlindedBeaconBlock


# --- flashbots go-boost-utils ---------------------------------------------


def _flashbots() -> tuple[Path, dict[str, Any]]:
    folder = official_vectors("ssz", "flashbots_go-boost-utils")
    return folder, json.loads((folder / "known_answers.json").read_text())


def _hex(text: str) -> bytes:
    return bytes.fromhex(text.removeprefix("0x"))


def test_kiln_blinded_block_root_and_real_proposer_signature() -> None:
    folder, answers = _flashbots()
    kiln = answers["kiln_signed_blinded_beacon_block"]
    signed = ssz.from_json(
        bellatrix.SignedBlindedBeaconBlock, json.loads((folder / kiln["file"]).read_text())
    )
    assert "0x" + ssz.hash_tree_root(signed.message).hex() == kiln["message_hash_tree_root"]

    domain = compute_domain(
        DOMAIN_BEACON_PROPOSER, _hex(kiln["fork_version"]), _hex(kiln["genesis_validators_root"])
    )
    assert "0x" + domain.hex() == kiln["domain_beacon_proposer"]
    signing_root = compute_signing_root(signed.message, domain)
    # The block's real signature is the independent confirmation of the whole path.
    assert crypto_backend.verify(
        _hex(kiln["proposer_pubkey"]), signing_root, bytes(signed.signature)
    )
    wrong_fork = compute_domain(
        DOMAIN_BEACON_PROPOSER, bytes(4), _hex(kiln["genesis_validators_root"])
    )
    assert not crypto_backend.verify(
        _hex(kiln["proposer_pubkey"]),
        compute_signing_root(signed.message, wrong_fork),
        bytes(signed.signature),
    )


def test_kiln_blinded_block_with_a_deposit() -> None:
    folder, answers = _flashbots()
    kiln = answers["kiln_signed_blinded_beacon_block"]
    body = json.loads((folder / kiln["file"]).read_text())["message"]
    # As described in known_answers.json: one deposit with patterned fields.
    body["body"]["deposits"] = [
        {
            "proof": ["0x01" + "00" * 31] * 33,
            "data": {
                "pubkey": "0x02" + "00" * 47,
                "withdrawal_credentials": "0x03" + "00" * 31,
                "amount": "1234",
                "signature": "0x04" + "00" * 95,
            },
        }
    ]
    block = ssz.from_json(bellatrix.BlindedBeaconBlock, body)
    expected = kiln["with_extra_deposit_root"]["message_hash_tree_root"]
    assert "0x" + ssz.hash_tree_root(block).hex() == expected


def test_validator_registration_root_confirmed_by_its_signature() -> None:
    _, answers = _flashbots()
    registration = answers["validator_registration_v1"]
    message = ssz.from_json(ssz.ValidatorRegistrationV1, registration["message"])
    root = ssz.hash_tree_root(message)
    assert "0x" + root.hex() == registration["message_hash_tree_root_derived_by_stager"]
    # Upstream signs the bare root with this key; the signature is the independent check.
    secret = int.from_bytes(_hex(registration["secret_key_hex_big_endian"]), "big")
    signature = _hex(registration["signature_over_message_hash_tree_root"])
    assert crypto_backend.verify(crypto_backend.sk_to_pk(secret), root, signature)


def test_flashbots_compute_domain_vectors() -> None:
    _, answers = _flashbots()
    vectors = answers["compute_domain"]
    assert len(vectors) == 4
    for vector in vectors:
        domain = compute_domain(
            _hex(vector["domain_type"]),
            _hex(vector["fork_version"]),
            _hex(vector["genesis_validators_root"]),
        )
        assert "0x" + domain.hex() == vector["domain"], vector["label"]
    mainnet_builder = next(v for v in vectors if v["label"] == "DOMAIN_APPLICATION_BUILDER mainnet")
    assert _hex(mainnet_builder["domain_type"]) == DOMAIN_APPLICATION_BUILDER


# --- ethstaker deposit-cli ------------------------------------------------


def _deposit_vectors() -> dict[str, Any]:
    folder = official_vectors("ssz", "ethstaker-deposit-cli")
    return json.loads((folder / "deposit_ssz_vectors.json").read_text())


def test_deposit_cli_fork_data_root() -> None:
    for vector in _deposit_vectors()["compute_deposit_fork_data_root"]:
        root = compute_fork_data_root(
            _hex(vector["current_version"]), _hex(vector["genesis_validators_root"])
        )
        assert "0x" + root.hex() == vector["fork_data_root"]


def test_deposit_cli_deposit_domain() -> None:
    for vector in _deposit_vectors()["compute_deposit_domain"]:
        assert _hex(vector["domain_type"]) == DOMAIN_DEPOSIT
        domain = compute_domain(
            DOMAIN_DEPOSIT, _hex(vector["fork_version"]), _hex(vector["genesis_validators_root"])
        )
        assert "0x" + domain.hex() == vector["domain"]


def test_deposit_cli_signing_root() -> None:
    for vector in _deposit_vectors()["compute_signing_root"]:
        assert vector["object_type"] == "DepositMessage"
        message = phase0.DepositMessage(
            pubkey=_hex(vector["object"]["pubkey"]),
            withdrawal_credentials=_hex(vector["object"]["withdrawal_credentials"]),
            amount=vector["object"]["amount"],
        )
        assert (
            "0x" + compute_signing_root(message, _hex(vector["domain"])).hex()
            == vector["signing_root"]
        )
