"""Server-sent events: the parser, typed events, reconnection and clean closing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import orjson
import pytest
from prometheus_client import REGISTRY

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from validator.beacon import (
    BlockEvent,
    ChainReorgEvent,
    FinalizedCheckpointEvent,
    HeadEvent,
    MalformedResponseError,
    RawEvent,
    SseMessage,
    SseParser,
    parse_event,
    routes,
)
from validator.beacon.events import MAX_PENDING_BYTES


def feed_all(parser: SseParser, chunks: list[bytes]) -> list[SseMessage]:
    return [message for chunk in chunks for message in parser.feed(chunk)]


# -- parser ---------------------------------------------------------------------


def test_parser_joins_multi_line_data_and_skips_comments() -> None:
    stream = b': keep-alive\nevent: head\ndata: {"a":\ndata:  1}\n\n:another comment\n\n'
    assert SseParser().feed(stream) == [SseMessage("head", '{"a":\n 1}')]


def test_parser_handles_every_line_ending_and_chunks_split_anywhere() -> None:
    stream = b"event: block\r\ndata: x\r\n\r\nevent: head\rdata: y\r\rdata: z\n\n"
    expected = [SseMessage("block", "x"), SseMessage("head", "y"), SseMessage("message", "z")]
    assert SseParser().feed(stream) == expected
    # Byte by byte, a CRLF split between chunks must still count as one line end.
    assert feed_all(SseParser(), [stream[i : i + 1] for i in range(len(stream))]) == expected


def test_parser_field_rules() -> None:
    stream = (
        b"\xef\xbb\xbfevent: head\n"  # a leading BOM is dropped
        b"id: 7\n"
        b"retry: 2500\n"
        b"data\n"  # a field name alone: empty value
        b"data:no-space\n"
        b"unknown: ignored\n"
        b"\n"
        b"event: lonely\n"  # an event without data is not dispatched
        b"\n"
    )
    parser = SseParser()
    assert parser.feed(stream) == [SseMessage("head", "\nno-space", "7")]
    assert parser.retry_ms == 2500
    assert parser.feed(b"data: after\n\n") == [SseMessage("message", "after", "7")]


def test_parser_keeps_an_unfinished_event_for_the_next_chunk() -> None:
    parser = SseParser()
    assert parser.feed(b'event: head\ndata: {"x"') == []
    assert parser.feed(b": 1}\n\n") == [SseMessage("head", '{"x": 1}')]


def test_parser_refuses_an_endless_line() -> None:
    parser = SseParser()
    with pytest.raises(MalformedResponseError, match="without ending an event"):
        parser.feed(b"data: " + b"x" * (MAX_PENDING_BYTES + 1))


# -- typed events ---------------------------------------------------------------


def test_head_and_block_events_are_typed() -> None:
    head = parse_event("head", orjson.dumps(canned.head_event_data(64)).decode())
    assert head == HeadEvent(
        slot=64,
        block=bytes([0x81]) * 32,
        state=bytes([0x82]) * 32,
        epoch_transition=True,
        previous_duty_dependent_root=bytes([0x83]) * 32,
        current_duty_dependent_root=bytes([0x84]) * 32,
        execution_optimistic=False,
    )
    block = parse_event("block", orjson.dumps(canned.block_event_data(65)).decode())
    assert block == BlockEvent(slot=65, block=bytes([0x85]) * 32, execution_optimistic=False)


def test_other_documented_events() -> None:
    reorg_data = {
        "slot": "200",
        "depth": "50",
        "old_head_block": canned.root(1),
        "new_head_block": canned.root(2),
        "old_head_state": canned.root(3),
        "new_head_state": canned.root(4),
        "epoch": "2",
        "execution_optimistic": False,
    }
    reorg = parse_event("chain_reorg", orjson.dumps(reorg_data).decode())
    assert isinstance(reorg, ChainReorgEvent) and (reorg.depth, reorg.epoch) == (50, 2)
    finalized_data = {
        "block": canned.root(1),
        "state": canned.root(2),
        "epoch": "2",
        "execution_optimistic": False,
    }
    finalized = parse_event("finalized_checkpoint", orjson.dumps(finalized_data).decode())
    assert isinstance(finalized, FinalizedCheckpointEvent) and finalized.epoch == 2
    assert parse_event("voluntary_exit", '{"message": {}}') == RawEvent(
        "voluntary_exit", {"message": {}}
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("not json", "not JSON"),
        ('{"slot": "5"}', "no 'block'"),
        ('{"slot": 5, "block": "0x00", "execution_optimistic": false}', "quoted unsigned"),
        ('{"slot": "5", "block": "0x00", "execution_optimistic": false}', "32-byte 0x-hex"),
    ],
)
def test_malformed_events_are_refused(data: str, why: str) -> None:
    with pytest.raises(MalformedResponseError, match=why):
        parse_event("block", data)


# -- the stream -----------------------------------------------------------------


async def next_event(stream: object, timeout: float = 3.0) -> object:
    async with asyncio.timeout(timeout):
        return await stream.__anext__()  # type: ignore[attr-defined]


async def test_stream_delivers_typed_events_and_ignores_keepalives(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    async with client.events(["head", "block"]) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(1)
        request = node.requests_to(routes.EVENTS)[0]
        assert request.query == [("topics", "head"), ("topics", "block")]
        assert request.headers["Accept"] == "text/event-stream"

        node.send_event_bytes(b": keep-alive\n\n")
        node.send_event("head", canned.head_event_data(10))
        head = await pending
        assert isinstance(head, HeadEvent) and head.slot == 10
        # Two events in one write, data split over two lines.
        node.send_event_bytes(
            b"event: block\ndata: "
            + orjson.dumps(canned.block_event_data(11))
            + b'\n\nevent: block\ndata: {"slot":"12",\ndata: "block":"'
            + canned.root(5).encode()
            + b'"}\n\n'
        )
        first, second = await next_event(stream), await next_event(stream)
        assert isinstance(first, BlockEvent) and first.slot == 11
        assert isinstance(second, BlockEvent) and (second.slot, second.block) == (
            12,
            bytes([5]) * 32,
        )
        assert stream.connections == 1 and stream.connected_node == url


async def test_stream_reconnects_after_the_node_drops_it(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    dropped_before = (
        REGISTRY.get_sample_value(
            "validator_beacon_node_request_errors_total",
            {"endpoint": routes.EVENTS, "reason": "disconnected"},
        )
        or 0.0
    )
    async with client.events(["head"], reconnect_delay=0.05) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(1)
        node.drop_event_streams()
        await node.wait_for_event_connections(2)
        node.send_event("head", canned.head_event_data(20))
        event = await pending
        assert isinstance(event, HeadEvent) and event.slot == 20
        assert stream.connections == 2
    dropped_after = REGISTRY.get_sample_value(
        "validator_beacon_node_request_errors_total",
        {"endpoint": routes.EVENTS, "reason": "disconnected"},
    )
    assert dropped_after == dropped_before + 1


async def test_stream_moves_to_another_node_when_its_node_is_gone(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    first, first_url = await start_node(name="first")
    second, second_url = await start_node(name="second")
    client = await make_client([first_url, second_url])
    async with client.events(["head"], reconnect_delay=0.05) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await first.wait_for_event_connections(1)
        # The first node stops serving events and drops the open stream. (The
        # events operation documents no 503, so the double answers 500.)
        first.misbehave(routes.EVENTS, status=500, body=canned.error(500, "restarting"))
        first.drop_event_streams()
        await second.wait_for_event_connections(1)
        second.send_event("head", canned.head_event_data(30))
        event = await pending
        assert isinstance(event, HeadEvent) and event.slot == 30
        assert stream.connected_node == second_url


async def test_stream_retries_with_backoff_until_a_node_answers(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    node.misbehave(routes.EVENTS, status=500, body=canned.error(500, "starting"), times=3)
    async with client.events(["head"], reconnect_delay=0.02, max_reconnect_delay=0.08) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(1)
        node.send_event("head", canned.head_event_data(40))
        event = await pending
        assert isinstance(event, HeadEvent) and event.slot == 40
        assert len(node.requests_to(routes.EVENTS)) == 4  # three refusals, then the stream


async def test_idle_stream_is_treated_as_dropped(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    async with client.events(["head"], reconnect_delay=0.02, idle_timeout=0.1) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(2)  # the first one went silent
        node.send_event("head", canned.head_event_data(50))
        assert isinstance(await pending, HeadEvent)


async def test_malformed_event_is_skipped_and_counted(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    before = (
        REGISTRY.get_sample_value(
            "validator_beacon_node_request_errors_total",
            {"endpoint": routes.EVENTS, "reason": "malformed"},
        )
        or 0.0
    )
    async with client.events(["head"]) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(1)
        node.send_event_bytes(b'event: head\ndata: {"slot": "x"}\n\n')
        node.send_event("head", canned.head_event_data(60))
        event = await pending
        assert isinstance(event, HeadEvent) and event.slot == 60
    after = REGISTRY.get_sample_value(
        "validator_beacon_node_request_errors_total",
        {"endpoint": routes.EVENTS, "reason": "malformed"},
    )
    assert after == before + 1


async def test_close_ends_a_waiting_iteration_promptly(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    stream = client.events(["head"])
    received: list[object] = []

    async def consume() -> None:
        async for event in stream:
            received.append(event)

    consumer = asyncio.create_task(consume())
    await node.wait_for_event_connections(1)
    await stream.close()
    async with asyncio.timeout(1):
        await consumer
    assert received == [] and stream.closed and stream.connected_node is None


async def test_close_interrupts_a_reconnect_wait(
    make_client: ClientFactory, unused_url: Callable[[], str]
) -> None:
    client = await make_client([unused_url()], strict=False)
    stream = client.events(["head"], reconnect_delay=10.0, max_reconnect_delay=10.0)
    consumer = asyncio.create_task(stream.__anext__())
    await asyncio.sleep(0.2)  # first attempt refused; now waiting 10 s to retry
    await stream.close()
    async with asyncio.timeout(1):
        with pytest.raises(StopAsyncIteration):
            await consumer


async def test_closing_the_client_closes_its_streams(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    stream = client.events(["head"])
    consumer = asyncio.create_task(stream.__anext__())
    await node.wait_for_event_connections(1)
    await client.close()
    async with asyncio.timeout(1):
        with pytest.raises(StopAsyncIteration):
            await consumer
    assert stream.closed


async def test_unknown_topics_are_refused(make_client: ClientFactory) -> None:
    client = await make_client(["http://127.0.0.1:1"], strict=False)
    with pytest.raises(ValueError, match="weather"):
        client.events(["head", "weather"])


async def test_server_retry_field_sets_the_reconnect_delay(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    async with client.events(["head"], reconnect_delay=30.0, max_reconnect_delay=30.0) as stream:
        pending = asyncio.ensure_future(next_event(stream))
        await node.wait_for_event_connections(1)
        node.send_event_bytes(b"retry: 20\n\n")
        await asyncio.sleep(0.05)
        node.drop_event_streams()
        # Without the server's 20 ms, the next attempt would wait 30 s.
        await node.wait_for_event_connections(2, timeout=2.0)
        node.send_event("head", canned.head_event_data(70))
        assert isinstance(await pending, HeadEvent)
