"""Async client for the Beacon API operations a validator client uses, over aiohttp.

One :class:`BeaconNodeClient` talks to one or more beacon nodes:

- *fetches* (duties, attestation data, block production, ...) go to the most
  preferred node (synced first, in the operator's order) and fail over to the
  next on any error or timeout, so one bad node never costs a duty;
- *publications* (signed blocks, attestations, aggregates, sync messages,
  subscriptions, proposer preparations, registrations, exits) go to every node not
  known to be offline, concurrently; success means at least one node accepted,
  and the others' errors are logged and returned;
- a background task re-checks unhealthy nodes (``/eth/v1/node/syncing``) every
  ``health_check_interval`` seconds and synced ones less often.

Every attempt is timed into ``validator_beacon_node_request_seconds{endpoint}``
and every failed one counted in ``validator_beacon_node_request_errors_total``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

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
from validator.beacon.events import EventStream
from validator.beacon.metrics import REQUEST_ERRORS, REQUEST_SECONDS
from validator.beacon.nodes import BeaconNode, NodePool
from validator.beacon.types import (
    AttesterDuties,
    BeaconCommitteeSubscription,
    BlockRoot,
    FinalityCheckpoints,
    Fork,
    Genesis,
    JsonObject,
    ProducedBlock,
    ProposerDuties,
    ProposerPreparation,
    PublishResult,
    SyncCommitteeSubscription,
    SyncDuties,
    SyncingStatus,
    ValidatorInfo,
    VersionedData,
    data_of,
    field_of,
    hex0x,
    parse_bool,
    parse_list,
    parse_object,
    parse_uint,
)

log = logging.getLogger("validator.beacon")

T = TypeVar("T")

JSON = "application/json"
SSZ = "application/octet-stream"
ACCEPT_SSZ_FIRST = "application/octet-stream;q=1.0,application/json;q=0.9"
EVENT_STREAM = "text/event-stream"
#: The GET form of state validators takes at most this many ids per request.
MAX_IDS_PER_GET = 64

CONSENSUS_VERSION = "Eth-Consensus-Version"
PAYLOAD_BLINDED = "Eth-Execution-Payload-Blinded"
PAYLOAD_VALUE = "Eth-Execution-Payload-Value"
BLOCK_VALUE = "Eth-Consensus-Block-Value"


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
class _Answer:
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


def _uint_header(value: str | None, name: str) -> int | None:
    return None if value is None else parse_uint(value.strip(), name)


def _bool_header(value: str | None, name: str) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise MalformedResponseError(f"header {name} is not true/false: {value!r:.40}")
    return lowered == "true"


def _agree(from_header: T | None, from_body: T, name: str) -> T:
    if from_header is not None and from_header != from_body:
        raise MalformedResponseError(
            f"header {name} says {from_header!r} but the body says {from_body!r}"
        )
    return from_body


def _version_string(value: Any, name: str) -> str:
    if isinstance(value, str) and value:
        return value
    raise MalformedResponseError(f"{name} is not a consensus version: {value!r:.40}")


def _parse_produced_block(answer: _Answer) -> ProducedBlock:
    headers = answer.headers
    header_version = headers.get(CONSENSUS_VERSION)
    header_blinded = _bool_header(headers.get(PAYLOAD_BLINDED), PAYLOAD_BLINDED)
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
        return ProducedBlock(
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
    return ProducedBlock(
        version=_agree(
            header_version,
            _version_string(field_of(body, "version", "block"), "version"),
            CONSENSUS_VERSION,
        ),
        blinded=_agree(header_blinded, blinded, PAYLOAD_BLINDED),
        execution_payload_value=_agree(
            header_payload_value,
            parse_uint(field_of(body, "execution_payload_value", "block"), "payload value"),
            PAYLOAD_VALUE,
        ),
        consensus_block_value=_agree(
            header_block_value,
            parse_uint(field_of(body, "consensus_block_value", "block"), "block value"),
            BLOCK_VALUE,
        ),
        data=parse_object(data_of(body), "block data"),
    )


def _parse_versioned(answer: _Answer) -> VersionedData:
    body = parse_object(answer.json(), "response")
    version = _version_string(field_of(body, "version", "response"), "version")
    return VersionedData(
        version=_agree(answer.headers.get(CONSENSUS_VERSION), version, CONSENSUS_VERSION),
        data=parse_object(data_of(body), "data"),
    )


def _validator_id(value: int | str | bytes) -> str:
    if isinstance(value, bytes):
        if len(value) != 48:
            raise ValueError(f"a validator public key is 48 bytes, got {len(value)}")
        return hex0x(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"validator index must be >= 0, got {value}")
        return str(value)
    return value


def _indices_body(indices: Sequence[int]) -> list[str]:
    if not indices:
        raise ValueError("at least one validator index is needed")
    return [str(int(index)) for index in indices]


def _require_length(value: bytes, length: int, name: str) -> bytes:
    if len(value) != length:
        raise ValueError(f"{name} must be {length} bytes, got {len(value)}")
    return value


def encode_graffiti(text: str) -> bytes:
    """Graffiti text as the 32 bytes a block carries (UTF-8, zero-padded)."""
    raw = text.encode("utf-8")
    if len(raw) > 32:
        raise ValueError(f"graffiti is {len(raw)} bytes in UTF-8; at most 32 fit")
    return raw.ljust(32, b"\0")


class BeaconNodeClient:
    """The validator client's connection to its beacon node(s).

    ``async with BeaconNodeClient(urls) as client:`` opens the HTTP session, checks
    every node once and starts the periodic health checks; leaving the block (or
    :meth:`close`) stops them, closes open event streams and the session.
    ``middlewares`` are aiohttp client middlewares (strict-mode spec checks).
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
        self._streams: set[EventStream] = set()
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------

    @property
    def nodes(self) -> tuple[BeaconNode, ...]:
        """The configured nodes with their last known health (read-only view)."""
        return self._pool.nodes

    async def __aenter__(self) -> BeaconNodeClient:
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
        now = asyncio.get_running_loop().time()
        try:
            answer = await self._send(
                node,
                "GET",
                routes.NODE_SYNCING,
                routes.NODE_SYNCING,
                timeout=self.timeouts.health,
            )
            status = self._parsed(answer, routes.NODE_SYNCING, _syncing_from)
        except BeaconNodeError as error:
            self._pool.record_failed_check(node, error, now)
            return
        self._pool.record_check(node, status, now)

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
    ) -> _Answer:
        """One attempt on one node; any failure becomes a :class:`BeaconNodeError`."""
        session = self._ensure_session()
        started = time.perf_counter()
        error: BeaconNodeError | None = None
        answer: _Answer | None = None
        try:
            async with asyncio.timeout(timeout):
                async with session.request(
                    method,
                    node.url + path,
                    params=list(query),
                    data=body,
                    headers=headers or {"Accept": JSON},
                ) as response:
                    answer = _Answer(node, response.status, response.headers, await response.read())
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

    def _parsed(self, answer: _Answer, route: str, parse: Callable[[_Answer], T]) -> T:
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
        parse: Callable[[_Answer], T],
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

    async def _open_event_stream(
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

    def _forget_stream(self, stream: EventStream) -> None:
        self._streams.discard(stream)

    # -- node --------------------------------------------------------------------

    async def get_syncing(self) -> SyncingStatus:
        return await self._fetch(
            "GET",
            routes.NODE_SYNCING,
            routes.NODE_SYNCING,
            _syncing_from,
            timeout=self.timeouts.health,
        )

    async def get_node_health(self) -> dict[str, int | None]:
        """Each node's ``/eth/v1/node/health`` status (200 ready, 206 syncing, 503
        not ready); None for a node that could not be reached."""

        async def one(node: BeaconNode) -> int | None:
            try:
                answer = await self._send(
                    node,
                    "GET",
                    routes.NODE_HEALTH,
                    routes.NODE_HEALTH,
                    timeout=self.timeouts.health,
                )
            except BeaconApiError as error:
                return error.status
            except BeaconNodeError:
                return None
            return answer.status

        statuses = await asyncio.gather(*(one(node) for node in self._pool.nodes))
        return {node.name: status for node, status in zip(self._pool.nodes, statuses, strict=True)}

    async def get_node_version(self) -> str:
        def parse(answer: _Answer) -> str:
            version = field_of(parse_object(data_of(answer.json()), "version"), "version", "data")
            if not isinstance(version, str):
                raise MalformedResponseError(f"version is not a string: {version!r:.80}")
            return version

        return await self._fetch(
            "GET", routes.NODE_VERSION, routes.NODE_VERSION, parse, timeout=self.timeouts.default
        )

    # -- chain and config --------------------------------------------------------

    async def get_genesis(self) -> Genesis:
        return await self._fetch(
            "GET",
            routes.GENESIS,
            routes.GENESIS,
            lambda answer: Genesis.from_json(data_of(answer.json())),
            timeout=self.timeouts.default,
        )

    async def get_spec(self) -> dict[str, Any]:
        """The node's config/preset values, as the API gives them (strings, lists)."""
        return await self._fetch(
            "GET",
            routes.CONFIG_SPEC,
            routes.CONFIG_SPEC,
            lambda answer: parse_object(data_of(answer.json()), "spec"),
            timeout=self.timeouts.default,
        )

    async def get_fork_schedule(self) -> list[Fork]:
        return await self._fetch(
            "GET",
            routes.FORK_SCHEDULE,
            routes.FORK_SCHEDULE,
            lambda answer: [
                Fork.from_json(item) for item in parse_list(data_of(answer.json()), "fork schedule")
            ],
            timeout=self.timeouts.default,
        )

    async def get_state_fork(self, state_id: str = "head") -> Fork:
        return await self._fetch(
            "GET",
            routes.STATE_FORK,
            routes.fill(routes.STATE_FORK, state_id=state_id),
            lambda answer: Fork.from_json(data_of(answer.json())),
            timeout=self.timeouts.default,
        )

    async def get_finality_checkpoints(self, state_id: str = "head") -> FinalityCheckpoints:
        return await self._fetch(
            "GET",
            routes.STATE_FINALITY_CHECKPOINTS,
            routes.fill(routes.STATE_FINALITY_CHECKPOINTS, state_id=state_id),
            lambda answer: FinalityCheckpoints.from_body(answer.json()),
            timeout=self.timeouts.default,
        )

    async def get_validators(
        self,
        ids: Sequence[int | str | bytes],
        *,
        state_id: str = "head",
        statuses: Sequence[str] = (),
        use_get: bool = False,
    ) -> list[ValidatorInfo]:
        """Validators by index or public key (unknown ones are simply absent).

        POSTs all ids at once; ``use_get`` uses the GET form instead, 64 ids per
        request, for nodes without the POST form. No ids means no validators (the
        API would answer *all* validators).
        """
        id_strings = [_validator_id(value) for value in ids]
        if not id_strings:
            return []
        path = routes.fill(routes.STATE_VALIDATORS, state_id=state_id)

        def parse(answer: _Answer) -> list[ValidatorInfo]:
            return [
                ValidatorInfo.from_json(item)
                for item in parse_list(data_of(answer.json()), "validators")
            ]

        if not use_get:
            body: dict[str, Any] = {"ids": id_strings}
            if statuses:
                body["statuses"] = list(statuses)
            return await self._fetch(
                "POST",
                routes.STATE_VALIDATORS,
                path,
                parse,
                timeout=self.timeouts.default,
                json_body=body,
            )
        found: list[ValidatorInfo] = []
        for start in range(0, len(id_strings), MAX_IDS_PER_GET):
            query = [("id", value) for value in id_strings[start : start + MAX_IDS_PER_GET]]
            query += [("status", status) for status in statuses]
            found += await self._fetch(
                "GET",
                routes.STATE_VALIDATORS,
                path,
                parse,
                timeout=self.timeouts.default,
                query=query,
            )
        return found

    async def get_block_root(self, block_id: str = "head") -> BlockRoot:
        """Root of a block (``head`` for the sync committee message's root)."""
        return await self._fetch(
            "GET",
            routes.BLOCK_ROOT,
            routes.fill(routes.BLOCK_ROOT, block_id=block_id),
            lambda answer: BlockRoot.from_body(answer.json()),
            timeout=self.timeouts.sync_committee,
        )

    # -- duties ------------------------------------------------------------------

    async def get_attester_duties(self, epoch: int, indices: Sequence[int]) -> AttesterDuties:
        return await self._fetch(
            "POST",
            routes.ATTESTER_DUTIES,
            routes.fill(routes.ATTESTER_DUTIES, epoch=epoch),
            lambda answer: AttesterDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
            json_body=_indices_body(indices),
        )

    async def get_proposer_duties(self, epoch: int) -> ProposerDuties:
        return await self._fetch(
            "GET",
            routes.PROPOSER_DUTIES,
            routes.fill(routes.PROPOSER_DUTIES, epoch=epoch),
            lambda answer: ProposerDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
        )

    async def get_sync_duties(self, epoch: int, indices: Sequence[int]) -> SyncDuties:
        return await self._fetch(
            "POST",
            routes.SYNC_DUTIES,
            routes.fill(routes.SYNC_DUTIES, epoch=epoch),
            lambda answer: SyncDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
            json_body=_indices_body(indices),
        )

    # -- blocks ------------------------------------------------------------------

    async def produce_block(
        self,
        slot: int,
        randao_reveal: bytes,
        *,
        graffiti: bytes | None = None,
        skip_randao_verification: bool = False,
        builder_boost_factor: int | None = None,
        ssz: bool = False,
    ) -> ProducedBlock:
        """An unsigned block (full or blinded) for ``slot``.

        ``ssz`` asks for SSZ bytes first (JSON still accepted if that is what the
        node sends). ``skip_randao_verification`` requires the infinity signature
        as ``randao_reveal``, as the API says.
        """
        query = [("randao_reveal", hex0x(_require_length(randao_reveal, 96, "randao reveal")))]
        if graffiti is not None:
            query.append(("graffiti", hex0x(_require_length(graffiti, 32, "graffiti"))))
        if skip_randao_verification:
            query.append(("skip_randao_verification", ""))
        if builder_boost_factor is not None:
            if not 0 <= builder_boost_factor < 2**64:
                raise ValueError("builder_boost_factor must fit in a uint64")
            query.append(("builder_boost_factor", str(builder_boost_factor)))
        return await self._fetch(
            "GET",
            routes.PRODUCE_BLOCK_V3,
            routes.fill(routes.PRODUCE_BLOCK_V3, slot=slot),
            _parse_produced_block,
            timeout=self.timeouts.proposal,
            query=query,
            accept=ACCEPT_SSZ_FIRST if ssz else JSON,
        )

    async def publish_block(
        self,
        signed_block: JsonObject | bytes,
        *,
        consensus_version: str,
        blinded: bool = False,
        broadcast_validation: str | None = None,
    ) -> PublishResult:
        """Publish a signed block (JSON signed block contents, or SSZ bytes) to every
        reachable node. ``broadcast_validation``: gossip, consensus or
        consensus_and_equivocation."""
        route = routes.PUBLISH_BLINDED_BLOCK_V2 if blinded else routes.PUBLISH_BLOCK_V2
        if broadcast_validation not in (None, "gossip", "consensus", "consensus_and_equivocation"):
            raise ValueError(f"unknown broadcast_validation {broadcast_validation!r}")
        query = [("broadcast_validation", broadcast_validation)] if broadcast_validation else []
        is_ssz = isinstance(signed_block, bytes)
        payload = signed_block if isinstance(signed_block, bytes) else orjson.dumps(signed_block)
        return await self._publish(
            route,
            route,
            payload,
            timeout=self.timeouts.proposal,
            content_type=SSZ if is_ssz else JSON,
            query=query,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    # -- attestations ------------------------------------------------------------

    async def get_attestation_data(self, slot: int, committee_index: int = 0) -> JsonObject:
        """``AttestationData`` JSON for ``slot`` (committee index 0 from Electra on)."""
        return await self._fetch(
            "GET",
            routes.ATTESTATION_DATA,
            routes.ATTESTATION_DATA,
            lambda answer: parse_object(data_of(answer.json()), "attestation data"),
            timeout=self.timeouts.attestation,
            query=[("slot", str(slot)), ("committee_index", str(committee_index))],
        )

    async def publish_attestations(
        self, attestations: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        """Publish attestations (``SingleAttestation`` JSON from Electra on)."""
        return await self._publish_json(
            routes.POOL_ATTESTATIONS_V2,
            list(attestations),
            timeout=self.timeouts.attestation,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    async def get_aggregate_attestation(
        self, slot: int, attestation_data_root: bytes, committee_index: int
    ) -> VersionedData:
        return await self._fetch(
            "GET",
            routes.AGGREGATE_ATTESTATION_V2,
            routes.AGGREGATE_ATTESTATION_V2,
            _parse_versioned,
            timeout=self.timeouts.attestation,
            query=[
                (
                    "attestation_data_root",
                    hex0x(_require_length(attestation_data_root, 32, "attestation data root")),
                ),
                ("slot", str(slot)),
                ("committee_index", str(committee_index)),
            ],
        )

    async def publish_aggregate_and_proofs(
        self, signed_aggregates: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        return await self._publish_json(
            routes.AGGREGATE_AND_PROOFS_V2,
            list(signed_aggregates),
            timeout=self.timeouts.attestation,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    # -- subscriptions and preparation (sent to every node: any may be asked next) -

    async def subscribe_to_beacon_committees(
        self, subscriptions: Sequence[BeaconCommitteeSubscription]
    ) -> PublishResult:
        return await self._publish_json(
            routes.BEACON_COMMITTEE_SUBSCRIPTIONS,
            [item.to_json() for item in subscriptions],
            timeout=self.timeouts.subscriptions,
        )

    async def subscribe_to_sync_committees(
        self, subscriptions: Sequence[SyncCommitteeSubscription]
    ) -> PublishResult:
        return await self._publish_json(
            routes.SYNC_COMMITTEE_SUBSCRIPTIONS,
            [item.to_json() for item in subscriptions],
            timeout=self.timeouts.subscriptions,
        )

    async def prepare_beacon_proposer(
        self, preparations: Sequence[ProposerPreparation]
    ) -> PublishResult:
        return await self._publish_json(
            routes.PREPARE_BEACON_PROPOSER,
            [item.to_json() for item in preparations],
            timeout=self.timeouts.subscriptions,
        )

    async def register_validators(self, registrations: Sequence[JsonObject]) -> PublishResult:
        """Builder registrations (``SignedValidatorRegistration`` JSON)."""
        return await self._publish_json(
            routes.REGISTER_VALIDATOR, list(registrations), timeout=self.timeouts.subscriptions
        )

    # -- sync committee ----------------------------------------------------------

    async def publish_sync_committee_messages(
        self, messages: Sequence[JsonObject]
    ) -> PublishResult:
        return await self._publish_json(
            routes.POOL_SYNC_COMMITTEES, list(messages), timeout=self.timeouts.sync_committee
        )

    async def get_sync_committee_contribution(
        self, slot: int, subcommittee_index: int, beacon_block_root: bytes
    ) -> JsonObject:
        return await self._fetch(
            "GET",
            routes.SYNC_COMMITTEE_CONTRIBUTION,
            routes.SYNC_COMMITTEE_CONTRIBUTION,
            lambda answer: parse_object(data_of(answer.json()), "contribution"),
            timeout=self.timeouts.sync_committee,
            query=[
                ("slot", str(slot)),
                ("subcommittee_index", str(subcommittee_index)),
                (
                    "beacon_block_root",
                    hex0x(_require_length(beacon_block_root, 32, "beacon block root")),
                ),
            ],
        )

    async def publish_contribution_and_proofs(
        self, signed_contributions: Sequence[JsonObject]
    ) -> PublishResult:
        return await self._publish_json(
            routes.CONTRIBUTION_AND_PROOFS,
            list(signed_contributions),
            timeout=self.timeouts.sync_committee,
        )

    # -- exits -------------------------------------------------------------------

    async def publish_voluntary_exit(self, signed_exit: JsonObject) -> PublishResult:
        return await self._publish_json(
            routes.POOL_VOLUNTARY_EXITS, signed_exit, timeout=self.timeouts.default
        )

    # -- events ------------------------------------------------------------------

    def events(
        self,
        topics: Sequence[str] = ("head",),
        *,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 16.0,
        idle_timeout: float | None = None,
    ) -> EventStream:
        """A reconnecting stream of typed events; see :class:`EventStream`."""
        stream = EventStream(
            self,
            topics,
            reconnect_delay=reconnect_delay,
            max_reconnect_delay=max_reconnect_delay,
            idle_timeout=idle_timeout,
        )
        self._ensure_session()
        self._streams.add(stream)
        return stream


def _syncing_from(answer: _Answer) -> SyncingStatus:
    return SyncingStatus.from_json(data_of(answer.json()))
