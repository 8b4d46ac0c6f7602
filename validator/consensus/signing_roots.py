"""The signing root of every message kind a validator signs.

Each function takes the chain and the message as the Beacon API hands it over
(an SSZ container, or the slot/epoch/root for the messages that sign a bare
value) and returns the 32 bytes to sign. docs/signing.md lists them in a table.
"""

from __future__ import annotations

from remerkleable.core import View

from validator.consensus.domains import (
    aggregate_and_proof_domain,
    application_builder_domain,
    beacon_attester_domain,
    beacon_builder_domain,
    beacon_proposer_domain,
    compute_signing_root,
    contribution_and_proof_domain,
    proposer_preferences_domain,
    ptc_attester_domain,
    randao_domain,
    selection_proof_domain,
    sync_committee_domain,
    sync_committee_selection_proof_domain,
    voluntary_exit_domain,
)
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz.altair import SyncAggregatorSelectionData
from validator.consensus.ssz.primitives import Epoch, Root, Slot


def block_signing_root(chain: ChainSpec, block: View) -> bytes:
    """A BeaconBlock, BlindedBeaconBlock or BeaconBlockHeader (all share one root)."""
    return compute_signing_root(block, beacon_proposer_domain(chain, int(block.slot)))


def attestation_signing_root(chain: ChainSpec, data: View) -> bytes:
    """AttestationData, under the fork of its target epoch."""
    return compute_signing_root(data, beacon_attester_domain(chain, int(data.target.epoch)))


def randao_reveal_signing_root(chain: ChainSpec, epoch: int) -> bytes:
    """The epoch as an SSZ uint64."""
    return compute_signing_root(Epoch(epoch), randao_domain(chain, epoch))


def selection_proof_signing_root(chain: ChainSpec, slot: int) -> bytes:
    """The slot as an SSZ uint64 (attestation aggregator selection)."""
    return compute_signing_root(Slot(slot), selection_proof_domain(chain, slot))


def aggregate_and_proof_signing_root(chain: ChainSpec, aggregate_and_proof: View) -> bytes:
    """AggregateAndProof (Electra form), under the fork of its aggregate's slot."""
    slot = int(aggregate_and_proof.aggregate.data.slot)
    return compute_signing_root(aggregate_and_proof, aggregate_and_proof_domain(chain, slot))


def sync_committee_message_signing_root(
    chain: ChainSpec, slot: int, beacon_block_root: bytes
) -> bytes:
    """The head block root as an SSZ Root, under the fork of ``slot``."""
    return compute_signing_root(Root(beacon_block_root), sync_committee_domain(chain, slot))


def sync_committee_selection_proof_signing_root(
    chain: ChainSpec, slot: int, subcommittee_index: int
) -> bytes:
    """SyncAggregatorSelectionData(slot, subcommittee_index)."""
    selection = SyncAggregatorSelectionData(slot=slot, subcommittee_index=subcommittee_index)
    return compute_signing_root(selection, sync_committee_selection_proof_domain(chain, slot))


def contribution_and_proof_signing_root(chain: ChainSpec, contribution_and_proof: View) -> bytes:
    """ContributionAndProof, under the fork of its contribution's slot."""
    slot = int(contribution_and_proof.contribution.slot)
    return compute_signing_root(contribution_and_proof, contribution_and_proof_domain(chain, slot))


def voluntary_exit_signing_root(
    chain: ChainSpec, voluntary_exit: View, *, current_epoch: int | None = None
) -> bytes:
    """VoluntaryExit, under the EIP-7044 rule (see ``voluntary_exit_domain``)."""
    domain = voluntary_exit_domain(chain, int(voluntary_exit.epoch), current_epoch=current_epoch)
    return compute_signing_root(voluntary_exit, domain)


def validator_registration_signing_root(chain: ChainSpec, registration: View) -> bytes:
    """ValidatorRegistrationV1, under DOMAIN_APPLICATION_BUILDER (genesis version, zero root)."""
    return compute_signing_root(registration, application_builder_domain(chain))


def payload_attestation_signing_root(chain: ChainSpec, data: View) -> bytes:
    """PayloadAttestationData (Gloas), under the fork of ``data.slot``'s epoch."""
    return compute_signing_root(data, ptc_attester_domain(chain, int(data.slot)))


def execution_payload_envelope_signing_root(chain: ChainSpec, envelope: View, slot: int) -> bytes:
    """ExecutionPayloadEnvelope (Gloas), under the fork of its block's ``slot``.

    The envelope names its block by root only; the slot comes from the block (and equals
    ``payload.slot_number``, which the caller checks).
    """
    return compute_signing_root(envelope, beacon_builder_domain(chain, slot))


def proposer_preferences_signing_root(chain: ChainSpec, preferences: View) -> bytes:
    """ProposerPreferences (Gloas), under the fork of the proposal slot's epoch."""
    domain = proposer_preferences_domain(chain, int(preferences.proposal_slot))
    return compute_signing_root(preferences, domain)
