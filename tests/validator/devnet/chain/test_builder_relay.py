"""The simulated builder and relay: registrations under the timestamp rule, the bid against
the boost factor, the blinded block and its return."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import crypto_backend
from tests.validator.devnet.driver import Driver
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon import BeaconApiError
from validator.consensus.signing_roots import (
    block_signing_root,
    validator_registration_signing_root,
)
from validator.consensus.ssz import (
    SignedValidatorRegistrationV1,
    ValidatorRegistrationV1,
    to_json,
)
from validator.consensus.ssz.blocks import parse_produced_block
from validator.devnet.chain.relay import (
    BUILDER_BID_WEI,
    LOCAL_PAYLOAD_WEI,
    Registration,
    SimulatedRelay,
)

FEE = b"\x5a" * 20


def _registration(driver: Driver, index: int, timestamp: int, gas_limit: int = 31_000_000) -> Any:
    message = ValidatorRegistrationV1(
        fee_recipient=FEE,
        gas_limit=gas_limit,
        timestamp=timestamp,
        pubkey=crypto_backend.sk_to_pk(driver.keys[index]),
    )
    signature = driver.sign(index, validator_registration_signing_root(driver.spec, message))
    return to_json(SignedValidatorRegistrationV1(message=message, signature=signature))


def test_the_builder_wins_above_a_boost_factor_of_50() -> None:
    relay = SimulatedRelay()
    assert BUILDER_BID_WEI == 2 * LOCAL_PAYLOAD_WEI
    assert relay.winning_bid(3, 100) is None  # not registered
    relay_registration = Registration(FEE, 31_000_000, 1_700_000_000)
    relay.keep(3, relay_registration)
    assert relay.winning_bid(3, None) == relay_registration
    assert relay.winning_bid(3, 100) == relay_registration
    assert relay.winning_bid(3, 51) == relay_registration
    assert relay.winning_bid(3, 50) is None
    assert relay.winning_bid(3, 0) is None
    assert relay.winning_bid(3, 2**64 - 1) == relay_registration


async def test_registrations_blinded_blocks_and_their_return(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet", builder=True) as node:
        async with connected_driver(node) as driver:
            now = int(time.time())
            await driver.client.register_validators(
                [_registration(driver, index, now) for index in range(8)]
            )
            # Older than the one kept, or too far ahead: refused, the kept one stays.
            for timestamp in (now - 1, now + 60):
                with pytest.raises(BeaconApiError) as refused:
                    await driver.client.register_validators([_registration(driver, 0, timestamp)])
                assert (
                    refused.value.status == 400 and "refused by the relay" in refused.value.message
                )
            assert node.chain.relay is not None
            assert node.chain.relay.registrations[0].timestamp == now
            # The same message again is fine (the client sends it every epoch).
            await driver.client.register_validators([_registration(driver, 0, now)])

            slot = node.chain.current_slot() + 1
            await driver.wait_until(slot)
            proposer = await driver.proposer_at(slot)
            assert proposer is not None
            randao = driver.randao_reveal(proposer, slot)
            local = await driver.client.produce_block(slot, randao, builder_boost_factor=50)
            assert not local.blinded
            answer = await driver.client.produce_block(slot, randao, builder_boost_factor=100)
            assert answer.blinded and answer.data is not None
            produced = parse_produced_block(answer.version, True, answer.data)
            header = produced.block.body.execution_payload_header
            assert bytes(header.fee_recipient) == FEE and int(header.gas_limit) == 31_000_000
            signature = driver.sign(proposer, block_signing_root(driver.spec, produced.block))
            await driver.client.publish_block(
                to_json(produced.signed(signature)), consensus_version="fulu", blinded=True
            )
            assert node.chain.tree.head.slot == slot
            summary = node.summary()
    assert summary["blinded_blocks_received"] == 1
    assert summary["builder_blocks_offered"] == 1
    assert summary["registrations_received"] == 9
    assert summary["rejected_messages"] == 2
    assert summary["repeated_block_requests"] == 1  # the local block asked for first
    assert summary["invalid_signatures"] == 0
