"""Every response the Keymanager API tests receive is judged against the official spec.

`ConformanceChecker` is an aiohttp client middleware on the tests' client. It
checks each answer with openapi-core (`validator.devnet.strict_mode.openapi_spec`, the machinery
that also holds the Beacon API traffic to its spec) and keeps what it finds:
violations, 5xx answers, and answers for which the spec documents nothing.

Two kinds of answer are judged against the spec's `ErrorResponse` schema
directly, because the spec has no entry to judge them by; both are listed in
docs/keymanager.md:
- a 400 to POST or DELETE /eth/v1/remotekeys (the spec lists no 400 there, but
  bad input must be refused, and 200 would claim it was processed);
- an answer to a path or method the spec does not have (404, 405).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import orjson
from aiohttp import ClientRequest, ClientResponse
from multidict import CIMultiDict

from validator.devnet.strict_mode.openapi_spec import (
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
)

UNDOCUMENTED_400 = {("POST", "/eth/v1/remotekeys"), ("DELETE", "/eth/v1/remotekeys")}


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    body: bytes


@dataclass
class ConformanceChecker:
    spec: BeaconApiSpec
    exchanges: list[Exchange] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    outside_spec: list[Exchange] = field(default_factory=list)
    """Answers judged against ErrorResponse alone (see the module docstring)."""
    expected_5xx: int = 0
    """A test that provokes a server error on purpose raises this."""

    async def __call__(
        self,
        request: ClientRequest,
        handler: Callable[[ClientRequest], Awaitable[ClientResponse]],
    ) -> ClientResponse:
        response = await handler(request)
        body = await response.read()
        method = request.method.upper()
        path = request.url.path
        self.exchanges.append(Exchange(method, path, response.status, body))
        parts = HttpRequestParts(
            method=method,
            path=path,
            query=list(request.url.query.items()),
            headers=CIMultiDict(request.headers),
        )
        answer = HttpResponseParts(response.status, CIMultiDict(response.headers), body)
        errors = self.spec.check_response(parts, answer)
        undocumented = (
            errors
            and all("is not documented" in e or "not an operation" in e for e in errors)
            and (
                (response.status == 400 and (method, path) in UNDOCUMENTED_400)
                or any("not an operation" in e for e in errors)
            )
        )
        if undocumented:
            self.outside_spec.append(self.exchanges[-1])
            errors = _error_shape_problems(response, body)
        if errors:
            self.violations.append(f"{response.status} to {method} {path}: " + "; ".join(errors))
        return response

    @property
    def server_errors(self) -> list[Exchange]:
        return [exchange for exchange in self.exchanges if exchange.status >= 500]

    def assert_clean(self) -> None:
        assert self.violations == [], "answers that break the Keymanager API spec"
        assert len(self.server_errors) == self.expected_5xx, self.server_errors


def _error_shape_problems(response: ClientResponse, body: bytes) -> list[str]:
    """The spec's ErrorResponse: a JSON object with a string `message`."""
    if response.content_type != "application/json":
        return [f"error answer is {response.content_type}, not application/json"]
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ["error answer is not JSON"]
    if not isinstance(document, dict) or not isinstance(document.get("message"), str):
        return [f"error answer has no string message: {body[:200]!r}"]
    return []
