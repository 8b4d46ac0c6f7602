"""Every client call sends the request the Beacon API defines and reads its answer.

Both sides run in strict mode: the fake node's middleware checks each request
against the spec (a violation fails the test at teardown) and the client's
middleware checks each answer. On top of that, each test asserts the exact
method, path, query, headers and body, and the typed result.
"""

from __future__ import annotations

import orjson
import pytest

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import (
    BeaconCommitteeSubscription,
    ProposerPreparation,
    SyncCommitteeSubscription,
    encode_graffiti,
    routes,
)

RANDAO = bytes.fromhex(canned.signature(0x11)[2:])


def hexbytes(value: str) -> bytes:
    return bytes.fromhex(value[2:])


async def test_node_and_config_endpoints(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])

    syncing = await client.get_syncing()
    assert (syncing.head_slot, syncing.is_syncing, syncing.sync_distance) == (100, False, 0)
    assert await client.get_node_version() == "FakeBeacon/v0.0.1 (linux)"
    assert await client.get_node_health() == {url: 200}

    genesis = await client.get_genesis()
    assert genesis.genesis_time == 1606824023
    assert genesis.genesis_validators_root == hexbytes(canned.GENESIS_VALIDATORS_ROOT)
    assert genesis.genesis_fork_version == bytes.fromhex("10000038")

    config = await client.get_spec()
    assert config["SECONDS_PER_SLOT"] == "12"
    assert config["BLOB_SCHEDULE"] == [{"EPOCH": "0", "MAX_BLOBS_PER_BLOCK": "9"}]

    schedule = await client.get_fork_schedule()
    assert [fork.current_version.hex() for fork in schedule] == ["10000038", "50000038"]

    fork = await client.get_state_fork()
    assert (fork.previous_version.hex(), fork.current_version.hex(), fork.epoch) == (
        "10000038",
        "50000038",
        0,
    )
    finality = await client.get_finality_checkpoints("finalized")
    assert finality.finalized.epoch == 1
    assert finality.current_justified.root == hexbytes(canned.root(0x22))

    assert [r.path for r in node.requests[2:] if r.route != routes.NODE_SYNCING] == [
        routes.NODE_VERSION,
        routes.NODE_HEALTH,
        routes.GENESIS,
        routes.CONFIG_SPEC,
        routes.FORK_SCHEDULE,
        "/eth/v1/beacon/states/head/fork",
        "/eth/v1/beacon/states/finalized/finality_checkpoints",
    ]
    assert all(r.headers["Accept"] == "application/json" for r in node.requests)


async def test_state_validators_post_and_get(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    key = hexbytes(canned.pubkey(5))

    found = await client.get_validators([1, key, "7"], statuses=["active_ongoing"])
    assert [v.index for v in found] == [1, 7]
    assert found[0].pubkey == hexbytes(canned.pubkey(1))
    assert found[0].balance == 32_000_000_000 and found[0].status == "active_ongoing"
    posted = node.requests_to(routes.STATE_VALIDATORS)[-1]
    assert (posted.method, posted.path) == ("POST", "/eth/v1/beacon/states/head/validators")
    assert posted.headers["Content-Type"] == "application/json"
    assert posted.json() == {"ids": ["1", canned.pubkey(5), "7"], "statuses": ["active_ongoing"]}

    many = list(range(130))
    found = await client.get_validators(many, state_id="finalized", use_get=True)
    assert [v.index for v in found] == many
    gets = node.requests_to(routes.STATE_VALIDATORS)[1:]
    assert [len(r.query) for r in gets] == [64, 64, 2]  # the GET form's 64-id limit
    assert gets[0].query[:2] == [("id", "0"), ("id", "1")]
    assert all(r.method == "GET" and r.path.endswith("/finalized/validators") for r in gets)

    assert await client.get_validators([]) == []  # never "all validators"


async def test_duties(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])

    attester = await client.get_attester_duties(3, [1, 2])
    assert attester.dependent_root == hexbytes(canned.root(0x41))
    assert attester.execution_optimistic is False
    assert [(d.validator_index, d.slot, d.committee_length) for d in attester.duties] == [
        (1, 97, 128),
        (2, 98, 128),
    ]
    request = node.requests_to(routes.ATTESTER_DUTIES)[-1]
    assert (request.method, request.path, request.json()) == (
        "POST",
        "/eth/v1/validator/duties/attester/3",
        ["1", "2"],
    )

    proposer = await client.get_proposer_duties(4)
    assert proposer.dependent_root == hexbytes(canned.root(0x42))
    assert [(d.slot, d.validator_index) for d in proposer.duties] == [(128, 2), (129, 3)]
    assert node.requests_to(routes.PROPOSER_DUTIES)[-1].path == (
        "/eth/v1/validator/duties/proposer/4"
    )

    sync = await client.get_sync_duties(5, [9])
    assert sync.duties[0].validator_sync_committee_indices == (9, 109)
    assert node.requests_to(routes.SYNC_DUTIES)[-1].json() == ["9"]

    with pytest.raises(ValueError, match="at least one validator index"):
        await client.get_attester_duties(3, [])


