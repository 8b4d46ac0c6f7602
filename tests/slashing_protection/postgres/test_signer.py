"""The validator's real signer over the shared record: it signs after the commit, and it
reports the record's reasons (slashable, not registered, write failed) as it does for the
file record, without asking the record a second time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from slashing_protection import Watermark
from slashing_protection.postgres import PostgresSlashingProtection
from tests.slashing_protection.postgres.support import allow_commits, fail_commits, snapshot
from tests.validator.signing.support import GVR, Clock, attestation_data, make_chain
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import fulu, to_json
from validator.consensus.ssz.blocks import ProducedBlock, blinded_block, parse_produced_block
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, RefusalReason, SigningRefusedError

KEYS = [interop_keypair(index) for index in range(3)]
PUBKEYS = [pubkey for _, pubkey in KEYS]


def _block(slot: int) -> ProducedBlock:
    block = fulu.BeaconBlock(slot=slot, proposer_index=1)
    return parse_produced_block("fulu", True, to_json(blinded_block(block)))


@pytest.fixture
def shared(pg_url: str) -> Iterator[PostgresSlashingProtection]:
    # The last key is held by the signer but never registered in the record.
    with PostgresSlashingProtection.open(pg_url, GVR, register=PUBKEYS[:2]) as opened:
        yield opened


@pytest.fixture
async def signer(shared: PostgresSlashingProtection) -> AsyncIterator[Signer]:
    chain: ChainSpec = make_chain()
    made = Signer(chain, shared, clock=Clock())
    await made.add_keys({pubkey: secret for secret, pubkey in KEYS})
    yield made


async def test_blocks_signed_once_and_refusals_named(
    signer: Signer, shared: PostgresSlashingProtection
) -> None:
    first, _, unregistered = PUBKEYS
    signed = await signer.sign_block(first, _block(40))
    assert len(signed.signature) == 96
    assert shared.watermark(first) == Watermark(40, None, None)
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(first, _block(40))
    assert refused.value.reason is RefusalReason.SLASHABLE
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(unregistered, _block(41))
    assert refused.value.reason is RefusalReason.NOT_REGISTERED


async def test_attestations_signed_once_and_refusals_named(
    signer: Signer, shared: PostgresSlashingProtection
) -> None:
    first, second, unregistered = PUBKEYS
    results = await signer.sign_attestations(
        [AttestationRequest(key, attestation_data(39, 3, 4)) for key in PUBKEYS]
    )
    assert [r.refusal is None for r in results] == [True, True, False]
    assert results[2].refusal is not None
    assert results[2].refusal.reason is RefusalReason.NOT_REGISTERED
    again = await signer.sign_attestations([AttestationRequest(first, attestation_data(39, 3, 4))])
    assert again[0].refusal is not None
    assert again[0].refusal.reason is RefusalReason.SLASHABLE
    assert shared.watermark(second) == Watermark(None, 3, 4)
    assert not shared.contains(unregistered)


async def test_failed_commit_signs_nothing_and_says_so(
    signer: Signer, shared: PostgresSlashingProtection, pg_url: str
) -> None:
    before = snapshot(pg_url)
    fail_commits(pg_url)
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(PUBKEYS[0], _block(40))
    assert refused.value.reason is RefusalReason.RECORD_WRITE_FAILED
    [result] = await signer.sign_attestations(
        [AttestationRequest(PUBKEYS[1], attestation_data(39, 3, 4))]
    )
    assert result.refusal is not None
    assert result.refusal.reason is RefusalReason.RECORD_WRITE_FAILED
    assert snapshot(pg_url) == before
    allow_commits(pg_url)
    assert len((await signer.sign_block(PUBKEYS[0], _block(40))).signature) == 96
