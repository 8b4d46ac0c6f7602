"""The signing root of each message kind, against a computation with plain sha256.

Object roots of small containers are merkleized by hand here; those of large
ones come from the containers the known-answer tests already pin down. The
chain puts fork boundaries next to the messages so a wrong epoch rule shows.
"""

from __future__ import annotations

from hashlib import sha256

import pytest

from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.domains import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_APPLICATION_BUILDER,
    DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF,
    DOMAIN_RANDAO,
    DOMAIN_SELECTION_PROOF,
    DOMAIN_SYNC_COMMITTEE,
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
    DOMAIN_VOLUNTARY_EXIT,
)
from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import (
    aggregate_and_proof_signing_root,
    attestation_signing_root,
    block_signing_root,
    contribution_and_proof_signing_root,
    randao_reveal_signing_root,
    selection_proof_signing_root,
    sync_committee_message_signing_root,
    sync_committee_selection_proof_signing_root,
    validator_registration_signing_root,
    voluntary_exit_signing_root,
)
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    AttestationData,
    Checkpoint,
    ContributionAndProof,
    SyncCommitteeContribution,
    ValidatorRegistrationV1,
    VoluntaryExit,
    electra,
)
from validator.consensus.ssz.blocks import blinded_block, block_header

ROOT = sha256(b"gvr").digest()
BLOCK_ROOT = sha256(b"head").digest()


def _chunk(number: int) -> bytes:
    return number.to_bytes(32, "little")


def _merkleize(chunks: list[bytes]) -> bytes:
    width = 1
    while width < len(chunks):
        width *= 2
    layer = chunks + [bytes(32)] * (width - len(chunks))
    while len(layer) > 1:
        layer = [sha256(layer[i] + layer[i + 1]).digest() for i in range(0, len(layer), 2)]
    return layer[0]


def _signing_root(
    object_root: bytes, domain_type: bytes, version: bytes, gvr: bytes = ROOT
) -> bytes:
    domain = domain_type + sha256(version + bytes(28) + gvr).digest()[:28]
    return sha256(object_root + domain).digest()


def V(fork: ForkName) -> bytes:
    return simulated_fork_version(fork)


@pytest.fixture(scope="module")
def chain() -> ChainSpec:
    """8 slots per epoch; Deneb at genesis, Electra from epoch 2, Fulu from epoch 4."""
    return SimulatedChainConfig(
        genesis_time=0,
        genesis_validators_root=ROOT,
        slots_per_epoch=8,
        fork_epochs={ForkName.ELECTRA: 2, ForkName.FULU: 4},
    ).chain_spec()


def _attestation_data(slot: int, source_epoch: int, target_epoch: int) -> AttestationData:
    return AttestationData(
        slot=slot,
        index=0,
        beacon_block_root=BLOCK_ROOT,
        source=Checkpoint(epoch=source_epoch, root=sha256(b"source").digest()),
        target=Checkpoint(epoch=target_epoch, root=sha256(b"target").digest()),
    )


def _attestation_data_root(data: AttestationData) -> bytes:
    def checkpoint(c: Checkpoint) -> bytes:
        return _merkleize([_chunk(int(c.epoch)), bytes(c.root)])

    return _merkleize(
        [
            _chunk(int(data.slot)),
            _chunk(int(data.index)),
            bytes(data.beacon_block_root),
            checkpoint(data.source),
            checkpoint(data.target),
        ]
    )


def test_randao_reveal(chain: ChainSpec) -> None:
    assert randao_reveal_signing_root(chain, 1) == _signing_root(
        _chunk(1), DOMAIN_RANDAO, V(ForkName.DENEB)
    )
    assert randao_reveal_signing_root(chain, 2) == _signing_root(
        _chunk(2), DOMAIN_RANDAO, V(ForkName.ELECTRA)
    )


def test_selection_proof(chain: ChainSpec) -> None:
    assert selection_proof_signing_root(chain, 15) == _signing_root(
        _chunk(15), DOMAIN_SELECTION_PROOF, V(ForkName.DENEB)
    )
    assert selection_proof_signing_root(chain, 32) == _signing_root(
        _chunk(32), DOMAIN_SELECTION_PROOF, V(ForkName.FULU)
    )


def test_attestation_uses_the_target_epoch(chain: ChainSpec) -> None:
    data = _attestation_data(slot=15, source_epoch=0, target_epoch=2)  # slot in epoch 1
    assert attestation_signing_root(chain, data) == _signing_root(
        _attestation_data_root(data), DOMAIN_BEACON_ATTESTER, V(ForkName.ELECTRA)
    )


