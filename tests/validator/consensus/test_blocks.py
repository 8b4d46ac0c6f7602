"""Blocks: header and blinded roots equal the block root, produceBlockV3 replies in JSON and SSZ."""

from __future__ import annotations

import json
from hashlib import sha256
from typing import Any

import pytest
import yaml

from tests.support.official_vectors import official_vectors
from validator.consensus import ssz
from validator.consensus.forks import ForkName
from validator.consensus.ssz import capella, deneb, electra, fulu
from validator.consensus.ssz.blocks import (
    ProducedBlock,
    UnsupportedForkError,
    blinded_block,
    block_header,
    block_types,
    execution_payload_header,
    parse_produced_block,
    parse_produced_block_ssz,
)

SPEC_TESTS = "consensus-spec-tests_v1.6.0-beta.0"


def _root(label: str) -> bytes:
    return sha256(label.encode()).digest()


def _electra_block(slot: int = 40) -> Any:
    """A block with something in every list a validator's block usually carries."""
    data = ssz.AttestationData(
        slot=slot - 1,
        index=0,
        beacon_block_root=_root("head"),
        source=ssz.Checkpoint(epoch=3, root=_root("source")),
        target=ssz.Checkpoint(epoch=4, root=_root("target")),
    )
    attestation = electra.Attestation(data=data, signature=b"\xaa" * 96)
    for bit in (True, False, True):
        attestation.aggregation_bits.append(bit)
    attestation.committee_bits[1] = True
    payload = deneb.ExecutionPayload(
        parent_hash=_root("parent"),
        fee_recipient=b"\x11" * 20,
        block_number=77,
        gas_limit=36_000_000,
        timestamp=1_700_000_480,
        extra_data=b"unslashable",
        base_fee_per_gas=7 * 10**9,
        block_hash=_root("block hash"),
        transactions=[b"\x02" + bytes(100), b"\x01\x02\x03"],
        withdrawals=[
            capella.Withdrawal(index=5, validator_index=6, address=b"\x22" * 20, amount=10)
        ],
        blob_gas_used=131072,
    )
    requests = electra.ExecutionRequests(
        deposits=[
            electra.DepositRequest(
                pubkey=b"\x33" * 48,
                withdrawal_credentials=_root("wc"),
                amount=32 * 10**9,
                signature=b"\x44" * 96,
                index=9,
            )
        ],
        consolidations=[
            electra.ConsolidationRequest(
                source_address=b"\x55" * 20, source_pubkey=b"\x66" * 48, target_pubkey=b"\x77" * 48
            )
        ],
    )
    body = electra.BeaconBlockBody(
        randao_reveal=b"\x88" * 96,
        graffiti=b"graffiti".ljust(32, b"\x00"),
        attestations=[attestation],
        execution_payload=payload,
        blob_kzg_commitments=[b"\x99" * 48],
        execution_requests=requests,
    )
    return electra.BeaconBlock(
        slot=slot,
        proposer_index=12,
        parent_root=_root("parent block"),
        state_root=_root("state"),
        body=body,
    )


def _vector_block(group: str, case: str, container: Any) -> tuple[Any, str]:
    folder = official_vectors(
        "ssz", SPEC_TESTS, "mainnet", group, "BeaconBlock", "ssz_random", case
    )
    value = yaml.safe_load((folder / "value.yaml").read_text())
    root = yaml.safe_load((folder / "roots.yaml").read_text())["root"]
    return ssz.from_json(container, value), root


@pytest.mark.parametrize(
    ("group", "case", "container"),
    [
        ("electra_fulu", "case_2", electra.BeaconBlock),
        ("electra_fulu", "case_4", fulu.BeaconBlock),
        ("deneb", "case_2", deneb.BeaconBlock),
    ],
)
def test_official_blocks_header_and_blinded_roots(group: str, case: str, container: Any) -> None:
    block, root = _vector_block(group, case, container)
    assert "0x" + ssz.hash_tree_root(block_header(block)).hex() == root
    blinded = blinded_block(block)
    assert "0x" + ssz.hash_tree_root(blinded).hex() == root
    assert "0x" + ssz.hash_tree_root(block_header(blinded)).hex() == root
    # The blinded form survives the API's JSON.
    again = ssz.from_json(type(blinded), ssz.to_json(blinded))
    assert "0x" + ssz.hash_tree_root(again).hex() == root


def test_payload_header_commits_to_the_payload() -> None:
    payload = _electra_block().body.execution_payload
    header = execution_payload_header(payload)
    assert bytes(header.transactions_root) == bytes(payload.transactions.hash_tree_root())
    assert bytes(header.withdrawals_root) == bytes(payload.withdrawals.hash_tree_root())
    assert header.blob_gas_used == 131072
    assert header.hash_tree_root() == payload.hash_tree_root()
    with pytest.raises(TypeError, match="not an execution payload"):
        execution_payload_header(header)


def test_constructed_block_roots_agree() -> None:
    block = _electra_block()
    root = ssz.hash_tree_root(block)
    assert ssz.hash_tree_root(block_header(block)) == root
    assert ssz.hash_tree_root(blinded_block(block)) == root
    # A change anywhere in the payload changes both the full and the blinded root.
    changed = _electra_block()
    changed.body.execution_payload.transactions.append(b"\x03")
    assert ssz.hash_tree_root(changed) != root
    assert ssz.hash_tree_root(blinded_block(changed)) == ssz.hash_tree_root(changed)


def test_blinded_block_refuses_what_is_not_a_full_block() -> None:
    with pytest.raises(TypeError, match="not a supported block"):
        blinded_block(blinded_block(_electra_block()))


