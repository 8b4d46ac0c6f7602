"""The fork schedule is taken from both /eth/v1/config/spec and /eth/v1/config/fork_schedule;
start-up is refused when they disagree, whichever one is wrong."""

from __future__ import annotations

from hashlib import sha256
from typing import Any

import pytest

from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.validator.beacon.simulated_config_node import serve_config
from validator.consensus.chain_preset import SimulatedChainConfig, simulated_fork_version
from validator.consensus.encoding import to_hex
from validator.consensus.forks import ForkName
from validator.service import StartupError, read_chain

CONFIG = SimulatedChainConfig(
    genesis_time=1_700_000_000,
    genesis_validators_root=sha256(b"fork schedule agreement").digest(),
    fork_epochs={ForkName.ELECTRA: 10, ForkName.FULU: 20},
)
FULU = to_hex(simulated_fork_version(ForkName.FULU))


def schedule_without_fulu() -> dict[str, Any]:
    schedule = CONFIG.fork_schedule_response()
    schedule["data"] = [entry for entry in schedule["data"] if entry["current_version"] != FULU]
    return schedule


async def test_a_fork_in_the_spec_but_not_in_the_fork_schedule_is_refused(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    serve_config(node, CONFIG, fork_schedule=schedule_without_fulu())
    with pytest.raises(StartupError, match="fulu .* does not list it"):
        await read_chain(await make_client([url]))


async def test_a_fork_at_another_epoch_in_the_fork_schedule_is_refused(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    schedule = CONFIG.fork_schedule_response()
    for entry in schedule["data"]:
        if entry["current_version"] == FULU:
            entry["epoch"] = "21"
    node, url = await start_node()
    serve_config(node, CONFIG, fork_schedule=schedule)
    with pytest.raises(StartupError, match="fulu .* at epoch 21, but /eth/v1/config/spec has"):
        await read_chain(await make_client([url]))


async def test_agreeing_endpoints_start(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    serve_config(node, CONFIG)
    chain = await read_chain(await make_client([url]))
    assert chain.fork_name_at(19) is ForkName.ELECTRA
    assert chain.fork_name_at(20) is ForkName.FULU


async def test_a_fork_neither_endpoint_schedules_is_fine(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    spec = CONFIG.spec_response()
    del spec["data"]["FULU_FORK_VERSION"], spec["data"]["FULU_FORK_EPOCH"]
    node, url = await start_node()
    serve_config(node, CONFIG, spec=spec, fork_schedule=schedule_without_fulu())
    chain = await read_chain(await make_client([url]))
    assert chain.fork_name_at(20) is ForkName.ELECTRA
