"""Which preset a node runs, and every one of its shape values checked.

The preset is the node's PRESET_BASE (mainnet or minimal; anything else is refused), or,
from a node that leaves PRESET_BASE out, the known preset whose values all match what it
serves. Each served value that shapes a container of a scheduled fork must then be that
preset's, else the node is refused: its objects would have other roots than ours.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

import pytest

from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.consensus.spec import ChainSpec, ChainSpecError
from validator.consensus.ssz.preset import (
    MAINNET,
    MINIMAL,
    SHAPE_VALUE_FORK,
    SHAPE_VALUE_NAMES,
    Preset,
)

GVR = sha256(b"preset of the node").digest()


def config(preset: Preset, **changes: Any) -> SimulatedChainConfig:
    return SimulatedChainConfig(
        genesis_time=1_700_000_000, genesis_validators_root=GVR, preset=preset, **changes
    )


def parse(chain: SimulatedChainConfig, spec: dict[str, Any]) -> ChainSpec:
    return ChainSpec.from_responses(
        chain.genesis_response(), spec, chain.fork_schedule_response()
    )


@pytest.mark.parametrize("preset", [MAINNET, MINIMAL], ids=lambda p: p.name)
def test_the_preset_base_names_the_preset(preset: Preset) -> None:
    chain = config(preset)
    spec = chain.spec_response()
    assert spec["data"]["PRESET_BASE"] == preset.name
    parsed = parse(chain, spec)
    assert parsed.preset is preset
    assert parsed.sync_committee_size == preset.SYNC_COMMITTEE_SIZE
    assert parsed.max_committees_per_slot == preset.MAX_COMMITTEES_PER_SLOT


def test_the_minimal_chain_serves_the_minimal_preset_values() -> None:
    data = config(MINIMAL).spec_response()["data"]
    assert data["SLOTS_PER_EPOCH"] == "8"
    assert data["EPOCHS_PER_SYNC_COMMITTEE_PERIOD"] == "8"
    assert data["SYNC_COMMITTEE_SIZE"] == "32"
    assert data["MAX_COMMITTEES_PER_SLOT"] == "4"
    assert data["MAX_WITHDRAWALS_PER_PAYLOAD"] == "4"
    assert data["MAX_VALIDATORS_PER_COMMITTEE"] == "2048"
    assert data["MAX_BLOB_COMMITMENTS_PER_BLOCK"] == "4096"
    assert data["TARGET_COMMITTEE_SIZE"] == "4"


@pytest.mark.parametrize("preset", [MAINNET, MINIMAL], ids=lambda p: p.name)
@pytest.mark.parametrize("name", SHAPE_VALUE_NAMES)
def test_every_shape_value_is_checked_against_the_named_preset(preset: Preset, name: str) -> None:
    # Gloas is opt-in on the simulated chain; its values are checked where it is scheduled.
    chain = config(preset, fork_epochs={ForkName.PHASE0: 0, ForkName.GLOAS: 4})
    spec = chain.spec_response()
    wrong = getattr(preset, name) + 1
    spec["data"][name] = str(wrong)
    with pytest.raises(
        ChainSpecError,
        match=f"{name} is {wrong}, but this client's SSZ containers for the {preset.name} "
        f"preset have {name}={getattr(preset, name)}",
    ):
        parse(chain, spec)


def test_a_mainnet_value_on_a_minimal_node_is_refused() -> None:
    chain = config(MINIMAL)
    spec = chain.spec_response()
    spec["data"]["SYNC_COMMITTEE_SIZE"] = "512"
    with pytest.raises(ChainSpecError, match="SYNC_COMMITTEE_SIZE is 512, .* minimal preset"):
        parse(chain, spec)


def test_an_older_minimal_node_with_32_blob_commitments_is_refused() -> None:
    # consensus-specs before v1.6.0-beta.0 had MAX_BLOB_COMMITMENTS_PER_BLOCK 32 in minimal.
    chain = config(MINIMAL)
    spec = chain.spec_response()
    spec["data"]["MAX_BLOB_COMMITMENTS_PER_BLOCK"] = "32"
    with pytest.raises(ChainSpecError, match="MAX_BLOB_COMMITMENTS_PER_BLOCK is 32"):
        parse(chain, spec)


def test_an_unscheduled_forks_values_are_not_checked_on_minimal_either() -> None:
    chain = config(MINIMAL, fork_epochs={ForkName.ELECTRA: FAR_FUTURE_EPOCH})
    spec = chain.spec_response()
    electra_values = [n for n, fork in SHAPE_VALUE_FORK.items() if fork.at_least(ForkName.ELECTRA)]
    for name in electra_values:
        spec["data"][name] = "1"
    parsed = parse(chain, spec)
    assert parsed.preset is MINIMAL
    assert parsed.fork_name_at(10**6) is ForkName.DENEB


@pytest.mark.parametrize("base", ["gnosis", "Minimal", ""])
def test_another_preset_base_is_refused(base: str) -> None:
    chain = config(MINIMAL)
    spec = chain.spec_response()
    spec["data"]["PRESET_BASE"] = base
    with pytest.raises(ChainSpecError, match="PRESET_BASE is .* mainnet and minimal presets only"):
        parse(chain, spec)


@pytest.mark.parametrize("preset", [MAINNET, MINIMAL], ids=lambda p: p.name)
def test_without_preset_base_the_matching_preset_is_taken(preset: Preset) -> None:
    chain = config(preset)
    spec = chain.spec_response()
    del spec["data"]["PRESET_BASE"]
    assert parse(chain, spec).preset is preset


def test_without_preset_base_a_mix_of_presets_is_refused() -> None:
    chain = config(MINIMAL)
    spec = chain.spec_response()
    del spec["data"]["PRESET_BASE"]
    spec["data"]["MAX_COMMITTEES_PER_SLOT"] = "64"  # mainnet's, the rest minimal's
    with pytest.raises(ChainSpecError, match="SYNC_COMMITTEE_SIZE is 32, .* mainnet preset"):
        parse(chain, spec)