def test_aggregate_and_proof_uses_the_aggregates_slot(chain: ChainSpec) -> None:
    data = _attestation_data(slot=15, source_epoch=0, target_epoch=2)
    aggregate = electra.AggregateAndProof(
        aggregator_index=3,
        aggregate=electra.Attestation(data=data),
        selection_proof=bytes(96),
    )
    aggregate.aggregate.aggregation_bits.append(True)
    aggregate.aggregate.committee_bits[0] = True
    assert aggregate_and_proof_signing_root(chain, aggregate) == _signing_root(
        bytes(aggregate.hash_tree_root()), DOMAIN_AGGREGATE_AND_PROOF, V(ForkName.DENEB)
    )


def test_sync_committee_message(chain: ChainSpec) -> None:
    assert sync_committee_message_signing_root(chain, 16, BLOCK_ROOT) == _signing_root(
        BLOCK_ROOT, DOMAIN_SYNC_COMMITTEE, V(ForkName.ELECTRA)
    )


def test_sync_committee_selection_proof(chain: ChainSpec) -> None:
    expected_object = _merkleize([_chunk(16), _chunk(3)])
    assert sync_committee_selection_proof_signing_root(chain, 16, 3) == _signing_root(
        expected_object, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, V(ForkName.ELECTRA)
    )


def test_contribution_and_proof_uses_the_contributions_slot(chain: ChainSpec) -> None:
    contribution_and_proof = ContributionAndProof(
        aggregator_index=9,
        contribution=SyncCommitteeContribution(
            slot=31, beacon_block_root=BLOCK_ROOT, subcommittee_index=2
        ),
        selection_proof=bytes(96),
    )
    assert contribution_and_proof_signing_root(chain, contribution_and_proof) == _signing_root(
        bytes(contribution_and_proof.hash_tree_root()),
        DOMAIN_CONTRIBUTION_AND_PROOF,
        V(ForkName.ELECTRA),
    )


def test_voluntary_exit_under_eip_7044(chain: ChainSpec) -> None:
    exit_message = VoluntaryExit(epoch=5, validator_index=12)
    expected = _signing_root(
        _merkleize([_chunk(5), _chunk(12)]), DOMAIN_VOLUNTARY_EXIT, V(ForkName.CAPELLA)
    )
    assert voluntary_exit_signing_root(chain, exit_message) == expected
    assert voluntary_exit_signing_root(chain, exit_message, current_epoch=9) == expected


def test_validator_registration(chain: ChainSpec) -> None:
    registration = ValidatorRegistrationV1(
        fee_recipient=bytes(range(20)),
        gas_limit=30_000_000,
        timestamp=1_700_000_000,
        pubkey=bytes(48),
    )
    fee_recipient_chunk = bytes(range(20)) + bytes(12)
    pubkey_root = sha256(bytes(64)).digest()  # 48 bytes -> two chunks
    object_root = _merkleize(
        [fee_recipient_chunk, _chunk(30_000_000), _chunk(1_700_000_000), pubkey_root]
    )
    assert validator_registration_signing_root(chain, registration) == _signing_root(
        object_root, DOMAIN_APPLICATION_BUILDER, V(ForkName.PHASE0), bytes(32)
    )


def test_block_blinded_block_and_header_sign_the_same_root(chain: ChainSpec) -> None:
    block = electra.BeaconBlock(slot=16, proposer_index=4, parent_root=BLOCK_ROOT)
    block.body.execution_payload.transactions.append(b"\x02\xf8")
    header = block_header(block)
    expected = _signing_root(
        bytes(header.hash_tree_root()), DOMAIN_BEACON_PROPOSER, V(ForkName.ELECTRA)
    )
    assert block_signing_root(chain, block) == expected
    assert block_signing_root(chain, blinded_block(block)) == expected
    assert block_signing_root(chain, header) == expected
    earlier = electra.BeaconBlock(slot=15)
    assert block_signing_root(chain, earlier) == _signing_root(
        bytes(earlier.hash_tree_root()), DOMAIN_BEACON_PROPOSER, V(ForkName.DENEB)
    )


def test_different_chains_give_different_roots(chain: ChainSpec) -> None:
    other = SimulatedChainConfig(
        genesis_time=0,
        genesis_validators_root=sha256(b"another chain").digest(),
        slots_per_epoch=8,
        fork_epochs={ForkName.ELECTRA: 2, ForkName.FULU: 4},
    ).chain_spec()
    data = _attestation_data(slot=16, source_epoch=1, target_epoch=2)
    assert attestation_signing_root(chain, data) != attestation_signing_root(other, data)
    # Builder registrations are deliberately chain-independent.
    registration = ValidatorRegistrationV1(gas_limit=1)
    assert validator_registration_signing_root(chain, registration) == (
        validator_registration_signing_root(other, registration)
    )
