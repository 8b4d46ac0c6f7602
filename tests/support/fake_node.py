"""A small in-process beacon node (aiohttp) that answers the validator routes with
canned, spec-valid JSON, records every request, and can be told to misbehave.

In strict mode (the default) it runs the :class:`StrictServerChecker` middleware:
a request from the client that breaks the spec is answered 400 and recorded as a
violation, and so is any answer of the double itself that breaks the spec.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web
from multidict import CIMultiDict

from tests.support import canned
from validator.beacon import routes
from validator.devnet.strict_mode.checkers import StrictServerChecker
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    route: str
    path: str
    query: list[tuple[str, str]]
    headers: CIMultiDict[str]
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Misbehaviour:
    """Replaces the canned answer of a route (for ``times`` requests, or always)."""

    status: int = 200
    body: Any = None
    raw_body: bytes | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    times: int | None = None


Answer = tuple[int, Any, dict[str, str]]


class FakeBeaconNode:
    def __init__(self, spec: BeaconApiSpec | None, *, name: str = "node") -> None:
        self.name = name
        self.checker = StrictServerChecker(spec) if spec is not None else None
        self.requests: list[RecordedRequest] = []
        self.misbehaviours: dict[str, Misbehaviour] = {}
        self.syncing_answer: Any = canned.syncing()
        self.event_connections = 0
        #: epoch -> validator indices the liveness endpoint reports live in it.
        self.live: dict[int, set[int]] = {}
        self._event_queues: list[asyncio.Queue[bytes | None]] = []
        self._release = asyncio.Event()
        self._connected = asyncio.Condition()

    # -- test controls ----------------------------------------------------------

    def misbehave(self, route: str, **how: Any) -> None:
        self.misbehaviours[route] = Misbehaviour(**how)

    def behave(self, route: str) -> None:
        self.misbehaviours.pop(route, None)

    def requests_to(self, route: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.route == route]

    def send_event_bytes(self, frame: bytes) -> None:
        for queue in self._event_queues:
            queue.put_nowait(frame)

    def send_event(self, topic: str, data: Any) -> None:
        self.send_event_bytes(f"event: {topic}\ndata: ".encode() + orjson.dumps(data) + b"\n\n")

    def drop_event_streams(self) -> None:
        for queue in self._event_queues:
            queue.put_nowait(None)

    async def wait_for_event_connections(self, count: int, timeout: float = 3.0) -> None:
        async with asyncio.timeout(timeout), self._connected:
            await self._connected.wait_for(
                lambda: self.event_connections >= count and len(self._event_queues) > 0
            )

    def release(self) -> None:
        """End every artificial delay and event stream (test teardown)."""
        self._release.set()
        self.drop_event_streams()

    # -- the app ----------------------------------------------------------------

    def app(self) -> web.Application:
        middlewares = [self.checker.middleware] if self.checker is not None else []
        app = web.Application(middlewares=middlewares)
        handlers: dict[tuple[str, str], Callable[[web.Request], Answer]] = {
            ("GET", routes.NODE_SYNCING): lambda r: (200, self.syncing_answer, {}),
            ("GET", routes.NODE_HEALTH): lambda r: (200, None, {}),
            ("GET", routes.NODE_VERSION): lambda r: (200, canned.version(), {}),
            ("GET", routes.GENESIS): lambda r: (200, canned.genesis(), {}),
            ("GET", routes.CONFIG_SPEC): lambda r: (200, canned.config_spec(), {}),
            ("GET", routes.FORK_SCHEDULE): lambda r: (200, canned.fork_schedule(), {}),
            ("GET", routes.STATE_FORK): lambda r: (200, canned.state_fork(), {}),
            ("GET", routes.STATE_FINALITY_CHECKPOINTS): lambda r: (
                200,
                canned.finality_checkpoints(),
                {},
            ),
            ("POST", routes.STATE_VALIDATORS): self._validators_post,
            ("GET", routes.STATE_VALIDATORS): self._validators_get,
            ("GET", routes.BLOCK_ROOT): lambda r: (200, canned.block_root(), {}),
            ("POST", routes.ATTESTER_DUTIES): self._attester_duties,
            ("GET", routes.PROPOSER_DUTIES): lambda r: (
                200,
                canned.proposer_duties(int(r.match_info["epoch"])),
                {},
            ),
            ("POST", routes.SYNC_DUTIES): self._sync_duties,
            ("POST", routes.LIVENESS): self._liveness,
            ("GET", routes.PRODUCE_BLOCK_V3): self._produce_block,
            ("GET", routes.ATTESTATION_DATA): lambda r: (
                200,
                {"data": canned.attestation_data(int(r.query["slot"]))},
                {},
            ),
            ("GET", routes.AGGREGATE_ATTESTATION_V2): lambda r: (
                200,
                *canned.aggregate_attestation(int(r.query["slot"])),
            ),
            ("GET", routes.SYNC_COMMITTEE_CONTRIBUTION): lambda r: (
                200,
                canned.contribution(
                    int(r.query["slot"]),
                    int(r.query["subcommittee_index"]),
                    r.query["beacon_block_root"],
                ),
                {},
            ),
        }
        accepted_posts = [
            routes.PUBLISH_BLOCK_V2,
            routes.PUBLISH_BLINDED_BLOCK_V2,
            routes.POOL_ATTESTATIONS_V2,
            routes.AGGREGATE_AND_PROOFS_V2,
            routes.BEACON_COMMITTEE_SUBSCRIPTIONS,
            routes.SYNC_COMMITTEE_SUBSCRIPTIONS,
            routes.PREPARE_BEACON_PROPOSER,
            routes.REGISTER_VALIDATOR,
            routes.POOL_SYNC_COMMITTEES,
            routes.CONTRIBUTION_AND_PROOFS,
            routes.POOL_VOLUNTARY_EXITS,
        ]
        for route in accepted_posts:
            handlers[("POST", route)] = lambda r: (200, None, {})
        for (method, route), answer in handlers.items():
            app.router.add_route(method, route, self._wrap(route, answer))
        app.router.add_get(routes.EVENTS, self._events)
        return app

    def _wrap(
        self, route: str, answer: Callable[[web.Request], Answer]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            await self._record(route, request)
            misbehaviour = self._take_misbehaviour(route)
            if misbehaviour is not None:
                return await self._misbehave(misbehaviour)
            status, body, headers = answer(request)
            if body is None:
                return web.Response(status=status, headers=headers)
            return web.Response(
                status=status,
                body=orjson.dumps(body),
                content_type="application/json",
                headers=headers,
            )

        return handle

    async def _record(self, route: str, request: web.Request) -> None:
        self.requests.append(
            RecordedRequest(
                method=request.method,
                route=route,
                path=request.path,
                query=list(request.query.items()),
                headers=CIMultiDict(request.headers),
                body=await request.read(),
            )
        )

    def _take_misbehaviour(self, route: str) -> Misbehaviour | None:
        misbehaviour = self.misbehaviours.get(route)
        if misbehaviour is None:
            return None
        if misbehaviour.times is not None:
            misbehaviour.times -= 1
            if misbehaviour.times <= 0:
                del self.misbehaviours[route]
        return misbehaviour

    async def _misbehave(self, misbehaviour: Misbehaviour) -> web.StreamResponse:
        if misbehaviour.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), misbehaviour.delay)
        if misbehaviour.raw_body is not None:
            body = misbehaviour.raw_body
        elif misbehaviour.body is not None:
            body = orjson.dumps(misbehaviour.body)
        else:
            return web.Response(status=misbehaviour.status, headers=misbehaviour.headers)
        return web.Response(
            status=misbehaviour.status,
            body=body,
            headers={"Content-Type": misbehaviour.content_type, **misbehaviour.headers},
        )

    def _validators_post(self, request: web.Request) -> Answer:
        body = orjson.loads(self.requests[-1].body)
        return 200, canned.validators([int(value) for value in body["ids"] if value.isdigit()]), {}

    def _validators_get(self, request: web.Request) -> Answer:
        ids = request.query.getall("id", [])
        return 200, canned.validators([int(value) for value in ids if value.isdigit()]), {}

    def _attester_duties(self, request: web.Request) -> Answer:
        indices = [int(value) for value in orjson.loads(self.requests[-1].body)]
        return 200, canned.attester_duties(int(request.match_info["epoch"]), indices), {}

    def _sync_duties(self, request: web.Request) -> Answer:
        indices = [int(value) for value in orjson.loads(self.requests[-1].body)]
        return 200, canned.sync_duties(indices), {}

    def _liveness(self, request: web.Request) -> Answer:
        seen = self.live.get(int(request.match_info["epoch"]), set())
        indices = [int(value) for value in orjson.loads(self.requests[-1].body)]
        return 200, {"data": [{"index": str(i), "is_live": i in seen} for i in indices]}, {}

    def _produce_block(self, request: web.Request) -> Answer:
        blinded = request.query.get("builder_boost_factor") == str(2**64 - 1)
        body, headers = canned.produced_block(int(request.match_info["slot"]), blinded=blinded)
        return 200, body, headers

    async def _events(self, request: web.Request) -> web.StreamResponse:
        await self._record(routes.EVENTS, request)
        misbehaviour = self._take_misbehaviour(routes.EVENTS)
        if misbehaviour is not None:
            return await self._misbehave(misbehaviour)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._event_queues.append(queue)
        async with self._connected:
            self.event_connections += 1
            self._connected.notify_all()
        try:
            while (frame := await queue.get()) is not None:
                await response.write(frame)
        finally:
            self._event_queues.remove(queue)
        return response
