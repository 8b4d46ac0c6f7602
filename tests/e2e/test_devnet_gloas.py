"""``validator devnet --gloas-fork-epoch N``: Fulu duties up to the fork, Gloas (ePBS) from it.

Across the boundary every duty kind is done on both sides: blocks (v3 then v4 with the
self-built envelope), attestations and aggregates (Gloas's progressive aggregates and
payload-status votes after the fork), sync messages and contributions, a PTC vote from
every seat of every Gloas slot with a block before its deadline, and proposer
preferences from the epoch before the fork; the chain's judge verifies each signature on
its own roots: 0 invalid, 0 slashable, 0 missed.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import devnet_options
from validator.devnet.command.run import run_devnet
from validator.service import StartupError

pytestmark = pytest.mark.slow

GLOAS_EPOCH = 2
SLOTS_PER_EPOCH = 8


@pytest.mark.parametrize("preset", ["mainnet", "minimal"])
def test_every_duty_is_done_across_the_gloas_fork(tmp_path: Path, preset: str) -> None:
    options = devnet_options(
        tmp_path / "validators",
        slots=4 * SLOTS_PER_EPOCH,
        preset=preset,
        slots_per_epoch=SLOTS_PER_EPOCH,
        gloas_fork_epoch=GLOAS_EPOCH,
        # A PTC vote is due three quarters into its slot: half-second slots leave a loaded
        # two-core host too little of it.
        seconds_per_slot=1.0,
    )
    assert run_devnet(options) == 0
    assert options.summary is not None
    summary = orjson.loads(options.summary.read_bytes())
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] == 0
    assert summary["client_refusals"] == 0
    assert summary["rejected_messages"] == 0
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]
    gloas_slots = 2 * SLOTS_PER_EPOCH
    # Every block on both sides, and each self-built Gloas block's envelope.
    assert summary["blocks_proposed"] >= 4 * SLOTS_PER_EPOCH - 2
    assert summary["envelopes_expected"] >= gloas_slots - 1
    assert summary["envelopes_received"] == summary["envelopes_expected"]
    # Every PTC seat holder of every Gloas slot with a block voted, none late.
    assert summary["payload_attestations_expected"] >= gloas_slots - 2
    assert summary["payload_attestations_received"] >= summary["payload_attestations_expected"]
    assert summary["late_payload_attestations"] == 0
    assert summary["proposer_preferences_received"] >= gloas_slots - 2
    duties = summary["client_duties"]
    for kind in (
        "block",
        "attestation",
        "aggregate",
        "sync_committee_message",
        "sync_contribution",
        "payload_attestation",
        "execution_payload_envelope",
        "proposer_preferences",
    ):
        assert duties[kind]["published"] > 0, kind
        assert duties[kind]["refused"] == 0, kind
        assert duties[kind]["failed"] == 0, kind


def test_a_chain_keeps_its_gloas_fork_epoch(tmp_path: Path) -> None:
    directory = tmp_path / "validators"
    assert run_devnet(devnet_options(directory, slots=2, gloas_fork_epoch=3)) == 0
    with pytest.raises(StartupError, match="Gloas fork epoch = 3, this run asks for None"):
        run_devnet(devnet_options(directory, slots=2))
