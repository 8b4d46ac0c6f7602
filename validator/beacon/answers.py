"""Answers whose meaning spans headers and body: produced blocks, versioned data.

The consensus version, blinded flag and block values may come in headers, in
the JSON body, or both; SSZ bodies have only the headers. These readers insist
that both agree when both are there.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from validator.beacon.errors import MalformedResponseError
from validator.beacon.transport import SSZ, Answer
from validator.beacon.types import (
    ProposalAnswer,
    VersionedData,
    data_of,
    field_of,
    parse_bool,
    parse_object,
    parse_uint,
)

T = TypeVar("T")

CONSENSUS_VERSION = "Eth-Consensus-Version"
PAYLOAD_BLINDED = "Eth-Execution-Payload-Blinded"
PAYLOAD_VALUE = "Eth-Execution-Payload-Value"
BLOCK_VALUE = "Eth-Consensus-Block-Value"


def _uint_header(value: str | None, name: str) -> int | None:
    return None if value is None else parse_uint(value.strip(), name)


def bool_header(value: str | None, name: str) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise MalformedResponseError(f"header {name} is not true/false: {value!r:.40}")
    return lowered == "true"


def agree(from_header: T | None, from_body: T, name: str) -> T:
    """``from_body``, when a header that says the same (if given) does not contradict it."""
    if from_header is not None and from_header != from_body:
        raise MalformedResponseError(
            f"header {name} says {from_header!r} but the body says {from_body!r}"
        )
    return from_body


_FORK_NAME = re.compile(r"[a-z][a-z0-9]*")
"""How the Beacon API spells a fork name: lowercase only (``electra``, never ``Electra``)."""


def _version_string(value: Any, name: str) -> str:
    if isinstance(value, str) and _FORK_NAME.fullmatch(value):
        return value
    raise MalformedResponseError(
        f"{name} is not a consensus version (a lowercase fork name): {value!r:.40}"
    )


def produced_block_from(answer: Answer) -> ProposalAnswer:
    headers = answer.headers
    header_version = headers.get(CONSENSUS_VERSION)
    header_blinded = bool_header(headers.get(PAYLOAD_BLINDED), PAYLOAD_BLINDED)
    header_payload_value = _uint_header(headers.get(PAYLOAD_VALUE), PAYLOAD_VALUE)
    header_block_value = _uint_header(headers.get(BLOCK_VALUE), BLOCK_VALUE)
    if answer.media_type == SSZ:
        # The headers are the only description of SSZ bytes: all must be there.
        if (
            header_version is None
            or header_blinded is None
            or header_payload_value is None
            or header_block_value is None
        ):
            raise MalformedResponseError(
                "an SSZ block needs the Eth-Consensus-Version, Eth-Execution-Payload-Blinded, "
                "Eth-Execution-Payload-Value and Eth-Consensus-Block-Value headers"
            )
        return ProposalAnswer(
            version=_version_string(header_version, CONSENSUS_VERSION),
            blinded=header_blinded,
            execution_payload_value=header_payload_value,
            consensus_block_value=header_block_value,
            ssz=answer.body,
        )
    body = parse_object(answer.json(), "produce block response")
    blinded = parse_bool(
        field_of(body, "execution_payload_blinded", "block"), "execution_payload_blinded"
    )
    return ProposalAnswer(
        version=agree(
            header_version,
            _version_string(field_of(body, "version", "block"), "version"),
            CONSENSUS_VERSION,
        ),
        blinded=agree(header_blinded, blinded, PAYLOAD_BLINDED),
        execution_payload_value=agree(
            header_payload_value,
            parse_uint(field_of(body, "execution_payload_value", "block"), "payload value"),
            PAYLOAD_VALUE,
        ),
        consensus_block_value=agree(
            header_block_value,
            parse_uint(field_of(body, "consensus_block_value", "block"), "block value"),
            BLOCK_VALUE,
        ),
        data=parse_object(data_of(body), "block data"),
    )


def versioned_data_from(answer: Answer) -> VersionedData:
    body = parse_object(answer.json(), "response")
    version = _version_string(field_of(body, "version", "response"), "version")
    return VersionedData(
        version=agree(answer.headers.get(CONSENSUS_VERSION), version, CONSENSUS_VERSION),
        data=parse_object(data_of(body), "data"),
    )

