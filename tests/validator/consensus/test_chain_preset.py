"""The simulated chain's configuration: Beacon API JSON that the real parser accepts."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.forks import FAR_FUTURE_EPOCH, FORK_ORDER, ForkName
from validator.consensus.spec import ChainSpec, parse_spec_response

ROOT = bytes(range(32))


def _strings_only(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_strings_only(item) for item in value.values())
    if isinstance(value, list):
        return all(_strings_only(item) for item in value)
    return isinstance(value, str)


def test_defaults_run_every_fork_from_genesis() -> None:
    config = SimulatedChainConfig(genesis_time=1_700_000_000, genesis_validators_root=ROOT)
    chain = config.chain_spec()
    assert chain.genesis_time == 1_700_000_000
    assert chain.genesis_validators_root == ROOT
    assert chain.slot_duration_ms == 2000
    assert chain.slots_per_epoch == 8
    assert chain.fork_name_at(0) is ForkName.FULU
    assert chain.fork_version_at(0) == bytes.fromhex("0600de7e")
    assert chain.genesis_fork_version == bytes.fromhex("0000de7e")
    # Gloas is opt-in (``--gloas-fork-epoch``); every earlier fork starts at genesis.
    assert all(fork.epoch == 0 for fork in chain.forks if fork.name is not ForkName.GLOAS)
    assert chain.gloas_fork_epoch == FAR_FUTURE_EPOCH
    assert chain.sync_committee_size == 512  # mainnet shapes: the containers are mainnet's


def test_fork_versions_follow_one_scheme() -> None:
    versions = [simulated_fork_version(fork) for fork in FORK_ORDER]
    assert [version.hex() for version in versions] == [
        "0000de7e",
        "0100de7e",
        "0200de7e",
        "0300de7e",
        "0400de7e",
        "0500de7e",
        "0600de7e",
        "0700de7e",
    ]
    mainnet_versions = {bytes([index, 0, 0, 0]) for index in range(len(FORK_ORDER))}
    assert not mainnet_versions & set(versions)


def test_replies_are_what_a_beacon_node_serves() -> None:
    config = SimulatedChainConfig(genesis_time=5, genesis_validators_root=ROOT)
    for body in (
        config.genesis_response(),
        config.spec_response(),
        config.fork_schedule_response(),
    ):
        assert set(body) == {"data"}
        assert _strings_only(body["data"])
        json.dumps(body)  # plain JSON
    genesis = config.genesis_response()["data"]
    assert re.fullmatch(r"0x[0-9a-f]{64}", genesis["genesis_validators_root"])
    assert re.fullmatch(r"0x[0-9a-f]{8}", genesis["genesis_fork_version"])
    spec = config.spec_response()["data"]
    assert spec["SECONDS_PER_SLOT"] == "2" and spec["SLOT_DURATION_MS"] == "2000"
    assert spec["DOMAIN_BEACON_ATTESTER"] == "0x01000000"
    schedule = config.fork_schedule_response()["data"]
    assert [entry["current_version"] for entry in schedule] == [
        "0x" + simulated_fork_version(fork).hex() for fork in FORK_ORDER
    ]
    assert schedule[0]["previous_version"] == schedule[0]["current_version"]
    assert all(
        later["previous_version"] == earlier["current_version"]
        for earlier, later in zip(schedule, schedule[1:], strict=False)
    )


def test_fork_boundaries_can_be_placed() -> None:
    config = SimulatedChainConfig(
        genesis_time=0,
        genesis_validators_root=ROOT,
        slots_per_epoch=4,
        fork_epochs={ForkName.ELECTRA: 2, ForkName.FULU: 4},
    )
    chain = config.chain_spec()
    assert [chain.fork_name_at(epoch) for epoch in range(6)] == [
        ForkName.DENEB,
        ForkName.DENEB,
        ForkName.ELECTRA,
        ForkName.ELECTRA,
        ForkName.FULU,
        ForkName.FULU,
    ]
    assert chain.fork_name_at(chain.epoch_at_slot(7)) is ForkName.DENEB
    assert chain.fork_name_at(chain.epoch_at_slot(8)) is ForkName.ELECTRA


def test_a_fork_left_out_starts_with_the_one_before() -> None:
    config = SimulatedChainConfig(
        genesis_time=0, genesis_validators_root=ROOT, fork_epochs={ForkName.ELECTRA: 3}
    )
    assert config.fork_epoch(ForkName.DENEB) == 0
    assert config.fork_epoch(ForkName.FULU) == 3
    never = SimulatedChainConfig(
        genesis_time=0, genesis_validators_root=ROOT, fork_epochs={ForkName.FULU: FAR_FUTURE_EPOCH}
    ).chain_spec()
    assert never.fork_name_at(10**9) is ForkName.ELECTRA


def test_sub_second_slots_are_served_in_milliseconds_only() -> None:
    config = SimulatedChainConfig(
        genesis_time=100, genesis_validators_root=ROOT, slot_duration_ms=500
    )
    spec = config.spec_response()["data"]
    assert "SECONDS_PER_SLOT" not in spec
    assert parse_spec_response(config.spec_response()).slot_duration_ms == 500
    chain = config.chain_spec()
    assert chain.current_slot(100.499) == 0
    assert chain.current_slot(100.5) == 1
    assert chain.slot_start_time(3) == 101.5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"genesis_validators_root": b"short"},
        {"slot_duration_ms": 0},
        {"slots_per_epoch": 0},
        {"epochs_per_sync_committee_period": 0},
        {"fork_epochs": {ForkName.PHASE0: 1}},
    ],
)
def test_bad_configuration_is_refused(kwargs: dict[str, Any]) -> None:
    arguments: dict[str, Any] = {"genesis_time": 0, "genesis_validators_root": ROOT, **kwargs}
    with pytest.raises(ValueError):
        SimulatedChainConfig(**arguments)


def test_client_parses_the_simulated_chain_like_a_real_node() -> None:
    config = SimulatedChainConfig(genesis_time=42, genesis_validators_root=ROOT, slots_per_epoch=16)
    direct = ChainSpec.from_responses(
        json.loads(json.dumps(config.genesis_response())),
        json.loads(json.dumps(config.spec_response())),
        json.loads(json.dumps(config.fork_schedule_response())),
    )
    assert direct == config.chain_spec()
