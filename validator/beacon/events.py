"""Server-sent events from ``/eth/v1/events``: parsing and a reconnecting stream.

:class:`SseParser` implements the WHATWG event-stream format (``event:``/``data:``/
``id:``/``retry:`` fields, multi-line data, ``:`` comments used as keep-alives,
CRLF/CR/LF line ends). :class:`EventStream` is an async iterator of typed events
that reconnects with exponential backoff, to the most preferred node that
answers, whenever the connection drops, and ends cleanly on :meth:`EventStream.close`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import re
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from validator.beacon import routes
from validator.beacon.errors import BeaconNodeError, MalformedResponseError
from validator.beacon.metrics import REQUEST_ERRORS
from validator.beacon.transport import EventStreamSource
from validator.beacon.types import (
    field_of,
    hex_field,
    parse_bool,
    parse_object,
    parse_uint,
)

log = logging.getLogger("validator.beacon")

#: Topics the v4.0.0 spec allows on /eth/v1/events, and ``execution_payload_available``
#: (Gloas, beacon-APIs master), asked for only on a chain that schedules Gloas.
EVENT_TOPICS = frozenset(
    {
        "head",
        "block",
        "block_gossip",
        "attestation",
        "single_attestation",
        "voluntary_exit",
        "bls_to_execution_change",
        "proposer_slashing",
        "attester_slashing",
        "finalized_checkpoint",
        "chain_reorg",
        "contribution_and_proof",
        "light_client_finality_update",
        "light_client_optimistic_update",
        "payload_attributes",
        "blob_sidecar",
        "data_column_sidecar",
        "execution_payload_available",
    }
)

# A node that never ends a line or an event is broken; stop buffering it.
MAX_PENDING_BYTES = 16 * 1024 * 1024
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseMessage:
    """One dispatched server-sent event, before JSON decoding."""

    event: str
    data: str
    id: str | None = None


class SseParser:
    """Incremental parser of a ``text/event-stream`` body, fed arbitrary chunks."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip_leading_lf = False  # the previous chunk ended with CR: CRLF split
        self._at_start = True
        self._event = ""
        self._data: list[str] = []
        self._data_bytes = 0
        self.last_event_id: str | None = None
        #: Reconnection delay the server asked for (``retry:``), in milliseconds.
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseMessage]:
        if self._skip_leading_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_leading_lf = False
        self._buffer += chunk
        if self._at_start and len(self._buffer) >= 3:
            if self._buffer.startswith(b"\xef\xbb\xbf"):
                del self._buffer[:3]
            self._at_start = False
        messages: list[SseMessage] = []
        start = 0
        for match in _LINE_END.finditer(self._buffer):
            if match.group() == b"\r" and match.end() == len(self._buffer):
                self._skip_leading_lf = True
            message = self._line(bytes(self._buffer[start : match.start()]))
            if message is not None:
                messages.append(message)
            start = match.end()
        del self._buffer[:start]
        if len(self._buffer) + self._data_bytes > MAX_PENDING_BYTES:
            raise MalformedResponseError(
                f"event stream sent over {MAX_PENDING_BYTES} bytes without ending an event"
            )
        return messages

    def _line(self, raw: bytes) -> SseMessage | None:
        line = raw.decode("utf-8", "replace")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment: keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
            self._data_bytes += len(value) + 1
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseMessage | None:
        event, data = self._event, self._data
        self._event, self._data, self._data_bytes = "", [], 0
        if not data:
            return None
        return SseMessage(event or "message", "\n".join(data), self.last_event_id)


@dataclass(frozen=True, slots=True)
class HeadEvent:
    slot: int
    block: bytes
    state: bytes
    epoch_transition: bool
    previous_duty_dependent_root: bytes
    current_duty_dependent_root: bytes
    execution_optimistic: bool


@dataclass(frozen=True, slots=True)
class BlockEvent:
    slot: int
    block: bytes
    execution_optimistic: bool


@dataclass(frozen=True, slots=True)
class ChainReorgEvent:
    slot: int
    depth: int
    old_head_block: bytes
    new_head_block: bytes
    epoch: int
    execution_optimistic: bool


@dataclass(frozen=True, slots=True)
class FinalizedCheckpointEvent:
    block: bytes
    state: bytes
    epoch: int
    execution_optimistic: bool


@dataclass(frozen=True, slots=True)
class RawEvent:
    """Any other topic, with its decoded JSON data."""

    topic: str
    data: Any


BeaconEvent = HeadEvent | BlockEvent | ChainReorgEvent | FinalizedCheckpointEvent | RawEvent


def parse_event(topic: str, data: str) -> BeaconEvent:
    """Decode one event's JSON ``data`` into its typed form."""
    try:
        decoded = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise MalformedResponseError(f"{topic} event data is not JSON: {exc}") from None
    if topic not in ("head", "block", "chain_reorg", "finalized_checkpoint"):
        return RawEvent(topic, decoded)
    obj = parse_object(decoded, f"{topic} event")

    def uint(key: str) -> int:
        return parse_uint(field_of(obj, key, f"{topic} event"), key)

    def root(key: str) -> bytes:
        return hex_field(field_of(obj, key, f"{topic} event"), key, 32)

    optimistic = parse_bool(obj.get("execution_optimistic", False), "execution_optimistic")
    if topic == "head":
        return HeadEvent(
            slot=uint("slot"),
            block=root("block"),
            state=root("state"),
            epoch_transition=parse_bool(
                field_of(obj, "epoch_transition", "head event"), "epoch_transition"
            ),
            previous_duty_dependent_root=root("previous_duty_dependent_root"),
            current_duty_dependent_root=root("current_duty_dependent_root"),
            execution_optimistic=optimistic,
        )
    if topic == "block":
        return BlockEvent(slot=uint("slot"), block=root("block"), execution_optimistic=optimistic)
    if topic == "chain_reorg":
        return ChainReorgEvent(
            slot=uint("slot"),
            depth=uint("depth"),
            old_head_block=root("old_head_block"),
            new_head_block=root("new_head_block"),
            epoch=uint("epoch"),
            execution_optimistic=optimistic,
        )
    return FinalizedCheckpointEvent(
        block=root("block"),
        state=root("state"),
        epoch=uint("epoch"),
        execution_optimistic=optimistic,
    )


