"""``validator devnet --preset minimal``: the simulated chain and the client on the minimal
preset (32-seat sync committee, 4 committees per slot at most, committees of 4)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import devnet_options
from validator.devnet.command.run import run_devnet
from validator.service import StartupError

pytestmark = pytest.mark.slow


def test_the_minimal_preset_runs_with_every_duty_done(tmp_path: Path) -> None:
    # One-second slots: every validator has a sync seat and attests every epoch here,
    # and with half-second slots one CI run, whose other worker was busy, missed a
    # proposal and 16 sync messages (each worth sending only within its slot): the
    # process stalled past a slot's end, a scheduling delay and not a client fault.
    options = devnet_options(
        tmp_path / "validators", slots=20, preset="minimal", slots_per_epoch=8, seconds_per_slot=1.0
    )
    assert run_devnet(options) == 0
    assert options.summary is not None
    summary = orjson.loads(options.summary.read_bytes())
    assert summary["preset"] == "minimal"
    assert summary["invalid_signatures"] == 0
    assert summary["slashable_messages"] == 0
    assert summary["client_refusals"] == 0
    assert summary["missed_duties"] == 0, summary["missed_duties_detail"]
    assert summary["blocks_proposed"] >= 15
    # 16 validators, 8 slots per epoch, committees of TARGET_COMMITTEE_SIZE 4: two per slot.
    assert summary["attestations_received"] >= 2 * 16
    assert summary["attestations_included"] > 0
    assert summary["aggregates_received"] > 0
    # The 32 seats of the sync committee are filled by the 16 validators, twice each.
    assert summary["sync_messages_received"] >= 15 * 16
    assert summary["contributions_received"] > 0
    assert summary["justified_epoch"] >= 1


def test_a_chain_keeps_its_preset(tmp_path: Path) -> None:
    directory = tmp_path / "validators"
    assert run_devnet(devnet_options(directory, slots=2, preset="minimal")) == 0
    with pytest.raises(StartupError, match="preset = minimal, this run asks for mainnet"):
        run_devnet(devnet_options(directory, slots=2))
