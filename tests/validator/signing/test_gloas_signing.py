"""Every Gloas message kind through the signer, locally and through a real ``validator signer``.

The chain forks to Gloas at epoch 5 (slot 40, where the test clock stands). Roots of the
Gloas containers are proven against the pinned pyspec in test_gloas_pyspec.py; here each
signature is checked against a signing root computed by hand from the object root, the
kind's domain type and the simulated Gloas version, so a wrong domain or fork shows.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from hashlib import sha256
from pathlib import Path

import pytest

import crypto_backend
from slashing_protection import SlashingProtection
from tests.support.roots_by_hand import signing_root_by_hand
from tests.validator.signing.metrics_support import refusals
from tests.validator.signing.support import GVR, Clock, attestation_data, make_chain
from validator.consensus.chain_preset import simulated_fork_version
from validator.consensus.domains import (
    DOMAIN_BEACON_BUILDER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_PROPOSER_PREFERENCES,
    DOMAIN_PTC_ATTESTER,
)
from validator.consensus.forks import ForkName
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import electra, gloas
from validator.consensus.ssz.codec import to_json
from validator.consensus.ssz.gloas_blocks import parse_produced_block_v4
from validator.signer_server import SignerApi, start_signer_api
from validator.signing.remote import RemoteSigner, RemoteSignerSettings
from validator.signing.signer import Signer
from validator.signing.types import (
    AttestationRequest,
    PayloadAttestationRequest,
    RefusalReason,
    SigningRefusedError,
)
from validator.signing.web3signer import (
    SignType,
    fork_info_at,
    parse_signing_request,
    request_for,
)

GLOAS_EPOCH = 5
FIRST_GLOAS_SLOT = 40
GLOAS_VERSION = simulated_fork_version(ForkName.GLOAS)
KEYS = [interop_keypair(index) for index in range(4)]
HEAD = sha256(b"gloas head").digest()


@pytest.fixture
def gloas_chain() -> ChainSpec:
    return make_chain(fork_epochs={ForkName.ELECTRA: 2, ForkName.FULU: 4, ForkName.GLOAS: 5})


@pytest.fixture
async def gloas_signer(
    tmp_path: Path, gloas_chain: ChainSpec, clock: Clock
) -> AsyncIterator[tuple[Signer, SlashingProtection]]:
    with SlashingProtection.open(tmp_path, GVR, register=[pk for _, pk in KEYS]) as record:
        signer = Signer(gloas_chain, record, clock=clock)
        await signer.add_keys({pubkey: secret for secret, pubkey in KEYS})
        yield signer, record


def _by_hand(value: object, domain_type: bytes, version: bytes = GLOAS_VERSION) -> bytes:
    object_root = bytes(value.hash_tree_root())  # type: ignore[attr-defined]
    return signing_root_by_hand(object_root, domain_type, version, GVR)


def _self_built_block(slot: int, proposer: int) -> tuple[object, object]:
    block = gloas.BeaconBlock(slot=slot, proposer_index=proposer, parent_root=HEAD)
    bid = block.body.signed_execution_payload_bid
    bid.message.builder_index = gloas.BUILDER_INDEX_SELF_BUILD
    bid.message.slot = slot
    bid.signature = gloas.G2_POINT_AT_INFINITY
    envelope = gloas.ExecutionPayloadEnvelope(
        builder_index=gloas.BUILDER_INDEX_SELF_BUILD,
        beacon_block_root=block.hash_tree_root(),
        parent_beacon_block_root=HEAD,
    )
    envelope.payload.slot_number = slot
    return block, envelope


async def test_payload_attestations_are_signed_under_the_ptc_domain(
    gloas_signer: tuple[Signer, SlashingProtection],
) -> None:
    signer, _ = gloas_signer
    data = gloas.PayloadAttestationData(
        beacon_block_root=HEAD, slot=41, payload_present=True, blob_data_available=True
    )
    requests = [
        PayloadAttestationRequest(pubkey, index, data) for index, (_, pubkey) in enumerate(KEYS)
    ]
    results = await signer.sign_payload_attestations(requests)
    root = _by_hand(data, DOMAIN_PTC_ATTESTER)
    for (_, pubkey), result in zip(KEYS, results, strict=True):
        assert result.signature is not None, result.refusal
        assert crypto_backend.verify(pubkey, root, result.signature)


async def test_gloas_kinds_before_the_fork_are_refused_and_counted(
    gloas_signer: tuple[Signer, SlashingProtection],
) -> None:
    signer, _ = gloas_signer
    pubkey = KEYS[0][1]
    data = gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=FIRST_GLOAS_SLOT - 1)
    before = refusals("payload_attestation", "wrong_fork")
    [result] = await signer.sign_payload_attestations([PayloadAttestationRequest(pubkey, 0, data)])
    assert result.refusal is not None and result.refusal.reason is RefusalReason.WRONG_FORK
    assert refusals("payload_attestation", "wrong_fork") == before + 1
    preferences = gloas.ProposerPreferences(proposal_slot=FIRST_GLOAS_SLOT - 1)
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_proposer_preferences(pubkey, preferences)
    assert refused.value.reason is RefusalReason.WRONG_FORK


async def test_preferences_take_the_fork_of_the_proposal_epoch(
    gloas_signer: tuple[Signer, SlashingProtection], clock: Clock
) -> None:
    """Signed in the last Fulu epoch for a Gloas slot: the Gloas version, not Fulu's."""
    signer, _ = gloas_signer
    clock.at_slot(FIRST_GLOAS_SLOT - 3)
    pubkey = KEYS[1][1]
    preferences = gloas.ProposerPreferences(
        dependent_root=HEAD,
        proposal_slot=FIRST_GLOAS_SLOT + 2,
        validator_index=1,
        fee_recipient=b"\x11" * 20,
        target_gas_limit=60_000_000,
    )
    signed = await signer.sign_proposer_preferences(pubkey, preferences)
    root = _by_hand(preferences, DOMAIN_PROPOSER_PREFERENCES)
    assert crypto_backend.verify(pubkey, root, bytes(signed.signature))
    fulu_root = _by_hand(
        preferences, DOMAIN_PROPOSER_PREFERENCES, simulated_fork_version(ForkName.FULU)
    )
    assert not crypto_backend.verify(pubkey, fulu_root, bytes(signed.signature))


