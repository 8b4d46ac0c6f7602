"""Idle and half-sent connections cannot take the process's descriptors.

Real servers on 127.0.0.1; the clients are plain sockets in the same process, so the
descriptors the server holds are the process's open descriptors minus the clients' own.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from keymanager.api import TOKEN_FILE_NAME, KeymanagerContext, bound_port, start_keymanager_server
from keymanager.api.server_limits import DEFAULT_LIMITS, ServerLimits
from validator.metrics_server import MetricsServer

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def connect_many(port: int, count: int, first_bytes: bytes = b"") -> list[Connection]:
    connections = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        if first_bytes:
            writer.write(first_bytes)
        connections.append((reader, writer))
    await asyncio.sleep(0.3)  # let the server accept them all
    return connections


async def closed_by_server(connection: Connection, within: float) -> bool:
    reader, _ = connection
    try:
        async with asyncio.timeout(within):
            while await reader.read(65536):
                pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


async def close_all(connections: list[Connection]) -> None:
    for _, writer in connections:
        writer.close()
    await asyncio.sleep(0)


@pytest.fixture
async def keymanager(
    context: KeymanagerContext, validators_dir: Path
) -> AsyncIterator[tuple[int, str]]:
    limits = ServerLimits(max_connections=20, head_timeout=0.5, body_timeout=0.5)
    runner = await start_keymanager_server(context, port=0, limits=limits)
    port = bound_port(runner)
    assert port is not None
    token = (validators_dir / TOKEN_FILE_NAME).read_text().strip()
    yield port, token
    await runner.cleanup()


async def authenticated_get(port: int, token: str) -> int:
    async with aiohttp.ClientSession() as session:
        async with session.get(
            f"http://127.0.0.1:{port}/eth/v1/keystores",
            headers={"Authorization": f"Bearer {token}"},
            timeout=aiohttp.ClientTimeout(total=5),
        ) as response:
            return response.status


async def test_the_default_cap_keeps_the_servers_descriptors_bounded(
    context: KeymanagerContext, validators_dir: Path
) -> None:
    """300 idle sockets against the default limits: the server keeps at most its cap."""
    runner = await start_keymanager_server(context, port=0)
    try:
        port = bound_port(runner)
        assert port is not None
        token = (validators_dir / TOKEN_FILE_NAME).read_text().strip()
        before = open_descriptors()
        clients = await connect_many(port, 300)
        held_by_server = open_descriptors() - before - len(clients)
        cap = DEFAULT_LIMITS.connection_cap()
        assert held_by_server <= cap + 4, (held_by_server, cap)
        refused = [c for c in clients[cap:] if await closed_by_server(c, within=2)]
        assert len(refused) >= 300 - cap - 4
        await close_all(clients)
        await asyncio.sleep(0.2)
        assert await authenticated_get(port, token) == 200
    finally:
        await runner.cleanup()


async def test_idle_connections_are_closed_after_the_head_timeout(
    keymanager: tuple[int, str],
) -> None:
    port, token = keymanager
    clients = await connect_many(port, 15)
    started = asyncio.get_running_loop().time()
    results = await asyncio.gather(*(closed_by_server(c, within=3) for c in clients))
    assert all(results)
    assert asyncio.get_running_loop().time() - started < 3
    await close_all(clients)
    assert await authenticated_get(port, token) == 200


async def test_half_sent_request_heads_are_closed_after_the_head_timeout(
    keymanager: tuple[int, str],
) -> None:
    port, token = keymanager
    head = b"GET /eth/v1/keystores HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    clients = await connect_many(port, 15, head)
    for _, writer in clients:  # a byte now and then does not push the deadline back
        writer.write(b"a")
    await asyncio.sleep(0.2)
    for _, writer in clients:
        writer.write(b"a")
    results = await asyncio.gather(*(closed_by_server(c, within=3) for c in clients))
    assert all(results)
    await close_all(clients)
    assert await authenticated_get(port, token) == 200


async def test_a_half_sent_body_is_answered_400_and_closed(keymanager: tuple[int, str]) -> None:
    port, token = keymanager
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        b"POST /eth/v1/keystores HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Authorization: Bearer " + token.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"keystores\": ["
    )
    async with asyncio.timeout(5):
        answer = await reader.read(65536)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:100]
    assert b"did not arrive in time" in answer
    assert await closed_by_server((reader, writer), within=5)
    writer.close()


async def test_connections_over_the_cap_get_a_503_and_the_api_still_answers(
    keymanager: tuple[int, str],
) -> None:
    port, token = keymanager
    clients = await connect_many(port, 40)
    over = clients[25:]
    async with asyncio.timeout(3):
        first = await over[0][0].read()
    assert first.startswith(b"HTTP/1.1 503"), first[:60]
    await close_all(clients)
    await asyncio.sleep(0.2)
    assert await authenticated_get(port, token) == 200


async def test_a_nul_byte_header_is_one_warning_line(
    keymanager: tuple[int, str], caplog: pytest.LogCaptureFixture
) -> None:
    port, _ = keymanager
    caplog.set_level(logging.DEBUG)
    for _ in range(20):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /eth/v1/keystores HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n")
        async with asyncio.timeout(3):
            answer = await reader.read()
        writer.close()
        assert answer.split(b" ", 2)[1] == b"400", answer[:60]
    server_records = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert server_records, "the malformed request was not logged at all"
    assert all(r.levelno == logging.WARNING for r in server_records)
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in server_records)
    assert "Traceback" not in caplog.text
    # Repeats within a minute are left out of the log.
    assert len(server_records) < 5


async def test_the_metrics_server_closes_idle_connections_and_caps_them() -> None:
    server = MetricsServer(
        "127.0.0.1", 0, limits=ServerLimits(max_connections=10, head_timeout=0.5)
    )
    port = await server.start()
    try:
        before = open_descriptors()
        clients = await connect_many(port, 60)
        assert open_descriptors() - before - len(clients) <= 10 + 4
        results = await asyncio.gather(*(closed_by_server(c, within=3) for c in clients))
        assert all(results)
        await close_all(clients)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert response.status == 200
    finally:
        await server.stop()