class EventStream:
    """Typed events from the best reachable node, across disconnects, until closed.

    Use as ``async with client.events(["head"]) as stream: async for event in stream``.
    Connection attempts go through the nodes in order of preference; when every
    node fails, the stream waits ``reconnect_delay`` seconds, doubling up to
    ``max_reconnect_delay``, and tries again. With ``idle_timeout`` set, a
    connection that sends nothing at all (not even a keep-alive comment) for that
    long is treated as dropped. Events sent while disconnected are lost: watch
    :attr:`connections` (it grows on each reconnect) to know when to refetch duties.
    """

    def __init__(
        self,
        source: EventStreamSource,
        topics: Sequence[str],
        *,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 16.0,
        idle_timeout: float | None = None,
    ) -> None:
        unknown = sorted(set(topics) - EVENT_TOPICS)
        if unknown or not topics:
            raise ValueError(f"unknown or missing event topics: {unknown or 'none given'}")
        if reconnect_delay <= 0 or max_reconnect_delay < reconnect_delay:
            raise ValueError("reconnect delays must be positive and max >= initial")
        self.topics = tuple(dict.fromkeys(topics))
        self.reconnect_delay = reconnect_delay
        self.max_reconnect_delay = max_reconnect_delay
        self.idle_timeout = idle_timeout
        #: Successful connections so far (1 after the first, +1 per reconnect).
        self.connections = 0
        #: The node currently streaming, or None while disconnected.
        self.connected_node: str | None = None
        self._source = source
        self._response: aiohttp.ClientResponse | None = None
        self._parser = SseParser()
        self._pending: collections.deque[BeaconEvent] = collections.deque()
        self._next_delay = 0.0
        self._closed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def __aiter__(self) -> EventStream:
        return self

    async def __aenter__(self) -> EventStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def __anext__(self) -> BeaconEvent:
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.closed:
                raise StopAsyncIteration
            if self._response is None:
                await self._connect()
                continue
            await self._read_into_pending(self._response)

    async def _read_into_pending(self, response: aiohttp.ClientResponse) -> None:
        try:
            async with asyncio.timeout(self.idle_timeout):
                chunk = await response.content.readany()
        except TimeoutError:
            self._drop(f"nothing received for {self.idle_timeout:g} s")
            return
        except (aiohttp.ClientError, OSError) as exc:
            self._drop(f"{type(exc).__name__}: {exc}")
            return
        if not chunk:
            self._drop("the node closed the stream")
            return
        try:
            messages = self._parser.feed(chunk)
        except MalformedResponseError as exc:
            self._drop(exc.detail)
            return
        for message in messages:
            try:
                self._pending.append(parse_event(message.event, message.data))
            except MalformedResponseError as exc:
                REQUEST_ERRORS.labels(routes.EVENTS, exc.reason).inc()
                log.warning(
                    "beacon node %s sent a malformed %s event: %s",
                    self.connected_node,
                    message.event,
                    exc.detail,
                )

    def _drop(self, why: str) -> None:
        response, self._response = self._response, None
        if response is not None:
            response.close()
        if self.closed:
            return
        REQUEST_ERRORS.labels(routes.EVENTS, "disconnected").inc()
        log.warning("event stream from %s dropped: %s; reconnecting", self.connected_node, why)
        self.connected_node = None
        self._next_delay = self._delay_after_drop()

    def _delay_after_drop(self) -> float:
        if self._parser.retry_ms is not None:
            return min(self._parser.retry_ms / 1000, self.max_reconnect_delay)
        return self.reconnect_delay

    async def _connect(self) -> None:
        while not self.closed:
            if self._next_delay > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._next_delay):
                        await self._closed.wait()
                if self.closed:
                    return
            for node in self._source.nodes_by_preference():
                try:
                    response = await self._unless_closed(
                        self._source.open_event_stream(node, self.topics)
                    )
                except BeaconNodeError:
                    continue  # logged and counted by the transport
                if response is None:
                    return
                self._response = response
                self._parser = SseParser()
                self.connected_node = node.name
                self.connections += 1
                self._next_delay = self.reconnect_delay
                log.info("event stream %s connected to %s", ",".join(self.topics), node.name)
                return
            self._next_delay = min(
                max(self._next_delay * 2, self.reconnect_delay), self.max_reconnect_delay
            )

    async def _unless_closed(
        self, opening: Coroutine[Any, Any, aiohttp.ClientResponse]
    ) -> aiohttp.ClientResponse | None:
        """Await ``opening`` unless the stream is closed first (then cancel it)."""
        attempt = asyncio.ensure_future(opening)
        closing = asyncio.ensure_future(self._closed.wait())
        try:
            await asyncio.wait({attempt, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
            if not attempt.done():
                attempt.cancel()
                with contextlib.suppress(asyncio.CancelledError, BeaconNodeError):
                    await attempt
        if attempt.cancelled():
            return None
        response = attempt.result()
        if self.closed:
            response.close()
            return None
        return response

    async def close(self) -> None:
        """Stop the stream; a pending or later ``__anext__`` ends the iteration."""
        self._closed.set()
        response, self._response = self._response, None
        if response is not None:
            response.close()
        self.connected_node = None
        self._source.forget_stream(self)
