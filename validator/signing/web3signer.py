"""The Web3Signer eth2 signing API's request bodies, on the project's own consensus types.

``POST /api/v1/eth2/sign/{identifier}`` takes one JSON body per message kind (its
``type``), carrying the message, the ``fork_info`` (the fork at the message's epoch and
the chain's genesis validators root) and, optionally, the ``signingRoot`` the caller
computed. :class:`SigningRequest` is one such body, both ways: the validator client builds
it from the message it would sign locally (:func:`request_for`), and ``validator signer``
parses it (:func:`parse_signing_request`) and recomputes the root from the body and the
``fork_info`` alone (:meth:`SigningRequest.computed_root`), the way Web3Signer does, so the
two sides agree on what is signed without trusting the caller's root.

Web3Signer's rule for the fork version: ``fork_info.fork.previous_version`` when the
message's epoch is before ``fork_info.fork.epoch``, else ``current_version``. Builder
registrations carry no ``fork_info``: their domain is the genesis fork version with a zero
root, which only the chain's configuration gives.

Every malformed body raises :class:`BodyError` naming the field (the server's 400).
"""

# No ``from __future__ import annotations``: remerkleable reads the containers' field
# annotations as types.

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from remerkleable.complex import Container
from remerkleable.core import View

from validator.consensus.domains import (
    DOMAIN_AGGREGATE_AND_PROOF,
    DOMAIN_APPLICATION_BUILDER,
    DOMAIN_BEACON_ATTESTER,
    DOMAIN_BEACON_BUILDER,
    DOMAIN_BEACON_PROPOSER,
    DOMAIN_CONTRIBUTION_AND_PROOF,
    DOMAIN_PROPOSER_PREFERENCES,
    DOMAIN_PTC_ATTESTER,
    DOMAIN_RANDAO,
    DOMAIN_SELECTION_PROOF,
    DOMAIN_SYNC_COMMITTEE,
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
    DOMAIN_VOLUNTARY_EXIT,
    ZERO_ROOT,
    compute_domain,
    compute_signing_root,
    voluntary_exit_fork_version,
)
from validator.consensus.encoding import parse_hex, parse_uint, to_hex
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import altair, electra, gloas, phase0
from validator.consensus.ssz.altair import ContributionAndProof, SyncAggregatorSelectionData
from validator.consensus.ssz.builder import ValidatorRegistrationV1
from validator.consensus.ssz.codec import SszInputError, from_json, to_json
from validator.consensus.ssz.phase0 import AttestationData, BeaconBlockHeader, VoluntaryExit
from validator.consensus.ssz.preset import MAINNET, Preset
from validator.consensus.ssz.primitives import Epoch, Root, Slot

SIGN_PATH = "/api/v1/eth2/sign/{identifier}"
PUBLIC_KEYS_PATH = "/api/v1/eth2/publicKeys"
UPCHECK_PATH = "/upcheck"
HEALTHCHECK_PATH = "/healthcheck"


class BodyError(ValueError):
    """A signing request body that does not describe one message the API defines."""


class SignType(StrEnum):
    """The ``type`` of a signing request (the kinds this project signs)."""

    ATTESTATION = "ATTESTATION"
    BLOCK_V2 = "BLOCK_V2"
    AGGREGATION_SLOT = "AGGREGATION_SLOT"
    AGGREGATE_AND_PROOF_V2 = "AGGREGATE_AND_PROOF_V2"
    RANDAO_REVEAL = "RANDAO_REVEAL"
    SYNC_COMMITTEE_MESSAGE = "SYNC_COMMITTEE_MESSAGE"
    SYNC_COMMITTEE_SELECTION_PROOF = "SYNC_COMMITTEE_SELECTION_PROOF"
    SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF = "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF"
    VOLUNTARY_EXIT = "VOLUNTARY_EXIT"
    VALIDATOR_REGISTRATION = "VALIDATOR_REGISTRATION"
    # Gloas (ePBS); each carries ``{version, data}`` as AGGREGATE_AND_PROOF_V2 does.
    PAYLOAD_ATTESTATION_MESSAGE = "PAYLOAD_ATTESTATION_MESSAGE"
    EXECUTION_PAYLOAD_ENVELOPE = "EXECUTION_PAYLOAD_ENVELOPE"
    PROPOSER_PREFERENCES = "PROPOSER_PREFERENCES"


