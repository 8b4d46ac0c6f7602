"""Prometheus metrics of the duty loop (``validator_duty*``), in the default registry.

The signer counts signatures and refusals by message kind; these count duties:
what the loop set out to do each slot and how it ended, and when in the slot
each kind of message went out.
"""

from __future__ import annotations

from enum import StrEnum

from prometheus_client import Counter, Gauge, Histogram


class DutyKind(StrEnum):
    """The ``kind`` label of the duty metrics and the ``kind`` field of duty log lines."""

    BLOCK = "block"
    ATTESTATION = "attestation"
    AGGREGATE = "aggregate"
    SYNC_COMMITTEE_MESSAGE = "sync_committee_message"
    SYNC_CONTRIBUTION = "sync_contribution"
    # Gloas (ePBS)
    PAYLOAD_ATTESTATION = "payload_attestation"
    EXECUTION_PAYLOAD_ENVELOPE = "execution_payload_envelope"
    PROPOSER_PREFERENCES = "proposer_preferences"


class DutyResult(StrEnum):
    """The ``result`` label: how one validator's duty ended."""

    PUBLISHED = "published"
    """Signed and accepted by at least one beacon node."""
    REFUSED = "refused"
    """Not signed: the signer or the duty loop's own checks refused it."""
    FAILED = "failed"
    """Signed or not, it did not reach any beacon node (node errors, timeouts)."""
    SKIPPED = "skipped"
    """Nothing to do after all (not an aggregator, the node had no aggregate)."""
    MISSED = "missed"
    """Its deadline passed before it could be sent: dropped, never sent late."""


DUTIES = Counter(
    "validator_duties_total",
    "Validator duties by kind and outcome (one per validator and duty).",
    ["kind", "result"],
)

DUTY_REFUSALS = Counter(
    "validator_duty_refusals_total",
    "Messages the duty loop refused before asking the signer, because what the beacon node "
    "served does not match what was asked for (another slot, another target epoch, "
    "another proposer), by duty kind and reason.",
    ["kind", "reason"],
)

PUBLISH_DELAY = Histogram(
    "validator_duty_publish_delay_seconds",
    "Time from the start of the duty's slot until its messages were published, by duty kind.",
    ["kind"],
    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 24.0),
)

DUTY_FETCHES = Counter(
    "validator_duty_fetches_total",
    "Duty lists fetched from the beacon node, by duty kind (attester, proposer, sync) and why "
    "(new epoch, dependent_root changed, event stream reconnected, keys changed).",
    ["kind", "reason"],
)

DUTY_FETCH_FAILURES = Counter(
    "validator_duty_fetch_failures_total",
    "Duty list fetches that failed (every beacon node failed), by duty kind.",
    ["kind"],
)

VALIDATORS_ACTIVE = Gauge(
    "validator_validators_with_index",
    "Keys the beacon node knows a validator index for (deposited).",
)

VALIDATORS_PENDING = Gauge(
    "validator_validators_without_index",
    "Keys the beacon node does not know yet (not deposited); looked up again every epoch.",
)

CURRENT_SLOT = Gauge(
    "validator_current_slot",
    "The wall-clock slot the duty loop is working on.",
)

HEAD_SLOT = Gauge(
    "validator_head_slot",
    "Slot of the latest head event from the beacon node.",
)

DOPPELGANGER_STATE = Gauge(
    "validator_doppelganger_state",
    "1 for each loaded key's current state: waiting (doppelganger protection watches the "
    "chain before its first signature), live_elsewhere (the chain saw it live while this "
    "client did not sign with it: halted), signing, or halted (the chain reports it slashed, "
    "or a halt from an earlier run).",
    ["pubkey", "state"],
)

HALTS = Counter(
    "validator_halts_total",
    "Keys halted by this process, by reason (doppelganger, slashed).",
    ["reason"],
)

BLOCKS_PROPOSED = Counter(
    "validator_blocks_proposed_total",
    "Blocks signed and published, by who built the execution payload: local (the beacon "
    "node's execution client) or builder (an external builder through a relay, a blinded block).",
    ["kind"],
)

BUILDER_REGISTRATIONS = Counter(
    "validator_builder_registrations_total",
    "Builder registrations by outcome: signed (a new signature: first round, a changed fee "
    "recipient or gas limit, a new key), refused (the signer refused to sign one), accepted "
    "and failed (per beacon node a batch went to; a failed one is sent again next epoch).",
    ["result"],
)

REGISTRATION_BATCH_SECONDS = Histogram(
    "validator_builder_registration_batch_seconds",
    "Time to submit one batch of builder registrations to every beacon node.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

BUILDER_FEE_RECIPIENT_MISMATCHES = Counter(
    "validator_builder_fee_recipient_mismatches_total",
    "Blinded blocks whose payload header pays another fee recipient than the key's setting "
    "(published all the same: the relay decides payments).",
)
