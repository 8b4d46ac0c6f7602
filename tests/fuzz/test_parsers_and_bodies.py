"""Fuzzing the parsers, the record reader and the Keymanager request bodies.

Seeds are the official EIP-3076 interchanges and random JSON; mutations insert the
tokens that once hurt (huge numbers, deep nesting, stray quotes and escapes, syntax
errors after a long number). What must hold for every input:

* `parse_interchange` (fast and exact paths) returns or raises a SlashingProtectionError,
  and the fast parser never accepts what the exact parser refuses;
* opening a record holding the input returns or raises a SlashingProtectionError, and
  the file is unchanged;
* a Keymanager request answers 200 or a 4xx in the spec's error shape, the record is
  unchanged by a refused request and no watermark ever goes down;
* each case takes bounded time.

10,000 cases run by default (5,500 + 3,000 + 1,500; about a minute); set VALIDATOR_FUZZ_EXAMPLES
to the number of cases per test for a longer run. The inputs that crashed the parsers
before the fix are kept in tests/support/regressions/ and run first.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keymanager.api import KeymanagerContext, create_app
from keymanager.store import ValidatorStore
from slashing_protection import (
    RECORD_FILE,
    ParsedInterchange,
    SlashingProtection,
    SlashingProtectionError,
    parse_interchange,
)
from slashing_protection.interchange.exact import parse_exact as _parse_exact
from slashing_protection.interchange.fast import GiveUp as _GiveUp
from slashing_protection.interchange.fast import parse_fast as _parse_fast
from tests.keymanager.api.support import GENESIS_TIME, GVR, TOKEN, history, import_body
from tests.support.official_vectors import official_vectors
from tests.support.records import ROOT, entry, interchange, pubkey

REPO = Path(__file__).resolve().parents[2]
REGRESSIONS = sorted((REPO / "tests" / "support" / "regressions").glob("*.json"))
EXAMPLES = int(os.environ.get("VALIDATOR_FUZZ_EXAMPLES", "0"))
SECONDS_PER_CASE = 5.0  # generous: the slowest case seen takes a few milliseconds


def _examples(default: int) -> settings:
    return settings(
        max_examples=EXAMPLES or default,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
    )


def _official_seeds() -> list[bytes]:
    try:
        directory = official_vectors("interchange", "tests", "generated")
    except (OSError, pytest.skip.Exception, pytest.fail.Exception):
        return []  # the vectors are optional here: the seeds below suffice
    seeds = []
    for path in sorted(directory.glob("*.json"))[:40]:
        case = json.loads(path.read_text())
        for step in case.get("steps", []):
            seeds.append(json.dumps(step["interchange"]).encode())
    return seeds


_SEEDS = [
    interchange([entry(pubkey(1), slots=(3, 9), attestations=((1, 2), (2, 5)))]),
    interchange([entry(pubkey(2)), entry(pubkey(3), attestations=((0, 1),))]),
    *_official_seeds()[:60],
    *(path.read_bytes() for path in REGRESSIONS),
]

_HOSTILE = [
    b"1" * 4400,
    b"-" + b"9" * 25,
    b"1e" + b"0" * 30,
    b"[" * 200,
    b"]" * 50,
    b"{" * 100,
    b'"',
    b"\\",
    b'\\"',
    b",",
    b":",
    b"}",
    b"null",
    b'"\\u0000"',
    b"\xff\xfe",
    b'"' + b"a" * 300 + b'"',
    b"18446744073709551616",
    b"18446744073709551615",
    b'"0x' + b"ab" * 48 + b'"',
    b" " * 50,
]


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    document = bytearray(draw(st.sampled_from(_SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        if not document:
            break
        at = draw(st.integers(0, len(document)))
        kind = draw(st.integers(0, 3))
        if kind == 0:
            document[at:at] = draw(st.sampled_from(_HOSTILE))
        elif kind == 1:
            document[at : at + draw(st.integers(1, 30))] = draw(st.sampled_from(_HOSTILE))
        elif kind == 2:
            del document[at : at + draw(st.integers(1, 10))]
        else:
            document[at:at] = draw(st.binary(max_size=8))
    return bytes(document)


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@st.composite
def _random_json(draw: st.DrawFn) -> bytes:
    value = draw(_json_values)
    if draw(st.booleans()):
        value = {"metadata": draw(_json_values), "data": draw(_json_values)}
    return json.dumps(value).encode()


_documents = st.one_of(_mutated(), _random_json(), st.binary(max_size=200))


def _exact(document: bytes) -> ParsedInterchange | None:
    try:
        return _parse_exact(io.BytesIO(document), "doc")
    except SlashingProtectionError:
        return None


def _check_parsers(document: bytes) -> None:
    started = time.perf_counter()
    try:
        result: ParsedInterchange | None = parse_interchange(document)
    except SlashingProtectionError as error:
        assert "\n" not in str(error)
        result = None
    exact = _exact(document)
    try:
        fast: ParsedInterchange | None = _parse_fast(io.BytesIO(document).read, "doc", None)
    except (_GiveUp, SlashingProtectionError, ValueError, TypeError, KeyError, AttributeError):
        fast = None
    if fast is not None:
        assert fast == exact
    assert result == exact
    assert time.perf_counter() - started < SECONDS_PER_CASE


@pytest.mark.parametrize("path", REGRESSIONS, ids=[path.name for path in REGRESSIONS])
def test_regression_inputs_are_refused_by_the_parsers_and_the_record(
    path: Path, tmp_path: Path
) -> None:
    document = path.read_bytes()
    with pytest.raises(SlashingProtectionError):
        parse_interchange(document)
    _check_parsers(document)
    (tmp_path / RECORD_FILE).write_bytes(document)
    with pytest.raises(SlashingProtectionError):
        SlashingProtection.open(tmp_path, ROOT)
    assert (tmp_path / RECORD_FILE).read_bytes() == document


@_examples(5500)
@given(_documents)
def test_fuzz_the_parsers(document: bytes) -> None:
    _check_parsers(document)


@pytest.fixture(scope="module")
def record_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fuzz-record-") as directory:
        yield Path(directory)


@_examples(3000)
@given(_documents)
def test_fuzz_the_record_reader(record_dir: Path, document: bytes) -> None:
    path = record_dir / RECORD_FILE
    path.write_bytes(document)
    started = time.perf_counter()
    try:
        record = SlashingProtection.open(record_dir, ROOT)
    except SlashingProtectionError as error:
        assert "\n" not in str(error)
    else:
        record.close()
    assert path.read_bytes() == document
    assert time.perf_counter() - started < SECONDS_PER_CASE


# ------------------------------------------------------------------ Keymanager bodies


class _Server:
    """The real Keymanager app on 127.0.0.1 in its own thread and event loop."""

    def __init__(self, directory: Path) -> None:
        from aiohttp import web

        from validator.consensus.chain_preset import SimulatedChainConfig
        from validator.keymanager_server import KeymanagerSigning
        from validator.signing.signer import Signer

        self.directory = directory
        self.record = SlashingProtection.open(directory, GVR, create=True)
        chain = SimulatedChainConfig(
            genesis_time=GENESIS_TIME, genesis_validators_root=GVR
        ).chain_spec()

        async def no_index(pubkey: bytes) -> int | None:
            return None

        self._loop = asyncio.new_event_loop()
        started = threading.Event()

        async def serve() -> None:
            context = KeymanagerContext(
                store=ValidatorStore(directory),
                record=self.record,
                signer=KeymanagerSigning(Signer(chain, self.record)),
                genesis_validators_root=chain.genesis_validators_root,
                resolve_validator_index=no_index,
            )
            self._runner = web.AppRunner(create_app(context, TOKEN))
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = self._runner.addresses[0][1]
            started.set()

        self._thread = threading.Thread(
            target=lambda: (self._loop.run_until_complete(serve()), self._loop.run_forever()),
            daemon=True,
        )
        self._thread.start()
        assert started.wait(30)

    def call(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=body,
            method=method,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=SECONDS_PER_CASE) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self.record.close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    with tempfile.TemporaryDirectory(prefix="fuzz-keymanager-") as directory:
        running = _Server(Path(directory))
        yield running
        running.close()


_ROUTES = [
    ("POST", "/eth/v1/keystores"),
    ("DELETE", "/eth/v1/keystores"),
    ("POST", "/eth/v1/remotekeys"),
    ("DELETE", "/eth/v1/remotekeys"),
    ("POST", "/eth/v1/validator/0x" + pubkey(1).hex() + "/graffiti"),
]


def _valid_bodies() -> list[bytes]:
    good_history = history({1: (5, (1, 2)), 2: (3, (0, 1))})
    return [
        json.dumps(import_body([1, 2], good_history)).encode(),
        json.dumps({"pubkeys": ["0x" + pubkey(1).hex()]}).encode(),
        json.dumps({"remote_keys": [{"pubkey": "0x" + pubkey(3).hex(), "url": "http://a:1"}]})
        .encode(),
        json.dumps({"graffiti": "x"}).encode(),
    ]


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        document = bytearray(draw(st.sampled_from(_valid_bodies())))
        for _ in range(draw(st.integers(1, 3))):
            at = draw(st.integers(0, len(document)))
            document[at:at] = draw(st.sampled_from(_HOSTILE))
        return bytes(document)
    if choice == 1:  # a hostile slashing_protection field inside a well-formed body
        field = draw(_mutated()).decode("utf-8", "replace")
        return json.dumps(import_body([1], field)).encode()
    if choice == 2:
        return draw(_random_json())
    return draw(st.binary(max_size=100))


def _marks(record: SlashingProtection) -> dict[bytes, Any]:
    return {key: record.watermark(key) for key in record.pubkeys()}


def _not_lower(after: Any, before: Any) -> bool:
    return all(
        (b is None) or (a is not None and a >= b)
        for a, b in zip(
            (after.slot, after.source, after.target),
            (before.slot, before.source, before.target),
            strict=True,
        )
    )


@_examples(1500)
@given(route=st.sampled_from(_ROUTES), body=_bodies())
def test_fuzz_keymanager_bodies(server: _Server, route: tuple[str, str], body: bytes) -> None:
    record_path = server.directory / RECORD_FILE
    before_bytes = record_path.read_bytes()
    before = _marks(server.record)
    started = time.perf_counter()
    status, answer = server.call(*route, body)
    assert time.perf_counter() - started < SECONDS_PER_CASE
    assert status == 200 or 400 <= status < 500, (status, answer[:200])
    if status != 200:
        error = json.loads(answer)
        assert error["code"] == status and isinstance(error["message"], str)
        assert record_path.read_bytes() == before_bytes
    after = _marks(server.record)
    for key, mark in before.items():
        assert _not_lower(after[key], mark), (key.hex(), mark, after[key])