VERSIONED_TYPES = frozenset(
    {
        SignType.AGGREGATE_AND_PROOF_V2,
        SignType.PAYLOAD_ATTESTATION_MESSAGE,
        SignType.EXECUTION_PAYLOAD_ENVELOPE,
        SignType.PROPOSER_PREFERENCES,
    }
)
"""The types whose member is ``{"version": FORK, "data": message}``."""

GLOAS_TYPES = frozenset(
    {
        SignType.PAYLOAD_ATTESTATION_MESSAGE,
        SignType.EXECUTION_PAYLOAD_ENVELOPE,
        SignType.PROPOSER_PREFERENCES,
    }
)
"""The types that exist from Gloas on only: a body naming an earlier fork is refused."""


# The bodies that wrap a bare value in an object of their own.
class AggregationSlot(Container):
    slot: Slot


class RandaoReveal(Container):
    epoch: Epoch


class SyncCommitteeMessageData(Container):
    beacon_block_root: Root
    slot: Slot


@dataclass(frozen=True)
class ForkInfo:
    """``fork_info``: one fork (with the version before it) and the chain it belongs to."""

    previous_version: bytes
    current_version: bytes
    epoch: int
    genesis_validators_root: bytes

    def version_at(self, epoch: int) -> bytes:
        """The fork version a message of ``epoch`` is signed under (Web3Signer's rule)."""
        return self.previous_version if epoch < self.epoch else self.current_version

    def to_json(self) -> dict[str, Any]:
        return {
            "fork": {
                "previous_version": to_hex(self.previous_version),
                "current_version": to_hex(self.current_version),
                "epoch": str(self.epoch),
            },
            "genesis_validators_root": to_hex(self.genesis_validators_root),
        }

    @classmethod
    def from_json(cls, value: object) -> "ForkInfo":
        fork = _member(value, "fork", "fork_info")
        return cls(
            previous_version=_field(parse_hex, fork, "previous_version", "fork_info.fork", 4),
            current_version=_field(parse_hex, fork, "current_version", "fork_info.fork", 4),
            epoch=_field(parse_uint, fork, "epoch", "fork_info.fork", 64),
            genesis_validators_root=_field(
                parse_hex, value, "genesis_validators_root", "fork_info", 32
            ),
        )


def fork_info_at(chain: ChainSpec, epoch: int) -> ForkInfo:
    """The chain's fork in force at ``epoch``, as ``fork_info`` (the Beacon API's ``Fork``)."""
    fork = chain.fork_at(epoch)
    previous = chain.forks[fork.name.order - 1].version if fork.name.order else fork.version
    return ForkInfo(previous, fork.version, fork.epoch, chain.genesis_validators_root)


def _pinned_fork_info(chain: ChainSpec, version: bytes) -> ForkInfo:
    """A ``fork_info`` that names one version whatever the epoch (exits after EIP-7044)."""
    return ForkInfo(version, version, 0, chain.genesis_validators_root)


@dataclass(frozen=True)
class _Kind:
    """How one ``type`` is carried and signed."""

    member: str
    domain_type: bytes
    signed_object: Callable[[View], View]
    """The SSZ value whose root is signed."""
    epoch: Callable[[View, int], int]
    """(message, slots per epoch) -> the epoch whose fork signs it."""


def _slot_epoch(slot: int, slots_per_epoch: int) -> int:
    return slot // slots_per_epoch


def _identity(message: View) -> View:
    return message


