"""Batch verification internals: weighted sums, random weights, the native core's
chunk planning, input forms, and the soundness the weights buy."""

from __future__ import annotations

import random
from typing import Any

import pytest

import crypto_backend
from crypto_backend import batch, selection, simd
from crypto_backend._native import testing
from crypto_backend.backend import Backend
from tests.crypto_backend.conftest import simd_mode

MESSAGE = b"batch"


def _points(backend: Backend[Any, Any], group: str, count: int, rng: random.Random) -> list[Any]:
    if group == "G1":
        return [backend.g1_generator_times(rng.randrange(1, 2**64)) for _ in range(count)]
    hashed = backend.hash_to_g2(b"points", crypto_backend.DST)
    return [backend.g2_times(hashed, rng.randrange(1, 2**64)) for _ in range(count)]


@pytest.mark.parametrize("group", ["G1", "G2"])
@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 13, 33, 70])
def test_weighted_sums_equal_double_and_add(
    backend: Backend[Any, Any], group: str, count: int
) -> None:
    rng = random.Random(f"{group} {count}")
    points = _points(backend, group, count, rng)
    # Repeated points land in the same bucket, so doubling is exercised too.
    points[-1] = points[0]
    weights = [rng.randrange(1, 2**64) for _ in range(count)]
    weights[0] = 2**64 - 1
    if group == "G1":
        weighted_sum, add, encode = backend.g1_weighted_sum, backend.g1_sum, backend.encode_g1
    else:
        weighted_sum, add, encode = backend.g2_weighted_sum, backend.g2_sum, backend.encode_g2
    expected = add([_double_and_add(add, p, w) for p, w in zip(points, weights, strict=True)])
    assert encode(weighted_sum(points, weights)) == encode(expected)


