"""``validator devnet`` end to end: the client against the simulated chain, in every fault mode.

Each run is a real chain process (verifying every signature, with its slasher)
and the same client code as ``validator run``, over HTTP. Runs are small
(16 validators, half-second slots, 4-slot epochs) to keep the suite fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import SLOTS_PER_EPOCH, devnet_options
from tests.support.official_vectors import official_vectors
from validator.devnet.command.run import SUMMARY_KEYS, run_devnet

pytestmark = pytest.mark.slow


def run(directory: Path, **changes: Any) -> tuple[int, dict[str, Any]]:
    options = devnet_options(directory, **changes)
    code = run_devnet(options)
    assert options.summary is not None
    return code, orjson.loads(options.summary.read_bytes())


def test_every_duty_is_done_and_a_second_run_continues_the_same_chain(tmp_path: Path) -> None:
    directory = tmp_path / "validators"
    code, first = run(directory, slots=12)
    assert code == 0
    assert set(SUMMARY_KEYS) <= set(first)
    assert first["slots"] == 12  # what --slots asked for; the chain saw one more start
    assert first["chain_slots"] >= 12
    assert first["invalid_signatures"] == 0
    assert first["slashable_messages"] == 0
    assert first["client_refusals"] == 0
    assert first["missed_duties"] == 0, first["missed_duties_detail"]
    # Every slot has a proposer among the 16 keys, every key attests once per epoch.
    assert first["blocks_proposed"] >= 10
    assert first["attestations_received"] >= 2 * 16
    assert first["aggregates_received"] > 0
    assert first["sync_messages_received"] >= 10 * 16
    assert first["contributions_received"] > 0

    code, second = run(directory, slots=6)
    assert code == 0
    assert second["runs"] == 2
    assert second["slots"] == 6
    assert second["genesis_validators_root"] == first["genesis_validators_root"]
    assert second["head_slot"] > first["head_slot"]
    assert second["slashable_messages"] == 0
    assert second["invalid_signatures"] == 0
    assert second["client_refusals"] == 0


def test_client_and_chain_both_keep_to_the_beacon_api_standard(tmp_path: Path) -> None:
    """Strict mode: the chain checks every request and response against the Beacon API
    spec, and the client checks its own requests and the answers; a violation on either
    side fails the exchange, so it would show as a failed duty or a chain violation."""
    official_vectors("beacon-api")  # both sides read the spec from there
    # Two-second slots: checking every exchange against the spec costs CPU on both
    # sides, and this test is about conformance, not about meeting a tight slot.
    code, summary = run(tmp_path / "validators", slots=6, strict=True, seconds_per_slot=2.0)
    assert code == 0
    assert summary["strict"] is True
    assert summary["strict_violations"] == 0, summary["strict_violation_details"]
    failed = {kind: counts["failed"] for kind, counts in summary["client_duties"].items()}
    assert not any(failed.values()), failed
    published = {kind: counts["published"] for kind, counts in summary["client_duties"].items()}
    assert all(published.values()), published
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] == 0


def test_the_builder_flow_keeps_to_the_beacon_api_standard(tmp_path: Path) -> None:
    """The strict run again with the simulated builder: registrations and blinded blocks
    checked against the spec on both sides."""
    official_vectors("beacon-api")  # both sides read the spec from there
    code, summary = run(
        tmp_path / "validators", slots=6, strict=True, seconds_per_slot=2.0, builder=True
    )
    assert code == 0
    assert summary["strict_violations"] == 0, summary["strict_violation_details"]
    assert summary["registrations_received"] > 0
    assert summary["blinded_blocks_received"] == summary["blocks_proposed"] > 0
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]


# Slots each fault needs to show itself with 4-slot epochs (see validator/devnet/chain/faults.py).
FAULT_SLOTS = {
    "double-vote": 4 * SLOTS_PER_EPOCH,
    "surround-vote": 4 * SLOTS_PER_EPOCH,
    "far-future": 2 * SLOTS_PER_EPOCH,
    "conflicting-block": 2 * SLOTS_PER_EPOCH,
    "unavailable": 2 * SLOTS_PER_EPOCH + 2,
    "reorg": 3 * SLOTS_PER_EPOCH,
    "duties-reorg": 2 * SLOTS_PER_EPOCH,
}
REFUSING_FAULTS = {"double-vote", "surround-vote", "far-future"}
# The chain names the proposer of a slot already published again (under a new dependent
# root): the client must not ask for a second block at all, so nothing is refused either.
REPROPOSING_FAULTS = {"conflicting-block", "duties-reorg"}


@pytest.mark.parametrize("fault", sorted(FAULT_SLOTS))
def test_a_misbehaving_chain_never_gets_a_slashable_message(tmp_path: Path, fault: str) -> None:
    code, summary = run(tmp_path / "validators", slots=FAULT_SLOTS[fault], fault=fault)
    assert code == 0
    assert summary["fault"] == fault
    assert summary["fault_events"], "the fault never fired"
    assert summary["slashable_messages"] == 0
    assert summary["invalid_signatures"] == 0
    if fault in REFUSING_FAULTS:
        # The traps were offered and the client refused them (and counted it).
        assert summary["client_refusals"] > 0
    if fault in REPROPOSING_FAULTS:
        assert summary["repeated_block_requests"] == 0
        assert summary["client_refusals"] == 0
        assert summary["client_duties"]["block"]["refused"] == 0
    # Duties go on around the trap.
    assert summary["attestations_received"] > 0
    assert summary["blocks_proposed"] > 0


def test_with_the_builder_every_proposal_is_a_builder_block(tmp_path: Path) -> None:
    slots = 3 * SLOTS_PER_EPOCH
    code, summary = run(tmp_path / "validators", slots=slots, builder=True)
    assert code == 0
    assert summary["builder"] is True
    assert summary["invalid_signatures"] == 0 and summary["slashable_messages"] == 0
    assert summary["client_refusals"] == 0
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]
    proposed = summary["blocks_proposed"]
    assert proposed >= slots - 2
    assert summary["client_blocks"] == {"local": 0, "builder": proposed}
    assert summary["blinded_blocks_received"] == proposed
    assert summary["builder_blocks_offered"] == proposed
    # Every key registered at start and in every epoch after (the same signed messages).
    assert summary["registrations_received"] >= 16 * 3


def test_with_the_relay_offline_every_proposal_is_a_local_block(tmp_path: Path) -> None:
    slots = 2 * SLOTS_PER_EPOCH
    code, summary = run(tmp_path / "validators", slots=slots, builder=True, fault="builder-offline")
    assert code == 0
    assert summary["fault_events"]["relay_failures"] >= 1
    assert summary["invalid_signatures"] == 0 and summary["slashable_messages"] == 0
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]
    proposed = summary["blocks_proposed"]
    assert proposed >= slots - 2
    assert summary["client_blocks"] == {"local": proposed, "builder": 0}
    assert summary["blinded_blocks_received"] == 0
