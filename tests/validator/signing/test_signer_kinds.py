"""Every message kind, signed by the signer and verified against a root computed here.

Roots are computed by hand (sha256 merkleization and the domain formula) from
the message fields; only large containers' object roots (block bodies,
aggregates, contributions) come from their SSZ containers. The chain has fork
boundaries near the messages (Electra from slot 16, Fulu from slot 32), so a
wrong fork rule gives a signature that does not verify.
"""

from __future__ import annotations

from hashlib import sha256

import crypto_backend
from tests.support.roots_by_hand import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_APPLICATION_BUILDER,
    DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF,
    DOMAIN_RANDAO,
    DOMAIN_SELECTION_PROOF,
    DOMAIN_SYNC_COMMITTEE,
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
    DOMAIN_VOLUNTARY_EXIT,
    attestation_data_root,
    chunk,
    merkleize,
)
from tests.validator.signing import web3signer_cases
from tests.validator.signing.support import CryptoSpy, attestation_data, signing_root
from validator.consensus.forks import ForkName
from validator.consensus.ssz import (
    ContributionAndProof,
    SyncCommitteeContribution,
    ValidatorRegistrationV1,
    VoluntaryExit,
    electra,
    fulu,
    to_json,
)
from validator.consensus.ssz.blocks import blinded_block, parse_produced_block
from validator.signing.signer import Signer
from validator.signing.types import AttestationRequest, SyncSelectionRequest

HEAD = sha256(b"head").digest()


def header_root(block: object) -> bytes:
    """The block's root by hand: its header's fields with the body's root."""
    return merkleize(
        [
            chunk(int(block.slot)),  # type: ignore[attr-defined]
            chunk(int(block.proposer_index)),  # type: ignore[attr-defined]
            bytes(block.parent_root),  # type: ignore[attr-defined]
            bytes(block.state_root),  # type: ignore[attr-defined]
            bytes(block.body.hash_tree_root()),  # type: ignore[attr-defined]
        ]
    )


async def test_full_electra_block(signer: Signer, pubkeys: list[bytes]) -> None:
    block = electra.BeaconBlock(slot=20, proposer_index=7, parent_root=HEAD)
    block.body.execution_payload.transactions.append(b"\x02\xf8")
    produced = parse_produced_block("electra", False, to_json(electra.BlockContents(block=block)))
    signed = await signer.sign_block(pubkeys[0], produced)
    expected = signing_root(header_root(block), DOMAIN_BEACON_PROPOSER, ForkName.ELECTRA)
    assert signed.signing_root == expected
    assert crypto_backend.verify(pubkeys[0], expected, signed.signature)
    assert isinstance(signed.signed, electra.SignedBlockContents)
    assert bytes(signed.signed.signed_block.signature) == signed.signature
    assert signed.signed.signed_block.message.hash_tree_root() == block.hash_tree_root()


async def test_blinded_fulu_block(signer: Signer, pubkeys: list[bytes]) -> None:
    full = fulu.BeaconBlock(slot=40, proposer_index=3, parent_root=HEAD)
    block = blinded_block(full)
    produced = parse_produced_block("fulu", True, to_json(block))
    signed = await signer.sign_block(pubkeys[1], produced)
    expected = signing_root(header_root(full), DOMAIN_BEACON_PROPOSER, ForkName.FULU)
    assert crypto_backend.verify(pubkeys[1], expected, signed.signature)
    assert isinstance(signed.signed, fulu.SignedBlindedBeaconBlock)
    assert bytes(signed.signed.signature) == signed.signature


async def test_attestation_batch(signer: Signer, pubkeys: list[bytes]) -> None:
    data = attestation_data(slot=39, source=3, target=4)
    results = await signer.sign_attestations([AttestationRequest(pk, data) for pk in pubkeys])
    expected = signing_root(attestation_data_root(data), DOMAIN_BEACON_ATTESTER, ForkName.FULU)
    assert [result.pubkey for result in results] == pubkeys
    for pubkey, result in zip(pubkeys, results, strict=True):
        assert result.refusal is None
        assert result.signature is not None
        assert crypto_backend.verify(pubkey, expected, result.signature)