@pytest.mark.parametrize("group", ["G1", "G2"])
@pytest.mark.parametrize("count", [7, 8, 21, 130])
def test_weighted_sums_on_the_lanes_equal_blst(group: str, count: int, seed: int) -> None:
    """The native weighted sums (the batch check's key and signature sums) go to the
    lanes from 4 keys or 8 signatures, 16 a lane in a pass (`batch::weighted_sums`):
    the same point as
    blst's Pippenger on every layer this CPU runs, edge weights included, and a lane
    holding one point twice with one weight (the formulas' doubling case) is summed on
    blst instead."""
    native = selection.backend_named("blst")
    rng = random.Random(f"{seed} {group} {count}")
    points = _points(native, group, count, rng)
    weights = [rng.randrange(1, 2**64) for _ in range(count)]
    weights[0] = 2**64 - 1
    if count >= 16:
        # Positions 0 and 1 are rows 0 and 1 of lane 0 (a lane takes a run of points).
        # With the top digit 1 (the carry of 2^64 - 1's signed digits), the lane starts
        # at the top window with row 0's point, and row 1 then adds that same point.
        points[1], weights[1] = points[0], weights[0]
    if group == "G1":
        weighted_sum, encode = native.g1_weighted_sum, native.encode_g1
        passes_counter = "weighted_lane_passes"
    else:
        weighted_sum, encode = native.g2_weighted_sum, native.encode_g2
        passes_counter = "signature_sum_lane_passes"
    with simd_mode("off"):
        expected = encode(weighted_sum(points, weights))
    layers = ["portable"] + (["require"] if simd.ifma_available() else [])
    for layer in layers:
        with simd_mode(layer):
            before = testing.counters()
            assert encode(weighted_sum(points, weights)) == expected, layer
            after = testing.counters()
        passes = after[passes_counter] - before[passes_counter]
        # Keys go to the lanes from 4, signatures from 8; 16 a lane in a pass.
        assert passes == (0 if count < (4 if group == "G1" else 8) else -(-count // 128)), layer
        undecided = after["sum_undecided_lanes"] - before["sum_undecided_lanes"]
        assert undecided == (1 if count >= 16 else 0), layer


@pytest.mark.parametrize("group", ["G1", "G2"])
@pytest.mark.parametrize("count", [15, 16, 70])
def test_plain_sums_on_the_lanes_equal_blst(group: str, count: int, seed: int) -> None:
    """The native sums (`aggregate`'s, `eth_aggregate_pubkeys`', a set's keys) go to the
    lanes from 16 points (`sums::sum`), each lane adding up every eighth point: the same
    point as blst's batch addition on every layer this CPU runs, a last row of fewer
    than 8 included; a lane that meets a point it already holds (a doubling, which the
    lanes' formula leaves) and one whose sum cancels are summed on blst instead."""
    native = selection.backend_named("blst")
    rng = random.Random(f"{seed} {group} {count}")
    points = _points(native, group, count, rng)
    if group == "G1":
        add, encode = native.g1_sum, native.encode_g1
    else:
        add, encode = native.g2_sum, native.encode_g2
    if count >= 16:
        # Lane 0 takes points 0 and 8: the same point, a doubling.
        points[8] = points[0]
    with simd_mode("off"):
        expected = encode(add(points))
    layers = ["portable"] + (["require"] if simd.ifma_available() else [])
    for layer in layers:
        with simd_mode(layer):
            before = testing.counters()
            assert encode(add(points)) == expected, layer
            after = testing.counters()
        passes = after["plain_sum_lane_passes"] - before["plain_sum_lane_passes"]
        assert passes == (1 if count >= 16 else 0), layer
        undecided = after["sum_undecided_lanes"] - before["sum_undecided_lanes"]
        assert undecided == (1 if count >= 16 else 0), layer


def _double_and_add(add: Any, point: Any, scalar: int) -> Any:
    # Only the backend's additions: independent of the weighted sums under test.
    result = None
    while scalar:
        if scalar & 1:
            result = point if result is None else add([result, point])
        point = add([point, point])
        scalar >>= 1
    return result


@pytest.mark.parametrize("group", ["G1", "G2"])
def test_native_weighted_sums_refuse_empty_and_zero_weights(group: str) -> None:
    # The portable backend hands its weights to its library; the native one checks.
    backend = selection.backend_named("blst")
    points = _points(backend, group, 2, random.Random("refuse"))
    weighted_sum = backend.g1_weighted_sum if group == "G1" else backend.g2_weighted_sum
    with pytest.raises(ValueError):
        weighted_sum([], [])
    with pytest.raises(ValueError):
        weighted_sum(points, [1, 0])
    with pytest.raises(ValueError):
        weighted_sum(points, [1])


def test_weights_are_64_bit_and_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter([0, 0, 12345])
    monkeypatch.setattr(batch.secrets, "randbits", lambda bits: next(draws))
    assert batch.random_weight() == 12345
    monkeypatch.undo()
    weights = {batch.random_weight() for _ in range(200)}
    assert len(weights) == 200
    assert all(0 < weight < 2**64 for weight in weights)
    assert max(weights) >= 2**60


def _swapped_pair() -> list[tuple[list[bytes], bytes, bytes]]:
    a, b = 1111, 2222
    return [
        ([crypto_backend.sk_to_pk(a)], b"message a", crypto_backend.sign(b, b"message b")),
        ([crypto_backend.sk_to_pk(b)], b"message b", crypto_backend.sign(a, b"message a")),
    ]


def test_swapped_signatures_fail_because_of_the_random_weights(
    backend: Backend[Any, Any], monkeypatch: pytest.MonkeyPatch, one_lane: None
) -> None:
    sets = _swapped_pair()
    # Both sets are wrong, but their signature sum is right:
    assert not any(crypto_backend.verify(k[0], m, s) for k, m, s in sets)
    assert crypto_backend.aggregate_verify(
        [sets[0][0][0], sets[1][0][0]], [b"message a", b"message b"],
        crypto_backend.aggregate([sets[0][2], sets[1][2]]),
    )
    assert not crypto_backend.verify_signature_sets(sets)
    # With equal weights the batch would be fooled: the weights are what protect it.
    monkeypatch.setattr(batch, "random_weight", lambda: 7)
    assert crypto_backend.verify_signature_sets(sets)


def test_each_distinct_message_is_hashed_once(
    backend: Backend[Any, Any], monkeypatch: pytest.MonkeyPatch, one_lane: None
) -> None:
    secrets = list(range(1, 13))
    sets = [
        ([crypto_backend.sk_to_pk(sk)], bytes([sk % 3]), crypto_backend.sign(sk, bytes([sk % 3])))
        for sk in secrets
    ]
    if backend.name == "blst":
        # The native core hashes without calling back into Python: count there.
        before = testing.counters()["hashes_to_g2"]
        assert crypto_backend.verify_signature_sets(sets)
        assert testing.counters()["hashes_to_g2"] - before == 3
        return
    hashed: list[bytes] = []
    real = backend.hash_to_g2
    monkeypatch.setattr(backend, "hash_to_g2", lambda m, dst: hashed.append(m) or real(m, dst))
    assert crypto_backend.verify_signature_sets(sets)
    assert sorted(hashed) == [b"\x00", b"\x01", b"\x02"]


def _messages(count: int, messages: int) -> list[bytes]:
    return [bytes([i % messages]) * 32 for i in range(count)]


def test_small_batches_stay_in_one_chunk() -> None:
    assert testing.plan_chunks(_messages(1, 1), 2) == [[0]]
    assert len(testing.plan_chunks(_messages(3, 3), 2)) == 1
    assert len(testing.plan_chunks(_messages(12, 1), 2)) == 1
    assert len(testing.plan_chunks(_messages(64, 64), 1)) == 1


@pytest.mark.parametrize(("count", "messages"), [(64, 64), (300, 1), (100, 7), (17, 17)])
@pytest.mark.parametrize("lane_total", [2, 3, 8])
def test_chunks_cover_the_batch_once_and_keep_messages_together(
    count: int, messages: int, lane_total: int
) -> None:
    texts = _messages(count, messages)
    chunks = testing.plan_chunks(texts, lane_total)
    assert 2 <= len(chunks) <= lane_total
    assert all(chunks)
    assert sorted(index for chunk in chunks for index in chunk) == list(range(count))
    # Each chunk is in message order, and a message spans only adjacent chunks.
    seen_in: dict[bytes, set[int]] = {}
    for number, chunk in enumerate(chunks):
        assert [texts[i] for i in chunk] == sorted(texts[i] for i in chunk)
        for index in chunk:
            seen_in.setdefault(texts[index], set()).add(number)
    for numbers in seen_in.values():
        assert numbers == set(range(min(numbers), max(numbers) + 1))
    sizes = [len(chunk) for chunk in chunks]
    if messages == count:
        assert max(sizes) - min(sizes) <= 1


def test_signature_sets_accept_any_three_item_sequence(
    backend: Backend[Any, Any], one_lane: None
) -> None:
    sk = 4242
    key, signature = crypto_backend.sk_to_pk(sk), crypto_backend.sign(sk, MESSAGE)
    forms: list[Any] = [
        crypto_backend.SignatureSet([key], MESSAGE, signature),
        (tuple([key]), MESSAGE, signature),
        [[bytearray(key)], bytearray(MESSAGE), memoryview(signature)],
    ]
    assert crypto_backend.verify_signature_sets(forms)
    assert crypto_backend.verify_signature_sets(iter(forms))
    assert crypto_backend.SignatureSet([key], MESSAGE, signature).pubkeys == [key]


@pytest.mark.parametrize(
    "bad",
    [
        [(b"k" * 48, MESSAGE, b"s" * 96)],  # pubkeys as one bytes value, not a list
        [([b"k" * 48], MESSAGE)],  # two items
        [([b"k" * 48], MESSAGE, b"s" * 96, b"extra")],
        [([b"k" * 48], "text message", b"s" * 96)],
        [None],
        b"not sets",
    ],
)
def test_malformed_set_shapes_are_type_errors(bad: Any) -> None:
    with pytest.raises(TypeError):
        crypto_backend.verify_signature_sets(bad)


def test_an_empty_batch_is_false() -> None:
    assert crypto_backend.verify_signature_sets([]) is False


def test_wrong_lengths_inside_sets_are_false_not_errors(
    backend: Backend[Any, Any], one_lane: None
) -> None:
    sk = 99
    key, signature = crypto_backend.sk_to_pk(sk), crypto_backend.sign(sk, MESSAGE)
    good = ([key], MESSAGE, signature)
    assert not crypto_backend.verify_signature_sets([good, ([key[:-1]], MESSAGE, signature)])
    assert not crypto_backend.verify_signature_sets([good, ([key], MESSAGE, signature[:-1])])
