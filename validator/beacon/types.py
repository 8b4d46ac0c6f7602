"""Light typing for Beacon API answers and for the small requests the client builds.

Scalars the validator client acts on (slots, epochs, indices, roots, flags) are
converted here, so a node that sends garbage fails loudly as a
:class:`MalformedResponseError` instead of deep inside a duty. Consensus objects
(blocks, attestation data, aggregates, contributions) stay parsed JSON: turning
them into SSZ containers is ``validator.consensus.ssz``'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from validator.beacon.errors import BeaconNodeError, MalformedResponseError
from validator.consensus.encoding import parse_hex

Json = Any
JsonObject = dict[str, Any]

CONSENSUS_VERSIONS = ("phase0", "altair", "bellatrix", "capella", "deneb", "electra", "fulu")


def parse_uint(value: Json, name: str) -> int:
    """A Beacon API quoted decimal (``"123"``) as an int."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise MalformedResponseError(f"{name} is not a quoted unsigned integer: {value!r:.80}")


def hex_field(value: Json, name: str, length: int | None = None) -> bytes:
    """A ``0x``-hex field (optionally of an exact length), by the one hex parser."""
    try:
        return parse_hex(value, length)
    except ValueError:
        expected = f"{length}-byte " if length is not None else ""
        raise MalformedResponseError(f"{name} is not {expected}0x-hex: {value!r:.80}") from None


def parse_bool(value: Json, name: str) -> bool:
    if isinstance(value, bool):
        return value
    raise MalformedResponseError(f"{name} is not a boolean: {value!r:.80}")


def parse_object(value: Json, name: str) -> JsonObject:
    if isinstance(value, dict):
        return value
    raise MalformedResponseError(f"{name} is not a JSON object: {value!r:.80}")


def parse_list(value: Json, name: str) -> list[Json]:
    if isinstance(value, list):
        return value
    raise MalformedResponseError(f"{name} is not a JSON array: {value!r:.80}")


def field_of(obj: Mapping[str, Json], key: str, name: str) -> Json:
    try:
        return obj[key]
    except KeyError:
        raise MalformedResponseError(f"{name} has no {key!r}") from None


def data_of(body: Json) -> Json:
    """The ``data`` member every Beacon API JSON answer wraps its payload in."""
    return field_of(parse_object(body, "response"), "data", "response")


def optimistic_flag(body: Mapping[str, Json]) -> bool:
    """``execution_optimistic``; the spec says to assume False when absent."""
    value = body.get("execution_optimistic", False)
    return parse_bool(value, "execution_optimistic")


def hex0x(raw: bytes) -> str:
    return "0x" + raw.hex()


def require_length(value: bytes, length: int, name: str) -> bytes:
    if len(value) != length:
        raise ValueError(f"{name} must be {length} bytes, got {len(value)}")
    return value


