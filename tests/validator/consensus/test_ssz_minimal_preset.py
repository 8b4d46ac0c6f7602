"""The minimal preset's containers against roots computed by hand, and the hand computation
against the official mainnet roots.

No official minimal ``ssz_static`` cases are at hand (../shared/vectors/ssz holds mainnet
ones only), so vectors/ssz/minimal_roots.json pins roots of the hand merkleization in
tests/support/roots_by_hand.py (its own container shapes, preset values written out from
the specs, sha256 only). That oracle is first held to every official mainnet case of the
same containers; then our minimal containers must reproduce its pinned minimal roots.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.official_vectors import official_vectors
from tests.support.roots_by_hand import (
    MAINNET_BY_HAND,
    MINIMAL_BY_HAND,
    root_by_hand,
    shapes_by_hand,
)
from validator.consensus import ssz
from validator.consensus.ssz import altair, deneb, electra
from validator.consensus.ssz.blocks import blinded_block, block_types
from validator.consensus.ssz.preset import MAINNET, MINIMAL, PRESETS, Preset

REPO = Path(__file__).resolve().parents[3]
PINNED = json.loads((REPO / "vectors" / "ssz" / "minimal_roots.json").read_text())
SPEC_TESTS = "consensus-spec-tests_v1.6.0-beta.0"


def container(name: str, preset: Preset) -> Any:
    """Our container of ``preset`` for a type name of the pinned file."""
    module, _, kind = name.rpartition(".")
    if not module:
        return getattr(altair.containers(preset), kind)
    return getattr({"deneb": deneb, "electra": electra}[module].containers(preset), kind)


# --- the oracle against official mainnet roots ------------------------------------

OFFICIAL = {
    ("ContributionAndProof", "altair_to_fulu"): "ContributionAndProof",
    ("AggregateAndProof", "electra_fulu"): "electra.AggregateAndProof",
    ("BeaconBlock", "electra_fulu"): "electra.BeaconBlock",
    ("BeaconBlock", "deneb"): "deneb.BeaconBlock",
}


def test_the_hand_roots_reproduce_every_official_mainnet_root_of_these_containers() -> None:
    base = official_vectors("ssz", SPEC_TESTS)
    cases = json.loads((base / "MANIFEST.json").read_text())["cases"]
    shapes = shapes_by_hand(MAINNET_BY_HAND)
    checked = 0
    for case in cases:
        name = OFFICIAL.get((case["type"], case["forks"]))
        if name is None:
            continue
        value = yaml.safe_load((base / case["path"] / "value.yaml").read_text())
        assert "0x" + root_by_hand(shapes[name], value).hex() == case["root"], case["path"]
        checked += 1
    assert checked == 13  # 5 contributions, 5 aggregates, 3 blocks


def test_the_hand_preset_values_are_the_ones_the_containers_are_built_with() -> None:
    for by_hand, preset in ((MAINNET_BY_HAND, MAINNET), (MINIMAL_BY_HAND, MINIMAL)):
        assert {name: getattr(preset, name) for name in by_hand} == by_hand


# --- our minimal containers against the pinned roots ----------------------------------


def _cases() -> list[Any]:
    return [
        pytest.param(case, id=f"{case['type']}-{case['case']}") for case in PINNED["cases"]
    ]


def test_the_pinned_file_is_its_generators_output() -> None:
    import importlib.util

    path = REPO / "vectors" / "ssz" / "make_minimal_roots.py"
    loader = importlib.util.spec_from_file_location("make_minimal_roots", path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    assert module.build_document() == PINNED


def test_the_pinned_file_covers_what_the_minimal_preset_changes() -> None:
    assert PINNED["preset"] == "minimal"
    assert PINNED["preset_values"] == MINIMAL_BY_HAND
    types = {case["type"] for case in PINNED["cases"]}
    assert {
        "ContributionAndProof",
        "electra.AggregateAndProof",
        "deneb.ExecutionPayload",
        "deneb.BeaconBlock",
        "electra.BeaconBlock",
    } <= types
    assert len(PINNED["cases"]) == 17


@pytest.mark.parametrize("case", _cases())
def test_pinned_roots_are_the_hand_computation(case: dict[str, Any]) -> None:
    shape = shapes_by_hand(MINIMAL_BY_HAND)[case["type"]]
    assert "0x" + root_by_hand(shape, case["value"]).hex() == case["root"]


@pytest.mark.parametrize("case", _cases())
def test_minimal_containers_reproduce_the_pinned_root(case: dict[str, Any]) -> None:
    kind = container(case["type"], MINIMAL)
    parsed = ssz.from_json(kind, case["value"])
    assert "0x" + ssz.hash_tree_root(parsed).hex() == case["root"]
    again = ssz.from_ssz(kind, ssz.to_ssz(parsed))
    assert "0x" + ssz.hash_tree_root(again).hex() == case["root"]
    assert ssz.to_json(again) == case["value"]


@pytest.mark.parametrize("name", ["electra.BeaconBlock", "deneb.BeaconBlock"])
def test_a_minimal_blinded_block_has_the_pinned_root(name: str) -> None:
    fork = name.partition(".")[0]
    for case in (case for case in PINNED["cases"] if case["type"] == name):
        block = ssz.from_json(block_types(fork, MINIMAL).block, case["value"])
        blinded = blinded_block(block)
        assert type(blinded) is block_types(fork, MINIMAL).blinded_block
        assert "0x" + ssz.hash_tree_root(blinded).hex() == case["root"]


def test_the_same_object_has_another_root_under_each_preset() -> None:
    """Limits shape the root even of an empty list: a minimal chain's block is not the
    mainnet block with the same fields."""
    shapes = {
        name: shapes_by_hand(by_hand)["electra.BeaconBlock"]
        for name, by_hand in (("mainnet", MAINNET_BY_HAND), ("minimal", MINIMAL_BY_HAND))
    }
    for preset in (MAINNET, MINIMAL):
        block = block_types("electra", preset).block(slot=7)
        value = ssz.to_json(block)
        assert ssz.hash_tree_root(block) == root_by_hand(shapes[preset.name], value)
    assert ssz.hash_tree_root(electra.containers(MAINNET).BeaconBlock()) != ssz.hash_tree_root(
        electra.containers(MINIMAL).BeaconBlock()
    )


def test_a_mainnet_container_refuses_a_minimal_contribution() -> None:
    case = next(case for case in PINNED["cases"] if case["type"] == "ContributionAndProof")
    with pytest.raises(ssz.SszInputError, match="aggregation_bits"):
        ssz.from_json(altair.ContributionAndProof, case["value"])


def test_containers_are_built_once_per_preset_and_mainnet_is_the_module_default() -> None:
    assert electra.containers(MINIMAL) is electra.containers(MINIMAL)
    assert electra.containers(MAINNET).AggregateAndProof is electra.AggregateAndProof
    assert altair.containers(MAINNET).ContributionAndProof is ssz.ContributionAndProof
    assert block_types("fulu", MINIMAL) is block_types("fulu", MINIMAL)
    assert block_types("fulu", MINIMAL).block is not block_types("fulu", MAINNET).block
    assert set(PRESETS) == {"mainnet", "minimal"}
