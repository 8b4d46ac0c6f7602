"""Every signature the devnet receives is checked: a bad one is answered 400 and counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validator.devnet.driver import FORK, Driver, hex0x
from tests.validator.devnet.harness import connected_driver, running_devnet
from validator.beacon.errors import BeaconApiError
from validator.consensus.signing_roots import (
    randao_reveal_signing_root,
    validator_registration_signing_root,
    voluntary_exit_signing_root,
)
from validator.consensus.ssz import (
    SignedValidatorRegistrationV1,
    SignedVoluntaryExit,
    ValidatorRegistrationV1,
    VoluntaryExit,
    to_json,
)

WRONG = b"\x01" * 32


async def expect_400(action: object) -> BeaconApiError:
    with pytest.raises(BeaconApiError) as caught:
        await action  # type: ignore[misc]
    assert caught.value.status == 400
    return caught.value


async def test_bad_signatures_are_refused_and_counted(tmp_path: Path) -> None:
    async with running_devnet(tmp_path / "devnet") as node:
        async with connected_driver(node) as driver:
            slot = node.chain.current_slot() + 1
            await driver.wait_until(slot, 0.05)
            expected_invalid = 0

            # A block whose proposer signature is someone else's; then a bad RANDAO reveal.
            proposer = await driver.proposer_at(slot)
            assert proposer is not None
            block = await driver.produce(slot, proposer)
            forged = block.signed(driver.sign((proposer + 1) % 8, WRONG))
            error = await expect_400(
                driver.client.publish_block(to_json(forged), consensus_version=FORK)
            )
            assert "block signature" in error.message
            expected_invalid += 1
            wrong_epoch = randao_reveal_signing_root(driver.spec, 1000)
            error = await expect_400(
                driver.client.produce_block(slot, driver.sign(proposer, wrong_epoch))
            )
            assert "randao" in error.message
            expected_invalid += 1

            # A batch of attestations with one forged: only that item fails.
            await driver.wait_until(slot, 1 / 3)
            duties = await driver.duties_at(slot)
            data = await driver.client.get_attestation_data(slot)
            batch = [driver.single_attestation(duty, data) for duty in duties]
            batch.append(driver.single_attestation(duties[0], data, driver.sign(7, WRONG)))
            error = await expect_400(
                driver.client.publish_attestations(batch, consensus_version=FORK)
            )
            assert [(f.index, f.message) for f in error.failures] == [
                (len(duties), "invalid signature: attestation")
            ]
            expected_invalid += 1

            # Sync committee messages: one forged among good ones.
            members = await driver.sync_members(slot)
            root = (await driver.client.get_block_root("head")).root
            good = await driver.sync_messages(slot)
            assert good == root
            forged_message = {
                "slot": str(slot),
                "beacon_block_root": hex0x(root),
                "validator_index": str(next(iter(members))),
                "signature": hex0x(driver.sign(0, WRONG)),
            }
            error = await expect_400(
                driver.client.publish_sync_committee_messages([forged_message])
            )
            assert error.failures[0].message == "invalid signature: sync committee message"
            expected_invalid += 1

            # A voluntary exit and a builder registration signed by the wrong key.
            exit_message = VoluntaryExit(epoch=0, validator_index=3)
            bad_exit = SignedVoluntaryExit(
                message=exit_message,
                signature=driver.sign(
                    4, voluntary_exit_signing_root(driver.spec, exit_message, current_epoch=0)
                ),
            )
            await expect_400(driver.client.publish_voluntary_exit(to_json(bad_exit)))
            expected_invalid += 1
            registration = ValidatorRegistrationV1(
                fee_recipient=b"\x42" * 20,
                gas_limit=30_000_000,
                timestamp=1,
                pubkey=node.chain.registry.pubkey(2),
            )
            signed_registration = SignedValidatorRegistrationV1(
                message=registration,
                signature=driver.sign(
                    5, validator_registration_signing_root(driver.spec, registration)
                ),
            )
            await expect_400(driver.client.register_validators([to_json(signed_registration)]))
            expected_invalid += 1

            # Aggregates and contributions whose aggregator signature is forged.
            await driver.wait_until(slot, 2 / 3)
            expected_invalid += await forged_aggregates(driver, slot, data, duties)
            expected_invalid += await forged_contributions(driver, slot, root)
        summary = node.summary()
    assert summary["invalid_signatures"] == expected_invalid
    assert summary["attestations_received"] == len(duties)
    assert summary["sync_messages_received"] == len(members)
    assert summary["slashable_messages"] == 0
    assert summary["blocks_proposed"] == 0
    assert summary["registrations_received"] == 0 and summary["voluntary_exits_received"] == 0


async def forged_aggregates(driver: Driver, slot: int, data: dict, duties: list) -> int:  # type: ignore[type-arg]
    """Publish one aggregate-and-proof with its outer signature replaced; 1 when sent."""
    sent = []

    async def capture(signed: list, consensus_version: str) -> None:  # type: ignore[type-arg]
        sent.extend(signed)

    real = driver.client.publish_aggregate_and_proofs
    driver.client.publish_aggregate_and_proofs = capture  # type: ignore[method-assign]
    try:
        await driver.aggregate(slot, data, duties)
    finally:
        driver.client.publish_aggregate_and_proofs = real  # type: ignore[method-assign]
    assert sent, "with 8 validators every committee member aggregates"
    forged = dict(sent[0], signature=hex0x(driver.sign(0, WRONG)))
    error = await expect_400(real([forged], consensus_version=FORK))
    assert error.failures[0].message == "invalid signature: aggregate and proof"
    return 1


async def forged_contributions(driver: Driver, slot: int, root: bytes) -> int:
    sent = []

    async def capture(signed: list) -> None:  # type: ignore[type-arg]
        sent.extend(signed)

    real = driver.client.publish_contribution_and_proofs
    driver.client.publish_contribution_and_proofs = capture  # type: ignore[method-assign]
    try:
        await driver.contributions(slot, root)
    finally:
        driver.client.publish_contribution_and_proofs = real  # type: ignore[method-assign]
    assert sent
    message = dict(sent[0]["message"], selection_proof=hex0x(driver.sign(0, WRONG)))
    forged = dict(sent[0], message=message)
    error = await expect_400(real([forged]))
    assert "invalid signature: selection proof" in error.failures[0].message
    return 1