def proposal_query(
    randao_reveal: bytes,
    graffiti: bytes | None,
    builder_boost_factor: int | None,
    flags: Sequence[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """The query every block production route takes, with the route's own ``flags``
    between graffiti and the boost factor."""
    query = [("randao_reveal", hex0x(require_length(randao_reveal, 96, "randao reveal")))]
    if graffiti is not None:
        query.append(("graffiti", hex0x(require_length(graffiti, 32, "graffiti"))))
    query.extend(flags)
    if builder_boost_factor is not None:
        if not 0 <= builder_boost_factor < 2**64:
            raise ValueError("builder_boost_factor must fit in a uint64")
        query.append(("builder_boost_factor", str(builder_boost_factor)))
    return query


def slot_seat_fields(data: Json, what: str) -> tuple[bytes, int, int]:
    """(pubkey, validator_index, slot) of a one-slot duty: a proposer's or a PTC seat's
    answer carries exactly these three."""
    obj = parse_object(data, what)
    return (
        hex_field(field_of(obj, "pubkey", what), "pubkey", 48),
        parse_uint(field_of(obj, "validator_index", what), "validator_index"),
        parse_uint(field_of(obj, "slot", what), "slot"),
    )


DutyT = TypeVar("DutyT")


def dependent_duties(
    body: Json, what: str, parse_duty: Callable[[Json], DutyT]
) -> tuple[bytes, bool, tuple[DutyT, ...]]:
    """(dependent_root, execution_optimistic, duties) of an epoch's duties answer: every
    dependent-root duty route wraps its list the same way."""
    obj = parse_object(body, f"{what} response")
    return (
        hex_field(field_of(obj, "dependent_root", what), "dependent_root", 32),
        optimistic_flag(obj),
        tuple(parse_duty(item) for item in parse_list(data_of(obj), what)),
    )


@dataclass(frozen=True, slots=True)
class SyncingStatus:
    head_slot: int
    sync_distance: int
    is_syncing: bool
    is_optimistic: bool
    el_offline: bool

    @classmethod
    def from_json(cls, data: Json) -> SyncingStatus:
        obj = parse_object(data, "syncing data")
        return cls(
            head_slot=parse_uint(field_of(obj, "head_slot", "syncing"), "head_slot"),
            sync_distance=parse_uint(field_of(obj, "sync_distance", "syncing"), "sync_distance"),
            is_syncing=parse_bool(field_of(obj, "is_syncing", "syncing"), "is_syncing"),
            # Older nodes omit these two; absent means "no problem reported".
            is_optimistic=parse_bool(obj.get("is_optimistic", False), "is_optimistic"),
            el_offline=parse_bool(obj.get("el_offline", False), "el_offline"),
        )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    epoch: int
    root: bytes

    @classmethod
    def from_json(cls, data: Json, name: str = "checkpoint") -> Checkpoint:
        obj = parse_object(data, name)
        return cls(
            epoch=parse_uint(field_of(obj, "epoch", name), f"{name} epoch"),
            root=hex_field(field_of(obj, "root", name), f"{name} root", 32),
        )


@dataclass(frozen=True, slots=True)
class FinalityCheckpoints:
    previous_justified: Checkpoint
    current_justified: Checkpoint
    finalized: Checkpoint
    execution_optimistic: bool

    @classmethod
    def from_body(cls, body: Json) -> FinalityCheckpoints:
        obj = parse_object(data_of(body), "finality checkpoints")
        return cls(
            previous_justified=Checkpoint.from_json(
                field_of(obj, "previous_justified", "finality"), "previous_justified"
            ),
            current_justified=Checkpoint.from_json(
                field_of(obj, "current_justified", "finality"), "current_justified"
            ),
            finalized=Checkpoint.from_json(field_of(obj, "finalized", "finality"), "finalized"),
            execution_optimistic=optimistic_flag(body),
        )


@dataclass(frozen=True, slots=True)
class ValidatorInfo:
    """One entry of ``/eth/v1/beacon/states/{state_id}/validators``.

    ``validator`` is the raw ``Validator`` object (epochs, credentials, ...).
    """

    index: int
    pubkey: bytes
    balance: int
    status: str
    validator: JsonObject

    @classmethod
    def from_json(cls, data: Json) -> ValidatorInfo:
        obj = parse_object(data, "validator entry")
        validator = parse_object(field_of(obj, "validator", "validator entry"), "validator")
        status = field_of(obj, "status", "validator entry")
        if not isinstance(status, str):
            raise MalformedResponseError(f"validator status is not a string: {status!r:.80}")
        return cls(
            index=parse_uint(field_of(obj, "index", "validator entry"), "validator index"),
            pubkey=hex_field(field_of(validator, "pubkey", "validator"), "pubkey", 48),
            balance=parse_uint(field_of(obj, "balance", "validator entry"), "balance"),
            status=status,
            validator=validator,
        )


@dataclass(frozen=True, slots=True)
class AttesterDuty:
    pubkey: bytes
    validator_index: int
    committee_index: int
    committee_length: int
    committees_at_slot: int
    validator_committee_index: int
    slot: int

    @classmethod
    def from_json(cls, data: Json) -> AttesterDuty:
        obj = parse_object(data, "attester duty")

        def uint(key: str) -> int:
            return parse_uint(field_of(obj, key, "attester duty"), key)

        return cls(
            pubkey=hex_field(field_of(obj, "pubkey", "attester duty"), "pubkey", 48),
            validator_index=uint("validator_index"),
            committee_index=uint("committee_index"),
            committee_length=uint("committee_length"),
            committees_at_slot=uint("committees_at_slot"),
            validator_committee_index=uint("validator_committee_index"),
            slot=uint("slot"),
        )


@dataclass(frozen=True, slots=True)
class ProposerDuty:
    pubkey: bytes
    validator_index: int
    slot: int

    @classmethod
    def from_json(cls, data: Json) -> ProposerDuty:
        return cls(*slot_seat_fields(data, "proposer duty"))


@dataclass(frozen=True, slots=True)
class SyncDuty:
    pubkey: bytes
    validator_index: int
    validator_sync_committee_indices: tuple[int, ...]

    @classmethod
    def from_json(cls, data: Json) -> SyncDuty:
        obj = parse_object(data, "sync duty")
        indices = parse_list(
            field_of(obj, "validator_sync_committee_indices", "sync duty"),
            "validator_sync_committee_indices",
        )
        return cls(
            pubkey=hex_field(field_of(obj, "pubkey", "sync duty"), "pubkey", 48),
            validator_index=parse_uint(
                field_of(obj, "validator_index", "sync duty"), "validator_index"
            ),
            validator_sync_committee_indices=tuple(
                parse_uint(index, "validator_sync_committee_indices[]") for index in indices
            ),
        )


@dataclass(frozen=True, slots=True)
class AttesterDuties:
    """Attester duties of one epoch; refetch when ``dependent_root`` stops matching
    the head event's (previous or current) duty dependent root."""

    dependent_root: bytes
    execution_optimistic: bool
    duties: tuple[AttesterDuty, ...]

    @classmethod
    def from_body(cls, body: Json) -> AttesterDuties:
        return cls(*dependent_duties(body, "attester duties", AttesterDuty.from_json))


@dataclass(frozen=True, slots=True)
class ProposerDuties:
    dependent_root: bytes
    execution_optimistic: bool
    duties: tuple[ProposerDuty, ...]

    @classmethod
    def from_body(cls, body: Json) -> ProposerDuties:
        return cls(*dependent_duties(body, "proposer duties", ProposerDuty.from_json))


@dataclass(frozen=True, slots=True)
class SyncDuties:
    """Sync committee duties. The v4.0.0 spec gives this answer no dependent_root."""

    execution_optimistic: bool
    duties: tuple[SyncDuty, ...]

    @classmethod
    def from_body(cls, body: Json) -> SyncDuties:
        obj = parse_object(body, "sync duties response")
        return cls(
            execution_optimistic=optimistic_flag(obj),
            duties=tuple(
                SyncDuty.from_json(item) for item in parse_list(data_of(obj), "sync duties")
            ),
        )


@dataclass(frozen=True, slots=True)
class BlockRoot:
    root: bytes
    execution_optimistic: bool
    finalized: bool

    @classmethod
    def from_body(cls, body: Json) -> BlockRoot:
        obj = parse_object(body, "block root response")
        data = parse_object(data_of(obj), "block root data")
        return cls(
            root=hex_field(field_of(data, "root", "block root"), "root", 32),
            execution_optimistic=optimistic_flag(obj),
            finalized=parse_bool(obj.get("finalized", False), "finalized"),
        )


@dataclass(frozen=True, slots=True)
class ProposalAnswer:
    """The answer of ``GET /eth/v3/validator/blocks/{slot}``, not yet decoded.

    Exactly one of ``data`` (the JSON ``data``: block contents, or a blinded
    block) and ``ssz`` (the raw SSZ bytes) is set. The proposer decodes it into
    the one produced-block model, ``validator.consensus.ssz.blocks.ProducedBlock``
    (a block that cannot be decoded is refused there, not failed over).
    """

    version: str
    blinded: bool
    execution_payload_value: int
    consensus_block_value: int
    data: JsonObject | None = None
    ssz: bytes | None = None


@dataclass(frozen=True, slots=True)
class VersionedData:
    """A JSON payload with the consensus version it belongs to."""

    version: str
    data: JsonObject


@dataclass(frozen=True, slots=True)
class BeaconCommitteeSubscription:
    validator_index: int
    committee_index: int
    committees_at_slot: int
    slot: int
    is_aggregator: bool

    def to_json(self) -> JsonObject:
        return {
            "validator_index": str(self.validator_index),
            "committee_index": str(self.committee_index),
            "committees_at_slot": str(self.committees_at_slot),
            "slot": str(self.slot),
            "is_aggregator": self.is_aggregator,
        }


@dataclass(frozen=True, slots=True)
class SyncCommitteeSubscription:
    validator_index: int
    sync_committee_indices: tuple[int, ...]
    until_epoch: int

    def to_json(self) -> JsonObject:
        return {
            "validator_index": str(self.validator_index),
            "sync_committee_indices": [str(index) for index in self.sync_committee_indices],
            "until_epoch": str(self.until_epoch),
        }


@dataclass(frozen=True, slots=True)
class ProposerPreparation:
    validator_index: int
    fee_recipient: bytes

    def __post_init__(self) -> None:
        if len(self.fee_recipient) != 20:
            raise ValueError(f"fee recipient must be 20 bytes, got {len(self.fee_recipient)}")

    def to_json(self) -> JsonObject:
        return {
            "validator_index": str(self.validator_index),
            "fee_recipient": hex0x(self.fee_recipient),
        }


@dataclass(frozen=True)
class PublishResult:
    """Outcome of sending one signed message (or batch) to every reachable node.

    ``accepted`` maps each node that answered 2xx to its status (a block answered
    202 was broadcast but failed the node's full validation); ``errors`` holds the
    other nodes' failures, which were also logged.
    """

    endpoint: str
    accepted: dict[str, int] = field(default_factory=dict)
    errors: tuple[BeaconNodeError, ...] = ()

    @property
    def accepted_by(self) -> tuple[str, ...]:
        return tuple(self.accepted)