async def test_produce_block_json(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])

    block = await client.produce_block(
        33, RANDAO, graffiti=encode_graffiti("unslashable"), builder_boost_factor=100
    )
    assert (block.version, block.blinded) == ("electra", False)
    assert block.execution_payload_value == int(canned.PAYLOAD_VALUE)
    assert block.consensus_block_value == int(canned.BLOCK_VALUE)
    assert block.data is not None and block.data["block"]["slot"] == "33"
    assert block.ssz is None
    request = node.requests_to(routes.PRODUCE_BLOCK_V3)[-1]
    assert request.path == "/eth/v3/validator/blocks/33"
    assert request.query == [
        ("randao_reveal", canned.signature(0x11)),
        ("graffiti", "0x" + b"unslashable".ljust(32, b"\0").hex()),
        ("builder_boost_factor", "100"),
    ]

    blinded = await client.produce_block(
        34, bytes.fromhex(canned.INFINITY_SIGNATURE[2:]), skip_randao_verification=True,
        builder_boost_factor=2**64 - 1,
    )  # fmt: skip
    assert blinded.blinded is True
    assert blinded.data is not None and "execution_payload_header" in blinded.data["body"]
    assert ("skip_randao_verification", "") in node.requests_to(routes.PRODUCE_BLOCK_V3)[-1].query

    with pytest.raises(ValueError, match="randao reveal must be 96 bytes"):
        await client.produce_block(35, b"\x01" * 95)


async def test_produce_block_ssz_preferred(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    ssz_bytes = b"\x01\x02\x03 not really a block"
    node.misbehave(
        routes.PRODUCE_BLOCK_V3,
        raw_body=ssz_bytes,
        content_type="application/octet-stream",
        headers=canned.produced_block(40)[1],
        times=1,
    )
    block = await client.produce_block(40, RANDAO, ssz=True)
    assert block.ssz == ssz_bytes and block.data is None
    assert (block.version, block.blinded, block.consensus_block_value) == (
        "electra",
        False,
        int(canned.BLOCK_VALUE),
    )
    accept = node.requests_to(routes.PRODUCE_BLOCK_V3)[-1].headers["Accept"]
    assert accept == "application/octet-stream;q=1.0,application/json;q=0.9"

    # A node may answer JSON even when SSZ is preferred.
    json_block = await client.produce_block(41, RANDAO, ssz=True)
    assert json_block.data is not None and json_block.ssz is None


async def test_publish_blocks(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])

    result = await client.publish_block(
        canned.signed_block_contents(33), consensus_version="electra",
        broadcast_validation="consensus_and_equivocation",
    )  # fmt: skip
    assert result.accepted == {url: 200}
    request = node.requests_to(routes.PUBLISH_BLOCK_V2)[-1]
    assert request.headers["Eth-Consensus-Version"] == "electra"
    assert request.headers["Content-Type"] == "application/json"
    assert request.query == [("broadcast_validation", "consensus_and_equivocation")]
    assert request.json() == canned.signed_block_contents(33)

    await client.publish_block(
        canned.signed_blinded_block(34), consensus_version="electra", blinded=True
    )
    blinded = node.requests_to(routes.PUBLISH_BLINDED_BLOCK_V2)[-1]
    assert blinded.query == [] and blinded.json() == canned.signed_blinded_block(34)

    with pytest.raises(ValueError, match="broadcast_validation"):
        await client.publish_block({}, consensus_version="electra", broadcast_validation="all")


async def test_publish_block_as_ssz(start_node: NodeStarter, make_client: ClientFactory) -> None:
    # The spec describes the SSZ body only in prose, so strict mode checks its
    # headers (Content-Type, Eth-Consensus-Version) but not the bytes.
    node, url = await start_node()
    client = await make_client([url])
    await client.publish_block(b"\x00ssz-bytes", consensus_version="fulu")
    request = node.requests_to(routes.PUBLISH_BLOCK_V2)[-1]
    assert request.headers["Content-Type"] == "application/octet-stream"
    assert request.headers["Eth-Consensus-Version"] == "fulu"
    assert request.body == b"\x00ssz-bytes"


