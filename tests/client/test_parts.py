"""The duty loop's small parts: log lines, aggregator selection, settings, the metrics server."""

from __future__ import annotations

import io
import logging
from hashlib import sha256

import aiohttp
import orjson
import pytest
from prometheus_client import CollectorRegistry, Counter

from validator.consensus.chain_preset import SimulatedChainConfig
from validator.duties.selection import (
    is_aggregator,
    is_sync_committee_aggregator,
    sync_subcommittee_indices,
)
from validator.key_settings import KeyOverrides, ProposerSettings, parse_fee_recipient
from validator.logs import LogFormat, configure_logging, log_duty
from validator.metrics_server import MetricsServer

CHAIN = SimulatedChainConfig(genesis_time=0, genesis_validators_root=b"\x01" * 32).chain_spec()


@pytest.fixture
def restore_logging() -> object:
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    yield None
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def test_json_logs_are_one_object_per_line_with_the_duty_fields(restore_logging: object) -> None:
    stream = io.StringIO()
    configure_logging(LogFormat.JSON, stream=stream)
    log_duty(12, "sync_contribution", [7, 3, 7], "published", detail="fine")
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("validator.test").exception("it failed\nover two lines")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    duty = orjson.loads(lines[0])
    assert duty["slot"] == 12 and duty["kind"] == "sync_contribution"
    assert duty["validators"] == [3, 7] and duty["count"] == 3
    assert duty["result"] == "published" and duty["detail"] == "fine"
    assert duty["level"] == "info" and duty["logger"] == "validator.duties"
    failure = orjson.loads(lines[1])
    assert failure["message"] == "it failed\nover two lines"
    assert "ValueError: boom" in failure["exception"]


def test_text_logs_name_each_validator_once_and_shorten_long_lists(
    restore_logging: object,
) -> None:
    stream = io.StringIO()
    configure_logging(LogFormat.TEXT, stream=stream)
    log_duty(5, "attestation", range(20), "refused", level=logging.WARNING, detail="slashable")
    (line,) = stream.getvalue().splitlines()
    assert line.endswith(
        "WARNING validator.duties: slot=5 kind=attestation "
        "validators=0,1,2,3,4,5,6,7 and 12 more count=20 result=refused detail=slashable"
    )


def test_aggregator_selection_reads_the_hash_little_endian() -> None:
    proof = bytes(range(96))
    prefix = int.from_bytes(sha256(proof).digest()[:8], "little")
    # A committee of 128 with 16 target aggregators: one in 8 is chosen.
    assert is_aggregator(128, proof, 16) == (prefix % 8 == 0)
    assert is_aggregator(16, proof, 16)  # committees up to the target: everyone aggregates
    chosen = [is_aggregator(128, sha256(bytes([i])).digest() * 3, 16) for i in range(256)]
    assert 16 <= sum(chosen) <= 48  # about 1 in 8
    with pytest.raises(ValueError):
        is_aggregator(128, proof[:95], 16)


def test_sync_aggregator_selection_and_subcommittees() -> None:
    # 512 seats, 4 subnets, 16 target aggregators: one in 8.
    proof = bytes(range(1, 97))
    prefix = int.from_bytes(sha256(proof).digest()[:8], "little")
    assert is_sync_committee_aggregator(CHAIN, proof) == (prefix % 8 == 0)
    assert sync_subcommittee_indices(CHAIN, [5, 130, 127, 511]) == [0, 1, 3]


def test_a_keys_own_settings_win_and_a_broken_lookup_falls_back() -> None:
    own = b"\x0a" * 20
    default = parse_fee_recipient("0x" + "0b" * 20)

    def lookup(pubkey: bytes) -> KeyOverrides:
        if pubkey == b"own":
            return KeyOverrides(fee_recipient=own, graffiti="mine")
        if pubkey == b"broken":
            raise OSError("settings file unreadable")
        return KeyOverrides()

    settings = ProposerSettings(
        default_fee_recipient=default, default_graffiti="everyone", overrides=lookup
    )
    assert settings.fee_recipient(b"own") == own
    assert settings.graffiti(b"own") == b"mine".ljust(32, b"\0")
    assert settings.fee_recipient(b"other") == default
    assert settings.graffiti(b"broken") == b"everyone".ljust(32, b"\0")
    assert ProposerSettings().fee_recipient(b"x") is None
    assert ProposerSettings().graffiti(b"x") is None
    with pytest.raises(ValueError, match="at most 32"):
        ProposerSettings(default_graffiti="x" * 33)
    with pytest.raises(ValueError, match="40 hex digits"):
        parse_fee_recipient("0x1234")


async def test_the_metrics_server_serves_the_registry_as_prometheus_text() -> None:
    registry = CollectorRegistry()
    Counter("validator_test_things_total", "Things.", registry=registry).inc(3)
    server = MetricsServer("127.0.0.1", 0, registry=registry)
    port = await server.start()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                assert response.status == 200
                assert response.headers["Content-Type"].startswith("text/plain")
                assert "validator_test_things_total 3.0" in await response.text()
            async with session.get(f"http://127.0.0.1:{port}/other") as response:
                assert response.status == 404
    finally:
        await server.stop()
    busy = MetricsServer("127.0.0.1", port, registry=registry)
    other = MetricsServer("127.0.0.1", 0, registry=registry)
    taken = await other.start()
    try:
        busy.port = taken
        with pytest.raises(OSError, match=f"cannot serve metrics on 127.0.0.1:{taken}"):
            await busy.start()
    finally:
        await other.stop()
