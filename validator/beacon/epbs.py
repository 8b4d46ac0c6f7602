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
from validator.beacon.answers import BLOCK_VALUE, CONSENSUS_VERSION, agree, bool_header
from validator.beacon.errors import BeaconApiError, MalformedResponseError
from validator.beacon.transport import ACCEPT_SSZ_FIRST, JSON, SSZ, Answer, BeaconTransport
from validator.beacon.types import (
    Json,
    JsonObject,
    PublishResult,
    data_of,
    dependent_duties,
    field_of,
    parse_bool,
    parse_object,
    parse_uint,
    proposal_query,
    slot_seat_fields,
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
        return cls(*slot_seat_fields(data, "PTC duty"))


@dataclass(frozen=True, slots=True)
class PtcDuties:
    """PTC duties of one epoch; refetch when ``dependent_root`` stops matching the head's."""

    dependent_root: bytes
    execution_optimistic: bool
    duties: tuple[PtcDuty, ...]

    @classmethod
    def from_body(cls, body: Json) -> PtcDuties:
        return cls(*dependent_duties(body, "PTC duties", PtcDuty.from_json))


@dataclass(frozen=True, slots=True)
class ProposalV4Answer:
    """``produceBlockV4``'s answer: a BeaconBlock, or BlockContents when the payload is included."""

    version: str
    payload_included: bool
    consensus_block_value: int
    data: JsonObject | None = None
    ssz: bytes | None = None


def proposal_v4_from(answer: Answer) -> ProposalV4Answer:
    header_version = answer.headers.get(CONSENSUS_VERSION)
    header_included = bool_header(answer.headers.get(PAYLOAD_INCLUDED), PAYLOAD_INCLUDED)
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
    return ProposalV4Answer(
        agree(header_version, version, CONSENSUS_VERSION),
        agree(header_included, included, PAYLOAD_INCLUDED),
        value,
        data=parse_object(data_of(body), "block"),
    )


def payload_attestation_data_from(answer: Answer) -> tuple[str, JsonObject] | None:
    """(version, PayloadAttestationData JSON), or None for 204 (no block seen: do not vote)."""
    if answer.status == 204:
        return None
    body = parse_object(answer.json(), "payload attestation data response")
    version = field_of(body, "version", "payload attestation data")
    if not isinstance(version, str):
        raise MalformedResponseError(f"version is not a fork name: {version!r:.40}")
    agree(answer.headers.get(CONSENSUS_VERSION), version, CONSENSUS_VERSION)
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
        flags = [("include_payload", "true" if include_payload else "false")]
        query = proposal_query(randao_reveal, graffiti, builder_boost_factor, flags)
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
