"""Fast readers for the messages that arrive by the thousand: single attestations, sync messages.

``validator.consensus.ssz.from_json`` builds remerkleable views, which costs about a
quarter of a millisecond per attestation; a 10,000-validator devnet receives
over a thousand per slot. These readers apply the same rules (exact fields,
decimal integers, fixed-length hex) into plain tuples, and the AttestationData
root is computed once per distinct data, not once per attestation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from validator.consensus.encoding import parse_hex, parse_uint
from validator.consensus.ssz.phase0 import AttestationData, Checkpoint

_CHECKPOINT_FIELDS = frozenset({"epoch", "root"})
_DATA_FIELDS = frozenset({"slot", "index", "beacon_block_root", "source", "target"})
_SINGLE_ATTESTATION_FIELDS = frozenset({"committee_index", "attester_index", "data", "signature"})
_SYNC_MESSAGE_FIELDS = frozenset({"slot", "beacon_block_root", "validator_index", "signature"})


class WireError(ValueError):
    """A malformed message; the text names the field."""


@dataclass(frozen=True)
class AttestationDataFields:
    slot: int
    index: int
    beacon_block_root: bytes
    source_epoch: int
    source_root: bytes
    target_epoch: int
    target_root: bytes

    def view(self) -> AttestationData:
        return AttestationData(
            slot=self.slot,
            index=self.index,
            beacon_block_root=self.beacon_block_root,
            source=Checkpoint(epoch=self.source_epoch, root=self.source_root),
            target=Checkpoint(epoch=self.target_epoch, root=self.target_root),
        )

    @classmethod
    def of(cls, data: Any) -> AttestationDataFields:
        """From an AttestationData view."""
        return cls(
            slot=int(data.slot),
            index=int(data.index),
            beacon_block_root=bytes(data.beacon_block_root),
            source_epoch=int(data.source.epoch),
            source_root=bytes(data.source.root),
            target_epoch=int(data.target.epoch),
            target_root=bytes(data.target.root),
        )


@dataclass(frozen=True)
class SingleAttestationFields:
    committee_index: int
    attester_index: int
    data: AttestationDataFields
    signature: bytes


@dataclass(frozen=True)
class SyncCommitteeMessageFields:
    slot: int
    beacon_block_root: bytes
    validator_index: int
    signature: bytes


def _object(value: Any, fields: frozenset[str], where: str) -> Mapping[str, Any]:
    # JSON objects arrive as dicts (orjson); the exact-keys test is one set comparison.
    if not isinstance(value, dict):
        raise WireError(f"{where}: expected an object")
    if value.keys() != fields:
        missing = sorted(fields - value.keys())
        if missing:
            raise WireError(f"{where}: missing field {missing[0]!r}")
        unexpected = sorted(value.keys() - fields)
        raise WireError(f"{where}: unexpected field {unexpected[0]!r}")
    return value


def _uint(value: Any, where: str) -> int:
    try:
        return parse_uint(value, 64)
    except ValueError as failure:
        raise WireError(f"{where}: {failure}") from None


def _bytes(value: Any, length: int, where: str) -> bytes:
    try:
        return parse_hex(value, length)
    except ValueError as failure:
        raise WireError(f"{where}: {failure}") from None


def _checkpoint(value: Any, where: str) -> tuple[int, bytes]:
    checkpoint = _object(value, _CHECKPOINT_FIELDS, where)
    return _uint(checkpoint["epoch"], f"{where}.epoch"), _bytes(
        checkpoint["root"], 32, f"{where}.root"
    )


def parse_attestation_data(value: Any, where: str = "data") -> AttestationDataFields:
    data = _object(value, _DATA_FIELDS, where)
    source_epoch, source_root = _checkpoint(data["source"], f"{where}.source")
    target_epoch, target_root = _checkpoint(data["target"], f"{where}.target")
    return AttestationDataFields(
        slot=_uint(data["slot"], f"{where}.slot"),
        index=_uint(data["index"], f"{where}.index"),
        beacon_block_root=_bytes(data["beacon_block_root"], 32, f"{where}.beacon_block_root"),
        source_epoch=source_epoch,
        source_root=source_root,
        target_epoch=target_epoch,
        target_root=target_root,
    )


def parse_single_attestation(value: Any) -> SingleAttestationFields:
    """An Electra ``SingleAttestation`` in Beacon API JSON."""
    item = _object(value, _SINGLE_ATTESTATION_FIELDS, "attestation")
    return SingleAttestationFields(
        committee_index=_uint(item["committee_index"], "committee_index"),
        attester_index=_uint(item["attester_index"], "attester_index"),
        data=parse_attestation_data(item["data"]),
        signature=_bytes(item["signature"], 96, "signature"),
    )


def parse_sync_committee_message(value: Any) -> SyncCommitteeMessageFields:
    """A ``SyncCommitteeMessage`` (the API's SyncCommitteeSignature) in Beacon API JSON."""
    item = _object(value, _SYNC_MESSAGE_FIELDS, "sync message")
    return SyncCommitteeMessageFields(
        slot=_uint(item["slot"], "slot"),
        beacon_block_root=_bytes(item["beacon_block_root"], 32, "beacon_block_root"),
        validator_index=_uint(item["validator_index"], "validator_index"),
        signature=_bytes(item["signature"], 96, "signature"),
    )
