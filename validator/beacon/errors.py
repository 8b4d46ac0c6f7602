"""Typed failures of the Beacon API client.

Every failure is a :class:`BeaconNodeError`; its subclass says what went wrong:
the node could not be reached (:class:`NodeUnavailableError`), did not answer in
time (:class:`NodeTimeoutError`), answered with an HTTP error in the API's
``{code, message[, failures]}`` shape (:class:`BeaconApiError`), or answered with
something that is not what the API promises (:class:`MalformedResponseError`).

When several beacon nodes were tried, the error raised is the most telling one
(an HTTP answer beats a malformed body, which beats a timeout, which beats a
refused connection) and :attr:`BeaconNodeError.attempts` holds every node's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class BeaconNodeError(Exception):
    """A request to the beacon node(s) failed."""

    #: Short, bounded label used as the ``reason`` of the error metric.
    reason: str = "error"
    #: Higher means a more telling error to report when every node failed.
    _rank = 0

    def __init__(self, message: str, *, node: str | None = None, endpoint: str | None = None):
        super().__init__(message)
        self.detail = message
        self.node = node
        self.endpoint = endpoint
        self.attempts: tuple[BeaconNodeError, ...] = ()

    def __str__(self) -> str:
        where = " ".join(part for part in (self.node, self.endpoint) if part)
        text = f"beacon node {where}: {self.detail}" if where else self.detail
        others = [error for error in self.attempts if error is not self]
        if others:
            text += "; other nodes: " + "; ".join(
                f"{error.node}: {error.detail}" for error in others
            )
        return text


class NodeUnavailableError(BeaconNodeError):
    """The node could not be reached (refused, reset, closed, DNS failure)."""

    reason = "connection"
    _rank = 1


class NodeTimeoutError(BeaconNodeError):
    """The node did not answer within the request's timeout."""

    reason = "timeout"
    _rank = 2


class MalformedResponseError(BeaconNodeError):
    """The node answered, but not with what the Beacon API promises."""

    reason = "malformed"
    _rank = 3


@dataclass(frozen=True)
class ItemFailure:
    """One rejected item of a pool submission (``failures[]`` of the error body)."""

    index: int
    message: str


class BeaconApiError(BeaconNodeError):
    """The node answered with an HTTP error status.

    ``code`` and ``message`` come from the API's error body when it has one;
    ``failures`` lists the rejected items of pool submissions (attestations, sync
    committee messages, aggregates, contributions), by index in the request.
    """

    _rank = 4

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: int | None = None,
        failures: Sequence[ItemFailure] = (),
        node: str | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.status = status
        self.code = code if code is not None else status
        self.message = message
        self.failures = tuple(failures)
        detail = f"HTTP {status}: {message}"
        if self.failures:
            detail += " (" + ", ".join(f"item {f.index}: {f.message}" for f in self.failures) + ")"
        super().__init__(detail, node=node, endpoint=endpoint)
        self.reason = f"http_{status}"

    @classmethod
    def from_body(
        cls, status: int, body: bytes, *, node: str | None = None, endpoint: str | None = None
    ) -> BeaconApiError:
        """Build from an error response, keeping what its body says when it can."""
        import orjson

        message = body.decode("utf-8", "replace").strip()[:300] or "(empty body)"
        code: int | None = None
        failures: list[ItemFailure] = []
        try:
            parsed: Any = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            if isinstance(parsed.get("message"), str):
                message = parsed["message"]
            raw_code = parsed.get("code")
            if isinstance(raw_code, int | float) and not isinstance(raw_code, bool):
                code = int(raw_code)
            for item in parsed.get("failures") or ():
                if isinstance(item, dict) and isinstance(item.get("index"), int | float | str):
                    try:
                        index = int(item["index"])
                    except ValueError:
                        continue
                    failures.append(ItemFailure(index, str(item.get("message", ""))))
        return cls(status, message, code=code, failures=failures, node=node, endpoint=endpoint)


def most_telling(errors: Sequence[BeaconNodeError]) -> BeaconNodeError:
    """Pick the error to raise when every node failed; it carries all of them."""
    if not errors:
        raise ValueError("no errors to choose from")
    # Highest rank wins; among equals, the first node tried (the preferred one).
    chosen = max(errors, key=lambda error: (error._rank, -errors.index(error)))
    chosen.attempts = tuple(errors)
    return chosen
