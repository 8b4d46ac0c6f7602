"""The HTTP transport to one or more beacon nodes, under the typed client.

:class:`BeaconTransport` owns the aiohttp session and the node pool:

- *fetches* go to the most preferred node (synced first, in the operator's
  order) and fail over to the next on any error or timeout, so one bad node
  never costs a duty; a failed request moves its node down only when the node
  could not be reached (health is the health checks' business);
- *publications* go to every node not known to be offline, concurrently;
  success means at least one node accepted, and the others' errors are logged
  and returned;
- a background task re-checks unhealthy nodes (``/eth/v1/node/health`` and
  ``/eth/v1/node/syncing``) every
  ``health_check_interval`` seconds and synced ones less often;
- event streams are opened here, and closed with the transport.

Every attempt is timed into ``validator_beacon_node_request_seconds{endpoint}``
and every failed one counted in ``validator_beacon_node_request_errors_total``.

Why one module: failover, publishing to all, health and the
streams share one node pool and one session, and the rule "only health checks and
unreachable nodes move a node" must be read in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

import aiohttp
import orjson
from multidict import CIMultiDictProxy

from validator.beacon import routes
from validator.beacon.errors import (
    BeaconApiError,
    BeaconNodeError,
    MalformedResponseError,
    NodeTimeoutError,
    NodeUnavailableError,
    most_telling,
)
from validator.beacon.metrics import REQUEST_ERRORS, REQUEST_SECONDS
from validator.beacon.nodes import BeaconNode, NodePool
from validator.beacon.types import PublishResult, SyncingStatus, data_of

log = logging.getLogger("validator.beacon")

T = TypeVar("T")

JSON = "application/json"
SSZ = "application/octet-stream"
ACCEPT_SSZ_FIRST = "application/octet-stream;q=1.0,application/json;q=0.9"
EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class RequestTimeouts:
    """Per-attempt timeouts in seconds, by kind of request.

    A fetch that fails over tries nodes one after another, so its worst case is
    the number of nodes times its timeout; publications run on all nodes at once.
    """

    default: float = 12.0  # genesis, config, validators, block root, exits
    health: float = 3.0  # /eth/v1/node/syncing checks
    duties: float = 6.0
    attestation: float = 3.0  # attestation data, attestations, aggregates
    proposal: float = 6.0  # produce and publish blocks
    sync_committee: float = 3.0  # messages, contributions, head root
    subscriptions: float = 6.0  # subscriptions, proposer preparation, registrations
    events_connect: float = 6.0  # until the event stream's headers arrive

    @classmethod
    def for_slot(cls, seconds_per_slot: float) -> RequestTimeouts:
        """Timeouts sized to the chain's slot: attestation work within a quarter."""
        s = float(seconds_per_slot)
        if s <= 0:
            raise ValueError("seconds per slot must be positive")
        return cls(
            default=s,
            health=s / 4,
            duties=s / 2,
            attestation=s / 4,
            proposal=s / 2,
            sync_committee=s / 4,
            subscriptions=s / 2,
            events_connect=s / 2,
        )



