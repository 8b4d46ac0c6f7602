"""Server-sent events (``GET /eth/v1/events``): head, block, chain_reorg, finalized_checkpoint.

Each subscriber gets a bounded queue; one that falls too far behind is
disconnected (a real node would drop it too), so a stuck client can never make
the chain buffer without limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import orjson
from aiohttp import web

# Every topic the Beacon API v4.0.0 lets a client ask for, written here from the spec
# (not taken from the client: the chain imports only validator.consensus of it). The
# devnet emits head, block, chain_reorg, finalized_checkpoint, voluntary_exit and
# proposer_slashing; asking for another standard topic is valid and just stays quiet.
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

_QUEUE_LIMIT = 256
_CLOSE = None


class Subscriber:
    def __init__(self, topics: frozenset[str]) -> None:
        self.topics = topics
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=_QUEUE_LIMIT + 1)


class EventBus:
    def __init__(self) -> None:
        self._subscribers: set[Subscriber] = set()
        self.published: dict[str, int] = {}

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def subscribe(self, topics: Iterable[str]) -> Subscriber:
        subscriber = Subscriber(frozenset(topics))
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def publish(self, topic: str, data: dict[str, Any]) -> None:
        self.published[topic] = self.published.get(topic, 0) + 1
        frame = b"event: " + topic.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
        for subscriber in list(self._subscribers):
            if topic not in subscriber.topics:
                continue
            if subscriber.queue.qsize() >= _QUEUE_LIMIT:
                self.disconnect(subscriber)
            else:
                subscriber.queue.put_nowait(frame)

    def disconnect(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)
        subscriber.queue.put_nowait(_CLOSE)

    def disconnect_all(self) -> None:
        for subscriber in list(self._subscribers):
            self.disconnect(subscriber)


def parse_topics(values: Iterable[str]) -> list[str]:
    """Topics from ``?topics=a,b`` and/or ``?topics=a&topics=b``; ValueError names a bad one."""
    topics: list[str] = []
    for value in values:
        for topic in value.split(","):
            topic = topic.strip()
            if topic not in EVENT_TOPICS:
                raise ValueError(f"Invalid topic: {topic or '(empty)'}")
            if topic not in topics:
                topics.append(topic)
    if not topics:
        raise ValueError("no topics given")
    return topics


async def stream_events(
    request: web.Request, bus: EventBus, topics: Iterable[str], keepalive_seconds: float
) -> web.StreamResponse:
    response = web.StreamResponse(
        status=200,
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
    )
    await response.prepare(request)
    subscriber = bus.subscribe(topics)
    try:
        while True:
            try:
                frame = await asyncio.wait_for(subscriber.queue.get(), keepalive_seconds)
            except TimeoutError:
                frame = b":\n\n"
            if frame is _CLOSE:
                break
            await response.write(frame)
    except ConnectionResetError:
        pass
    finally:
        bus.unsubscribe(subscriber)
    return response