async def test_a_self_built_block_and_its_envelope(
    gloas_signer: tuple[Signer, SlashingProtection],
) -> None:
    """The block through the record (a second block at the slot refused); the envelope under
    DOMAIN_BEACON_BUILDER with the proposer's key, with no record entry."""
    signer, record = gloas_signer
    secret, pubkey = KEYS[2]
    block, envelope = _self_built_block(FIRST_GLOAS_SLOT, proposer=2)
    contents = gloas.BlockContents(block=block, execution_payload_envelope=envelope)
    produced = parse_produced_block_v4("gloas", True, to_json(contents))
    assert produced.self_built and produced.envelope is not None
    signed = await signer.sign_block(pubkey, produced)
    assert signed.signing_root == _by_hand(block, DOMAIN_BEACON_PROPOSER)
    assert crypto_backend.verify(pubkey, signed.signing_root, signed.signature)
    assert type(signed.signed) is gloas.SignedBeaconBlock
    signed_envelope = await signer.sign_execution_payload_envelope(
        pubkey, produced.envelope, FIRST_GLOAS_SLOT
    )
    assert crypto_backend.verify(
        pubkey, _by_hand(envelope, DOMAIN_BEACON_BUILDER), bytes(signed_envelope.signature)
    )
    watermark = record.watermark(pubkey)
    assert watermark is not None and watermark.slot == FIRST_GLOAS_SLOT
    other, _ = _self_built_block(FIRST_GLOAS_SLOT, proposer=2)
    other.state_root = HEAD
    with pytest.raises(SigningRefusedError) as refused:
        await signer.sign_block(pubkey, parse_produced_block_v4("gloas", False, to_json(other)))
    assert refused.value.reason is RefusalReason.SLASHABLE


async def test_index_zero_and_one_for_one_target_are_a_double_vote(
    gloas_signer: tuple[Signer, SlashingProtection],
) -> None:
    """From Gloas ``data.index`` is the payload-status vote: EMPTY (0) and FULL (1) votes for
    the same target are two attestations, and the record refuses the second."""
    signer, _ = gloas_signer
    pubkey = KEYS[3][1]
    empty = attestation_data(slot=41, source=4, target=5)
    full = attestation_data(slot=41, source=4, target=5)
    full.index = 1
    [first] = await signer.sign_attestations([AttestationRequest(pubkey, full)])
    assert first.signed, first.refusal
    [second] = await signer.sign_attestations([AttestationRequest(pubkey, empty)])
    assert second.refusal is not None and second.refusal.reason is RefusalReason.SLASHABLE