@dataclass(frozen=True)
class Answer:
    """One node's complete HTTP answer (status, headers, body), read before parsing."""

    node: BeaconNode
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes

    @property
    def media_type(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def json(self) -> Any:
        if self.media_type not in ("", JSON):
            raise MalformedResponseError(f"expected JSON, got Content-Type {self.media_type!r}")
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError as exc:
            raise MalformedResponseError(f"body is not JSON: {exc}") from None



class ClosableStream(Protocol):
    """A stream the transport closes when it closes itself."""

    async def close(self) -> None: ...


class EventStreamSource(Protocol):
    """What an event stream needs from the transport, and nothing more."""

    def nodes_by_preference(self) -> list[BeaconNode]: ...

    async def open_event_stream(
        self, node: BeaconNode, topics: Sequence[str]
    ) -> aiohttp.ClientResponse: ...

    def forget_stream(self, stream: ClosableStream) -> None: ...


class BeaconTransport:
    """Session, node pool, health checks, failover and publish-to-all.

    ``async with`` opens the HTTP session, checks every node once and starts the
    periodic health checks; leaving the block (or :meth:`close`) stops them,
    closes open event streams and the session. ``middlewares`` are aiohttp
    client middlewares (strict-mode spec checks).
    """

    def __init__(
        self,
        urls: Sequence[str],
        *,
        timeouts: RequestTimeouts | None = None,
        health_check_interval: float = 6.0,
        synced_recheck_interval: float | None = None,
        sync_tolerance: int = 2,
        middlewares: Sequence[aiohttp.ClientMiddlewareType] = (),
        user_agent: str = "unslashable-validator",
    ) -> None:
        if health_check_interval <= 0:
            raise ValueError("health check interval must be positive")
        self._pool = NodePool(urls, sync_tolerance=sync_tolerance)
        self.timeouts = timeouts or RequestTimeouts()
        self.health_check_interval = health_check_interval
        self.synced_recheck_interval = (
            synced_recheck_interval
            if synced_recheck_interval is not None
            else 4 * health_check_interval
        )
        self._middlewares = tuple(middlewares)
        self._user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None
        self._health_task: asyncio.Task[None] | None = None
        self._streams: set[ClosableStream] = set()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------

    @property
    def nodes(self) -> tuple[BeaconNode, ...]:
        """The configured nodes with their last known health (read-only view)."""
        return self._pool.nodes

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Check every node once and start the periodic health checks."""
        self._ensure_session()
        await self.check_health()
        if self._health_task is None:
            self._health_task = asyncio.create_task(self._health_loop(), name="beacon-node-health")

    async def close(self) -> None:
        """Stop event streams and health checks, then close the HTTP session."""
        # Streams first: a consumer woken by what follows must see its stream
        # closed (and end) rather than try to reconnect through a closed client.
        for stream in list(self._streams):
            await stream.close()
        self._closed = True
        task, self._health_task = self._health_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("the beacon node client is closed")
        if self._session is None:
            self._session = aiohttp.ClientSession(
                # Each request gets its own deadline (RequestTimeouts); event
                # streams must be able to stay open indefinitely.
                timeout=aiohttp.ClientTimeout(total=None),
                headers={"User-Agent": self._user_agent},
                middlewares=self._middlewares,
            )
        return self._session

    # -- health ------------------------------------------------------------------

    async def check_health(self, nodes: Sequence[BeaconNode] | None = None) -> None:
        """Ask each node (default: all) for its sync status and record its health."""
        await asyncio.gather(*(self._check_node(node) for node in nodes or self._pool.nodes))

    async def _check_node(self, node: BeaconNode) -> None:
        """Ask ``/eth/v1/node/health`` and ``/eth/v1/node/syncing`` at once; judge from both.

        Health 200 or 206 (syncing) is an answer; 503 (not initialized or having issues)
        or no answer at all makes the node offline. A 4xx from the health endpoint (a node
        without it) leaves the judgment to the syncing answer, which must come.
        """
        now = asyncio.get_running_loop().time()
        health, syncing = await asyncio.gather(
            self._send(
                node, "GET", routes.NODE_HEALTH, routes.NODE_HEALTH, timeout=self.timeouts.health
            ),
            self._send(
                node, "GET", routes.NODE_SYNCING, routes.NODE_SYNCING, timeout=self.timeouts.health
            ),
            return_exceptions=True,
        )
        if isinstance(health, BeaconApiError) and health.status < 500:
            health_status = 200  # no health endpoint: the syncing answer decides
        elif isinstance(health, BeaconNodeError):
            self._pool.record_failed_check(node, health, now)
            return
        elif isinstance(health, BaseException):
            raise health
        else:
            health_status = health.status
        try:
            if isinstance(syncing, BaseException):
                raise syncing
            status = self._parsed(syncing, routes.NODE_SYNCING, syncing_status_from)
        except BeaconNodeError as error:
            self._pool.record_failed_check(node, error, now)
            return
        self._pool.record_check(node, status, now, health_status=health_status)

    async def _health_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.health_check_interval)
            due = self._pool.due_for_check(
                loop.time(), synced_recheck_after=self.synced_recheck_interval
            )
            if not due:
                continue
            try:
                await self.check_health(due)
            except Exception:
                # A bug here must not end health checking for the rest of the run.
                log.exception("beacon node health check failed unexpectedly")

    async def wait_for_synced_node(self, poll_interval: float = 1.0) -> BeaconNode:
        """Block until some node reports itself synced; returns the preferred one."""
        while True:
            synced = self._pool.synced()
            if synced:
                return synced[0]
            await asyncio.sleep(poll_interval)
            await self.check_health()

    # -- transport ---------------------------------------------------------------

    def _headers(
        self, extra: Mapping[str, str] | None, *, body: bool, accept: str
    ) -> dict[str, str]:
        headers = {"Accept": accept}
        if body:
            headers["Content-Type"] = JSON
        if extra:
            headers.update(extra)
        return headers

    def _transport_error(
        self, exc: BaseException, node: BeaconNode, route: str, timeout: float
    ) -> BeaconNodeError:
        if isinstance(exc, TimeoutError):
            return NodeTimeoutError(
                f"no answer within {timeout:g} s", node=node.name, endpoint=route
            )
        if isinstance(exc, aiohttp.ClientResponseError):
            return MalformedResponseError(
                f"unreadable HTTP answer: {exc.message}", node=node.name, endpoint=route
            )
        return NodeUnavailableError(
            f"{type(exc).__name__}: {exc}".rstrip(": "), node=node.name, endpoint=route
        )

    def _count_failure(self, route: str, error: BeaconNodeError) -> None:
        REQUEST_ERRORS.labels(route, error.reason).inc()

    async def _send(
        self,
        node: BeaconNode,
        method: str,
        route: str,
        path: str,
        *,
        timeout: float,
        query: Sequence[tuple[str, str]] = (),
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        """One attempt on one node; any failure becomes a :class:`BeaconNodeError`."""
        session = self._ensure_session()
        started = time.perf_counter()
        error: BeaconNodeError | None = None
        answer: Answer | None = None
        try:
            async with asyncio.timeout(timeout):
                async with session.request(
                    method,
                    node.url + path,
                    params=list(query),
                    data=body,
                    headers=headers or {"Accept": JSON},
                ) as response:
                    answer = Answer(node, response.status, response.headers, await response.read())
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            error = self._transport_error(exc, node, route, timeout)
        finally:
            REQUEST_SECONDS.labels(route).observe(time.perf_counter() - started)
        if error is None and answer is not None and answer.status >= 400:
            error = BeaconApiError.from_body(
                answer.status, answer.body, node=node.name, endpoint=route
            )
        if error is not None:
            self._count_failure(route, error)
            raise error
        assert answer is not None
        return answer

    def _parsed(self, answer: Answer, route: str, parse: Callable[[Answer], T]) -> T:
        try:
            return parse(answer)
        except MalformedResponseError as error:
            error.node, error.endpoint = answer.node.name, route
            self._count_failure(route, error)
            raise

    async def _fetch(
        self,
        method: str,
        route: str,
        path: str,
        parse: Callable[[Answer], T],
        *,
        timeout: float,
        query: Sequence[tuple[str, str]] = (),
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        accept: str = JSON,
    ) -> T:
        """Ask nodes in order of preference until one gives a usable answer."""
        body = None if json_body is None else orjson.dumps(json_body)
        request_headers = self._headers(headers, body=body is not None, accept=accept)
        candidates = self._pool.by_preference()
        errors: list[BeaconNodeError] = []
        for node in candidates:
            try:
                answer = await self._send(
                    node,
                    method,
                    route,
                    path,
                    timeout=timeout,
                    query=query,
                    body=body,
                    headers=request_headers,
                )
                result = self._parsed(answer, route, parse)
            except BeaconNodeError as error:
                errors.append(error)
                self._pool.record_failure(node, error)
                if len(errors) < len(candidates):
                    log.warning("%s; trying the next beacon node", error)
                continue
            self._pool.record_success(node)
            return result
        raise most_telling(errors)

    async def _publish(
        self,
        route: str,
        path: str,
        payload: bytes,
        *,
        timeout: float,
        content_type: str = JSON,
        query: Sequence[tuple[str, str]] = (),
        headers: Mapping[str, str] | None = None,
    ) -> PublishResult:
        """Send to every reachable node at once; fine if at least one accepts."""
        request_headers = {"Accept": JSON, "Content-Type": content_type, **(headers or {})}
        targets = self._pool.publish_targets()
        outcomes = await asyncio.gather(
            *(
                self._send(
                    node,
                    "POST",
                    route,
                    path,
                    timeout=timeout,
                    query=query,
                    body=payload,
                    headers=request_headers,
                )
                for node in targets
            ),
            return_exceptions=True,
        )
        accepted: dict[str, int] = {}
        errors: list[BeaconNodeError] = []
        for node, outcome in zip(targets, outcomes, strict=True):
            if isinstance(outcome, BeaconNodeError):
                errors.append(outcome)
                self._pool.record_failure(node, outcome)
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                accepted[node.name] = outcome.status
                self._pool.record_success(node)
        if not accepted:
            raise most_telling(errors)
        for error in errors:
            log.warning("not accepted by every node: %s", error)
        return PublishResult(route, accepted, tuple(errors))

    async def _publish_json(
        self, route: str, items: Any, *, timeout: float, headers: Mapping[str, str] | None = None
    ) -> PublishResult:
        if isinstance(items, list) and not items:
            raise ValueError(f"nothing to publish to {route}")
        return await self._publish(
            route, route, orjson.dumps(items), timeout=timeout, headers=headers
        )

    def nodes_by_preference(self) -> list[BeaconNode]:
        """The nodes to try, best first (synced, then the operator's order)."""
        return self._pool.by_preference()

    def track_stream(self, stream: ClosableStream) -> None:
        """Close ``stream`` with the transport (it calls :meth:`forget_stream` when it ends)."""
        self._ensure_session()
        self._streams.add(stream)

    async def open_event_stream(
        self, node: BeaconNode, topics: Sequence[str]
    ) -> aiohttp.ClientResponse:
        """Open ``/eth/v1/events`` on ``node``; the caller owns (closes) the response."""
        session = self._ensure_session()
        route = routes.EVENTS
        timeout = self.timeouts.events_connect
        started = time.perf_counter()
        error: BeaconNodeError | None = None
        response: aiohttp.ClientResponse | None = None
        try:
            async with asyncio.timeout(timeout):
                response = await session.get(
                    node.url + route,
                    params=[("topics", topic) for topic in topics],
                    headers={"Accept": EVENT_STREAM},
                )
                if response.status >= 400:
                    error = BeaconApiError.from_body(
                        response.status, await response.read(), node=node.name, endpoint=route
                    )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            error = self._transport_error(exc, node, route, timeout)
        finally:
            REQUEST_SECONDS.labels(route).observe(time.perf_counter() - started)
        if error is None and response is not None and response.content_type != EVENT_STREAM:
            error = MalformedResponseError(
                f"expected {EVENT_STREAM}, got {response.content_type!r}",
                node=node.name,
                endpoint=route,
            )
        if error is not None:
            if response is not None:
                response.close()
            self._count_failure(route, error)
            self._pool.record_failure(node, error)
            log.warning("%s", error)
            raise error
        assert response is not None
        return response

    def forget_stream(self, stream: ClosableStream) -> None:
        self._streams.discard(stream)


def syncing_status_from(answer: Answer) -> SyncingStatus:
    return SyncingStatus.from_json(data_of(answer.json()))
