"""The Beacon API JSON and SSZ codecs: what they accept, and the errors for what they do not."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from validator.consensus import ssz
from validator.consensus.ssz import altair, electra

ATTESTATION_DATA = {
    "slot": "33",
    "index": "0",
    "beacon_block_root": "0x" + "11" * 32,
    "source": {"epoch": "0", "root": "0x" + "22" * 32},
    "target": {"epoch": "1", "root": "0x" + "33" * 32},
}
SINGLE_ATTESTATION = {
    "committee_index": "5",
    "attester_index": "123",
    "data": ATTESTATION_DATA,
    "signature": "0x" + "44" * 96,
}
ELECTRA_ATTESTATION = {
    "aggregation_bits": "0x0d",
    "data": ATTESTATION_DATA,
    "signature": "0x" + "55" * 96,
    "committee_bits": "0x0100000000000000",
}


def test_single_attestation_round_trip() -> None:
    parsed = ssz.from_json(electra.SingleAttestation, SINGLE_ATTESTATION)
    assert parsed.attester_index == 123 and parsed.data.target.epoch == 1
    assert ssz.to_json(parsed) == SINGLE_ATTESTATION
    assert ssz.from_ssz(electra.SingleAttestation, ssz.to_ssz(parsed)) == parsed


def test_hex_is_case_insensitive_and_written_lower_case() -> None:
    upper = copy.deepcopy(ATTESTATION_DATA)
    upper["beacon_block_root"] = "0x" + "AB" * 32
    parsed = ssz.from_json(ssz.AttestationData, upper)
    assert ssz.to_json(parsed)["beacon_block_root"] == "0x" + "ab" * 32


def test_bitfields() -> None:
    attestation = ssz.from_json(electra.Attestation, ELECTRA_ATTESTATION)
    assert list(attestation.aggregation_bits) == [True, False, True]
    assert attestation.committee_bits[0] and not any(list(attestation.committee_bits)[1:])
    assert ssz.to_json(attestation) == ELECTRA_ATTESTATION
    contribution_bits = altair.SyncCommitteeContribution.fields()["aggregation_bits"]
    assert contribution_bits.vector_length() == 128


def _error(ssz_type: Any, value: Any) -> str:
    with pytest.raises(ssz.SszInputError) as failure:
        ssz.from_json(ssz_type, value)
    return str(failure.value)


def _with(base: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(base)
    target: Any = changed
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return changed


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ["data", "slot"],
            "0x21",
            "SingleAttestation.data.slot: expected a decimal integer string, got '0x21'",
        ),
        (["data", "slot"], "-1", "SingleAttestation.data.slot: expected a decimal integer string"),
        (
            ["data", "slot"],
            str(2**64),
            "SingleAttestation.data.slot: 18446744073709551616 does not fit in uint64",
        ),
        (
            ["data", "slot"],
            1.5,
            "SingleAttestation.data.slot: expected a decimal integer string, got float",
        ),
        (
            ["data", "slot"],
            False,
            "SingleAttestation.data.slot: expected a decimal integer string, got False",
        ),
        (
            ["data", "target", "root"],
            "0x" + "33" * 31,
            "SingleAttestation.data.target.root: expected 32 bytes, got 31",
        ),
        (
            ["data", "target", "root"],
            "33" * 32,
            "SingleAttestation.data.target.root: expected a 0x-prefixed hex string",
        ),
        (
            ["data", "target", "root"],
            "0x" + "3" * 63,
            "SingleAttestation.data.target.root: expected a 0x-prefixed hex string",
        ),
        (
            ["data", "target", "root"],
            None,
            "SingleAttestation.data.target.root: expected a 0x-prefixed hex string, got NoneType",
        ),
        (
            ["data", "source"],
            "checkpoint",
            "SingleAttestation.data.source: expected an object, got a string",
        ),
        (
            ["data", "source", "epoch"],
            _DELETE,
            "SingleAttestation.data.source: missing field 'epoch'",
        ),
        (["signature"], "0x" + "44" * 95, "SingleAttestation.signature: expected 96 bytes, got 95"),
        (["extra"], "1", "SingleAttestation: unexpected field 'extra'"),
    ],
)
def test_malformed_json_names_the_path(path: list[Any], value: Any, message: str) -> None:
    assert _error(electra.SingleAttestation, _with(SINGLE_ATTESTATION, path, value)).startswith(
        message
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("aggregation_bits", "0x", "Attestation.aggregation_bits: "),
        ("aggregation_bits", "0x0a00", "Attestation.aggregation_bits: last byte must not be 0"),
        (
            "aggregation_bits",
            "0x" + "ff" * 16386,
            "Attestation.aggregation_bits: expected at most 16385 bytes",
        ),
        ("aggregation_bits", "0x" + "ff" * 16385, "Attestation.aggregation_bits: bitlist too long"),
        ("committee_bits", "0x01", "Attestation.committee_bits: expected 8 bytes, got 1"),
        (
            "aggregation_bits",
            13,
            "Attestation.aggregation_bits: expected a 0x-prefixed hex string, got int",
        ),
    ],
)
def test_malformed_bitfields(field: str, value: Any, message: str) -> None:
    assert _error(electra.Attestation, _with(ELECTRA_ATTESTATION, [field], value)).startswith(
        message
    )


def test_bitvector_with_bits_past_its_length() -> None:
    contribution = {
        "slot": "1",
        "beacon_block_root": "0x" + "00" * 32,
        "subcommittee_index": "0",
        "aggregation_bits": "0x" + "ff" * 16,
        "signature": "0x" + "00" * 96,
    }
    ssz.from_json(altair.SyncCommitteeContribution, contribution)
    # SYNC_COMMITTEE_SIZE // SYNC_COMMITTEE_SUBNET_COUNT = 128 bits = 16 bytes exactly.
    contribution["aggregation_bits"] = "0x" + "ff" * 17
    assert "expected 16 bytes, got 17" in _error(altair.SyncCommitteeContribution, contribution)


def test_list_limits_and_element_paths() -> None:
    block = ssz.to_json(electra.BeaconBlock())
    block["body"]["attestations"] = [ELECTRA_ATTESTATION] * 9
    assert _error(electra.BeaconBlock, block) == (
        "BeaconBlock.body.attestations: 9 items exceed the limit of 8"
    )
    bad = copy.deepcopy(ELECTRA_ATTESTATION)
    bad["data"]["index"] = "x"
    block["body"]["attestations"] = [ELECTRA_ATTESTATION, bad]
    assert _error(electra.BeaconBlock, block).startswith(
        "BeaconBlock.body.attestations[1].data.index: expected a decimal integer string"
    )
    block["body"]["attestations"] = {"0": ELECTRA_ATTESTATION}
    assert _error(electra.BeaconBlock, block) == (
        "BeaconBlock.body.attestations: expected an array, got dict"
    )


def test_vector_length_is_exact() -> None:
    deposit = {
        "proof": ["0x" + "00" * 32] * 32,
        "data": {
            "pubkey": "0x" + "00" * 48,
            "withdrawal_credentials": "0x" + "00" * 32,
            "amount": "1",
            "signature": "0x" + "00" * 96,
        },
    }
    assert _error(ssz.phase0.Deposit, deposit) == "Deposit.proof: expected exactly 33 items, got 32"


def test_byte_list_limit() -> None:
    payload = ssz.to_json(ssz.deneb.ExecutionPayload())
    payload["extra_data"] = "0x" + "00" * 33
    assert _error(ssz.deneb.ExecutionPayload, payload) == (
        "ExecutionPayload.extra_data: expected at most 32 bytes, got 33"
    )
    payload["extra_data"] = "0x"
    assert ssz.from_json(ssz.deneb.ExecutionPayload, payload).extra_data == b""


def test_uint256_as_decimal_string() -> None:
    payload = ssz.to_json(ssz.deneb.ExecutionPayload())
    payload["base_fee_per_gas"] = str(2**256 - 1)
    parsed = ssz.from_json(ssz.deneb.ExecutionPayload, payload)
    assert ssz.to_json(parsed)["base_fee_per_gas"] == str(2**256 - 1)
    payload["base_fee_per_gas"] = str(2**256)
    assert "does not fit in uint256" in _error(ssz.deneb.ExecutionPayload, payload)


def test_top_level_must_be_an_object() -> None:
    assert _error(ssz.Checkpoint, []) == "Checkpoint: expected an object, got an array"
    assert _error(ssz.Checkpoint, None) == "Checkpoint: expected an object, got null"


@pytest.mark.parametrize(
    ("ssz_type", "data", "message"),
    [
        (
            ssz.Checkpoint,
            bytes(39),
            "Checkpoint: 39 bytes of SSZ is outside the type's 40..40 bytes",
        ),
        (ssz.Checkpoint, bytes(41), "outside the type's 40..40 bytes"),
        (electra.SingleAttestation, b"", "outside the type"),
        (
            electra.Attestation,
            bytes(236),
            "Attestation: 236 bytes of SSZ is outside the type's 237..",
        ),
        (
            electra.Attestation,
            bytes(237),
            "Attestation: malformed SSZ",
        ),  # offset 0 points into itself
        (ssz.Checkpoint, "00" * 40, "Checkpoint: expected SSZ bytes, got str"),
    ],
)
def test_malformed_ssz_bytes(ssz_type: Any, data: Any, message: str) -> None:
    with pytest.raises(ssz.SszInputError, match=message.replace("(", r"\(")):
        ssz.from_ssz(ssz_type, data)


def test_ssz_with_a_bad_bitlist_is_refused() -> None:
    attestation = ssz.from_json(electra.Attestation, ELECTRA_ATTESTATION)
    encoded = bytearray(ssz.to_ssz(attestation))
    assert encoded[-1] == 0x0D
    encoded[-1] = 0  # drop the delimiter bit
    with pytest.raises(ssz.SszInputError, match="Attestation: malformed SSZ"):
        ssz.from_ssz(electra.Attestation, bytes(encoded))


def test_to_json_refuses_what_is_not_ssz() -> None:
    with pytest.raises(TypeError):
        ssz.to_json(3)  # type: ignore[arg-type]
