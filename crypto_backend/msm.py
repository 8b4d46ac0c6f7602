"""Multi-scalar multiplication with short public scalars, for libraries without one.

pyblst's ``scalar_mul`` always runs a full 255-bit ladder (~105 µs in G1,
~220 µs in G2) even for the 64-bit weights of a batch check. The bucket method
(Pippenger) computes ``sum(w_i * P_i)`` from point additions alone (~1 µs in
G1, ~2.5 µs in G2): per window of ``c`` bits every point is added into one of
``2**c - 1`` buckets, the buckets are folded with a running sum, and windows are
joined by ``c`` doublings. For 64 points in G2 this is about 5x faster than 64
ladders.

The scalars are the random weights of batch verification: public once drawn,
so the data-dependent memory access of the buckets leaks nothing secret. Secret
keys never come here; signing uses the library's constant-time multiplication.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar


class Addable(Protocol):
    def __add__(self: _P, other: _P, /) -> _P: ...


_P = TypeVar("_P", bound=Addable)


def pippenger_cost(count: int, bits: int, window: int) -> int:
    """Point additions the bucket method needs (an upper bound: buckets start empty)."""
    windows = -(-bits // window)
    return windows * (count + 2 * (1 << window)) + bits


def best_window(count: int, bits: int) -> int:
    return min(range(1, 13), key=lambda window: pippenger_cost(count, bits, window))


def weighted_sum(
    points: Sequence[_P],
    weights: Sequence[int],
    *,
    scalar_mul: Callable[[_P, int], _P],
    ladder_cost: int,
) -> _P:
    """``sum(w * P)`` over a non-empty sequence with positive weights.

    ``ladder_cost`` is what one ``scalar_mul`` costs, in point additions; the
    cheaper of one ladder per point and the bucket method is used.
    """
    if not points or len(points) != len(weights):
        raise ValueError("weighted_sum needs as many weights as points, at least one")
    if any(weight <= 0 for weight in weights):
        raise ValueError("weights must be positive")
    bits = max(weights).bit_length()
    window = best_window(len(points), bits)
    if len(points) * ladder_cost <= pippenger_cost(len(points), bits, window):
        total = scalar_mul(points[0], weights[0])
        for point, weight in zip(points[1:], weights[1:], strict=True):
            total = total + scalar_mul(point, weight)
        return total
    return _buckets(points, weights, bits, window)


def _buckets(points: Sequence[_P], weights: Sequence[int], bits: int, window: int) -> _P:
    mask = (1 << window) - 1
    result: _P | None = None
    for shift in range(((bits - 1) // window) * window, -1, -window):
        if result is not None:
            for _ in range(window):
                result = result + result
        buckets: list[_P | None] = [None] * (mask + 1)
        for point, weight in zip(points, weights, strict=True):
            digit = (weight >> shift) & mask
            if digit:
                held = buckets[digit]
                buckets[digit] = point if held is None else held + point
        # sum(d * bucket[d]) as a sum of running sums, from the top digit down.
        running: _P | None = None
        window_total: _P | None = None
        for digit in range(mask, 0, -1):
            held = buckets[digit]
            if held is not None:
                running = held if running is None else running + held
            if running is not None:
                window_total = running if window_total is None else window_total + running
        if window_total is not None:
            result = window_total if result is None else result + window_total
    # Every weight is positive, so some window had a non-zero digit.
    assert result is not None
    return result