async def test_gloas_aggregates_use_the_progressive_attestation(
    gloas_signer: tuple[Signer, SlashingProtection],
) -> None:
    signer, _ = gloas_signer
    pubkey = KEYS[0][1]
    data = attestation_data(slot=41, source=4, target=5)
    aggregate = gloas.AggregateAndProof(aggregator_index=0, aggregate=gloas.Attestation(data=data))
    signed = await signer.sign_aggregate_and_proof(pubkey, aggregate)
    assert type(signed) is gloas.SignedAggregateAndProof
    # An Electra aggregate in a Gloas slot has another root than the chain verifies.
    with pytest.raises(TypeError, match="AggregateAndProof"):
        await signer.sign_aggregate_and_proof(
            pubkey,
            electra.AggregateAndProof(aggregator_index=0, aggregate=electra.Attestation(data=data)),
        )


def test_gloas_bodies_parse_back_to_the_chain_root(gloas_chain: ChainSpec) -> None:
    """Each Gloas body, as the client writes it, parses to the same message, and its root
    recomputed from body and fork_info alone is the chain's (the ``validator signer`` check)."""
    _, envelope = _self_built_block(FIRST_GLOAS_SLOT + 1, proposer=0)
    messages = [
        (
            SignType.PAYLOAD_ATTESTATION_MESSAGE,
            gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=43, payload_present=True),
            _by_hand(
                gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=43, payload_present=True),
                DOMAIN_PTC_ATTESTER,
            ),
        ),
        (SignType.EXECUTION_PAYLOAD_ENVELOPE, envelope, _by_hand(envelope, DOMAIN_BEACON_BUILDER)),
        (
            SignType.PROPOSER_PREFERENCES,
            gloas.ProposerPreferences(proposal_slot=FIRST_GLOAS_SLOT, validator_index=3),
            _by_hand(
                gloas.ProposerPreferences(proposal_slot=FIRST_GLOAS_SLOT, validator_index=3),
                DOMAIN_PROPOSER_PREFERENCES,
            ),
        ),
    ]
    for sign_type, message, root in messages:
        body = request_for(sign_type, gloas_chain, message, root, version=ForkName.GLOAS).to_json()
        assert (
            body[next(k for k in body if k not in ("type", "fork_info", "signingRoot"))]["version"]
            == "GLOAS"
        )
        parsed = parse_signing_request(body)
        assert parsed.type is sign_type and parsed.version is ForkName.GLOAS
        assert parsed.message.hash_tree_root() == message.hash_tree_root()
        assert (
            parsed.computed_root(gloas_chain.slots_per_epoch, gloas_chain.genesis_fork_version)
            == root
        )