async def test_attestation_flow(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])

    data = await client.get_attestation_data(65)
    assert data == canned.attestation_data(65)
    assert node.requests_to(routes.ATTESTATION_DATA)[-1].query == [
        ("slot", "65"),
        ("committee_index", "0"),
    ]

    attestations = [canned.single_attestation(65, 1), canned.single_attestation(65, 2)]
    result = await client.publish_attestations(attestations, consensus_version="electra")
    assert result.accepted_by == (url,)
    posted = node.requests_to(routes.POOL_ATTESTATIONS_V2)[-1]
    assert posted.json() == attestations
    assert posted.headers["Eth-Consensus-Version"] == "electra"

    data_root = hexbytes(canned.root(0x99))
    aggregate = await client.get_aggregate_attestation(65, data_root, 2)
    assert aggregate.version == "electra"
    assert aggregate.data["committee_bits"] == "0x0100000000000000"
    assert node.requests_to(routes.AGGREGATE_ATTESTATION_V2)[-1].query == [
        ("attestation_data_root", canned.root(0x99)),
        ("slot", "65"),
        ("committee_index", "2"),
    ]

    proofs = [canned.signed_aggregate_and_proof(65, 4)]
    await client.publish_aggregate_and_proofs(proofs, consensus_version="electra")
    posted = node.requests_to(routes.AGGREGATE_AND_PROOFS_V2)[-1]
    assert posted.json() == proofs and posted.headers["Eth-Consensus-Version"] == "electra"

    with pytest.raises(ValueError, match="nothing to publish"):
        await client.publish_attestations([], consensus_version="electra")


async def test_subscriptions_and_preparation(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])

    await client.subscribe_to_beacon_committees([BeaconCommitteeSubscription(7, 1, 4, 70, True)])
    assert node.requests_to(routes.BEACON_COMMITTEE_SUBSCRIPTIONS)[-1].json() == [
        {
            "validator_index": "7",
            "committee_index": "1",
            "committees_at_slot": "4",
            "slot": "70",
            "is_aggregator": True,
        }
    ]
    await client.subscribe_to_sync_committees([SyncCommitteeSubscription(7, (3, 300), 512)])
    assert node.requests_to(routes.SYNC_COMMITTEE_SUBSCRIPTIONS)[-1].json() == [
        {"validator_index": "7", "sync_committee_indices": ["3", "300"], "until_epoch": "512"}
    ]
    await client.prepare_beacon_proposer([ProposerPreparation(7, b"\xab" * 20)])
    assert node.requests_to(routes.PREPARE_BEACON_PROPOSER)[-1].json() == [
        {"validator_index": "7", "fee_recipient": canned.FEE_RECIPIENT}
    ]
    registrations = [canned.signed_registration(7)]
    await client.register_validators(registrations)
    assert node.requests_to(routes.REGISTER_VALIDATOR)[-1].json() == registrations

    with pytest.raises(ValueError, match="fee recipient must be 20 bytes"):
        ProposerPreparation(7, b"\xab" * 19)


async def test_sync_committee_flow(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])

    head = await client.get_block_root()
    assert head.root == hexbytes(canned.root(0x31)) and head.finalized is False
    assert node.requests_to(routes.BLOCK_ROOT)[-1].path == "/eth/v1/beacon/blocks/head/root"

    messages = [canned.sync_committee_message(70, 7)]
    await client.publish_sync_committee_messages(messages)
    assert node.requests_to(routes.POOL_SYNC_COMMITTEES)[-1].json() == messages

    contribution = await client.get_sync_committee_contribution(70, 1, head.root)
    assert contribution["subcommittee_index"] == "1"
    assert contribution["beacon_block_root"] == canned.root(0x31)
    assert node.requests_to(routes.SYNC_COMMITTEE_CONTRIBUTION)[-1].query == [
        ("slot", "70"),
        ("subcommittee_index", "1"),
        ("beacon_block_root", canned.root(0x31)),
    ]
    proofs = [canned.signed_contribution_and_proof(70, 7)]
    await client.publish_contribution_and_proofs(proofs)
    assert node.requests_to(routes.CONTRIBUTION_AND_PROOFS)[-1].json() == proofs


async def test_voluntary_exit(start_node: NodeStarter, make_client: ClientFactory) -> None:
    node, url = await start_node()
    client = await make_client([url])
    exit_message = canned.signed_voluntary_exit(7)
    await client.publish_voluntary_exit(exit_message)
    assert orjson.loads(node.requests_to(routes.POOL_VOLUNTARY_EXITS)[-1].body) == exit_message


def test_graffiti_encoding() -> None:
    assert encode_graffiti("") == b"\0" * 32
    assert encode_graffiti("é") == "é".encode().ljust(32, b"\0")
    with pytest.raises(ValueError, match="at most 32"):
        encode_graffiti("x" * 33)