_KINDS: dict[SignType, _Kind] = {
    SignType.ATTESTATION: _Kind(
        "attestation",
        DOMAIN_BEACON_ATTESTER,
        _identity,
        lambda data, _: int(data.target.epoch),
    ),
    SignType.BLOCK_V2: _Kind(
        "beacon_block",
        DOMAIN_BEACON_PROPOSER,
        _identity,
        lambda header, spe: _slot_epoch(int(header.slot), spe),
    ),
    SignType.AGGREGATION_SLOT: _Kind(
        "aggregation_slot",
        DOMAIN_SELECTION_PROOF,
        lambda message: Slot(int(message.slot)),
        lambda message, spe: _slot_epoch(int(message.slot), spe),
    ),
    SignType.AGGREGATE_AND_PROOF_V2: _Kind(
        "aggregate_and_proof",
        DOMAIN_AGGREGATE_AND_PROOF,
        _identity,
        lambda message, spe: _slot_epoch(int(message.aggregate.data.slot), spe),
    ),
    SignType.RANDAO_REVEAL: _Kind(
        "randao_reveal",
        DOMAIN_RANDAO,
        lambda message: Epoch(int(message.epoch)),
        lambda message, _: int(message.epoch),
    ),
    SignType.SYNC_COMMITTEE_MESSAGE: _Kind(
        "sync_committee_message",
        DOMAIN_SYNC_COMMITTEE,
        lambda message: Root(bytes(message.beacon_block_root)),
        lambda message, spe: _slot_epoch(int(message.slot), spe),
    ),
    SignType.SYNC_COMMITTEE_SELECTION_PROOF: _Kind(
        "sync_aggregator_selection_data",
        DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
        _identity,
        lambda message, spe: _slot_epoch(int(message.slot), spe),
    ),
    SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF: _Kind(
        "contribution_and_proof",
        DOMAIN_CONTRIBUTION_AND_PROOF,
        _identity,
        lambda message, spe: _slot_epoch(int(message.contribution.slot), spe),
    ),
    SignType.VOLUNTARY_EXIT: _Kind(
        "voluntary_exit",
        DOMAIN_VOLUNTARY_EXIT,
        _identity,
        lambda message, _: int(message.epoch),
    ),
    SignType.VALIDATOR_REGISTRATION: _Kind(
        "validator_registration",
        DOMAIN_APPLICATION_BUILDER,
        _identity,
        lambda message, _: 0,
    ),
    SignType.PAYLOAD_ATTESTATION_MESSAGE: _Kind(
        "payload_attestation_data",
        DOMAIN_PTC_ATTESTER,
        _identity,
        lambda data, spe: _slot_epoch(int(data.slot), spe),
    ),
    SignType.EXECUTION_PAYLOAD_ENVELOPE: _Kind(
        "execution_payload_envelope",
        DOMAIN_BEACON_BUILDER,
        _identity,
        # The envelope names its block by root; the payload's slot number is the block's slot.
        lambda envelope, spe: _slot_epoch(int(envelope.payload.slot_number), spe),
    ),
    SignType.PROPOSER_PREFERENCES: _Kind(
        "proposer_preferences",
        DOMAIN_PROPOSER_PREFERENCES,
        _identity,
        # The proposal's epoch, not the epoch the preferences are sent in.
        lambda preferences, spe: _slot_epoch(int(preferences.proposal_slot), spe),
    ),
}

# The SSZ type of each kind's message when it does not depend on the fork.
_MESSAGE_TYPES: dict[SignType, Any] = {
    SignType.ATTESTATION: AttestationData,
    SignType.AGGREGATION_SLOT: AggregationSlot,
    SignType.RANDAO_REVEAL: RandaoReveal,
    SignType.SYNC_COMMITTEE_MESSAGE: SyncCommitteeMessageData,
    SignType.SYNC_COMMITTEE_SELECTION_PROOF: SyncAggregatorSelectionData,
    SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF: ContributionAndProof,
    SignType.VOLUNTARY_EXIT: VoluntaryExit,
    SignType.VALIDATOR_REGISTRATION: ValidatorRegistrationV1,
    SignType.PAYLOAD_ATTESTATION_MESSAGE: gloas.PayloadAttestationData,
    # Its shape is the same in both presets (logs bloom and extra data are not preset-bound).
    SignType.EXECUTION_PAYLOAD_ENVELOPE: gloas.ExecutionPayloadEnvelope,
    SignType.PROPOSER_PREFERENCES: gloas.ProposerPreferences,
}

