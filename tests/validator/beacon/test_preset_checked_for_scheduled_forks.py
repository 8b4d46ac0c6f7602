"""Preset values are checked only where a scheduled fork's containers use them: a chain
whose Electra epoch is FAR_FUTURE_EPOCH may serve another
MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD; once Electra is scheduled, at any epoch, the value
must match."""

from __future__ import annotations

from hashlib import sha256

import pytest

from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.validator.beacon.simulated_config_node import serve_config
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.consensus.spec import ChainSpec, ChainSpecError
from validator.service import StartupError, read_chain

GVR = sha256(b"preset of scheduled forks").digest()


def config(electra_epoch: int) -> SimulatedChainConfig:
    return SimulatedChainConfig(
        genesis_time=1_700_000_000,
        genesis_validators_root=GVR,
        fork_epochs={ForkName.ELECTRA: electra_epoch},
    )


async def test_an_electra_value_on_a_chain_without_electra_is_not_checked(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    unscheduled = config(FAR_FUTURE_EPOCH)
    spec = unscheduled.spec_response()
    spec["data"]["MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD"] = "1"  # Lodestar's dev value
    spec["data"]["CELLS_PER_EXT_BLOB"] = "64"  # Fulu's, also unscheduled
    node, url = await start_node()
    serve_config(node, unscheduled, spec=spec)
    chain = await read_chain(await make_client([url]))
    assert chain.fork_name_at(10**6) is ForkName.DENEB


async def test_an_electra_value_is_checked_once_electra_is_scheduled(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    scheduled = config(100_000)
    spec = scheduled.spec_response()
    spec["data"]["MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD"] = "1"
    node, url = await start_node()
    serve_config(node, scheduled, spec=spec)
    with pytest.raises(StartupError, match="MAX_CONSOLIDATION_REQUESTS_PER_PAYLOAD is 1"):
        await read_chain(await make_client([url]))


@pytest.mark.parametrize("name", ["MAX_ATTESTATIONS", "MAX_BLOB_COMMITMENTS_PER_BLOCK"])
def test_values_of_earlier_forks_stay_checked(name: str) -> None:
    # Deneb and phase0 are scheduled here even though Electra is not.
    unscheduled = config(FAR_FUTURE_EPOCH)
    spec = unscheduled.spec_response()
    spec["data"][name] = "3"
    with pytest.raises(ChainSpecError, match=f"{name} is 3"):
        ChainSpec.from_responses(unscheduled.genesis_response(), spec)
