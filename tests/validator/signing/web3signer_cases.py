"""One Web3Signer signing request per kind, on the signer tests' chain (fork boundaries at
Electra epoch 2 and Fulu epoch 4), with the root the chain's own rules give each."""

from __future__ import annotations

from hashlib import sha256

from remerkleable.core import View

from tests.validator.signing.support import attestation_data
from validator.consensus import signing_roots
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import (
    BeaconBlockHeader,
    SyncAggregatorSelectionData,
    ValidatorRegistrationV1,
    VoluntaryExit,
    altair,
    electra,
)
from validator.consensus.ssz.preset import MAINNET, Preset
from validator.signing.web3signer import (
    AggregationSlot,
    RandaoReveal,
    SigningRequest,
    SignType,
    SyncCommitteeMessageData,
    request_for,
)

HEAD = sha256(b"head").digest()
PUBKEY_HEX = "0x" + "a" * 96


def aggregate_and_proof(preset: Preset = MAINNET) -> View:
    """An Electra aggregate and proof in ``preset``'s containers (slot 23, 1 -> 2)."""
    shapes = electra.containers(preset)
    made = shapes.AggregateAndProof(
        aggregator_index=9,
        aggregate=shapes.Attestation(data=attestation_data(slot=23, source=1, target=2)),
        selection_proof=bytes(96),
    )
    made.aggregate.aggregation_bits.append(True)
    made.aggregate.committee_bits[0] = True
    return made


def contribution_and_proof(preset: Preset = MAINNET) -> View:
    """A sync committee contribution and proof in ``preset``'s containers (slot 31)."""
    shapes = altair.containers(preset)
    contribution = shapes.SyncCommitteeContribution(
        slot=31, beacon_block_root=HEAD, subcommittee_index=2
    )
    contribution.aggregation_bits[5] = True
    return shapes.ContributionAndProof(
        aggregator_index=11, contribution=contribution, selection_proof=bytes(96)
    )


def cases(chain: ChainSpec, pubkey: bytes = bytes(48)) -> list[tuple[SigningRequest, bytes]]:
    """One request per kind (the registration names ``pubkey``), with the root the chain's
    own rules give; the clock of the tests is in epoch 5 (slot 40)."""
    data = attestation_data(slot=31, source=2, target=4)  # slot in Electra, target in Fulu
    header = BeaconBlockHeader(slot=16, proposer_index=3, parent_root=HEAD, body_root=HEAD)
    aggregate = aggregate_and_proof()
    contribution = contribution_and_proof()
    exit_message = VoluntaryExit(epoch=3, validator_index=12)
    registration = ValidatorRegistrationV1(
        fee_recipient=bytes(range(20)),
        gas_limit=36_000_000,
        timestamp=1_700_000_123,
        pubkey=pubkey,
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
