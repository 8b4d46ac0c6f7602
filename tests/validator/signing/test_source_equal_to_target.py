"""An attestation whose source equals its target (other than 0 at genesis) is refused before
the slashing-protection record: recorded, its target would refuse every honest attestation
until the chain justified past it."""

from __future__ import annotations

from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from slashing_protection import SlashingProtection
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.interop import interop_keypair
from validator.consensus.ssz import AttestationData, Checkpoint
from validator.signing.guards import check_attestation_epochs
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason

GVR = sha256(b"source equal to target").digest()
GENESIS_TIME = 1_700_000_000
CHAIN = SimulatedChainConfig(genesis_time=GENESIS_TIME, genesis_validators_root=GVR).chain_spec()
NOW_EPOCH_20 = GENESIS_TIME + 20 * 8 * 2 + 1.0  # slot 160, epoch 20


def data(slot: int, source: int, target: int) -> AttestationData:
    return AttestationData(
        slot=slot,
        index=0,
        beacon_block_root=sha256(b"head").digest(),
        source=Checkpoint(epoch=source, root=sha256(b"s%d" % source).digest()),
        target=Checkpoint(epoch=target, root=sha256(b"t%d" % target).digest()),
    )


def refusals(reason: str) -> float:
    labels = {"kind": "attestation", "reason": reason}
    return REGISTRY.get_sample_value("validator_signature_refusals_total", labels) or 0.0


@pytest.mark.parametrize(("source", "target"), [(20, 20), (1, 1), (19, 19)])
def test_the_guard_refuses_source_equal_to_target(source: int, target: int) -> None:
    refusal = check_attestation_epochs(CHAIN, source, target, NOW_EPOCH_20, 1)
    assert refusal is not None
    assert refusal.reason is RefusalReason.SOURCE_EQUALS_TARGET
    assert str(target) in refusal.detail


def test_both_zero_at_genesis_and_source_below_target_pass() -> None:
    assert check_attestation_epochs(CHAIN, 0, 0, GENESIS_TIME + 1.0, 1) is None
    assert check_attestation_epochs(CHAIN, 19, 20, NOW_EPOCH_20, 1) is None


@pytest.fixture
def key() -> tuple[int, bytes]:
    return interop_keypair(0)


@pytest.fixture
def record(tmp_path: Path, key: tuple[int, bytes]) -> Iterator[SlashingProtection]:
    with SlashingProtection.open(tmp_path, GVR, register=[key[1]]) as opened:
        yield opened


async def test_source_equal_to_target_never_reaches_the_record(
    record: SlashingProtection, key: tuple[int, bytes]
) -> None:
    secret, pubkey = key
    signer = Signer(CHAIN, record, clock=lambda: NOW_EPOCH_20)
    await signer.add_keys({pubkey: secret})
    before = refusals("source_equals_target")
    [result] = await signer.sign_attestations([AttestationRequest(pubkey, data(160, 20, 20))])
    assert not result.signed
    assert result.refusal is not None
    assert result.refusal.reason is RefusalReason.SOURCE_EQUALS_TARGET
    assert refusals("source_equals_target") == before + 1
    watermark = record.watermark(pubkey)
    assert watermark is not None and watermark.source is None and watermark.target is None
    # The honest attestation the poisoned one would have blocked still signs.
    [honest] = await signer.sign_attestations([AttestationRequest(pubkey, data(160, 19, 20))])
    assert honest.signed
