"""The record's part: one durable write per attestation batch, nothing signed when the write
fails, and signing grouped by signing root only after the record."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from slashing_protection import RECORD_FILE, SlashingProtection
from tests.validator.signing import metrics_support as metrics
from tests.validator.signing.support import CryptoSpy, attestation_data
from validator.consensus.ssz import fulu, to_json
from validator.consensus.ssz.blocks import blinded_block, parse_produced_block
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason, SigningRefusedError


@pytest.fixture
def record_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every rename onto the record file: one per durable write."""
    writes: list[str] = []
    real_replace: Callable[..., None] = os.replace

    def replace(source: object, destination: object, *args: object, **kwargs: object) -> None:
        if Path(str(destination)).name == RECORD_FILE:
            writes.append(str(destination))
        real_replace(source, destination, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return writes


@pytest.fixture
def failing_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fsync fails, as on a disk that has gone read-only or full."""

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)


async def test_a_slots_batch_is_one_durable_write(
    signer: Signer, pubkeys: list[bytes], record_writes: list[str], crypto_spy: CryptoSpy
) -> None:
    results = await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
    )
    assert all(result.signed for result in results)
    assert len(record_writes) == 1
    # The next slot's batch: again one write.
    await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(40, 4, 5)) for pubkey in pubkeys]
    )
    assert len(record_writes) == 2


async def test_batches_are_signed_once_per_distinct_root(
    signer: Signer, pubkeys: list[bytes], keypairs: list[tuple[int, bytes]], crypto_spy: CryptoSpy
) -> None:
    head_a = attestation_data(39, 3, 4, head=b"a")
    head_b = attestation_data(39, 3, 4, head=b"b")
    requests = [AttestationRequest(pubkey, head_a) for pubkey in pubkeys[:4]]
    requests += [AttestationRequest(pubkey, head_b) for pubkey in pubkeys[4:]]
    results = await signer.sign_attestations(requests)
    assert all(result.signed for result in results)
    calls = crypto_spy.by_name("sign_many")
    assert len(calls) == 2
    assert crypto_spy.by_name("sign") == []
    groups = sorted((sks for sks, _ in calls), key=len)
    secrets = [secret for secret, _ in keypairs]
    assert groups == [secrets[4:], secrets[:4]]
    assert len({message for _, message in calls}) == 2


async def test_a_failed_write_signs_nothing(
    signer: Signer,
    record: SlashingProtection,
    pubkeys: list[bytes],
    crypto_spy: CryptoSpy,
    failing_fsync: None,
) -> None:
    before = metrics.refusals("attestation", "record_write_failed")
    results = await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
    )
    assert [result.refusal.reason for result in results if result.refusal] == [
        RefusalReason.RECORD_WRITE_FAILED
    ] * len(pubkeys)
    assert not any(result.signed for result in results)
    assert metrics.refusals("attestation", "record_write_failed") == before + len(pubkeys)
    block_before = metrics.refusals("blinded_block", "record_write_failed")
    block = parse_produced_block("fulu", True, to_json(blinded_block(fulu.BeaconBlock(slot=40))))
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(pubkeys[0], block)
    assert refused.value.reason is RefusalReason.RECORD_WRITE_FAILED
    assert metrics.refusals("blinded_block", "record_write_failed") == block_before + 1
    assert crypto_spy.calls == []
    assert record.watermark(pubkeys[0]).target is None  # type: ignore[union-attr]
    assert record.watermark(pubkeys[0]).slot is None  # type: ignore[union-attr]


async def test_a_write_failure_is_told_apart_from_slashable_items(
    signer: Signer, pubkeys: list[bytes], monkeypatch: pytest.MonkeyPatch, crypto_spy: CryptoSpy
) -> None:
    await signer.sign_attestations([AttestationRequest(pubkeys[0], attestation_data(39, 3, 4))])
    signed_before = len(crypto_spy.calls)

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    results = await signer.sign_attestations(
        [
            AttestationRequest(pubkeys[0], attestation_data(39, 3, 4, head=b"x")),
            AttestationRequest(pubkeys[1], attestation_data(39, 3, 4)),
        ]
    )
    assert [result.refusal.reason for result in results if result.refusal] == [
        RefusalReason.SLASHABLE,
        RefusalReason.RECORD_WRITE_FAILED,
    ]
    assert len(crypto_spy.calls) == signed_before


async def test_signing_happens_after_the_record_is_written(
    signer: Signer,
    record: SlashingProtection,
    pubkeys: list[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the signature is made, the record on disk already holds the attestation."""
    import crypto_backend

    seen_on_disk: list[bytes] = []
    real_sign_many = crypto_backend.sign_many
    real_sign = crypto_backend.sign

    def sign_many(sks: list[int], message: bytes) -> list[bytes]:
        seen_on_disk.append(record.path.read_bytes())
        return real_sign_many(sks, message)

    def sign(sk: int, message: bytes) -> bytes:
        seen_on_disk.append(record.path.read_bytes())
        return real_sign(sk, message)

    monkeypatch.setattr(crypto_backend, "sign_many", sign_many)
    monkeypatch.setattr(crypto_backend, "sign", sign)
    await signer.sign_attestations([AttestationRequest(pubkeys[5], attestation_data(39, 3, 4))])
    assert len(seen_on_disk) == 1
    [entry] = [
        entry
        for entry in json.loads(seen_on_disk[0])["data"]
        if entry["pubkey"] == "0x" + pubkeys[5].hex()
    ]
    assert entry["signed_attestations"] == [{"source_epoch": "3", "target_epoch": "4"}]