async def test_every_gloas_kind_through_validator_signer(
    tmp_path: Path, gloas_chain: ChainSpec, clock: Clock
) -> None:
    """Client remote keys -> ``validator signer``: the bodies parse, the server recomputes
    each root from the body and checks it against the chain's, and the answers verify.
    The staged Web3Signer spec predates these types, so no strict checker runs here."""
    server_dir, client_dir = tmp_path / "server", tmp_path / "client"
    server_dir.mkdir()
    client_dir.mkdir()
    pubkeys = [pk for _, pk in KEYS]
    with (
        SlashingProtection.open(server_dir, GVR, register=pubkeys) as server_record,
        SlashingProtection.open(client_dir, GVR, register=pubkeys) as client_record,
    ):
        server_signer = Signer(gloas_chain, server_record, clock=clock)
        await server_signer.add_keys({pubkey: secret for secret, pubkey in KEYS})
        runner = await start_signer_api(
            SignerApi(server_signer, gloas_chain, clock=clock), "127.0.0.1", 0
        )
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        remote = RemoteSigner(url, RemoteSignerSettings(timeout=2.0, attempts=1, retry_delay=0.01))
        client = Signer(gloas_chain, client_record, clock=clock)
        await client.add_remote_keys({pubkey: remote for pubkey in pubkeys})
        try:
            data = gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=41)
            [vote] = await client.sign_payload_attestations(
                [PayloadAttestationRequest(pubkeys[0], 0, data)]
            )
            assert vote.signature is not None, vote.refusal
            assert crypto_backend.verify(
                pubkeys[0], _by_hand(data, DOMAIN_PTC_ATTESTER), vote.signature
            )
            block, envelope = _self_built_block(FIRST_GLOAS_SLOT, proposer=1)
            produced = parse_produced_block_v4("gloas", False, to_json(block))
            signed_block = await client.sign_block(pubkeys[1], produced)
            assert crypto_backend.verify(
                pubkeys[1], _by_hand(block, DOMAIN_BEACON_PROPOSER), signed_block.signature
            )
            signed_envelope = await client.sign_execution_payload_envelope(
                pubkeys[1], envelope, FIRST_GLOAS_SLOT
            )
            assert crypto_backend.verify(
                pubkeys[1],
                _by_hand(envelope, DOMAIN_BEACON_BUILDER),
                bytes(signed_envelope.signature),
            )
            preferences = gloas.ProposerPreferences(proposal_slot=44, validator_index=2)
            signed_preferences = await client.sign_proposer_preferences(pubkeys[2], preferences)
            assert crypto_backend.verify(
                pubkeys[2],
                _by_hand(preferences, DOMAIN_PROPOSER_PREFERENCES),
                bytes(signed_preferences.signature),
            )
            aggregate = gloas.AggregateAndProof(
                aggregator_index=3,
                aggregate=gloas.Attestation(data=attestation_data(slot=41, source=4, target=5)),
            )
            await client.sign_aggregate_and_proof(pubkeys[3], aggregate)
            # Both records hold the block: the client's before it asked, the signer's own.
            for record in (client_record, server_record):
                watermark = record.watermark(pubkeys[1])
                assert watermark is not None and watermark.slot == FIRST_GLOAS_SLOT
        finally:
            await remote.close()
            await runner.cleanup()


async def test_validator_signer_refuses_gloas_bodies_that_disagree_with_the_chain(
    tmp_path: Path, gloas_chain: ChainSpec, clock: Clock
) -> None:
    import aiohttp

    with SlashingProtection.open(tmp_path, GVR, register=[KEYS[0][1]]) as record:
        signer = Signer(gloas_chain, record, clock=clock)
        await signer.add_keys({KEYS[0][1]: KEYS[0][0]})
        runner = await start_signer_api(SignerApi(signer, gloas_chain, clock=clock), "127.0.0.1", 0)
        url = f"http://127.0.0.1:{runner.addresses[0][1]}/api/v1/eth2/sign/0x{KEYS[0][1].hex()}"
        data = gloas.PayloadAttestationData(beacon_block_root=HEAD, slot=41)
        good = {
            "type": SignType.PAYLOAD_ATTESTATION_MESSAGE.value,
            "fork_info": fork_info_at(gloas_chain, 5).to_json(),
            "payload_attestation_data": {"version": "GLOAS", "data": to_json(data)},
        }
        wrong_version = {
            **good,
            "payload_attestation_data": {"version": "FULU", "data": to_json(data)},
        }
        wrong_root = {**good, "signingRoot": "0x" + "11" * 32}
        _, envelope = _self_built_block(FIRST_GLOAS_SLOT, proposer=0)
        envelope.builder_index = 7
        external = {
            "type": SignType.EXECUTION_PAYLOAD_ENVELOPE.value,
            "fork_info": fork_info_at(gloas_chain, 5).to_json(),
            "execution_payload_envelope": {"version": "GLOAS", "data": to_json(envelope)},
        }
        fulu_info = {**good, "fork_info": fork_info_at(gloas_chain, 4).to_json()}
        try:
            async with aiohttp.ClientSession() as session:
                async with session.post(url, json=good) as answer:
                    assert answer.status == 200, await answer.text()
                for body, expected in (
                    (wrong_version, "has no PAYLOAD_ATTESTATION_MESSAGE"),
                    (wrong_root, "signingRoot"),
                    (external, "self-built"),
                    (fulu_info, "fork_info does not give the chain's domain"),
                ):
                    async with session.post(url, json=body) as answer:
                        text = await answer.text()
                        assert answer.status == 400, text
                        assert expected in text
        finally:
            await runner.cleanup()