async def test_attestation_uses_its_target_epochs_fork(
    signer: Signer, pubkeys: list[bytes]
) -> None:
    data = attestation_data(slot=31, source=2, target=4)  # slot in Electra, target in Fulu
    [result] = await signer.sign_attestations([AttestationRequest(pubkeys[0], data)])
    assert result.signature is not None
    expected = signing_root(attestation_data_root(data), DOMAIN_BEACON_ATTESTER, ForkName.FULU)
    assert crypto_backend.verify(pubkeys[0], expected, result.signature)


async def test_randao_reveal(signer: Signer, pubkeys: list[bytes]) -> None:
    signature = await signer.sign_randao_reveal(pubkeys[2], 5)
    expected = signing_root(chunk(5), DOMAIN_RANDAO, ForkName.FULU)
    assert crypto_backend.verify(pubkeys[2], expected, signature)


async def test_selection_proof(signer: Signer, pubkeys: list[bytes]) -> None:
    signature = await signer.sign_selection_proof(pubkeys[2], 12)
    expected = signing_root(chunk(12), DOMAIN_SELECTION_PROOF, ForkName.DENEB)
    assert crypto_backend.verify(pubkeys[2], expected, signature)


async def test_aggregate_and_proof(signer: Signer, pubkeys: list[bytes]) -> None:
    aggregate_and_proof = web3signer_cases.aggregate_and_proof()
    signed = await signer.sign_aggregate_and_proof(pubkeys[3], aggregate_and_proof)
    object_root = merkleize(
        [
            chunk(9),
            bytes(aggregate_and_proof.aggregate.hash_tree_root()),
            merkleize([bytes(32)] * 3),  # the 96-byte selection proof: three zero chunks
        ]
    )
    expected = signing_root(object_root, DOMAIN_AGGREGATE_AND_PROOF, ForkName.ELECTRA)
    assert isinstance(signed, electra.SignedAggregateAndProof)
    assert crypto_backend.verify(pubkeys[3], expected, bytes(signed.signature))
    assert signed.message.hash_tree_root() == aggregate_and_proof.hash_tree_root()


async def test_sync_committee_message(signer: Signer, pubkeys: list[bytes]) -> None:
    signature = await signer.sign_sync_committee_message(pubkeys[4], 40, HEAD)
    expected = signing_root(HEAD, DOMAIN_SYNC_COMMITTEE, ForkName.FULU)
    assert crypto_backend.verify(pubkeys[4], expected, signature)


async def test_sync_committee_selection_proof(signer: Signer, pubkeys: list[bytes]) -> None:
    signature = await signer.sign_sync_committee_selection_proof(pubkeys[4], 30, 2)
    expected = signing_root(
        merkleize([chunk(30), chunk(2)]), DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, ForkName.ELECTRA
    )
    assert crypto_backend.verify(pubkeys[4], expected, signature)


async def test_contribution_and_proof(signer: Signer, pubkeys: list[bytes]) -> None:
    contribution = SyncCommitteeContribution(slot=31, beacon_block_root=HEAD, subcommittee_index=2)
    contribution.aggregation_bits[5] = True
    contribution_and_proof = ContributionAndProof(
        aggregator_index=11, contribution=contribution, selection_proof=bytes(96)
    )
    signed = await signer.sign_contribution_and_proof(pubkeys[5], contribution_and_proof)
    object_root = merkleize(
        [chunk(11), bytes(contribution.hash_tree_root()), merkleize([bytes(32)] * 3)]
    )
    expected = signing_root(object_root, DOMAIN_CONTRIBUTION_AND_PROOF, ForkName.ELECTRA)
    assert crypto_backend.verify(pubkeys[5], expected, bytes(signed.signature))
    assert signed.message.hash_tree_root() == contribution_and_proof.hash_tree_root()


