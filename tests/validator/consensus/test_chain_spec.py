"""Parsing the chain's configuration from Beacon API replies, and the arithmetic on it.

The mainnet replies are built by vectors/beacon_api/make_mainnet_config.py from
the Beacon API's example and consensus-specs v1.6.1 mainnet values.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.support.official_vectors import REPO_ROOT
from validator.consensus.forks import FAR_FUTURE_EPOCH, FORK_ORDER, ForkName
from validator.consensus.spec import (
    BeforeGenesisError,
    ChainSpec,
    ChainSpecError,
    SpecConfig,
    UnsupportedForkError,
    parse_fork_schedule_response,
    parse_genesis_response,
    parse_spec_response,
)

VECTORS = REPO_ROOT / "vectors" / "beacon_api"
MAINNET_GENESIS_TIME = 1606824023


def _reply(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((VECTORS / name).read_text())
    return body


@pytest.fixture
def genesis() -> dict[str, Any]:
    return _reply("mainnet_genesis.json")


@pytest.fixture
def spec() -> dict[str, Any]:
    return _reply("mainnet_spec.json")


@pytest.fixture
def schedule() -> dict[str, Any]:
    return _reply("mainnet_fork_schedule.json")


@pytest.fixture
def mainnet(genesis: dict[str, Any], spec: dict[str, Any], schedule: dict[str, Any]) -> ChainSpec:
    return ChainSpec.from_responses(genesis, spec, schedule)


def test_committed_replies_match_their_generator() -> None:
    import importlib.util

    loader = importlib.util.spec_from_file_location("make", VECTORS / "make_mainnet_config.py")
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    for name, body in module.replies().items():
        assert _reply(name) == body, f"{name} is stale; rerun make_mainnet_config.py"


def test_mainnet_values(mainnet: ChainSpec) -> None:
    assert mainnet.genesis_time == MAINNET_GENESIS_TIME
    assert mainnet.genesis_validators_root.hex() == (
        "4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95"
    )
    assert mainnet.genesis_fork_version == bytes(4)
    assert mainnet.slot_duration_ms == 12000
    assert mainnet.seconds_per_slot == 12
    assert mainnet.slots_per_epoch == 32
    assert mainnet.epochs_per_sync_committee_period == 256
    assert mainnet.sync_committee_size == 512
    assert mainnet.sync_committee_subnet_count == 4
    assert mainnet.sync_subcommittee_size == 128
    assert mainnet.target_aggregators_per_committee == 16
    assert mainnet.target_aggregators_per_sync_subcommittee == 16
    assert mainnet.max_committees_per_slot == 64
    assert [fork.name for fork in mainnet.forks] == list(FORK_ORDER)
    assert [fork.epoch for fork in mainnet.forks] == [
        0,
        74240,
        144896,
        194048,
        269568,
        364032,
        411392,
        FAR_FUTURE_EPOCH,
    ]
    assert [fork.version for fork in mainnet.forks] == [bytes([i, 0, 0, 0]) for i in range(8)]
    # GLOAS is served and known, but not scheduled on mainnet.
    assert mainnet.unknown_fork_epoch == FAR_FUTURE_EPOCH


@pytest.mark.parametrize(
    ("epoch", "fork"),
    [
        (0, ForkName.PHASE0),
        (74239, ForkName.PHASE0),
        (74240, ForkName.ALTAIR),
        (144895, ForkName.ALTAIR),
        (144896, ForkName.BELLATRIX),
        (194048, ForkName.CAPELLA),
        (269567, ForkName.CAPELLA),
        (269568, ForkName.DENEB),
        (364031, ForkName.DENEB),
        (364032, ForkName.ELECTRA),
        (411391, ForkName.ELECTRA),
        (411392, ForkName.FULU),
        (FAR_FUTURE_EPOCH - 1, ForkName.FULU),
    ],
)
def test_fork_at_mainnet_boundaries(mainnet: ChainSpec, epoch: int, fork: ForkName) -> None:
    assert mainnet.fork_name_at(epoch) is fork
    assert mainnet.fork_version_at(epoch) == bytes([fork.order, 0, 0, 0])


def test_slot_arithmetic(mainnet: ChainSpec) -> None:
    assert mainnet.epoch_at_slot(31) == 0
    assert mainnet.epoch_at_slot(32) == 1
    assert mainnet.start_slot_of_epoch(364032) == 364032 * 32
    assert mainnet.slot_start_time(0) == MAINNET_GENESIS_TIME
    assert mainnet.slot_start_time(10) == MAINNET_GENESIS_TIME + 120
    assert mainnet.sync_committee_period(255) == 0
    assert mainnet.sync_committee_period(256) == 1


def test_current_slot_from_the_wall_clock(mainnet: ChainSpec) -> None:
    assert mainnet.current_slot(MAINNET_GENESIS_TIME) == 0
    assert mainnet.current_slot(MAINNET_GENESIS_TIME + 11.999) == 0
    assert mainnet.current_slot(MAINNET_GENESIS_TIME + 12) == 1
    assert mainnet.current_epoch(MAINNET_GENESIS_TIME + 12 * 32 - 0.001) == 0
    assert mainnet.current_epoch(MAINNET_GENESIS_TIME + 12 * 32) == 1
    # The real clock is long past mainnet genesis and Fulu.
    assert mainnet.fork_name_at(mainnet.current_epoch()) is ForkName.FULU
    with pytest.raises(BeforeGenesisError, match="starts at 1606824023"):
        mainnet.current_slot(MAINNET_GENESIS_TIME - 0.5)


def test_unknown_extra_fields_are_ignored(genesis: Any, spec: Any) -> None:
    without_extras = ChainSpec.from_responses(copy.deepcopy(genesis), copy.deepcopy(spec))
    spec["data"]["SOME_FUTURE_CONSTANT"] = {"nested": ["anything"]}
    spec["data"]["HEZE_FORK_EPOCH"] = "not even a number"
    genesis["data"]["future_field"] = 1
    # Parsed, and to exactly what the replies without the extra fields give.
    assert ChainSpec.from_responses(genesis, spec) == without_extras
    assert without_extras.slots_per_epoch == 32
    assert without_extras.unknown_fork_epoch == FAR_FUTURE_EPOCH


def _required_spec_fields() -> list[str]:
    return [name for name, field in SpecConfig.model_fields.items() if field.is_required()]


def test_required_fields_include_the_timing_and_domains_that_signing_needs() -> None:
    required = set(_required_spec_fields())
    assert {
        "SLOTS_PER_EPOCH",
        "GENESIS_FORK_VERSION",
        "DOMAIN_BEACON_PROPOSER",
        "DOMAIN_BEACON_ATTESTER",
        "DOMAIN_RANDAO",
        "DOMAIN_VOLUNTARY_EXIT",
        "DOMAIN_SELECTION_PROOF",
        "DOMAIN_AGGREGATE_AND_PROOF",
        "DOMAIN_SYNC_COMMITTEE",
        "DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF",
        "DOMAIN_CONTRIBUTION_AND_PROOF",
        "EPOCHS_PER_SYNC_COMMITTEE_PERIOD",
        "SYNC_COMMITTEE_SIZE",
        "SYNC_COMMITTEE_SUBNET_COUNT",
        "TARGET_AGGREGATORS_PER_COMMITTEE",
        "TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE",
        "MAX_COMMITTEES_PER_SLOT",
    } <= required


@pytest.mark.parametrize("field", _required_spec_fields())
def test_missing_spec_field_is_named(spec: Any, field: str) -> None:
    del spec["data"][field]
    with pytest.raises(ChainSpecError, match=f"/eth/v1/config/spec: missing field {field}$"):
        parse_spec_response(spec)


@pytest.mark.parametrize(
    "field", ["genesis_time", "genesis_validators_root", "genesis_fork_version"]
)
def test_missing_genesis_field_is_named(genesis: Any, field: str) -> None:
    del genesis["data"][field]
    with pytest.raises(ChainSpecError, match=f"/eth/v1/beacon/genesis: missing field {field}"):
        parse_genesis_response(genesis)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "SLOTS_PER_EPOCH",
            "0x20",
            "SLOTS_PER_EPOCH: expected a decimal integer string, got '0x20'",
        ),
        ("SLOTS_PER_EPOCH", "-1", "SLOTS_PER_EPOCH: expected a decimal integer string"),
        ("SLOTS_PER_EPOCH", " 32", "SLOTS_PER_EPOCH: expected a decimal integer string"),
        ("SLOTS_PER_EPOCH", "3.2e1", "SLOTS_PER_EPOCH: expected a decimal integer string"),
        ("SLOTS_PER_EPOCH", True, "SLOTS_PER_EPOCH: expected a decimal integer string"),
        ("SLOTS_PER_EPOCH", None, "SLOTS_PER_EPOCH: expected a decimal integer string"),
        ("FULU_FORK_EPOCH", str(2**64), "FULU_FORK_EPOCH: 18446744073709551616 does not fit"),
        ("ELECTRA_FORK_VERSION", "0x0500", "ELECTRA_FORK_VERSION: expected 4 bytes, got 2"),
        ("ELECTRA_FORK_VERSION", "05000000", "ELECTRA_FORK_VERSION: expected a 0x-prefixed hex"),
        ("DOMAIN_RANDAO", "0x0200000g", "DOMAIN_RANDAO: expected a 0x-prefixed hex"),
        ("SLOTS_PER_EPOCH", "0", "SLOTS_PER_EPOCH is 0"),
    ],
)
def test_malformed_spec_value_is_named(spec: Any, field: str, value: object, message: str) -> None:
    spec["data"][field] = value
    with pytest.raises(ChainSpecError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_spec_response(spec)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("genesis_time", "soon", "genesis_time: expected a decimal integer string"),
        ("genesis_validators_root", "0x" + "00" * 31, "genesis_validators_root: expected 32 bytes"),
        ("genesis_fork_version", 0, "genesis_fork_version: expected a 0x-prefixed hex string"),
    ],
)
def test_malformed_genesis_value_is_named(
    genesis: Any, field: str, value: object, message: str
) -> None:
    genesis["data"][field] = value
    with pytest.raises(ChainSpecError, match=message):
        parse_genesis_response(genesis)


@pytest.mark.parametrize("body", [None, [], {}, {"data": []}, {"result": {}}, "text"])
def test_reply_without_a_data_object(body: object) -> None:
    with pytest.raises(ChainSpecError, match="/eth/v1/config/spec"):
        parse_spec_response(body)


def test_integers_may_also_arrive_as_json_numbers(spec: Any) -> None:
    spec["data"]["SLOTS_PER_EPOCH"] = 32
    assert parse_spec_response(spec).SLOTS_PER_EPOCH == 32


def test_slot_time_from_either_key(genesis: Any, spec: Any) -> None:
    only_ms = copy.deepcopy(spec)
    del only_ms["data"]["SECONDS_PER_SLOT"]
    assert ChainSpec.from_responses(genesis, only_ms).slot_duration_ms == 12000
    only_seconds = copy.deepcopy(spec)
    del only_seconds["data"]["SLOT_DURATION_MS"]
    assert ChainSpec.from_responses(genesis, only_seconds).slot_duration_ms == 12000

    neither = copy.deepcopy(only_ms)
    del neither["data"]["SLOT_DURATION_MS"]
    with pytest.raises(ChainSpecError, match="missing SECONDS_PER_SLOT"):
        parse_spec_response(neither)
    disagree = copy.deepcopy(spec)
    disagree["data"]["SLOT_DURATION_MS"] = "6000"
    with pytest.raises(ChainSpecError, match="SECONDS_PER_SLOT=12 and SLOT_DURATION_MS=6000"):
        parse_spec_response(disagree)


def test_domain_types_must_be_the_protocol_constants(spec: Any) -> None:
    spec["data"]["DOMAIN_BEACON_ATTESTER"] = "0x00000000"
    with pytest.raises(ChainSpecError, match="DOMAIN_BEACON_ATTESTER is 0x00000000, but the"):
        parse_spec_response(spec)


def test_optional_builder_domain_is_checked_when_served(spec: Any) -> None:
    spec["data"]["DOMAIN_APPLICATION_BUILDER"] = "0x00000001"
    assert parse_spec_response(spec).DOMAIN_APPLICATION_BUILDER == bytes.fromhex("00000001")
    spec["data"]["DOMAIN_APPLICATION_BUILDER"] = "0x01000000"
    with pytest.raises(ChainSpecError, match="DOMAIN_APPLICATION_BUILDER"):
        parse_spec_response(spec)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("SYNC_COMMITTEE_SIZE", "32"),
        ("MAX_COMMITTEES_PER_SLOT", "4"),
        ("MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD", "1"),
        ("MAX_WITHDRAWALS_PER_PAYLOAD", "8"),
    ],
)
def test_another_preset_is_refused(spec: Any, field: str, value: str) -> None:
    spec["data"][field] = value
    with pytest.raises(ChainSpecError, match=f"{field} is {value}, but .* mainnet preset"):
        parse_spec_response(spec)


def test_malformed_optional_preset_value_is_named(spec: Any) -> None:
    spec["data"]["MAX_DEPOSITS"] = "sixteen"
    with pytest.raises(ChainSpecError, match="MAX_DEPOSITS: expected a decimal integer string"):
        parse_spec_response(spec)


def test_genesis_and_spec_must_name_the_same_genesis_fork(genesis: Any, spec: Any) -> None:
    genesis["data"]["genesis_fork_version"] = "0x00001020"
    with pytest.raises(ChainSpecError, match="differs from GENESIS_FORK_VERSION"):
        ChainSpec.from_responses(genesis, spec)


def test_forks_out_of_order_are_refused(genesis: Any, spec: Any) -> None:
    spec["data"]["ELECTRA_FORK_EPOCH"] = "100"
    with pytest.raises(ChainSpecError, match="electra is scheduled at epoch 100, before deneb"):
        ChainSpec.from_responses(genesis, spec)


def test_fork_schedule_must_agree_with_the_spec(genesis: Any, spec: Any, schedule: Any) -> None:
    schedule["data"][-1]["epoch"] = "411393"
    with pytest.raises(ChainSpecError, match="fulu .* at epoch 411393, but .* at epoch 411392"):
        ChainSpec.from_responses(genesis, spec, schedule)


def test_unknown_scheduled_fork_stops_signing_from_its_epoch(
    genesis: Any, spec: Any, schedule: Any
) -> None:
    schedule["data"].append(
        {"previous_version": "0x06000000", "current_version": "0x08000000", "epoch": "500000"}
    )
    chain = ChainSpec.from_responses(genesis, spec, schedule)
    assert chain.unknown_fork_epoch == 500000
    assert chain.fork_name_at(499999) is ForkName.FULU
    with pytest.raises(UnsupportedForkError, match="epoch 500000 is past epoch 500000"):
        chain.fork_version_at(500000)


def test_unknown_unscheduled_fork_is_ignored(genesis: Any, spec: Any, schedule: Any) -> None:
    schedule["data"].append(
        {
            "previous_version": "0x06000000",
            "current_version": "0x08000000",
            "epoch": str(FAR_FUTURE_EPOCH),
        }
    )
    chain = ChainSpec.from_responses(genesis, spec, schedule)
    assert chain.fork_name_at(FAR_FUTURE_EPOCH - 1) is ForkName.FULU


def test_malformed_fork_schedule_entry_is_named(schedule: Any) -> None:
    del schedule["data"][2]["current_version"]
    with pytest.raises(
        ChainSpecError,
        match=r"/eth/v1/config/fork_schedule data\[2\]: missing field current_version",
    ):
        parse_fork_schedule_response(schedule)
    with pytest.raises(ChainSpecError, match="'data' must be an array"):
        parse_fork_schedule_response({"data": {}})


def test_unscheduled_fork_is_never_in_force(genesis: Any, spec: Any) -> None:
    spec["data"]["FULU_FORK_EPOCH"] = str(FAR_FUTURE_EPOCH)
    chain = ChainSpec.from_responses(genesis, spec)
    assert not chain.fork(ForkName.FULU).scheduled
    assert chain.fork_name_at(FAR_FUTURE_EPOCH - 1) is ForkName.ELECTRA
