"""Strict mode's middlewares: every exchange held to the OpenAPI document as it happens.

:class:`StrictClientChecker` is an aiohttp *client* middleware (our Beacon API
client's requests and the answers it gets); :class:`StrictServerChecker`
provides an aiohttp *server* middleware (what our simulated node and our
Keymanager API are asked and answer). Both judge with a loaded
:class:`~validator.devnet.strict_mode.openapi_spec.BeaconApiSpec` and keep what broke the
spec as :class:`Violation` entries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import ClientRequest, ClientResponse, web
from multidict import CIMultiDict

if TYPE_CHECKING:
    pass

from validator.devnet.strict_mode.openapi_spec import (
    EVENT_STREAM,
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
    SpecViolation,
)


@dataclass(frozen=True)
class Violation:
    """One non-conforming exchange seen by a strict checker."""

    where: str
    errors: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: " + "; ".join(self.errors)


def _headers_of(headers: Iterable[tuple[str, str]]) -> CIMultiDict[str]:
    return CIMultiDict(headers)


class StrictClientChecker:
    """aiohttp client middleware checking every request and response.

    Pass it as ``ClientSession(middlewares=[checker])``. In ``raise_on_violation``
    mode (default) a non-conforming request raises :class:`SpecViolation` before it
    is sent, and a non-conforming response raises it instead of being returned.
    Every violation is also kept in :attr:`violations`. Event-stream responses are
    checked for status and headers only (their body never ends).
    """

    def __init__(self, spec: BeaconApiSpec, *, raise_on_violation: bool = True) -> None:
        self.spec = spec
        self.raise_on_violation = raise_on_violation
        self.violations: list[Violation] = []
        self.checked_requests = 0
        self.checked_responses = 0

    def _record(self, where: str, errors: list[str]) -> None:
        self.violations.append(Violation(where, tuple(errors)))
        if self.raise_on_violation:
            raise SpecViolation(where, errors)

    async def __call__(
        self,
        request: ClientRequest,
        handler: Callable[[ClientRequest], Awaitable[ClientResponse]],
    ) -> ClientResponse:
        body = request.body
        body_bytes = await body.as_bytes() if not isinstance(body, bytes) else body
        parts = HttpRequestParts(
            method=request.method,
            path=request.url.path,
            query=list(request.url.query.items()),
            headers=_headers_of(request.headers.items()),
            body=body_bytes or None,
        )
        errors = self.spec.check_request(parts)
        self.checked_requests += 1
        if errors:
            self._record(f"request {parts.describe()}", errors)
        response = await handler(request)
        streaming = response.content_type == EVENT_STREAM
        response_body = None if streaming else await response.read()
        answer = HttpResponseParts(
            status=response.status,
            headers=_headers_of(response.headers.items()),
            body=response_body,
        )
        errors = self.spec.check_response(parts, answer)
        self.checked_responses += 1
        if errors:
            response.release()
            self._record(f"response {response.status} to {parts.describe()}", errors)
        return response


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class StrictServerChecker:
    """aiohttp server middleware checking every request and response.

    Add :attr:`middleware` to ``web.Application(middlewares=[...])``. A request that
    does not conform is answered 400 with the spec's ``{code, message}`` error body
    and never reaches the handler; a response that does not conform is replaced by
    a 500 ``{code, message}`` naming the violation. Every violation is kept in
    :attr:`violations`, so a test can assert that there were none. Event-stream
    responses are checked for status and headers only.
    """

    def __init__(self, spec: BeaconApiSpec) -> None:
        self.spec = spec
        self.violations: list[Violation] = []
        self.checked_requests = 0
        self.checked_responses = 0

    @property
    def middleware(self) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
        @web.middleware
        async def strict_beacon_api(request: web.Request, handler: Handler) -> web.StreamResponse:
            return await self._handle(request, handler)

        return strict_beacon_api

    async def _handle(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        body = await request.read() if request.body_exists else None
        parts = HttpRequestParts(
            method=request.method,
            path=request.path,
            query=list(request.query.items()),
            headers=_headers_of(request.headers.items()),
            body=body or None,
        )
        errors = self.spec.check_request(parts)
        self.checked_requests += 1
        if errors:
            where = f"request {parts.describe()}"
            self.violations.append(Violation(where, tuple(errors)))
            return web.json_response(
                {
                    "code": 400,
                    "message": f"{where} does not conform to the Beacon API: " + "; ".join(errors),
                },
                status=400,
            )
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            # aiohttp's own errors (404/405 for unknown routes) are plain text, not
            # the spec's error shape; judge them like any other response.
            response = web.Response(
                status=exc.status, text=exc.text or exc.reason, headers=exc.headers
            )
        if response.prepared:
            # Already streamed (server-sent events): only status and headers remain.
            answer = HttpResponseParts(response.status, _headers_of(response.headers.items()))
        else:
            answer = HttpResponseParts(
                response.status,
                _headers_of(response.headers.items())
                if "Content-Type" in response.headers
                else _with_content_type(response),
                _response_body(response),
            )
        errors = self.spec.check_response(parts, answer)
        self.checked_responses += 1
        if errors:
            where = f"response {response.status} to {parts.describe()}"
            self.violations.append(Violation(where, tuple(errors)))
            if not response.prepared:
                return web.json_response(
                    {
                        "code": 500,
                        "message": f"{where} does not conform to the Beacon API: "
                        + "; ".join(errors),
                    },
                    status=500,
                )
        return response


def _with_content_type(response: web.StreamResponse) -> CIMultiDict[str]:
    """Headers as they will be sent: aiohttp adds Content-Type when preparing."""
    headers = _headers_of(response.headers.items())
    body = _response_body(response)
    if body:
        content_type = response.content_type
        if response.charset:
            content_type += f"; charset={response.charset}"
        headers["Content-Type"] = content_type
    return headers


def _response_body(response: web.StreamResponse) -> bytes:
    if isinstance(response, web.Response):
        body = response.body
        if body is None:
            return b""
        if isinstance(body, bytes | bytearray):
            return bytes(body)
        raise TypeError(
            f"strict mode cannot inspect a {type(body).__name__} response body; "
            "answer with bytes or web.json_response"
        )
    return b""
