"""Route templates of the Beacon API operations the validator client uses.

Shared by the client (paths and metric labels) and by servers that speak the
same API (the simulated beacon chain, test doubles).
"""

from __future__ import annotations

from urllib.parse import quote

NODE_SYNCING = "/eth/v1/node/syncing"
NODE_HEALTH = "/eth/v1/node/health"
NODE_VERSION = "/eth/v1/node/version"
GENESIS = "/eth/v1/beacon/genesis"
CONFIG_SPEC = "/eth/v1/config/spec"
FORK_SCHEDULE = "/eth/v1/config/fork_schedule"
STATE_FORK = "/eth/v1/beacon/states/{state_id}/fork"
STATE_FINALITY_CHECKPOINTS = "/eth/v1/beacon/states/{state_id}/finality_checkpoints"
STATE_VALIDATORS = "/eth/v1/beacon/states/{state_id}/validators"
BLOCK_ROOT = "/eth/v1/beacon/blocks/{block_id}/root"
ATTESTER_DUTIES = "/eth/v1/validator/duties/attester/{epoch}"
PROPOSER_DUTIES = "/eth/v1/validator/duties/proposer/{epoch}"
SYNC_DUTIES = "/eth/v1/validator/duties/sync/{epoch}"
LIVENESS = "/eth/v1/validator/liveness/{epoch}"
PRODUCE_BLOCK_V3 = "/eth/v3/validator/blocks/{slot}"
PUBLISH_BLOCK_V2 = "/eth/v2/beacon/blocks"
PUBLISH_BLINDED_BLOCK_V2 = "/eth/v2/beacon/blinded_blocks"
ATTESTATION_DATA = "/eth/v1/validator/attestation_data"
POOL_ATTESTATIONS_V2 = "/eth/v2/beacon/pool/attestations"
AGGREGATE_ATTESTATION_V2 = "/eth/v2/validator/aggregate_attestation"
AGGREGATE_AND_PROOFS_V2 = "/eth/v2/validator/aggregate_and_proofs"
BEACON_COMMITTEE_SUBSCRIPTIONS = "/eth/v1/validator/beacon_committee_subscriptions"
SYNC_COMMITTEE_SUBSCRIPTIONS = "/eth/v1/validator/sync_committee_subscriptions"
PREPARE_BEACON_PROPOSER = "/eth/v1/validator/prepare_beacon_proposer"
REGISTER_VALIDATOR = "/eth/v1/validator/register_validator"
POOL_SYNC_COMMITTEES = "/eth/v1/beacon/pool/sync_committees"
SYNC_COMMITTEE_CONTRIBUTION = "/eth/v1/validator/sync_committee_contribution"
CONTRIBUTION_AND_PROOFS = "/eth/v1/validator/contribution_and_proofs"
POOL_VOLUNTARY_EXITS = "/eth/v1/beacon/pool/voluntary_exits"
EVENTS = "/eth/v1/events"
# Gloas (ePBS)
PTC_DUTIES = "/eth/v1/validator/duties/ptc/{epoch}"
PAYLOAD_ATTESTATION_DATA = "/eth/v1/validator/payload_attestation_data"
PAYLOAD_ATTESTATION_DATA_BY_SLOT = "/eth/v1/validator/payload_attestation_data/{slot}"
POOL_PAYLOAD_ATTESTATIONS = "/eth/v1/beacon/pool/payload_attestations"
PRODUCE_BLOCK_V4 = "/eth/v4/validator/blocks/{slot}"
PUBLISH_EXECUTION_PAYLOAD_ENVELOPE = "/eth/v1/beacon/execution_payload_envelopes"
PROPOSER_PREFERENCES = "/eth/v1/validator/proposer_preferences"


def fill(route: str, **params: object) -> str:
    """The concrete path of ``route`` with each ``{name}`` percent-encoded."""
    return route.format(**{name: quote(str(value), safe="") for name, value in params.items()})
