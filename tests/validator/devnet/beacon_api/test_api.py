"""The devnet's Beacon API: identifiers, filters, limits, error shapes, SSZ, preparations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from tests.support.official_vectors import official_vectors
from tests.validator.devnet.driver import FORK, hex0x
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.consensus.signing_roots import (
    block_signing_root,
    validator_registration_signing_root,
    voluntary_exit_signing_root,
)
from validator.consensus.ssz import (
    SignedValidatorRegistrationV1,
    SignedVoluntaryExit,
    ValidatorRegistrationV1,
    VoluntaryExit,
    fulu,
    to_json,
)
from validator.consensus.ssz.blocks import blinded_block, parse_produced_block_ssz
from validator.devnet.beacon_api.plumbing import DECLARES_503, GLOAS_DECLARES_503


def test_routes_answering_503_are_exactly_those_the_spec_declares() -> None:
    root = official_vectors("beacon-api")
    index = yaml.safe_load((root / "beacon-node-oapi.yaml").read_text())
    from validator.devnet.beacon_api.server import BeaconApi

    declared = set()
    gloas_routes = {
        (route.method, route.path) for route in BeaconApi.__new__(BeaconApi).epbs_routes()
    }
    # beacon-APIs v4.0.0 predates Gloas: those routes keep master's declarations.
    assert GLOAS_DECLARES_503 <= gloas_routes
    for route in BeaconApi.__new__(BeaconApi).routes():
        if (route.method, route.path) in gloas_routes:
            continue
        operation_file = index["paths"][route.path]["$ref"]
        operations = yaml.safe_load((root / operation_file).read_text())
        responses = operations[route.method.lower()]["responses"]
        if "503" in responses:
            declared.add((route.method, route.path))
    assert declared == DECLARES_503


async def get(session: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    async with session.get(url) as answer:
        return answer.status, await answer.json(content_type=None)


async def post(session: aiohttp.ClientSession, url: str, body: Any) -> tuple[int, Any]:
    async with session.post(url, json=body) as answer:
        text = await answer.text()
        return answer.status, (None if not text else await answer.json(content_type=None))


async def test_queries_identifiers_and_errors(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node, aiohttp.ClientSession() as session:
        base = node.url
        pubkey = hex0x(node.chain.registry.pubkey(5))
        status, body = await get(
            session, f"{base}/eth/v1/beacon/states/head/validators?id={pubkey}&id=2&id=99"
        )
        assert status == 200
        assert sorted(item["index"] for item in body["data"]) == ["2", "5"]
        assert body["data"][0]["status"] == "active_ongoing"
        assert body["data"][0]["balance"] == "32000000000"
        status, body = await post(
            session,
            f"{base}/eth/v1/beacon/states/head/validators",
            {"ids": None, "statuses": ["active"]},
        )
        assert status == 200 and len(body["data"]) == 8
        status, body = await post(
            session, f"{base}/eth/v1/beacon/states/head/validators", {"statuses": ["exited"]}
        )
        assert status == 200 and body["data"] == []
        ids = "&".join(f"id={i}" for i in range(65))
        status, body = await get(session, f"{base}/eth/v1/beacon/states/head/validators?{ids}")
        assert status == 414 and body["code"] == 414
        status, body = await get(session, f"{base}/eth/v1/beacon/states/head/validators/{pubkey}")
        assert status == 200 and body["data"]["validator"]["pubkey"] == pubkey
        status, body = await get(session, f"{base}/eth/v1/beacon/states/head/validators/8")
        assert status == 404 and body == {"code": 404, "message": "Validator not found"}
        status, body = await get(session, f"{base}/eth/v1/beacon/states/current/fork")
        assert status == 400 and "state ID" in body["message"]
        status, body = await get(session, f"{base}/eth/v1/beacon/states/99999/fork")
        assert status == 404
        status, body = await get(
            session, f"{base}/eth/v1/beacon/states/genesis/finality_checkpoints"
        )
        assert status == 200 and body["data"]["finalized"]["epoch"] == "0"
        status, body = await get(session, f"{base}/eth/v1/beacon/blocks/genesis/root")
        assert status == 200 and body["data"]["root"] == hex0x(node.chain.tree.genesis.root)
        status, body = await get(session, f"{base}/eth/v1/beacon/blocks/{hex0x(b'1' * 32)}/root")
        assert status == 404
        status, body = await get(session, f"{base}/eth/v1/validator/duties/proposer/5")
        assert status == 400 and "more than 1 epoch ahead" in body["message"]
        status, body = await post(session, f"{base}/eth/v1/validator/duties/attester/0", [])
        assert status == 400
        status, body = await post(session, f"{base}/eth/v1/validator/duties/attester/0", ["8"])
        assert status == 400 and "unknown validator index 8" in body["message"]
        status, body = await get(session, f"{base}/eth/v1/events?topics=weather")
        assert status == 400 and body["message"] == "Invalid topic: weather"
        status, body = await get(session, f"{base}/eth/v1/no/such/route")
        assert status == 404 and body["code"] == 404
        slot = node.chain.current_slot()
        status, body = await get(
            session, f"{base}/eth/v1/validator/attestation_data?slot={slot + 5}&committee_index=0"
        )
        assert status == 400 and "has not started" in body["message"]
        async with session.post(
            f"{base}/eth/v2/beacon/pool/attestations",
            data=b"\x00",
            headers={"Content-Type": "application/octet-stream", "Eth-Consensus-Version": FORK},
        ) as answer:
            assert answer.status == 415
        async with session.post(f"{base}/eth/v2/beacon/pool/attestations", json=[]) as answer:
            assert answer.status == 400  # no Eth-Consensus-Version


async def test_preparations_exits_ssz_and_blinded_blocks(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet", seconds_per_slot=0.5) as node:
        async with connected_driver(node) as driver, aiohttp.ClientSession() as session:
            base = node.url
            slot = node.chain.current_slot() + 1
            proposer = await driver.proposer_at(slot)
            assert proposer is not None
            other = (proposer + 1) % 8
            status, _ = await post(
                session,
                f"{base}/eth/v1/validator/prepare_beacon_proposer",
                [{"validator_index": str(proposer), "fee_recipient": hex0x(b"\x11" * 20)}],
            )
            assert status == 200
            registrations = []
            for index, recipient in ((proposer, b"\x22" * 20), (other, b"\x33" * 20)):
                message = ValidatorRegistrationV1(
                    fee_recipient=recipient,
                    gas_limit=40_000_000,
                    timestamp=1_700_000_000,
                    pubkey=node.chain.registry.pubkey(index),
                )
                signature = driver.sign(
                    index, validator_registration_signing_root(driver.spec, message)
                )
                registrations.append(
                    to_json(SignedValidatorRegistrationV1(message=message, signature=signature))
                )
            await driver.client.register_validators(registrations)
            for path, body in (
                (
                    "beacon_committee_subscriptions",
                    [
                        {
                            "validator_index": "1",
                            "committee_index": "0",
                            "committees_at_slot": "1",
                            "slot": str(slot),
                            "is_aggregator": True,
                        }
                    ],
                ),
                (
                    "sync_committee_subscriptions",
                    [{"validator_index": "1", "sync_committee_indices": ["3"], "until_epoch": "8"}],
                ),
            ):
                status, _ = await post(session, f"{base}/eth/v1/validator/{path}", body)
                assert status == 200
            status, body = await post(
                session,
                f"{base}/eth/v1/validator/beacon_committee_subscriptions",
                [{"validator_index": "1"}],
            )
            assert status == 400

            # An SSZ block: the prepared fee recipient wins over the registered one.
            await driver.wait_until(slot, 0.05)
            produced = await driver.client.produce_block(
                slot, driver.randao_reveal(proposer, slot), ssz=True
            )
            assert produced.ssz is not None and produced.version == FORK
            block = parse_produced_block_ssz(produced.version, produced.blinded, produced.ssz).block
            assert bytes(block.body.execution_payload.fee_recipient) == b"\x11" * 20
            assert int(block.body.execution_payload.gas_limit) == 40_000_000
            # Published blinded: the chain knows the payload it built.
            blinded = blinded_block(block)
            signature = driver.sign(proposer, block_signing_root(driver.spec, blinded))
            signed = fulu.SignedBlindedBeaconBlock(message=blinded, signature=signature)
            result = await driver.client.publish_block(
                to_json(signed), consensus_version=FORK, blinded=True
            )
            assert list(result.accepted.values()) == [200]
            assert node.chain.tree.head.root == bytes(block.hash_tree_root())

            # The next proposal of the other validator uses its registration's recipient.
            plan_recipient = node.chain.fee_recipient(other)
            assert plan_recipient == b"\x33" * 20

            # A voluntary exit.
            exit_message = VoluntaryExit(epoch=0, validator_index=6)
            signature = driver.sign(
                6,
                voluntary_exit_signing_root(
                    driver.spec, exit_message, current_epoch=node.chain.current_epoch()
                ),
            )
            signed_exit = SignedVoluntaryExit(message=exit_message, signature=signature)
            await driver.client.publish_voluntary_exit(to_json(signed_exit))
            info = await driver.client.get_validators(["6"])
            assert info[0].status == "active_exiting"
            with pytest.raises(Exception, match="already exiting"):
                await driver.client.publish_voluntary_exit(to_json(signed_exit))
        summary = node.summary()
    assert summary["registrations_received"] == 2
    assert summary["proposer_preparations"] == 1
    assert summary["beacon_committee_subscriptions"] == 1
    assert summary["sync_committee_subscriptions"] == 1
    assert summary["voluntary_exits_received"] == 1
    assert summary["blocks_proposed"] == 1
    assert summary["invalid_signatures"] == 0