# BLOCK_V2 carries only the header from Bellatrix on; this project signs no earlier block.
BLOCK_HEADER_FORKS = frozenset(fork for fork in ForkName if fork.at_least(ForkName.BELLATRIX))


def _aggregate_and_proof_type(fork: ForkName, preset: Preset) -> Any:
    # From Electra the attestation's bits are as long as the preset's committees make them.
    if fork.at_least(ForkName.GLOAS):
        # EIP-7688: the attestation inside is a progressive container, with another root.
        return gloas.containers(preset).AggregateAndProof
    if fork.at_least(ForkName.ELECTRA):
        return electra.containers(preset).AggregateAndProof
    return phase0.AggregateAndProof


def _message_type(sign_type: SignType, preset: Preset) -> Any:
    if sign_type is SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF:
        # The contribution's bits are a subnet's share of the preset's sync committee.
        return altair.containers(preset).ContributionAndProof
    return _MESSAGE_TYPES[sign_type]


@dataclass(frozen=True)
class SigningRequest:
    """One body of ``POST /api/v1/eth2/sign/{identifier}``.

    ``message`` is the SSZ value the body carries under the kind's member (the
    ``BeaconBlockHeader`` of a BLOCK_V2, the ``AggregateAndProof`` of its ``version``...);
    ``version`` is that fork for BLOCK_V2 and the versioned types (VERSIONED_TYPES) only.
    """

    type: SignType
    message: View
    fork_info: ForkInfo | None
    signing_root: bytes | None = None
    version: ForkName | None = None

    def epoch(self, slots_per_epoch: int) -> int:
        """The epoch whose fork signs the message."""
        return _KINDS[self.type].epoch(self.message, slots_per_epoch)

    def computed_root(self, slots_per_epoch: int, genesis_fork_version: bytes) -> bytes:
        """The signing root from the body and its ``fork_info`` alone (as Web3Signer does)."""
        kind = _KINDS[self.type]
        if self.type is SignType.VALIDATOR_REGISTRATION:
            domain = compute_domain(kind.domain_type, genesis_fork_version, ZERO_ROOT)
        else:
            assert self.fork_info is not None  # parse and request_for require it
            version = self.fork_info.version_at(self.epoch(slots_per_epoch))
            domain = compute_domain(
                kind.domain_type, version, self.fork_info.genesis_validators_root
            )
        return compute_signing_root(kind.signed_object(self.message), domain)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type.value}
        if self.fork_info is not None:
            body["fork_info"] = self.fork_info.to_json()
        if self.signing_root is not None:
            body["signingRoot"] = to_hex(self.signing_root)
        member = _KINDS[self.type].member
        if self.type is SignType.BLOCK_V2:
            assert self.version is not None
            body[member] = {
                "version": self.version.value.upper(),
                "block_header": to_json(self.message),
            }
        elif self.type in VERSIONED_TYPES:
            assert self.version is not None
            body[member] = {"version": self.version.value.upper(), "data": to_json(self.message)}
        else:
            body[member] = to_json(self.message)
        return body