def test_block_types_by_fork() -> None:
    assert block_types("electra").block is electra.BeaconBlock
    assert block_types(ForkName.FULU).block_contents is fulu.BlockContents
    assert block_types("deneb").blinded_block is deneb.BlindedBeaconBlock
    assert block_types("bellatrix").block_contents is None
    for fork in ("phase0", "altair", "capella"):
        with pytest.raises(UnsupportedForkError, match=f"no block containers for {fork}"):
            block_types(fork)
    # Gloas blocks carry no payload and are never blinded: produceBlockV4 reads them.
    with pytest.raises(UnsupportedForkError, match="no block containers for gloas"):
        block_types("gloas")
    with pytest.raises(ValueError, match="unknown fork 'heze'"):
        block_types("heze")


def _contents_json(block: Any, proofs: int) -> dict[str, Any]:
    return {
        "block": ssz.to_json(block),
        "kzg_proofs": ["0x" + "c0" + "00" * 47] * proofs,
        "blobs": ["0x" + "ab" * 131072],
    }


@pytest.mark.parametrize(("fork", "proofs"), [("electra", 1), ("fulu", 128)])
def test_produced_full_block_json_and_ssz(fork: str, proofs: int) -> None:
    block = _electra_block()
    body = _contents_json(block, proofs)
    produced = parse_produced_block(fork, False, body)
    assert produced.fork == ForkName(fork) and not produced.blinded
    assert produced.block.hash_tree_root() == block.hash_tree_root()
    assert produced.blobs is not None and len(produced.blobs) == 1
    assert produced.kzg_proofs is not None and len(produced.kzg_proofs) == proofs

    contents = ssz.from_json(block_types(fork).block_contents, body)
    from_bytes = parse_produced_block_ssz(fork, False, ssz.to_ssz(contents))
    assert from_bytes.block.hash_tree_root() == block.hash_tree_root()

    signed = produced.signed(b"\x5a" * 96)
    assert isinstance(signed, block_types(fork).signed_block_contents)
    published = ssz.to_json(signed)
    assert published["signed_block"]["message"] == body["block"]
    assert published["signed_block"]["signature"] == "0x" + "5a" * 96
    assert published["kzg_proofs"] == body["kzg_proofs"]
    assert published["blobs"] == body["blobs"]


def test_fulu_cell_proofs_exceed_the_electra_limit() -> None:
    # 4096 proofs fit Fulu's cell-proof list but not Electra's one proof per blob.
    body = _contents_json(_electra_block(), 0)
    body["kzg_proofs"] = ["0x" + "00" * 48] * 4097
    with pytest.raises(ssz.SszInputError, match="kzg_proofs: 4097 items exceed the limit of 4096"):
        parse_produced_block("electra", False, body)
    assert len(parse_produced_block("fulu", False, body).kzg_proofs) == 4097  # type: ignore[arg-type]


def test_produced_blinded_block() -> None:
    block = _electra_block()
    blinded_json = ssz.to_json(blinded_block(block))
    produced = parse_produced_block("fulu", True, blinded_json)
    assert produced.blinded and produced.blobs is None
    assert produced.block.hash_tree_root() == block.hash_tree_root()
    signed = produced.signed(b"\x01" * 96)
    assert isinstance(signed, fulu.SignedBlindedBeaconBlock)
    as_bytes = parse_produced_block_ssz("fulu", True, ssz.to_ssz(blinded_block(block)))
    assert as_bytes.block.hash_tree_root() == block.hash_tree_root()


def test_produced_block_of_the_wrong_shape_is_refused() -> None:
    block = _electra_block()
    # A full block where BlockContents is expected.
    with pytest.raises(ssz.SszInputError, match="BlockContents: missing field 'block'"):
        parse_produced_block("electra", False, ssz.to_json(block))
    # A full block claimed blinded.
    with pytest.raises(ssz.SszInputError, match="missing field 'execution_payload_header'"):
        parse_produced_block("electra", True, ssz.to_json(block))
    # An Electra block labelled Deneb: execution_requests is not a Deneb field.
    with pytest.raises(ssz.SszInputError, match="unexpected field 'execution_requests'"):
        parse_produced_block("deneb", True, ssz.to_json(blinded_block(block)))
    with pytest.raises(UnsupportedForkError):
        parse_produced_block("capella", False, ssz.to_json(block))
    with pytest.raises(UnsupportedForkError, match="no block containers for gloas"):
        parse_produced_block("gloas", False, {})
    with pytest.raises(UnsupportedForkError, match="unknown fork 'heze'"):
        parse_produced_block("heze", False, {})
    with pytest.raises(ssz.SszInputError, match="malformed SSZ|outside the type"):
        parse_produced_block_ssz("electra", True, ssz.to_ssz(block)[:-1])


def test_signed_block_of_a_fork_without_contents() -> None:
    from validator.consensus.ssz import bellatrix

    produced = ProducedBlock(ForkName.BELLATRIX, False, bellatrix.BeaconBlock(slot=1))
    assert isinstance(produced.signed(bytes(96)), bellatrix.SignedBeaconBlock)


def test_api_json_of_a_block_is_what_the_api_specifies() -> None:
    api = ssz.to_json(_electra_block())
    assert api["slot"] == "40"
    payload = api["body"]["execution_payload"]
    assert payload["base_fee_per_gas"] == "7000000000"
    assert payload["extra_data"] == "0x" + b"unslashable".hex()
    assert payload["transactions"][1] == "0x010203"
    attestation = api["body"]["attestations"][0]
    assert attestation["aggregation_bits"] == "0x0d"  # bits 1,0,1 then the delimiter
    assert attestation["committee_bits"] == "0x0200000000000000"
    assert api["body"]["sync_aggregate"]["sync_committee_bits"] == "0x" + "00" * 64
    json.dumps(api)
