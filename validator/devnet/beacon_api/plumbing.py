"""HTTP plumbing of the devnet's Beacon API: parameters, bodies, content types, errors.

Also the two middlewares every reply passes: spec-shaped errors for whatever a
handler raises, and the ``unavailable`` fault's refusals.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from validator.consensus.encoding import parse_hex, parse_uint
from validator.consensus.forks import FAR_FUTURE_EPOCH, ForkName
from validator.devnet.beacon_api.errors import ApiError, error_body
from validator.devnet.chain.fault_modes import Availability
from validator.devnet.chain.simulated_chain import FORK, DevnetChain

log = logging.getLogger("validator.devnet")

JSON = "application/json"
SSZ = "application/octet-stream"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Routes whose responses in the spec include 503; the others answer 500 when unavailable.
DECLARES_503 = frozenset(
    {
        ("GET", "/eth/v1/node/health"),
        ("POST", "/eth/v1/validator/duties/attester/{epoch}"),
        ("GET", "/eth/v1/validator/duties/proposer/{epoch}"),
        ("POST", "/eth/v1/validator/duties/sync/{epoch}"),
        ("POST", "/eth/v1/validator/liveness/{epoch}"),
        ("GET", "/eth/v3/validator/blocks/{slot}"),
        ("POST", "/eth/v2/beacon/blocks"),
        ("POST", "/eth/v2/beacon/blinded_blocks"),
        ("GET", "/eth/v1/validator/attestation_data"),
        ("POST", "/eth/v1/validator/beacon_committee_subscriptions"),
        ("GET", "/eth/v1/validator/sync_committee_contribution"),
    }
)
"""The routes of beacon-APIs v4.0.0 whose spec declares a 503 answer."""

GLOAS_DECLARES_503 = frozenset(
    {
        ("POST", "/eth/v1/validator/duties/ptc/{epoch}"),
        ("GET", "/eth/v1/validator/payload_attestation_data"),
        ("GET", "/eth/v1/validator/payload_attestation_data/{slot}"),
        ("GET", "/eth/v4/validator/blocks/{slot}"),
        ("POST", "/eth/v1/beacon/execution_payload_envelopes"),
    }
)
"""The Gloas routes declaring 503 on beacon-APIs master (mid-2026); v4.0.0 has none."""


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type=JSON, headers=headers)


def _route_key(request: web.Request) -> tuple[str, str]:
    route = request.match_info.route
    resource = route.resource
    path = resource.canonical if resource is not None else request.path
    return request.method, path


# --- parameters ---------------------------------------------------------------------


def uint_param(value: str | None, name: str) -> int:
    if value is None:
        raise ApiError(400, f"missing required parameter {name}")
    try:
        return parse_uint(value, 64)
    except ValueError as failure:
        raise ApiError(400, f"invalid {name}: {failure}") from None


def hex_param(value: str | None, name: str, length: int) -> bytes:
    if value is None:
        raise ApiError(400, f"missing required parameter {name}")
    try:
        return parse_hex(value, length)
    except ValueError as failure:
        raise ApiError(400, f"invalid {name}: {failure}") from None


async def read_json(request: web.Request) -> Any:
    if request.content_type not in (JSON, "application/octet-stream", "text/plain", ""):
        raise ApiError(415, f"unsupported Content-Type {request.content_type}")
    if request.content_type == SSZ:
        raise ApiError(415, "this endpoint takes JSON bodies only on this node")
    raw = await request.read()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as failure:
        raise ApiError(400, f"invalid JSON body: {failure}") from None


async def read_json_array(request: web.Request, what: str) -> list[Any]:
    body = await read_json(request)
    if not isinstance(body, list):
        raise ApiError(400, f"expected a JSON array of {what}")
    return body


def wants_ssz(request: web.Request) -> bool:
    """True when the Accept header prefers SSZ; 406 when it accepts neither SSZ nor JSON."""
    accept = request.headers.get("Accept", "")
    if not accept.strip():
        return False
    best: dict[str, float] = {}
    for part in accept.split(","):
        fields = [field.strip() for field in part.split(";")]
        media = fields[0].lower()
        quality = 1.0
        for parameter in fields[1:]:
            if parameter.startswith("q="):
                try:
                    quality = float(parameter[2:])
                except ValueError:
                    quality = 0.0
        best[media] = max(best.get(media, 0.0), quality)
    ssz_q = best.get(SSZ, 0.0)
    json_q = max(best.get(JSON, 0.0), best.get("application/*", 0.0), best.get("*/*", 0.0))
    if ssz_q == 0.0 and json_q == 0.0:
        raise ApiError(406, f"cannot answer with any type in Accept: {accept}")
    return ssz_q > json_q


def require_consensus_version(request: web.Request) -> None:
    version = request.headers.get("Eth-Consensus-Version")
    if version is None:
        raise ApiError(400, "missing Eth-Consensus-Version header")
    # Before the Gloas fork the chain's fork is Fulu; from it on Gloas (and a message of the
    # fork's last Fulu slots may still arrive under Fulu's name).
    allowed = {FORK.value}
    if _chain_has_gloas(request):
        allowed.add(ForkName.GLOAS.value)
    if version.lower() not in allowed:
        raise ApiError(
            400, f"Eth-Consensus-Version {version} does not match the chain's fork {FORK.value}"
        )


CHAIN_KEY: web.AppKey[DevnetChain] = web.AppKey("devnet_chain", DevnetChain)


def _chain_has_gloas(request: web.Request) -> bool:
    chain = request.app.get(CHAIN_KEY)
    return chain is not None and chain.spec.gloas_fork_epoch != FAR_FUTURE_EPOCH





# --- middlewares --------------------------------------------------------------------------


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as failure:
        return json_response(error_body(failure.status, failure.message), status=failure.status)
    except web.HTTPException as failure:
        if failure.status < 400:
            raise
        return json_response(error_body(failure.status, failure.reason), status=failure.status)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("internal error on %s %s", request.method, request.path)
        return json_response(error_body(500, "Internal server error"), status=500)


def availability_middleware(chain: DevnetChain) -> Callable[..., Any]:
    """The ``unavailable`` fault: refuse, or hold then refuse, every request for a while."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        faults = chain.faults
        if faults is None:
            return await handler(request)
        availability = faults.availability(time.time())
        if availability is Availability.UP:
            return await handler(request)
        if availability is Availability.HANG:
            chain.ledger.fault_events["delayed_responses"] += 1
            await asyncio.sleep(2 * chain.seconds_per_slot)
        chain.ledger.fault_events["unavailable_responses"] += 1
        key = _route_key(request)
        status = 503 if key in DECLARES_503 or key in GLOAS_DECLARES_503 else 500
        if status == 503 and request.path == "/eth/v1/node/health":
            return web.Response(status=503)
        message = "Beacon node is currently syncing and not serving requests (devnet fault)"
        return json_response(error_body(status, message), status=status)

    return middleware
