"""The Gloas (ePBS) Beacon API routes a validator client uses, and their answers.

- ``POST /eth/v1/validator/duties/ptc/{epoch}``: payload timeliness committee seats;
- ``GET /eth/v1/validator/payload_attestation_data``: what a seat votes (204: no block seen);
- ``POST /eth/v1/beacon/pool/payload_attestations``: the signed votes;
- ``GET /eth/v4/validator/blocks/{slot}``: a block (with its self-built envelope when asked);
- ``POST /eth/v1/beacon/execution_payload_envelopes``: the signed envelope;
- ``POST /eth/v1/validator/proposer_preferences``: signed preferences.

beacon-APIs master takes the payload attestation data's slot as a query parameter; the
v5.0.0 alpha tags put it in the path. This client sends the query form first and, on a
404 or 405 (a node that routes only the path form), the path form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from validator.beacon import routes
from validator.beacon.answers import BLOCK_VALUE, CONSENSUS_VERSION
from validator.beacon.errors import BeaconApiError, MalformedResponseError
from validator.beacon.transport import ACCEPT_SSZ_FIRST, JSON, SSZ, Answer, BeaconTransport
from validator.beacon.types import (
    Json,
    JsonObject,
    PublishResult,
    data_of,
    field_of,
    hex0x,
    hex_field,
    optimistic_flag,
    parse_bool,
    parse_list,
    parse_object,
    parse_uint,
)

PAYLOAD_INCLUDED = "Eth-Execution-Payload-Included"
BLOB_DATA_INCLUDED = "Eth-Blob-Data-Included"


@dataclass(frozen=True, slots=True)
class PtcDuty:
    """One payload timeliness committee seat (or more: a validator may hold several)."""

    pubkey: bytes
    validator_index: int
    slot: int

    @classmethod
    def from_json(cls, data: Json) -> PtcDuty:
        obj = parse_object(data, "PTC duty")
        return cls(
            pubkey=hex_field(field_of(obj, "pubkey", "PTC duty"), "pubkey", 48),
            validator_index=parse_uint(
                field_of(obj, "validator_index", "PTC duty"), "validator_index"
            ),
            slot=parse_uint(field_of(obj, "slot", "PTC duty"), "slot"),
        )


@dataclass(frozen=True, slots=True)
class PtcDuties:
    """PTC duties of one epoch; refetch when ``dependent_root`` stops matching the head's."""

    dependent_root: bytes
    execution_optimistic: bool
    duties: tuple[PtcDuty, ...]

    @classmethod
    def from_body(cls, body: Json) -> PtcDuties:
        obj = parse_object(body, "PTC duties response")
        return cls(
            dependent_root=hex_field(
                field_of(obj, "dependent_root", "PTC duties"), "dependent_root", 32
            ),
            execution_optimistic=optimistic_flag(obj),
            duties=tuple(
                PtcDuty.from_json(item) for item in parse_list(data_of(obj), "PTC duties")
            ),
        )


@dataclass(frozen=True, slots=True)
class ProposalV4Answer:
    """``produceBlockV4``'s answer: a BeaconBlock, or BlockContents when the payload is included."""

    version: str
    payload_included: bool
    consensus_block_value: int
    data: JsonObject | None = None
    ssz: bytes | None = None


def _header_bool(answer: Answer, name: str) -> bool | None:
    value = answer.headers.get(name)
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise MalformedResponseError(f"header {name} is not true/false: {value!r:.40}")
    return lowered == "true"


def proposal_v4_from(answer: Answer) -> ProposalV4Answer:
    header_version = answer.headers.get(CONSENSUS_VERSION)
    header_included = _header_bool(answer, PAYLOAD_INCLUDED)
    header_value = answer.headers.get(BLOCK_VALUE)
    if answer.media_type == SSZ:
        if header_version is None or header_included is None or header_value is None:
            raise MalformedResponseError(
                f"an SSZ block needs the {CONSENSUS_VERSION}, {PAYLOAD_INCLUDED} and "
                f"{BLOCK_VALUE} headers"
            )
        return ProposalV4Answer(
            header_version,
            header_included,
            parse_uint(header_value.strip(), BLOCK_VALUE),
            ssz=answer.body,
        )
    body = parse_object(answer.json(), "produce block v4 response")
    version = field_of(body, "version", "block")
    if not isinstance(version, str):
        raise MalformedResponseError(f"version is not a fork name: {version!r:.40}")
    included = parse_bool(
        field_of(body, "execution_payload_included", "block"), "execution_payload_included"
    )
    value = parse_uint(field_of(body, "consensus_block_value", "block"), "consensus_block_value")
    for name, header, from_body in (
        (CONSENSUS_VERSION, header_version, version),
        (PAYLOAD_INCLUDED, header_included, included),
    ):
        if header is not None and header != from_body:
            raise MalformedResponseError(
                f"header {name} says {header!r} but the body says {from_body!r}"
            )
    return ProposalV4Answer(version, included, value, data=parse_object(data_of(body), "block"))


