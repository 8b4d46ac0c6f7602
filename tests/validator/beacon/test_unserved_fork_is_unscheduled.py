"""A node that predates a fork the client knows does not serve that fork's
``*_FORK_VERSION`` / ``*_FORK_EPOCH``: that fork is not scheduled on its chain, and the
client starts and treats it as FAR_FUTURE_EPOCH."""

from __future__ import annotations

from hashlib import sha256
from typing import Any

import pytest

from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.validator.beacon.simulated_config_node import serve_config
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.domains import DOMAIN_RANDAO, compute_domain
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.consensus.spec import ChainSpec, ChainSpecError
from validator.service import StartupError, read_chain

CONFIG = SimulatedChainConfig(
    genesis_time=1_700_000_000,
    genesis_validators_root=sha256(b"unserved fork").digest(),
    fork_epochs={ForkName.ELECTRA: 3, ForkName.FULU: FAR_FUTURE_EPOCH},
)


def without_fulu() -> tuple[dict[str, Any], dict[str, Any]]:
    spec = CONFIG.spec_response()
    del spec["data"]["FULU_FORK_VERSION"], spec["data"]["FULU_FORK_EPOCH"]
    schedule = CONFIG.fork_schedule_response()
    schedule["data"] = [e for e in schedule["data"] if e["current_version"] != "0x0600de7e"]
    return spec, schedule


async def test_a_node_without_fulu_fields_is_usable_and_fulu_is_unscheduled(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    spec, schedule = without_fulu()
    serve_config(node, CONFIG, spec=spec, fork_schedule=schedule)
    client = await make_client([url])
    chain = await read_chain(client)
    fulu = chain.fork(ForkName.FULU)
    assert fulu.epoch == FAR_FUTURE_EPOCH and not fulu.scheduled
    assert chain.fork_name_at(2) is ForkName.DENEB
    assert chain.fork_name_at(3) is ForkName.ELECTRA
    assert chain.fork_name_at(10**9) is ForkName.ELECTRA


def test_an_unserved_fork_version_signs_nothing() -> None:
    spec, schedule = without_fulu()
    chain = ChainSpec.from_responses(CONFIG.genesis_response(), spec, schedule)
    with pytest.raises(ValueError):
        compute_domain(DOMAIN_RANDAO, chain.fork_version(ForkName.FULU), bytes(32))


@pytest.mark.parametrize("served", ["FULU_FORK_VERSION", "FULU_FORK_EPOCH"])
def test_half_a_fork_is_malformed(served: str) -> None:
    spec = CONFIG.spec_response()
    other = "FULU_FORK_EPOCH" if served == "FULU_FORK_VERSION" else "FULU_FORK_VERSION"
    del spec["data"][other]
    with pytest.raises(ChainSpecError, match=f"{served} is served without {other}"):
        ChainSpec.from_responses(CONFIG.genesis_response(), spec)


def test_a_later_fork_served_without_an_earlier_one_is_refused() -> None:
    spec = CONFIG.spec_response()
    del spec["data"]["ELECTRA_FORK_VERSION"], spec["data"]["ELECTRA_FORK_EPOCH"]
    spec["data"]["FULU_FORK_EPOCH"] = "5"
    with pytest.raises(ChainSpecError, match="fulu is scheduled at epoch 5, before electra"):
        ChainSpec.from_responses(CONFIG.genesis_response(), spec)


async def test_a_node_missing_an_older_forks_fields_still_refuses_when_inconsistent(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    spec = CONFIG.spec_response()
    del spec["data"]["ELECTRA_FORK_EPOCH"]
    serve_config(node, CONFIG, spec=spec)
    client = await make_client([url])
    with pytest.raises(StartupError, match="ELECTRA_FORK_VERSION is served without"):
        await read_chain(client)

