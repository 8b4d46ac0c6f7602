"""Refusals: slashable, unknown key, not registered, far future, source above target, wrong
fork. Each signs nothing (the crypto spy sees no call for it), is counted, and the
pre-record ones leave the record untouched."""

from __future__ import annotations

import dataclasses
import logging

import pytest

import crypto_backend
from slashing_protection import SlashingProtection
from tests.validator.signing import metrics_support as metrics
from tests.validator.signing.support import Clock, CryptoSpy, attestation_data
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import electra, fulu, to_json
from validator.consensus.ssz.blocks import ProducedBlock, blinded_block, parse_produced_block
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason, SigningRefusedError


def fulu_block(slot: int, graffiti: bytes = b"") -> ProducedBlock:
    block = fulu.BeaconBlock(slot=slot, proposer_index=1)
    block.body.graffiti = graffiti.ljust(32, b"\0")
    return parse_produced_block("fulu", True, to_json(blinded_block(block)))


# --- slashable ---------------------------------------------------------------


async def test_second_block_at_a_slot_is_slashable(
    signer: Signer, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    await signer.sign_block(pubkeys[0], fulu_block(40, b"first"))
    calls = len(crypto_spy.calls)
    before = metrics.refusals("blinded_block", "slashable")
    for slot in (40, 39):
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_block(pubkeys[0], fulu_block(slot, b"second"))
        assert refused.value.reason is RefusalReason.SLASHABLE
    assert len(crypto_spy.calls) == calls
    assert metrics.refusals("blinded_block", "slashable") == before + 2
    # Another key is not affected.
    await signer.sign_block(pubkeys[1], fulu_block(40, b"second"))


async def test_double_vote_and_surround_are_refused(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    first = await signer.sign_attestations(
        [AttestationRequest(pubkeys[0], attestation_data(39, 3, 4))]
    )
    assert first[0].signed
    calls = len(crypto_spy.calls)
    before = metrics.refusals("attestation", "slashable")
    requests = [
        AttestationRequest(pubkeys[0], attestation_data(39, 3, 4, head=b"other head")),  # double
        AttestationRequest(pubkeys[0], attestation_data(39, 2, 5)),  # surrounds (3, 4)
        AttestationRequest(pubkeys[0], attestation_data(39, 2, 3)),  # below the target
    ]
    results = await signer.sign_attestations(requests)
    assert [result.refusal.reason for result in results if result.refusal] == [
        RefusalReason.SLASHABLE
    ] * 3
    assert not any(result.signed for result in results)
    assert len(crypto_spy.calls) == calls
    assert metrics.refusals("attestation", "slashable") == before + 3
    assert record.watermark(pubkeys[0]).target == 4  # type: ignore[union-attr]


# --- unknown and unregistered keys -----------------------------------------------


async def test_unknown_key_is_refused_for_every_kind(
    signer: Signer, record: SlashingProtection, crypto_spy: CryptoSpy
) -> None:
    _, stranger = interop_keypair(99)
    before = metrics.refusals("randao_reveal", "unknown_key")
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_randao_reveal(stranger, 5)
    assert refused.value.reason is RefusalReason.UNKNOWN_KEY
    assert metrics.refusals("randao_reveal", "unknown_key") == before + 1
    with pytest.raises(SigningRefusedError):
        await signer.sign_block(stranger, fulu_block(40))
    [result] = await signer.sign_attestations(
        [AttestationRequest(stranger, attestation_data(39, 3, 4))]
    )
    assert result.refusal is not None and result.refusal.reason is RefusalReason.UNKNOWN_KEY
    [proof] = await signer.sign_selection_proofs(40, [stranger])
    assert proof.refusal is not None and proof.refusal.reason is RefusalReason.UNKNOWN_KEY
    assert await signer.precheck_block(stranger, 41) is not None
    assert crypto_spy.calls == []
    assert not record.contains(stranger)


async def test_key_without_record_entry_is_refused(
    chain: ChainSpec, record: SlashingProtection, clock: Clock, crypto_spy: CryptoSpy
) -> None:
    secret, unregistered = interop_keypair(50)
    signer = Signer(chain, record, clock=clock)
    await signer.add_keys({unregistered: secret})
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(unregistered, fulu_block(40))
    assert refused.value.reason is RefusalReason.NOT_REGISTERED
    [result] = await signer.sign_attestations(
        [AttestationRequest(unregistered, attestation_data(39, 3, 4))]
    )
    assert result.refusal is not None and result.refusal.reason is RefusalReason.NOT_REGISTERED
    assert crypto_spy.calls == []
    assert not record.contains(unregistered)
    # Non-slashable kinds need no record entry.
    signature = await signer.sign_randao_reveal(unregistered, 5)
    assert len(signature) == 96


# --- far future, before the record ---------------------------------------------


async def test_far_future_block_never_reaches_the_record(
    signer: Signer,
    record: SlashingProtection,
    pubkeys: list[bytes],
    crypto_spy: CryptoSpy,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The clock is at slot 40; one epoch of margin allows up to slot 48.
    before = metrics.refusals("blinded_block", "far_future")
    with caplog.at_level(logging.WARNING, logger="validator.signer"):
        with pytest.raises(SigningRefusedError) as refused:
            await signer.sign_block(pubkeys[0], fulu_block(49))
    assert refused.value.reason is RefusalReason.FAR_FUTURE
    assert "far_future" in caplog.text and "slot 49" in caplog.text
    assert metrics.refusals("blinded_block", "far_future") == before + 1
    assert crypto_spy.calls == []
    assert record.watermark(pubkeys[0]).slot is None  # type: ignore[union-attr]
    signed = await signer.sign_block(pubkeys[0], fulu_block(48))
    assert len(signed.signature) == 96


async def test_far_future_attestation_never_reaches_the_record(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    # The clock is in epoch 5; one epoch of margin allows target 6.
    before = metrics.refusals("attestation", "far_future")
    results = await signer.sign_attestations(
        [
            AttestationRequest(pubkeys[0], attestation_data(39, 4, 7)),
            AttestationRequest(pubkeys[1], attestation_data(39, 4, 6)),
        ]
    )
    assert results[0].refusal is not None
    assert results[0].refusal.reason is RefusalReason.FAR_FUTURE
    assert results[1].signed
    assert metrics.refusals("attestation", "far_future") == before + 1
    assert crypto_spy.signed_secrets == [interop_keypair(1)[0]]
    assert record.watermark(pubkeys[0]).target is None  # type: ignore[union-attr]
    assert record.watermark(pubkeys[1]).target == 6  # type: ignore[union-attr]


async def test_the_margin_is_configurable_and_follows_the_clock(
    chain: ChainSpec,
    record: SlashingProtection,
    clock: Clock,
    keypairs: list[tuple[int, bytes]],
    pubkeys: list[bytes],
) -> None:
    signer = Signer(chain, record, clock=clock, far_future_margin_epochs=0)
    await signer.add_keys({pubkeys[0]: keypairs[0][0]})
    assert await signer.precheck_block(pubkeys[0], 40) is None
    assert await signer.precheck_block(pubkeys[0], 41) is not None
    [result] = await signer.sign_attestations(
        [AttestationRequest(pubkeys[0], attestation_data(39, 4, 6))]
    )
    assert result.refusal is not None and result.refusal.reason is RefusalReason.FAR_FUTURE
    clock.at_slot(48)  # epoch 6
    assert await signer.precheck_block(pubkeys[0], 48) is None
    [result] = await signer.sign_attestations(
        [AttestationRequest(pubkeys[0], attestation_data(47, 4, 6))]
    )
    assert result.signed
    with pytest.raises(ValueError):
        Signer(chain, record, far_future_margin_epochs=-1)


# --- source above target ---------------------------------------------------------


async def test_source_above_target_never_reaches_the_record(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    before = metrics.refusals("attestation", "source_above_target")
    [result] = await signer.sign_attestations(
        [AttestationRequest(pubkeys[2], attestation_data(39, 5, 4))]
    )
    assert result.refusal is not None
    assert result.refusal.reason is RefusalReason.SOURCE_ABOVE_TARGET
    assert metrics.refusals("attestation", "source_above_target") == before + 1
    assert crypto_spy.calls == []
    assert record.watermark(pubkeys[2]).source is None  # type: ignore[union-attr]


# --- forks -----------------------------------------------------------------------


async def test_block_of_the_wrong_fork_is_refused(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    electra_block = electra.BeaconBlock(slot=40, proposer_index=1)
    produced = parse_produced_block("electra", True, to_json(blinded_block(electra_block)))
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(pubkeys[0], produced)
    assert refused.value.reason is RefusalReason.WRONG_FORK
    assert crypto_spy.calls == []
    assert record.watermark(pubkeys[0]).slot is None  # type: ignore[union-attr]


async def test_epochs_past_an_unknown_fork_are_refused(
    chain: ChainSpec,
    record: SlashingProtection,
    clock: Clock,
    keypairs: list[tuple[int, bytes]],
    pubkeys: list[bytes],
    crypto_spy: CryptoSpy,
) -> None:
    forked = dataclasses.replace(chain, unknown_fork_epoch=6)
    signer = Signer(forked, record, clock=clock)
    await signer.add_keys({pubkeys[0]: keypairs[0][0]})
    [result] = await signer.sign_attestations(
        [AttestationRequest(pubkeys[0], attestation_data(47, 5, 6))]
    )
    assert result.refusal is not None and result.refusal.reason is RefusalReason.UNSUPPORTED_FORK
    assert await signer.precheck_block(pubkeys[0], 48) is not None
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_randao_reveal(pubkeys[0], 6)
    assert refused.value.reason is RefusalReason.UNSUPPORTED_FORK
    assert crypto_spy.calls == []
    assert record.watermark(pubkeys[0]).target is None  # type: ignore[union-attr]


# --- the block pre-check ---------------------------------------------------------


async def test_the_block_precheck_records_nothing(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes]
) -> None:
    assert await signer.precheck_block(pubkeys[3], 40) is None
    assert await signer.precheck_block(pubkeys[3], 40) is None
    assert record.watermark(pubkeys[3]).slot is None  # type: ignore[union-attr]
    await signer.sign_block(pubkeys[3], fulu_block(40))
    assert await signer.precheck_block(pubkeys[3], 40) is not None
    refusal = await signer.precheck_block(pubkeys[3], 40)
    assert refusal is not None and refusal.reason is RefusalReason.SLASHABLE
    assert await signer.precheck_block(pubkeys[3], 41) is None
    assert (await signer.precheck_block(pubkeys[3], 60)).reason is RefusalReason.FAR_FUTURE  # type: ignore[union-attr]


async def test_signatures_are_counted(signer: Signer, pubkeys: list[bytes]) -> None:
    before = metrics.signatures("attestation")
    results = await signer.sign_attestations(
        [AttestationRequest(pubkey, attestation_data(39, 3, 4)) for pubkey in pubkeys]
    )
    assert all(result.signed for result in results)
    assert metrics.signatures("attestation") == before + len(pubkeys)
    assert crypto_backend.verify(pubkeys[0], b"\0" * 32, results[0].signature or b"") is False


async def test_a_closed_record_signs_nothing(
    signer: Signer, record: SlashingProtection, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    record.close()
    [result] = await signer.sign_attestations(
        [AttestationRequest(pubkeys[0], attestation_data(39, 3, 4))]
    )
    assert result.refusal is not None
    assert result.refusal.reason is RefusalReason.RECORD_UNAVAILABLE
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(pubkeys[0], fulu_block(40))
    assert refused.value.reason is RefusalReason.RECORD_UNAVAILABLE
    assert await signer.precheck_block(pubkeys[0], 41) is not None
    assert crypto_spy.calls == []