def parse_signing_request(body: object, preset: Preset = MAINNET) -> SigningRequest:
    """The request a JSON body describes, its messages in ``preset``'s containers (the
    chain's); BodyError for anything else."""
    if not isinstance(body, Mapping):
        raise BodyError("the body must be a JSON object")
    raw_type = body.get("type")
    try:
        sign_type = SignType(str(raw_type))
    except ValueError:
        known = ", ".join(kind.value for kind in SignType)
        raise BodyError(f"type: {raw_type!r:.60} is not one this signer signs ({known})") from None
    kind = _KINDS[sign_type]
    fork_info = None
    if sign_type is not SignType.VALIDATOR_REGISTRATION:
        if "fork_info" not in body:
            raise BodyError("missing field 'fork_info'")
        fork_info = ForkInfo.from_json(body["fork_info"])
    signing_root = None
    if body.get("signingRoot") is not None:
        signing_root = _field(parse_hex, body, "signingRoot", "", 32)
    if kind.member not in body:
        raise BodyError(f"missing field {kind.member!r}")
    value = body[kind.member]
    version = None
    if sign_type is SignType.BLOCK_V2:
        version = _version(value, kind.member)
        if version not in BLOCK_HEADER_FORKS:
            raise BodyError(
                f"{kind.member}.version: {version.value} blocks carry the whole block; this "
                "signer signs blocks from Bellatrix on (block_header)"
            )
        message = _decode(BeaconBlockHeader, _member(value, "block_header", kind.member))
    elif sign_type is SignType.AGGREGATE_AND_PROOF_V2:
        version = _version(value, kind.member)
        message = _decode(
            _aggregate_and_proof_type(version, preset), _member(value, "data", kind.member)
        )
    elif sign_type in GLOAS_TYPES:
        version = _version(value, kind.member)
        if not version.at_least(ForkName.GLOAS):
            raise BodyError(
                f"{kind.member}.version: {version.value} has no {sign_type.value}; "
                "it exists from gloas on"
            )
        message = _decode(_MESSAGE_TYPES[sign_type], _member(value, "data", kind.member))
    else:
        message = _decode(_message_type(sign_type, preset), value, kind.member)
    return SigningRequest(sign_type, message, fork_info, signing_root, version)


def request_for(
    sign_type: SignType,
    chain: ChainSpec,
    message: View,
    signing_root: bytes,
    *,
    version: ForkName | None = None,
    exit_current_epoch: int | None = None,
) -> SigningRequest:
    """The body that asks a remote signer for the signature the chain's ``signing_root`` takes.

    ``fork_info`` is the chain's fork at the message's epoch; for a voluntary exit it names
    the version ``voluntary_exit_domain`` picks (EIP-7044), so that Web3Signer's rule gives
    the same domain.
    """
    fork_info: ForkInfo | None = None
    if sign_type is SignType.VOLUNTARY_EXIT:
        fork_info = _pinned_fork_info(
            chain,
            voluntary_exit_fork_version(
                chain, int(message.epoch), current_epoch=exit_current_epoch
            ),
        )
    elif sign_type is not SignType.VALIDATOR_REGISTRATION:
        fork_info = fork_info_at(chain, _KINDS[sign_type].epoch(message, chain.slots_per_epoch))
    if (sign_type is SignType.BLOCK_V2 or sign_type in VERSIONED_TYPES) and version is None:
        raise ValueError(f"{sign_type.value} needs the message's fork (version)")
    return SigningRequest(sign_type, message, fork_info, signing_root, version)


def parse_signature_response(content_type: str, body: bytes) -> bytes:
    """The 96 signature bytes of a 200 answer (JSON ``{"signature"}`` or the bare hex text)."""
    text = body.decode("utf-8", "replace").strip()
    if content_type.split(";")[0].strip().lower() == "application/json":
        import orjson

        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise BodyError(f"the answer is not JSON: {error}") from None
        text = _member(answer, "signature", "answer")
    try:
        return parse_hex(text, 96)
    except ValueError as error:
        raise BodyError(f"signature: {error}") from None


def _version(value: object, where: str) -> ForkName:
    raw = _member(value, "version", where)
    if not isinstance(raw, str):
        raise BodyError(f"{where}.version: expected a fork name")
    try:
        return ForkName.parse(raw.lower())
    except ValueError as error:
        raise BodyError(f"{where}.version: {error}") from None


def _decode(ssz_type: Any, value: object, where: str = "") -> Any:
    try:
        return from_json(ssz_type, value)
    except SszInputError as error:
        raise BodyError(f"{where + ': ' if where else ''}{error}") from None


def _member(value: object, name: str, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise BodyError(f"{where}: expected an object")
    if name not in value:
        raise BodyError(f"{where}: missing field {name!r}")
    return value[name]


def _field(parse: Callable[..., Any], value: object, name: str, where: str, size: int) -> Any:
    raw = _member(value, name, where or "body")
    try:
        return parse(raw, size)
    except ValueError as error:
        raise BodyError(f"{where + '.' if where else ''}{name}: {error}") from None