def payload_attestation_data_from(answer: Answer) -> tuple[str, JsonObject] | None:
    """(version, PayloadAttestationData JSON), or None for 204 (no block seen: do not vote)."""
    if answer.status == 204:
        return None
    body = parse_object(answer.json(), "payload attestation data response")
    version = field_of(body, "version", "payload attestation data")
    if not isinstance(version, str):
        raise MalformedResponseError(f"version is not a fork name: {version!r:.40}")
    header = answer.headers.get(CONSENSUS_VERSION)
    if header is not None and header != version:
        raise MalformedResponseError(
            f"header {CONSENSUS_VERSION} says {header!r} but the body says {version!r}"
        )
    return version, parse_object(data_of(body), "payload attestation data")


class EpbsRoutes(BeaconTransport):
    """The Gloas routes, on the transport (mixed into ``BeaconNodeClient``)."""

    async def get_ptc_duties(self, epoch: int, indices: Sequence[int]) -> PtcDuties:
        if not indices:
            raise ValueError("at least one validator index is needed")
        return await self._fetch(
            "POST",
            routes.PTC_DUTIES,
            routes.fill(routes.PTC_DUTIES, epoch=epoch),
            lambda answer: PtcDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
            json_body=[str(int(index)) for index in indices],
        )

    async def get_payload_attestation_data(self, slot: int) -> tuple[str, JsonObject] | None:
        """The data a PTC seat of ``slot`` signs; None when the node saw no block (204)."""
        try:
            return await self._fetch(
                "GET",
                routes.PAYLOAD_ATTESTATION_DATA,
                routes.PAYLOAD_ATTESTATION_DATA,
                payload_attestation_data_from,
                timeout=self.timeouts.attestation,
                query=[("slot", str(slot))],
            )
        except BeaconApiError as error:
            if error.status not in (404, 405):
                raise
        return await self._fetch(
            "GET",
            routes.PAYLOAD_ATTESTATION_DATA_BY_SLOT,
            routes.fill(routes.PAYLOAD_ATTESTATION_DATA_BY_SLOT, slot=slot),
            payload_attestation_data_from,
            timeout=self.timeouts.attestation,
        )

    async def publish_payload_attestations(
        self, messages: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        return await self._publish_json(
            routes.POOL_PAYLOAD_ATTESTATIONS,
            list(messages),
            timeout=self.timeouts.attestation,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    async def produce_block_v4(
        self,
        slot: int,
        randao_reveal: bytes,
        *,
        graffiti: bytes | None = None,
        include_payload: bool = True,
        builder_boost_factor: int | None = None,
        ssz: bool = False,
    ) -> ProposalV4Answer:
        """An unsigned Gloas block for ``slot`` (with its envelope when self-built and
        ``include_payload``, so any node can take the publication)."""
        if len(randao_reveal) != 96:
            raise ValueError("randao reveal must be 96 bytes")
        query = [
            ("randao_reveal", hex0x(randao_reveal)),
            ("include_payload", "true" if include_payload else "false"),
        ]
        if graffiti is not None:
            if len(graffiti) != 32:
                raise ValueError("graffiti must be 32 bytes")
            query.append(("graffiti", hex0x(graffiti)))
        if builder_boost_factor is not None:
            if not 0 <= builder_boost_factor < 2**64:
                raise ValueError("builder_boost_factor must fit in a uint64")
            query.append(("builder_boost_factor", str(builder_boost_factor)))
        return await self._fetch(
            "GET",
            routes.PRODUCE_BLOCK_V4,
            routes.fill(routes.PRODUCE_BLOCK_V4, slot=slot),
            proposal_v4_from,
            timeout=self.timeouts.proposal,
            query=query,
            accept=ACCEPT_SSZ_FIRST if ssz else JSON,
        )

    async def publish_execution_payload_envelope(
        self, signed: JsonObject, *, blob_data_included: bool, consensus_version: str
    ) -> PublishResult:
        """A SignedExecutionPayloadEnvelope, or its Contents with blobs when included."""
        return await self._publish(
            routes.PUBLISH_EXECUTION_PAYLOAD_ENVELOPE,
            routes.PUBLISH_EXECUTION_PAYLOAD_ENVELOPE,
            orjson.dumps(signed),
            timeout=self.timeouts.proposal,
            content_type=JSON,
            query=[],
            headers={
                CONSENSUS_VERSION: consensus_version,
                BLOB_DATA_INCLUDED: "true" if blob_data_included else "false",
            },
        )

    async def submit_proposer_preferences(
        self, preferences: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        return await self._publish_json(
            routes.PROPOSER_PREFERENCES,
            list(preferences),
            timeout=self.timeouts.duties,
            headers={CONSENSUS_VERSION: consensus_version},
        )
