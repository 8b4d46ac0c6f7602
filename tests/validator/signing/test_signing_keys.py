"""Keys added and removed while the signer runs: a removed key signs nothing once its removal
has returned, including when the removal lands in the middle of a batch."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import pytest
from prometheus_client import REGISTRY

import crypto_backend
from slashing_protection import SlashingProtection, Verdict
from tests.validator.signing.support import CryptoSpy, attestation_data
from validator.consensus.interop import interop_keypair
from validator.signing.keys import KeyMismatchError
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason, SigningRefusedError

WAIT = 10.0  # seconds; bounds every wait on a thread


async def test_add_and_remove(signer: Signer, pubkeys: list[bytes]) -> None:
    assert signer.pubkeys() == pubkeys
    assert REGISTRY.get_sample_value("validator_signing_keys") == len(pubkeys)
    assert await signer.remove_keys([pubkeys[0], pubkeys[0], interop_keypair(77)[1]]) == [
        pubkeys[0]
    ]
    assert not signer.has_key(pubkeys[0])
    assert REGISTRY.get_sample_value("validator_signing_keys") == len(pubkeys) - 1
    # A key removed while running is refused as removed; one never held, as unknown.
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_randao_reveal(pubkeys[0], 5)
    assert refused.value.reason is RefusalReason.KEY_REMOVED
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_randao_reveal(interop_keypair(77)[1], 5)
    assert refused.value.reason is RefusalReason.UNKNOWN_KEY
    secret, pubkey = interop_keypair(0)
    await signer.add_keys({pubkey: secret})
    assert len(await signer.sign_randao_reveal(pubkey, 5)) == 96
    # Removed again and again added back: a key held once more signs, and when gone is
    # again "removed", not "unknown".
    assert await signer.remove_keys([pubkey]) == [pubkey]
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_randao_reveal(pubkey, 5)
    assert refused.value.reason is RefusalReason.KEY_REMOVED


async def test_a_secret_that_is_not_its_keys_is_refused(signer: Signer) -> None:
    secret_a, pubkey_a = interop_keypair(20)
    secret_b, pubkey_b = interop_keypair(21)
    with pytest.raises(KeyMismatchError):
        await signer.add_keys({pubkey_a: secret_a, pubkey_b: secret_a})
    assert not signer.has_key(pubkey_a) and not signer.has_key(pubkey_b)
    with pytest.raises(ValueError):
        await signer.add_keys({pubkey_a[:47]: secret_a})


class Gate:
    """Stops a blocking call in its thread until the test opens it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def pass_through(self) -> None:
        self.entered.set()
        assert self.opened.wait(WAIT), "the test never opened the gate"

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, WAIT)


async def test_removal_waits_for_signing_in_flight(
    signer: Signer, pubkeys: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    signed_at: list[float] = []
    real_sign_many = crypto_backend.sign_many

    def sign_many(sks: list[int], message: bytes) -> list[bytes]:
        gate.pass_through()
        signatures = real_sign_many(sks, message)
        signed_at.append(time.monotonic())
        return signatures

    monkeypatch.setattr(crypto_backend, "sign_many", sign_many)
    removed_at: list[float] = []

    async def remove() -> list[bytes]:
        removed = await signer.remove_keys([pubkeys[0]])
        removed_at.append(time.monotonic())
        return removed

    batch = asyncio.create_task(
        signer.sign_attestations(
            [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
        )
    )
    await gate.wait_entered()
    removal = asyncio.create_task(remove())
    await asyncio.sleep(0.05)
    assert not removal.done(), "removal returned while a signature with the key was being made"
    # From the moment removal started, new requests with the key are refused.
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_selection_proof(pubkeys[0], 40)
    assert refused.value.reason is RefusalReason.KEY_REMOVED
    gate.opened.set()
    results = await asyncio.wait_for(batch, WAIT)
    assert await asyncio.wait_for(removal, WAIT) == [pubkeys[0]]
    assert all(result.signed for result in results)  # it was in flight before the removal
    assert max(signed_at) < removed_at[0]


async def test_a_key_removed_mid_batch_signs_nothing(
    signer: Signer,
    record: SlashingProtection,
    pubkeys: list[bytes],
    keypairs: list[tuple[int, bytes]],
    crypto_spy: CryptoSpy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Removed while the batch's record write runs: recorded, but not signed."""
    gate = Gate()
    real_record = record.record_attestations

    def record_attestations(items: Sequence[tuple[bytes, int, int]]) -> list[Verdict]:
        gate.pass_through()
        return real_record(items)

    monkeypatch.setattr(record, "record_attestations", record_attestations)
    batch = asyncio.create_task(
        signer.sign_attestations(
            [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
        )
    )
    await gate.wait_entered()
    removal = asyncio.create_task(signer.remove_keys([pubkeys[2]]))
    await asyncio.sleep(0.05)
    assert not removal.done()
    gate.opened.set()
    assert await asyncio.wait_for(removal, WAIT) == [pubkeys[2]]
    results = await asyncio.wait_for(batch, WAIT)
    removed_secret = keypairs[2][0]
    assert removed_secret not in crypto_spy.signed_secrets
    assert results[2].refusal is not None
    assert results[2].refusal.reason is RefusalReason.KEY_REMOVED
    assert [result.signed for result in results] == [True, True, False, True, True, True]
    assert len(crypto_spy.signed_secrets) == len(pubkeys) - 1
    # The record covers more than was signed, never less.
    assert record.watermark(pubkeys[2]).target == 4  # type: ignore[union-attr]


async def test_a_cancelled_request_holds_the_key_until_its_thread_ends(
    signer: Signer, pubkeys: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate()
    finished = threading.Event()
    real_sign = crypto_backend.sign

    def sign(sk: int, message: bytes) -> bytes:
        gate.pass_through()
        signature = real_sign(sk, message)
        finished.set()
        return signature

    monkeypatch.setattr(crypto_backend, "sign", sign)
    request = asyncio.create_task(signer.sign_randao_reveal(pubkeys[1], 5))
    await gate.wait_entered()
    request.cancel()
    removal = asyncio.create_task(signer.remove_keys([pubkeys[1]]))
    await asyncio.sleep(0.05)
    assert not request.done() and not removal.done()
    gate.opened.set()
    assert await asyncio.wait_for(removal, WAIT) == [pubkeys[1]]
    assert finished.is_set()
    with pytest.raises(asyncio.CancelledError):
        await request
