"""Every Gloas container and signing root, against the pinned pyspec on random values.

The pyspec (eth-consensus-specs==1.7.0b4, run by tests/support/gloas_oracle.py in its own
Python 3.12) decodes the SSZ bytes of each random value this client built and answers
its hash_tree_root, its re-serialization and its signing root. EIP-7688 makes most of the
Gloas block progressive; a merkleization that is right for short lists only, a field in
the wrong place or a domain under the wrong fork differs here.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.gloas_oracle import GloasOracle, oracle_python
from tests.support.random_ssz import random_value
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.domains import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_BUILDER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_PROPOSER_PREFERENCES,
    DOMAIN_PTC_ATTESTER,
)
from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    block_signing_root,
    execution_payload_envelope_signing_root,
    payload_attestation_signing_root,
    proposer_preferences_signing_root,
)
from validator.consensus.spec import PROTOCOL_DOMAIN_TYPES, GloasDeadlines
from validator.consensus.ssz import gloas
from validator.consensus.ssz.codec import from_json, to_json
from validator.consensus.ssz.preset import PRESETS, Preset

FORK_INDEPENDENT = (
    "PayloadAttestationData",
    "PayloadAttestationMessage",
    "ProposerPreferences",
    "SignedProposerPreferences",
    "BuilderDepositRequest",
    "BuilderExitRequest",
    "ExecutionRequests",
    "ExecutionPayloadBid",
    "SignedExecutionPayloadBid",
)
PER_PRESET = (
    "Attestation",
    "IndexedAttestation",
    "AttesterSlashing",
    "AggregateAndProof",
    "SignedAggregateAndProof",
    "PayloadAttestation",
    "IndexedPayloadAttestation",
    "ExecutionPayload",
    "ExecutionPayloadEnvelope",
    "SignedExecutionPayloadEnvelope",
    "BeaconBlockBody",
    "BeaconBlock",
    "SignedBeaconBlock",
)
VALUES_PER_TYPE = 6


@pytest.fixture(scope="module")
def oracle() -> Iterator[GloasOracle]:
    running = GloasOracle(oracle_python())
    yield running
    running.close()


def _container(preset: Preset, name: str) -> Any:
    if name in FORK_INDEPENDENT:
        return getattr(gloas, name)
    return getattr(gloas.containers(preset), name)


@pytest.mark.parametrize("preset_name", sorted(PRESETS))
@pytest.mark.parametrize("type_name", FORK_INDEPENDENT + PER_PRESET)
def test_root_and_encoding_match_the_pyspec(
    oracle: GloasOracle, preset_name: str, type_name: str
) -> None:
    preset = PRESETS[preset_name]
    ssz_type = _container(preset, type_name)
    rng = random.Random(f"{preset_name}/{type_name}")
    for _ in range(VALUES_PER_TYPE):
        value = random_value(ssz_type, rng)
        encoded = bytes(value.encode_bytes())
        answer = oracle.ask(op="root", preset=preset_name, type=type_name, ssz=encoded.hex())
        assert answer["ssz"] == encoded.hex()
        assert answer["root"] == bytes(value.hash_tree_root()).hex()
        # What a node sends as JSON reads back to the same value (and root).
        assert bytes(from_json(ssz_type, to_json(value)).hash_tree_root()) == bytes(
            value.hash_tree_root()
        )


def test_empty_block_root_is_the_pyspec_default(oracle: GloasOracle) -> None:
    for preset_name, preset in PRESETS.items():
        block = gloas.containers(preset).BeaconBlock()
        answer = oracle.ask(
            op="root", preset=preset_name, type="BeaconBlock", ssz=block.encode_bytes().hex()
        )
        assert answer["root"] == bytes(block.hash_tree_root()).hex()


@pytest.mark.parametrize("preset_name", sorted(PRESETS))
def test_constants_match_the_pyspec(oracle: GloasOracle, preset_name: str) -> None:
    preset = PRESETS[preset_name]
    deadlines = GloasDeadlines()
    names = [
        "DOMAIN_BEACON_BUILDER",
        "DOMAIN_PTC_ATTESTER",
        "DOMAIN_PROPOSER_PREFERENCES",
        "PTC_SIZE",
        "BUILDER_INDEX_SELF_BUILD",
        "ATTESTATION_DUE_BPS_GLOAS",
        "AGGREGATE_DUE_BPS_GLOAS",
        "SYNC_MESSAGE_DUE_BPS_GLOAS",
        "CONTRIBUTION_DUE_BPS_GLOAS",
        "PAYLOAD_DUE_BPS",
        "PAYLOAD_ATTESTATION_DUE_BPS",
    ]
    values = oracle.ask(op="constants", preset=preset_name, names=names)["values"]
    for name in ("DOMAIN_BEACON_BUILDER", "DOMAIN_PTC_ATTESTER", "DOMAIN_PROPOSER_PREFERENCES"):
        assert values[name] == "0x" + PROTOCOL_DOMAIN_TYPES[name].hex()
    assert values["PTC_SIZE"] == preset.PTC_SIZE
    assert values["BUILDER_INDEX_SELF_BUILD"] == gloas.BUILDER_INDEX_SELF_BUILD
    assert values["ATTESTATION_DUE_BPS_GLOAS"] == deadlines.attestation_due_bps
    assert values["AGGREGATE_DUE_BPS_GLOAS"] == deadlines.aggregate_due_bps
    assert values["SYNC_MESSAGE_DUE_BPS_GLOAS"] == deadlines.sync_message_due_bps
    assert values["CONTRIBUTION_DUE_BPS_GLOAS"] == deadlines.contribution_due_bps
    assert values["PAYLOAD_DUE_BPS"] == deadlines.payload_due_bps
    assert values["PAYLOAD_ATTESTATION_DUE_BPS"] == deadlines.payload_attestation_due_bps


GLOAS_EPOCH = 3


def _chain(preset: Preset, rng: random.Random) -> Any:
    return SimulatedChainConfig(
        genesis_time=1_700_000_000,
        genesis_validators_root=rng.randbytes(32),
        slots_per_epoch=preset.SLOTS_PER_EPOCH,
        fork_epochs={ForkName.PHASE0: 0, ForkName.FULU: 0, ForkName.GLOAS: GLOAS_EPOCH},
        preset=preset,
    ).chain_spec()


@pytest.mark.parametrize("preset_name", sorted(PRESETS))
def test_signing_roots_match_the_pyspec(oracle: GloasOracle, preset_name: str) -> None:
    """Each Gloas message under its domain and the fork of its epoch, on both sides of the fork."""
    preset = PRESETS[preset_name]
    kinds = gloas.containers(preset)
    rng = random.Random(f"signing/{preset_name}")
    chain = _chain(preset, rng)
    first_gloas_slot = chain.start_slot_of_epoch(GLOAS_EPOCH)

    def check(type_name: str, value: Any, domain_type: bytes, epoch: int, ours: bytes) -> None:
        answer = oracle.ask(
            op="signing_root",
            preset=preset_name,
            type=type_name,
            ssz=bytes(value.encode_bytes()).hex(),
            domain_type=domain_type.hex(),
            fork_version=chain.fork_version_at(epoch).hex(),
            genesis_validators_root=chain.genesis_validators_root.hex(),
        )
        assert answer["signing_root"] == ours.hex(), type_name

    for slot in (first_gloas_slot, first_gloas_slot + 1, first_gloas_slot + 3 * 8 + 5):
        epoch = chain.epoch_at_slot(slot)
        block = random_value(kinds.BeaconBlock, rng)
        block.slot = slot
        check("BeaconBlock", block, DOMAIN_BEACON_PROPOSER, epoch, block_signing_root(chain, block))

        payload_data = random_value(gloas.PayloadAttestationData, rng)
        payload_data.slot = slot
        check(
            "PayloadAttestationData",
            payload_data,
            DOMAIN_PTC_ATTESTER,
            epoch,
            payload_attestation_signing_root(chain, payload_data),
        )

        envelope = random_value(kinds.ExecutionPayloadEnvelope, rng)
        check(
            "ExecutionPayloadEnvelope",
            envelope,
            DOMAIN_BEACON_BUILDER,
            epoch,
            execution_payload_envelope_signing_root(chain, envelope, slot),
        )

        aggregate = random_value(kinds.AggregateAndProof, rng)
        aggregate.aggregate.data.slot = slot
        check(
            "AggregateAndProof",
            aggregate,
            DOMAIN_AGGREGATE_AND_PROOF,
            epoch,
            aggregate_and_proof_signing_root(chain, aggregate),
        )

        data = random_value(kinds.Attestation, rng).data
        data.slot = slot
        data.index = 1  # the payload-status vote: FULL
        data.target.epoch = epoch
        check(
            "AttestationData",
            data,
            DOMAIN_BEACON_ATTESTER,
            epoch,
            attestation_signing_root(chain, data),
        )

    # Preferences are signed ahead, with the fork of the proposal's epoch: the last Fulu
    # epoch signs preferences for the first Gloas slots under the Gloas version.
    for proposal_slot in (first_gloas_slot, first_gloas_slot + 2, first_gloas_slot - 1):
        preferences = random_value(gloas.ProposerPreferences, rng)
        preferences.proposal_slot = proposal_slot
        check(
            "ProposerPreferences",
            preferences,
            DOMAIN_PROPOSER_PREFERENCES,
            chain.epoch_at_slot(proposal_slot),
            proposer_preferences_signing_root(chain, preferences),
        )
    assert chain.fork_version_at(GLOAS_EPOCH) != chain.fork_version_at(GLOAS_EPOCH - 1)


@pytest.mark.parametrize("preset_name", sorted(PRESETS))
def test_the_devnet_ptc_draw_is_the_spec_selection(oracle: GloasOracle, preset_name: str) -> None:
    """The simulated chain's PTC: the pinned spec's balance-weighted selection over the
    slot's committees (its candidates, balances and seed here random; duplicates kept)."""
    from validator.devnet.chain.shuffling import compute_balance_weighted_selection

    rng = random.Random(f"ptc/{preset_name}")
    size = PRESETS[preset_name].PTC_SIZE
    for _ in range(3):
        indices = rng.sample(range(10_000), rng.randint(1, 200))
        balances = [rng.choice([32, 64, 1024, 2048]) * 10**9 for _ in indices]
        seed = rng.randbytes(32)
        ours = compute_balance_weighted_selection(indices, balances, seed, size)
        answer = oracle.ask(
            op="balance_weighted_selection",
            preset=preset_name,
            indices=indices,
            balances=balances,
            seed=seed.hex(),
            size=size,
        )
        assert ours == answer["selected"]
