"""Signature checks for everything the devnet receives: one batch per request.

Each request's signatures (for instance, per aggregate: the selection proof,
the aggregator's signature and the aggregate itself) become signature sets
verified together with ``crypto_backend.verify_signature_sets``. Only when a
batch fails are the sets checked one by one, to say which items are bad. The
work runs in a worker thread so the server keeps answering meanwhile.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import crypto_backend


@dataclass(frozen=True)
class SignatureCheck:
    """One signature set, tagged with the request item it belongs to."""

    item: int
    """Position of the item in the request body."""
    what: str
    """What is signed, for the error message ("selection proof", ...)."""
    pubkeys: tuple[bytes, ...]
    message: bytes
    signature: bytes


def _verify_sets(checks: Sequence[SignatureCheck]) -> bool:
    sets = [(list(check.pubkeys), check.message, check.signature) for check in checks]
    try:
        return bool(crypto_backend.verify_signature_sets(sets))
    except ValueError:
        # Malformed input (a point not on the curve, ...) makes the whole batch invalid.
        return False


def failed_checks(checks: Sequence[SignatureCheck]) -> list[SignatureCheck]:
    """The checks whose signature does not verify (empty when all do). Blocking."""
    if not checks or _verify_sets(checks):
        return []
    return [check for check in checks if not _verify_sets([check])]


async def failed_checks_async(checks: Sequence[SignatureCheck]) -> list[SignatureCheck]:
    """``failed_checks`` in a worker thread."""
    if not checks:
        return []
    return await asyncio.to_thread(failed_checks, checks)


def aggregate_signatures(signatures: Sequence[bytes]) -> bytes:
    """The aggregate of already verified signatures. Blocking.

    A signature repeated ``k`` times (a member holding several sync committee
    seats) is added as ``k * signature`` by doubling, so the cost grows with the
    distinct signatures, not with the seats.
    """
    counts = Counter(signatures)
    terms = [_times(signature, count) for signature, count in counts.items()]
    return terms[0] if len(terms) == 1 else crypto_backend.aggregate(terms)


def _times(signature: bytes, count: int) -> bytes:
    result: bytes | None = None
    power = signature
    while count:
        if count & 1:
            result = power if result is None else crypto_backend.aggregate([result, power])
        count >>= 1
        if count:
            power = crypto_backend.aggregate([power, power])
    assert result is not None
    return result


async def aggregate_signatures_async(signatures: Sequence[bytes]) -> bytes:
    """``aggregate_signatures`` in a worker thread."""
    return await asyncio.to_thread(aggregate_signatures, list(signatures))
