"""The batch forms: ``verify_signature_sets`` and ``sign_many``.

Batch verification checks, for random 64-bit weights r_i drawn from ``secrets``
at call time,

    e(sum r_i S_i, g1) == prod over distinct messages m of e(sum_{i: m_i = m} r_i PK_i, H(m))

where PK_i is the (validated, non-identity) sum of set i's keys. It costs one
hash and one Miller loop per distinct message, two multi-scalar sums and one
final exponentiation, instead of two Miller loops and a final exponentiation per
set. If every set is valid it holds; if any set is invalid it holds with
probability at most 2**-64 over the weights, which the attacker cannot know in
advance. So the verdict equals the conjunction of the single checks, and a
false verdict says only that some set failed: nothing about which, or how many.

A batch split over lanes is checked chunk by chunk, each chunk its own random
linear combination (its own weights, signature sum and final exponentiation);
the batch is true only if every chunk is.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple

from crypto_backend import lanes
from crypto_backend.ciphersuite import (
    AnyBackend,
    aggregate_key_with,
    fast_aggregate_verify_with,
    sign_with,
    signature_point_with,
)
from crypto_backend.constants import BATCH_WEIGHT_BITS, DST, SIGNATURE_LENGTH
from crypto_backend.inputs import as_bytes, as_bytes_list, as_secret_key
from crypto_backend.selection import backend_named, current

#: Work below which a batch stays on the calling thread: a round trip to a lane
#: (pickling, a pipe, a wake-up) costs about 0.5 ms, and each chunk repeats the
#: final exponentiation and the signature-side Miller loop (~0.8 ms).
LANE_MIN_WORK_MS: Final = 4.0
LANE_MIN_SIGNATURES: Final = 16

# Rough cost of the parts of a batch on blst, in ms, to decide and balance chunks.
_MS_PER_SET: Final = 0.2  # signature decode and its share of the weighted sums
_MS_PER_MESSAGE: Final = 0.75  # hash to G2, weighted key sum, Miller loop
_MS_PER_KEY: Final = 0.001  # cached lookup and one point addition


class SignatureSet(NamedTuple):
    """One check of a batch: ``signature`` is the aggregate of every key's signature
    of ``message``. Any 3-item sequence in this order is accepted too."""

    pubkeys: Sequence[bytes]
    message: bytes
    signature: bytes


#: A set after input coercion: keys as a tuple, everything as ``bytes``.
CheckedSet = tuple[tuple[bytes, ...], bytes, bytes]


def normalize_sets(sets: Iterable[Sequence[Any]]) -> list[CheckedSet]:
    if isinstance(sets, (bytes, bytearray, memoryview, str)) or not isinstance(sets, Iterable):
        raise TypeError("sets must be an iterable of (pubkeys, message, signature)")
    checked = []
    for index, item in enumerate(sets):
        try:
            pubkeys, message, signature = item
        except (TypeError, ValueError):
            raise TypeError(
                f"signature set {index} must be a (pubkeys, message, signature) sequence"
            ) from None
        checked.append(
            (
                tuple(as_bytes_list(pubkeys, f"pubkeys of set {index}")),
                as_bytes(message, f"message of set {index}"),
                as_bytes(signature, f"signature of set {index}"),
            )
        )
    return checked


def random_weight() -> int:
    while True:
        weight = secrets.randbits(BATCH_WEIGHT_BITS)
        if weight:
            return weight


def check_sets_with(backend: AnyBackend, sets: Sequence[CheckedSet]) -> bool:
    """One random-linear-combination check of all ``sets`` on this thread."""
    if not sets:
        return False
    if len(sets) == 1:
        return fast_aggregate_verify_with(backend, *sets[0])
    signatures = []
    weights = []
    # message -> (aggregate keys, their weights)
    by_message: dict[bytes, tuple[list[Any], list[int]]] = {}
    for pubkeys, message, signature in sets:
        # Every key is validated (identity refused), and so is their sum, before
        # anything is hashed or paired.
        key = aggregate_key_with(backend, pubkeys)
        if key is None:
            return False
        signature_point = signature_point_with(backend, signature)
        if signature_point is None:
            return False
        weight = random_weight()
        signatures.append(signature_point)
        weights.append(weight)
        keys, key_weights = by_message.setdefault(message, ([], []))
        keys.append(key)
        key_weights.append(weight)
    signature_sum = backend.g2_weighted_sum(signatures, weights)
    if backend.g2_is_identity(signature_sum):
        return False
    pairs = [
        (backend.g1_weighted_sum(keys, key_weights), backend.hash_to_g2(message, DST))
        for message, (keys, key_weights) in by_message.items()
    ]
    return backend.pairings_equal_signature(pairs, signature_sum)


def split(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    """``parts`` contiguous slices whose sizes differ by at most one."""
    size, extra = divmod(len(items), parts)
    slices = []
    start = 0
    for part in range(parts):
        end = start + size + (1 if part < extra else 0)
        slices.append(items[start:end])
        start = end
    return slices


def plan_set_chunks(sets: Sequence[CheckedSet], lane_total: int) -> list[list[CheckedSet]]:
    """Split a batch into at most ``lane_total`` chunks of about equal estimated work.

    Sets are ordered by message first, so equal messages share a chunk (and one
    hash and Miller loop) as far as the balance allows. A batch whose estimated
    work is under ``LANE_MIN_WORK_MS`` stays in one chunk.
    """
    ordered = sorted(sets, key=lambda item: item[1])
    costs = []
    previous: bytes | None = None
    for pubkeys, message, _ in ordered:
        cost = _MS_PER_SET + _MS_PER_KEY * len(pubkeys)
        if message != previous:
            cost += _MS_PER_MESSAGE
            previous = message
        costs.append(cost)
    total = sum(costs)
    parts = min(lane_total, len(ordered), int(total // (LANE_MIN_WORK_MS / 2)))
    if total < LANE_MIN_WORK_MS or parts <= 1:
        return [list(sets)]
    chunks: list[list[CheckedSet]] = [[] for _ in range(parts)]
    done = 0.0
    for item, cost in zip(ordered, costs, strict=True):
        # The chunk whose share of the total work this set's midpoint falls in.
        index = min(parts - 1, int((done + cost / 2) * parts / total))
        chunks[index].append(item)
        done += cost
    return [chunk for chunk in chunks if chunk]


def plan_signing_chunks(count: int, lane_total: int) -> int:
    if count < LANE_MIN_SIGNATURES:
        return 1
    return max(1, min(lane_total, count // (LANE_MIN_SIGNATURES // 2)))


# Lane entry points: module-level so they pickle by name.


def check_sets_in_lane(backend: str, sets: Sequence[CheckedSet]) -> bool:
    return check_sets_with(backend_named(backend), sets)


def sign_in_lane(backend: str, sks: Sequence[int], message: bytes) -> list[bytes]:
    return sign_with(backend_named(backend), sks, message)


def verify_signature_sets(sets: Iterable[Sequence[Any]]) -> bool:
    """True only if every set verifies (as ``fast_aggregate_verify``); False for an
    empty batch. A false verdict implies nothing about any single set."""
    checked = normalize_sets(sets)
    if not checked:
        return False
    backend = current()
    lane_total = lanes.lane_count()
    chunks = plan_set_chunks(checked, lane_total) if lane_total > 1 else [checked]
    if len(chunks) == 1:
        return check_sets_with(backend, checked)
    results = lanes.run(
        check_sets_in_lane,
        [(backend.name, chunk) for chunk in chunks],
        accept=lambda value, chunk: type(value) is bool,
        local=lambda _name, chunk: check_sets_with(backend, chunk),
    )
    return all(result is True for result in results)


def _well_formed_signatures(value: object, chunk: tuple[Any, ...]) -> bool:
    return (
        type(value) is list
        and len(value) == len(chunk[1])
        and all(type(item) is bytes and len(item) == SIGNATURE_LENGTH for item in value)
    )


def sign_many(sks: Iterable[int], message: bytes) -> list[bytes]:
    """``[sign(sk, message) for sk in sks]``, hashing the message once. Every key is
    range-checked before anything is signed."""
    if not isinstance(sks, Iterable):
        raise TypeError("sks must be an iterable of secret keys")
    secret_keys = [as_secret_key(sk) for sk in sks]
    text = as_bytes(message, "message")
    if not secret_keys:
        return []
    backend = current()
    parts = plan_signing_chunks(len(secret_keys), lanes.lane_count())
    if parts == 1:
        return sign_with(backend, secret_keys, text)
    results = lanes.run(
        sign_in_lane,
        [(backend.name, chunk, text) for chunk in split(secret_keys, parts)],
        accept=_well_formed_signatures,
        local=lambda _name, chunk, chunk_message: sign_with(backend, chunk, chunk_message),
    )
    return [signature for chunk in results for signature in chunk]
