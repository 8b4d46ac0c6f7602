"""The native core: no process ever, the GIL released, threads as lanes, panics
that become exceptions, secret keys refused at the extension's own boundary,
the batch key API, and info()."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

import crypto_backend
from crypto_backend import _native, selection, simd, threads
from crypto_backend._native import testing
from crypto_backend.backend import Backend
from tests.support.official_vectors import REPO_ROOT

MESSAGE = b"\x07" * 32

# Calls every public function, from a plain script with no main guard (the way a
# new user first calls a library), then reports the process's children.
PLAIN_SCRIPT = textwrap.dedent(
    """
    import random, psutil, crypto_backend as cb
    sks = [random.getrandbits(250) + 1 for _ in range(300)]
    message = b"\\x07" * 32
    signatures = cb.sign_many(sks, message)
    pks = [cb.sk_to_pk(sk) for sk in sks]
    assert signatures[0] == cb.sign(sks[0], message)
    assert cb.verify(pks[0], message, signatures[0])
    assert cb.key_validate(pks[1])
    assert cb.key_validate_many(pks) == [True] * len(pks)
    cb.warm_pubkeys(pks)
    total = cb.aggregate(signatures)
    assert cb.fast_aggregate_verify(pks, message, total)
    assert cb.eth_fast_aggregate_verify(pks, message, total)
    assert cb.aggregate_verify(pks[:2], [message, message], cb.aggregate(signatures[:2]))
    assert cb.eth_aggregate_pubkeys(pks)
    sets = [([pk], message, signature) for pk, signature in zip(pks, signatures)]
    assert cb.verify_signature_sets(sets)
    distinct = [bytes([i]) * 32 for i in range(40)]
    assert cb.verify_signature_sets(
        [([pks[i]], distinct[i], cb.sign(sks[i], distinct[i])) for i in range(40)])
    info = cb.info()
    me = psutil.Process()
    print("lanes", info["lanes"], "children", len(me.children(recursive=True)),
          "threads", me.num_threads())
    """
)


def _run_plain_script(tmp_path: Any, **env: str) -> tuple[subprocess.CompletedProcess[str], int]:
    script = tmp_path / "first_try.py"
    script.write_text(PLAIN_SCRIPT)
    environment = {
        key: value for key, value in os.environ.items()
        if key not in (selection.BACKEND_ENV, threads.LANES_ENV)
    }
    environment.update(env)
    environment["PYTHONPATH"] = str(REPO_ROOT)
    process = subprocess.Popen(
        [sys.executable, str(script)], cwd=tmp_path, env=environment,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # Watch from outside too, while it runs: a child that lived for a moment counts.
    watched = psutil.Process(process.pid)
    most_children = 0
    while process.poll() is None:
        try:
            most_children = max(most_children, len(watched.children(recursive=True)))
        except psutil.NoSuchProcess:
            break
        time.sleep(0.005)
    stdout, stderr = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), (
        most_children
    )


@pytest.mark.parametrize("lanes", [None, "1"], ids=["default_lanes", "one_lane"])
def test_a_plain_script_without_a_main_guard_starts_no_process(
    tmp_path: Any, lanes: str | None
) -> None:
    env = {} if lanes is None else {threads.LANES_ENV: lanes}
    result, most_children = _run_plain_script(tmp_path, **env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    expected_lanes = threads.usable_cores() if lanes is None else 1
    # The lanes are the only threads the package starts: with one lane, none at all.
    expected_threads = 1 if expected_lanes == 1 else 1 + expected_lanes
    assert result.stdout.split() == [
        "lanes", str(expected_lanes), "children", "0", "threads", str(expected_threads)
    ]
    assert most_children == 0


def test_a_bad_lane_setting_names_the_variable(tmp_path: Any) -> None:
    result, _ = _run_plain_script(tmp_path, VALIDATOR_BLS_LANES="many")
    assert result.returncode != 0
    assert "VALIDATOR_BLS_LANES" in result.stderr and "many" in result.stderr


# -- the GIL ---------------------------------------------------------------------------


def test_native_calls_release_the_gil() -> None:
    """While one thread is inside a long native call, another keeps running Python."""
    secrets = list(range(1, 400))
    in_call = threading.Event()
    done = threading.Event()

    def sign_in_background() -> None:
        in_call.set()
        _native.sign_many(secrets, MESSAGE)  # ~50 ms on one lane
        done.set()

    threads.set_lane_count(1)
    try:
        worker = threading.Thread(target=sign_in_background)
        worker.start()
        in_call.wait()
        steps_during_call = 0
        while not done.is_set():
            steps_during_call += 1
        worker.join()
    finally:
        threads.set_lane_count(None)
    # Holding the GIL, the call would let this loop run only at its edges.
    assert steps_during_call > 1_000


def test_two_python_threads_verify_correct_answers_at_once() -> None:
    pk, signature = crypto_backend.sk_to_pk(77), crypto_backend.sign(77, MESSAGE)
    answers: list[bool] = []

    def check() -> None:
        for _ in range(20):
            answers.append(crypto_backend.verify(pk, MESSAGE, signature))
            answers.append(not crypto_backend.verify(pk, b"other", signature))

    workers = [threading.Thread(target=check) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert answers == [True] * 80


# -- lanes -------------------------------------------------------------------------------


@pytest.fixture(params=[1, 2], ids=["one_lane", "two_lanes"])
def lanes(request: pytest.FixtureRequest) -> Iterator[int]:
    threads.set_lane_count(request.param)
    try:
        assert _native.lane_count() == request.param
        yield request.param
    finally:
        threads.set_lane_count(None)


Set = tuple[list[bytes], bytes, bytes]


def _signed_sets(count: int, messages: int, seed: int = 1) -> list[Set]:
    sets = []
    for index in range(count):
        sk = 1000 * seed + index + 1
        message = bytes([index % messages]) * 32
        sets.append(([crypto_backend.sk_to_pk(sk)], message, crypto_backend.sign(sk, message)))
    return sets


def _break(sets: list[Set], position: int) -> list[Set]:
    broken = list(sets)
    keys, message, signature = broken[position]
    broken[position] = (keys, message + b"?", signature)
    return broken


@pytest.mark.parametrize(
    ("count", "messages"),
    [(2, 2), (4, 4), (9, 9), (10, 10), (11, 11), (33, 33), (120, 1), (140, 1)],
)
def test_batches_straddling_the_chunk_size(
    backend: Backend[Any, Any], lanes: int, count: int, messages: int
) -> None:
    sets = _signed_sets(count, messages)
    chunks = testing.plan_chunks([message for _, message, _ in sets], lanes)
    if lanes == 1:
        assert len(chunks) == 1
    assert crypto_backend.verify_signature_sets(sets)
    positions = sorted({0, 1, count // 2 - 1, count // 2, count - 2, count - 1} & set(range(count)))
    for position in positions:
        assert crypto_backend.verify_signature_sets(_break(sets, position)) is False, position


def test_the_chunk_size_sits_inside_the_tested_range() -> None:
    def chunks(count: int, messages: int) -> int:
        texts = [message for _, message, _ in _signed_sets(count, messages)]
        return len(testing.plan_chunks(texts, 2))

    assert chunks(9, 9) == 1 and chunks(10, 10) == 2
    assert chunks(120, 1) == 1 and chunks(140, 1) == 2


@pytest.mark.parametrize("count", [1, 7, 8, 9, 40])
def test_sign_many_equals_sign_on_every_lane_count(
    backend: Backend[Any, Any], lanes: int, count: int
) -> None:
    secrets = [7_000_000 + index for index in range(count)]
    expected = [crypto_backend.sign(sk, b"lanes") for sk in secrets]
    assert crypto_backend.sign_many(secrets, b"lanes") == expected


def test_set_lane_count_refuses_nonsense() -> None:
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            threads.set_lane_count(bad)  # type: ignore[arg-type]


# -- panics and malformed input inside the extension -----------------------------------


def test_a_panic_on_a_lane_is_an_exception_never_a_verdict(lanes: int) -> None:
    sets = _signed_sets(12, 12)
    assert crypto_backend.verify_signature_sets(sets)
    testing.arm_test_panic("batch_chunk")
    with pytest.raises(RuntimeError, match="native core failed"):
        crypto_backend.verify_signature_sets(sets)
    # The one-shot panic is spent and the lanes still work.
    assert crypto_backend.verify_signature_sets(sets)
    assert not crypto_backend.verify_signature_sets(_break(sets, 5))


def test_a_panic_while_signing_is_an_exception_never_a_short_list(lanes: int) -> None:
    secrets = list(range(1, 30))
    testing.arm_test_panic("sign_many")
    with pytest.raises(RuntimeError, match="native core failed"):
        crypto_backend.sign_many(secrets, MESSAGE)
    assert len(crypto_backend.sign_many(secrets, MESSAGE)) == len(secrets)


def test_a_panic_in_verify_or_key_decoding_is_an_exception() -> None:
    pk, signature = crypto_backend.sk_to_pk(5), crypto_backend.sign(5, MESSAGE)
    testing.arm_test_panic("verify")
    with pytest.raises(RuntimeError):
        crypto_backend.verify(pk, MESSAGE, signature)
    assert crypto_backend.verify(pk, MESSAGE, signature)
    testing.arm_test_panic("key_decode")
    with pytest.raises(RuntimeError):
        crypto_backend.key_validate_many([pk])
    assert crypto_backend.key_validate_many([pk]) == [True]
    with pytest.raises(ValueError):
        testing.arm_test_panic("nowhere")


@pytest.mark.parametrize(
    "sk", [0, -1, crypto_backend.CURVE_ORDER, crypto_backend.CURVE_ORDER + 1, 2**256, 2**300]
)
def test_the_extension_itself_refuses_secret_keys_outside_the_range(sk: int) -> None:
    # Below the Python checks, straight at the extension's boundary.
    for call in (
        lambda: _native.sk_to_pk(sk),
        lambda: _native.sign(sk, MESSAGE),
        lambda: _native.sign_many([3, sk], MESSAGE),
        lambda: _native.g1_generator_times(sk),
    ):
        with pytest.raises(crypto_backend.BlsError):
            call()


def test_the_extension_refuses_secret_keys_of_the_wrong_type() -> None:
    for bad in (True, 1.0, b"\x01" * 32, "1"):
        with pytest.raises(TypeError):
            _native.sign(bad, MESSAGE)  # type: ignore[arg-type]


def test_malformed_input_at_the_extension_is_false_or_bls_error() -> None:
    cache = _native.KeyCache(16)
    assert _native.verify(cache, b"", MESSAGE, b"") is False
    assert _native.fast_aggregate_verify(cache, [], MESSAGE, b"\x00" * 96) is False
    assert _native.aggregate_verify(cache, [b"\x00" * 48], [], b"") is False
    assert _native.verify_signature_sets(cache, [([b"x"], MESSAGE, b"y")], [1]) is False
    # Weights that are missing or zero make the batch false, never true.
    sets = _signed_sets(3, 3)
    assert _native.verify_signature_sets(cache, sets, [1, 2]) is False
    assert _native.verify_signature_sets(cache, sets, [1, 0, 2]) is False
    assert _native.verify_signature_sets(cache, sets, [1, 2, 3]) is True
    with pytest.raises(crypto_backend.BlsError):
        _native.aggregate([b"\x01" * 96])
    with pytest.raises(crypto_backend.BlsError):
        _native.eth_aggregate_pubkeys(cache, [b"\x01" * 47])
    with pytest.raises(TypeError):
        _native.verify(cache, "text", MESSAGE, b"")  # type: ignore[arg-type]


# -- key_validate_many, warm_pubkeys ------------------------------------------------------


def test_key_validate_many_equals_key_validate(backend: Backend[Any, Any], lanes: int) -> None:
    keys = [crypto_backend.sk_to_pk(9_000 + i) for i in range(70)]
    mixed = [
        *keys,
        crypto_backend.G1_POINT_AT_INFINITY,
        b"\x00" * 48,
        keys[0][:-1],
        bytes([keys[1][0] ^ 0x80]) + keys[1][1:],
        keys[2],
    ]
    expected = [crypto_backend.key_validate(key) for key in mixed]
    assert expected.count(False) == 4
    backend.clear_key_cache()
    assert crypto_backend.key_validate_many(mixed) == expected
    assert crypto_backend.key_validate_many(iter(mixed)) == expected


def test_warm_pubkeys_decodes_each_key_once(backend: Backend[Any, Any], lanes: int) -> None:
    keys = [crypto_backend.sk_to_pk(20_000 + i) for i in range(100)]
    backend.clear_key_cache()
    assert crypto_backend.warm_pubkeys([*keys, b"\x00" * 48]) is None
    after_warm = backend.key_cache_stats()
    assert after_warm.misses == 101 and after_warm.size == 101
    assert all(crypto_backend.key_validate(key) for key in keys)
    assert not crypto_backend.key_validate(b"\x00" * 48)
    final = backend.key_cache_stats()
    assert final.misses == after_warm.misses
    assert final.hits - after_warm.hits == 101


# -- info ------------------------------------------------------------------------------


def test_info_says_backend_versions_lanes_and_simd(backend: Backend[Any, Any]) -> None:
    info = crypto_backend.info()
    assert set(info) >= {"backend", "versions", "lanes", "simd"}
    assert info["backend"] == backend.name
    assert info["simd"] == (simd.path() if backend.name == "blst" else "none")
    assert info["simd"] in simd.PATHS
    assert isinstance(info["lanes"], int) and info["lanes"] >= 1
    if backend.name == "blst":
        assert info["lanes"] == crypto_backend.lane_count()
        assert set(info["versions"]) == {"crypto_backend_native", "blst"}


def test_the_reported_blst_version_is_the_one_built() -> None:
    lock = (REPO_ROOT / "Cargo.lock").read_text()
    locked = re.search(r'name = "blst"\nversion = "([^"]+)"', lock)
    assert locked is not None
    assert _native.BLST_VERSION == locked.group(1)
    manifest = (REPO_ROOT / "crypto_backend" / "native" / "python" / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', manifest, re.MULTILINE)
    assert version is not None and _native.VERSION == version.group(1)
