"""The Beacon API spells fork names in lowercase only; any other spelling in a node's answer
is a malformed response, not a fork."""

from __future__ import annotations

import pytest

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import MalformedResponseError, routes
from validator.consensus.forks import ForkName
from validator.consensus.ssz.blocks import UnsupportedForkError, parse_produced_block

RANDAO = bytes.fromhex(canned.signature(0x11)[2:])
MISSPELLED = ["Electra", "ELECTRA", "FuLu", "electrA", " electra", "electra\n"]


@pytest.mark.parametrize("name", MISSPELLED)
def test_fork_name_parse_takes_only_the_lowercase_spelling(name: str) -> None:
    with pytest.raises(ValueError, match="unknown fork"):
        ForkName.parse(name)
    with pytest.raises(UnsupportedForkError):
        parse_produced_block(name, True, {})
    assert ForkName.parse("electra") is ForkName.ELECTRA


@pytest.mark.parametrize("name", ["Electra", "ELECTRA", "FuLu"])
async def test_a_block_whose_version_is_not_lowercase_is_malformed(
    start_node: NodeStarter, make_client: ClientFactory, name: str
) -> None:
    node, url = await start_node(strict=False)
    client = await make_client([url], strict=False)
    body, headers = canned.produced_block(33)
    node.misbehave(
        routes.PRODUCE_BLOCK_V3,
        body={**body, "version": name},
        headers={**headers, "Eth-Consensus-Version": name},
    )
    with pytest.raises(MalformedResponseError, match="lowercase"):
        await client.produce_block(33, RANDAO)


async def test_an_aggregate_whose_version_is_not_lowercase_is_malformed(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node(strict=False)
    client = await make_client([url], strict=False)
    body, headers = canned.aggregate_attestation(33)
    node.misbehave(
        routes.AGGREGATE_ATTESTATION_V2,
        body={**body, "version": "Electra"},
        headers={"Eth-Consensus-Version": "Electra"},
    )
    with pytest.raises(MalformedResponseError, match="lowercase"):
        await client.get_aggregate_attestation(33, bytes(32), 0)
