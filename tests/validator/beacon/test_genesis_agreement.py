"""Genesis is read from every configured node and must agree: the
far-future guard counts epochs from the genesis time, so one node reporting a genesis
100,000 epochs early must not make it admit a target 100,000 epochs ahead."""

from __future__ import annotations

from collections.abc import Callable
from hashlib import sha256

import pytest

from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.validator.beacon.simulated_config_node import serve_config
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.service import StartupError, read_chain

GVR = sha256(b"genesis agreement").digest()
HONEST = SimulatedChainConfig(genesis_time=1_700_000_000, genesis_validators_root=GVR)
# 100,000 epochs of 8 two-second slots earlier.
EARLY = SimulatedChainConfig(
    genesis_time=1_700_000_000 - 100_000 * 8 * 2, genesis_validators_root=GVR
)


async def test_nodes_reporting_different_genesis_times_are_refused(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    honest, honest_url = await start_node(name="honest")
    lying, lying_url = await start_node(name="lying")
    serve_config(honest, HONEST)
    serve_config(lying, EARLY, spec=HONEST.spec_response())
    client = await make_client([honest_url, lying_url])
    with pytest.raises(StartupError, match="disagree on genesis") as refused:
        await read_chain(client)
    assert str(EARLY.genesis_time) in str(refused.value)
    # Both were asked, although the first answered (no failover-only reading).
    assert honest.requests_to("/eth/v1/beacon/genesis") and lying.requests_to(
        "/eth/v1/beacon/genesis"
    )


async def test_agreeing_nodes_start_and_an_unreachable_one_is_only_warned_about(
    start_node: NodeStarter, make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    serve_config(first, HONEST)
    serve_config(second, HONEST)
    dead = unused_url()
    client = await make_client([first_url, second_url, dead])
    chain = await read_chain(client)
    assert chain.genesis_time == HONEST.genesis_time
