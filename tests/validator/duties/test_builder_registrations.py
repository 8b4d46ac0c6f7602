"""Builder registrations: signed once, sent every epoch in batches, re-signed only on change.

The beacon node is the strict Beacon API double on loopback (every request checked
against the spec); the signer holds real keys and signs with the crypto backend.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest

import crypto_backend
from slashing_protection import SlashingProtection
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.support.roots_by_hand import (
    BYTES20,
    BYTES48,
    DOMAIN_APPLICATION_BUILDER,
    UINT64,
    root_by_hand,
    signing_root_by_hand,
)
from tests.validator.signing.support import GVR, make_chain
from validator.beacon import routes
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.duties.registrations import BuilderRegistrations, registrations_end_epoch
from validator.key_settings import KeyOverrides, ProposerSettings
from validator.metrics import SIGNATURES
from validator.proposer_config import ProposerConfig, ProposerEntry
from validator.signing.signer import Signer

KEYS = 10_000
BATCH = 500
FEE_RECIPIENT = bytes.fromhex("11" * 20)
REGISTRATION_SHAPE = (
    "container",
    (("fee_recipient", BYTES20), ("gas_limit", UINT64), ("timestamp", UINT64), ("pubkey", BYTES48)),
)


def _secrets(count: int) -> list[int]:
    generator = random.Random(20251)
    return [generator.randrange(1, 2**250) for _ in range(count)]


@pytest.fixture(scope="module")
def keys() -> dict[bytes, int]:
    return {crypto_backend.sk_to_pk(secret): secret for secret in _secrets(KEYS)}


@pytest.fixture
def record(tmp_path: Path) -> Iterator[SlashingProtection]:
    # Registrations are not slashable: the record is never asked about them.
    with SlashingProtection.open(tmp_path, GVR, create=True) as opened:
        yield opened


def _signatures() -> float:
    return SIGNATURES.labels("validator_registration")._value.get()


def _registration_root(message: dict[str, str]) -> bytes:
    chain = make_chain()
    object_root = root_by_hand(REGISTRATION_SHAPE, message)
    # Valid on every fork: the genesis version and a zero genesis validators root.
    return signing_root_by_hand(
        object_root, DOMAIN_APPLICATION_BUILDER, chain.genesis_fork_version, bytes(32)
    )


async def test_ten_thousand_keys_sign_once_then_only_what_changed(
    keys: dict[bytes, int],
    record: SlashingProtection,
    start_node: NodeStarter,
    make_client: ClientFactory,
) -> None:
    # The spec checks of 80 requests of 500 registrations would take most of the test's
    # time; the small tests below keep them.
    node, url = await start_node(strict=False)
    client = await make_client([url], strict=False)
    chain = make_chain()
    signer = Signer(chain, record)
    await signer.add_keys(keys)
    own: dict[bytes, KeyOverrides] = {}
    settings = ProposerSettings(
        default_fee_recipient=FEE_RECIPIENT,
        builder=True,
        overrides=lambda pubkey: own.get(pubkey, KeyOverrides()),
    )
    registrations = BuilderRegistrations(
        client, signer, chain, settings, clock=lambda: 1_750_000_000
    )

    before = _signatures()
    first = await registrations.round(5)
    assert (first.signed, first.submitted, first.failed_batches) == (KEYS, KEYS, 0)
    assert _signatures() - before == KEYS
    sent = node.requests_to(routes.REGISTER_VALIDATOR)
    assert [len(request.json()) for request in sent] == [BATCH] * (KEYS // BATCH)
    first_messages = {
        item["message"]["pubkey"]: item for request in sent for item in request.json()
    }
    assert len(first_messages) == KEYS

    for epoch in (6, 7):
        later = await registrations.round(epoch)
        assert (later.signed, later.submitted) == (0, KEYS)
    assert _signatures() - before == KEYS
    resent = node.requests_to(routes.REGISTER_VALIDATOR)[len(sent) :]
    assert [item for request in resent for item in request.json()] == [
        item for request in sent for item in request.json()
    ] * 2

    changed = sorted(keys)[1234]
    own[changed] = KeyOverrides(fee_recipient=bytes.fromhex("22" * 20))
    third = await registrations.round(8)
    assert third.signed == 1
    assert _signatures() - before == KEYS + 1
    last = node.requests_to(routes.REGISTER_VALIDATOR)[-(KEYS // BATCH) :]
    now = {item["message"]["pubkey"]: item for request in last for item in request.json()}
    differing = [pk for pk in now if now[pk] != first_messages[pk]]
    assert differing == ["0x" + changed.hex()]
    assert now["0x" + changed.hex()]["message"]["fee_recipient"] == "0x" + "22" * 20

    # Every message is the key's, for its settings, and verifies under the builder domain.
    for item in random.Random(7).sample(list(now.values()), 25) + [now["0x" + changed.hex()]]:
        message = item["message"]
        pubkey = bytes.fromhex(message["pubkey"][2:])
        expected_fee = "0x" + ("22" * 20 if pubkey == changed else FEE_RECIPIENT.hex())
        assert message["fee_recipient"] == expected_fee
        assert message["gas_limit"] == "36000000" and message["timestamp"] == "1750000000"
        signature = bytes.fromhex(item["signature"][2:])
        assert crypto_backend.verify(pubkey, _registration_root(message), signature)


async def test_keys_switched_off_or_without_a_fee_recipient_register_nothing(
    record: SlashingProtection, start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    chain = make_chain()
    secrets = _secrets(4)
    pubkeys = [crypto_backend.sk_to_pk(secret) for secret in secrets]
    signer = Signer(chain, record)
    await signer.add_keys(dict(zip(pubkeys, secrets, strict=True)))
    config = ProposerConfig(
        keys={
            pubkeys[0]: ProposerEntry(builder_enabled=False),
            pubkeys[1]: ProposerEntry(fee_recipient=FEE_RECIPIENT, gas_limit=30_000_000),
            pubkeys[2]: ProposerEntry(fee_recipient=FEE_RECIPIENT, registration_timestamp=42),
        },
        default=ProposerEntry(builder_enabled=True),
    )
    settings = ProposerSettings(proposer_config=config)  # key 3: no fee recipient anywhere
    registrations = BuilderRegistrations(client, signer, chain, settings)
    report = await registrations.round(1)
    assert (report.signed, report.submitted) == (2, 2)
    [request] = node.requests_to(routes.REGISTER_VALIDATOR)
    by_key = {item["message"]["pubkey"]: item["message"] for item in request.json()}
    assert by_key == {
        "0x" + pubkeys[1].hex(): {
            "fee_recipient": "0x" + FEE_RECIPIENT.hex(),
            "gas_limit": "30000000",
            "timestamp": by_key["0x" + pubkeys[1].hex()]["timestamp"],
            "pubkey": "0x" + pubkeys[1].hex(),
        },
        "0x" + pubkeys[2].hex(): {
            "fee_recipient": "0x" + FEE_RECIPIENT.hex(),
            "gas_limit": "36000000",
            "timestamp": "42",
            "pubkey": "0x" + pubkeys[2].hex(),
        },
    }
    # A key the signer no longer holds (halted, removed, waiting) is registered no more.
    await signer.remove_keys([pubkeys[1]])
    report = await registrations.round(2)
    assert (report.signed, report.submitted) == (0, 1)


async def test_a_failing_node_is_counted_and_gets_them_again_next_epoch(
    record: SlashingProtection, start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    chain = make_chain()
    secret = _secrets(1)[0]
    signer = Signer(chain, record)
    await signer.add_keys({crypto_backend.sk_to_pk(secret): secret})
    settings = ProposerSettings(default_fee_recipient=FEE_RECIPIENT, builder=True)
    registrations = BuilderRegistrations(client, signer, chain, settings)
    node.misbehave(
        routes.REGISTER_VALIDATOR,
        status=500,
        body={"code": 500, "message": "relay down"},
        times=1,
    )
    failed = await registrations.round(3)
    assert (failed.signed, failed.failed_batches) == (1, 1)
    again = await registrations.round(4)
    assert (again.signed, again.failed_batches) == (0, 0)
    sent = node.requests_to(routes.REGISTER_VALIDATOR)
    assert len(sent) == 2 and sent[0].json() == sent[1].json()


def test_registrations_end_at_the_gloas_fork_when_one_is_scheduled() -> None:
    chain = make_chain()
    assert registrations_end_epoch(chain) == FAR_FUTURE_EPOCH
    gloas = getattr(ForkName, "GLOAS", None)
    if gloas is not None:
        assert registrations_end_epoch(make_chain(fork_epochs={gloas: 9})) == 9


def test_the_registration_root_by_hand_is_the_products() -> None:
    from validator.consensus.signing_roots import validator_registration_signing_root
    from validator.consensus.ssz.builder import ValidatorRegistrationV1

    pubkey = sha256(b"key").digest() + bytes(16)
    message = ValidatorRegistrationV1(
        fee_recipient=FEE_RECIPIENT, gas_limit=36_000_000, timestamp=1_700_000_000, pubkey=pubkey
    )
    by_hand = _registration_root(
        {
            "fee_recipient": "0x" + FEE_RECIPIENT.hex(),
            "gas_limit": "36000000",
            "timestamp": "1700000000",
            "pubkey": "0x" + pubkey.hex(),
        }
    )
    assert validator_registration_signing_root(make_chain(), message) == by_hand