async def test_voluntary_exit_uses_capella_version(signer: Signer, pubkeys: list[bytes]) -> None:
    signed = await signer.sign_voluntary_exit(
        pubkeys[0], VoluntaryExit(epoch=3, validator_index=12)
    )
    expected = signing_root(
        merkleize([chunk(3), chunk(12)]), DOMAIN_VOLUNTARY_EXIT, ForkName.CAPELLA
    )
    assert crypto_backend.verify(pubkeys[0], expected, bytes(signed.signature))
    assert int(signed.message.validator_index) == 12


def _registration(pubkey: bytes) -> ValidatorRegistrationV1:
    return ValidatorRegistrationV1(
        fee_recipient=bytes(range(20)), gas_limit=36_000_000, timestamp=1_700_000_123, pubkey=pubkey
    )


def _registration_root(pubkey: bytes) -> bytes:
    object_root = merkleize(
        [
            bytes(range(20)) + bytes(12),
            chunk(36_000_000),
            chunk(1_700_000_123),
            sha256(pubkey + bytes(16)).digest(),
        ]
    )
    return signing_root(object_root, DOMAIN_APPLICATION_BUILDER, ForkName.PHASE0, bytes(32))


async def test_validator_registration(signer: Signer, pubkeys: list[bytes]) -> None:
    signed = await signer.sign_validator_registration(pubkeys[1], _registration(pubkeys[1]))
    assert crypto_backend.verify(
        pubkeys[1], _registration_root(pubkeys[1]), bytes(signed.signature)
    )


# --- batch forms of the non-slashable kinds --------------------------------


async def test_selection_proofs_for_many_keys_share_one_sign_many(
    signer: Signer, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    results = await signer.sign_selection_proofs(33, pubkeys)
    expected = signing_root(chunk(33), DOMAIN_SELECTION_PROOF, ForkName.FULU)
    for pubkey, result in zip(pubkeys, results, strict=True):
        assert result.signature is not None
        assert crypto_backend.verify(pubkey, expected, result.signature)
    assert crypto_spy.by_name("sign_many") == [(crypto_spy.signed_secrets, expected)]
    assert len(crypto_spy.signed_secrets) == len(pubkeys)


async def test_sync_committee_messages(signer: Signer, pubkeys: list[bytes]) -> None:
    results = await signer.sign_sync_committee_messages(17, HEAD, pubkeys[:3])
    expected = signing_root(HEAD, DOMAIN_SYNC_COMMITTEE, ForkName.ELECTRA)
    for pubkey, result in zip(pubkeys[:3], results, strict=True):
        assert result.signature is not None
        assert crypto_backend.verify(pubkey, expected, result.signature)


async def test_sync_committee_selection_proofs_group_by_subcommittee(
    signer: Signer, pubkeys: list[bytes], crypto_spy: CryptoSpy
) -> None:
    requests = [SyncSelectionRequest(pubkey, 40, index % 2) for index, pubkey in enumerate(pubkeys)]
    results = await signer.sign_sync_committee_selection_proofs(requests)
    for request, result in zip(requests, results, strict=True):
        expected = signing_root(
            merkleize([chunk(40), chunk(request.subcommittee_index)]),
            DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
            ForkName.FULU,
        )
        assert result.signature is not None
        assert crypto_backend.verify(request.pubkey, expected, result.signature)
    assert sorted(len(sks) for sks, _ in crypto_spy.by_name("sign_many")) == [3, 3]


async def test_validator_registrations(signer: Signer, pubkeys: list[bytes]) -> None:
    results = await signer.sign_validator_registrations([_registration(pk) for pk in pubkeys])
    for pubkey, result in zip(pubkeys, results, strict=True):
        assert result.pubkey == pubkey
        assert result.signature is not None
        assert crypto_backend.verify(pubkey, _registration_root(pubkey), result.signature)
