"""The chain's genesis time is kept in the validators directory on the first start, beside
the record, and a node that later reports another is refused before anything is signed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.support.beacon_fixtures import NodeStarter
from tests.support.duty_node import DutyNode
from tests.validator.conftest import ServiceRunner
from validator.chain_genesis import GENESIS_FILE
from validator.service import StartupError

VALIDATORS = 4


async def test_a_node_reporting_another_genesis_time_later_is_refused(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    directory = validators_dir(VALIDATORS)
    node, url = await start_node(DutyNode, validator_count=VALIDATORS)
    await run_service(url, directory, init_slashing_protection=True, last_slot=1)
    kept = orjson.loads((directory / GENESIS_FILE).read_bytes())
    assert int(kept["genesis_time"]) == node.chain.genesis_time
    record = (directory / "slashing_protection.json").read_bytes()

    # The same chain (genesis validators root), but a genesis 100 slots earlier.
    liar, liar_url = await start_node(DutyNode, validator_count=VALIDATORS, genesis_slots_ago=100)
    assert liar.chain.genesis_validators_root == node.chain.genesis_validators_root
    assert liar.chain.genesis_time != node.chain.genesis_time
    with pytest.raises(StartupError, match="genesis time"):
        await run_service(liar_url, directory, last_slot=110)
    assert liar.published("/eth/v2/beacon/pool/attestations") == []
    assert (directory / "slashing_protection.json").read_bytes() == record
    assert orjson.loads((directory / GENESIS_FILE).read_bytes()) == kept


async def test_an_unreadable_kept_genesis_stops_the_start(
    start_node: NodeStarter, run_service: ServiceRunner, validators_dir: Callable[..., Path]
) -> None:
    directory = validators_dir(VALIDATORS)
    (directory / GENESIS_FILE).write_text("{not json")
    _, url = await start_node(DutyNode, validator_count=VALIDATORS)
    with pytest.raises(StartupError, match="unreadable"):
        await run_service(url, directory, init_slashing_protection=True, last_slot=1)
    assert (directory / GENESIS_FILE).read_text() == "{not json"
