"""The EIP-3076 minimal rule: per key, the highest block slot and attestation source/target.

"Never signed" is kept as -1 internally (`NEVER`), so that slot 0 and epoch 0 are signable
exactly once and comparisons need no special case. `Watermark` is the public view, with
None for "never signed".

The judging functions take keyword-only arguments: they compare four numbers of the same
type, and a swapped pair (a source for a target, the record's value for the request's)
would still type-check, so every call names what it passes. `is_uint64` and the symmetric
`merge_maximum` keep positional arguments, whose order cannot be confused.

The attestation rule has one twin, in SQL: the shared record's one-statement batch
(`slashing_protection.postgres.batch.RAISE_ATTESTATIONS_IF_ALLOWED`) applies it inside
the database so that each row is judged and raised under one lock; its model test holds
it to these functions' verdicts. Change both or neither.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from operator import and_, ge, gt
from typing import NamedTuple

NEVER = -1
UINT64_MAX = 2**64 - 1


class Watermark(NamedTuple):
    """What a key has signed: highest block slot, highest attestation source and target."""

    slot: int | None
    source: int | None
    target: int | None

    @classmethod
    def never_signed(cls) -> Watermark:
        return cls(None, None, None)


class Rule(StrEnum):
    """One part of the minimal rule: the one a refused message broke."""

    BLOCK_SLOT = "block_slot"
    """A block's slot must be above the highest block slot signed."""
    ATTESTATION_SOURCE = "attestation_source"
    """An attestation's source must be at least the highest source signed."""
    ATTESTATION_TARGET = "attestation_target"
    """An attestation's target must be above the highest target signed."""


def broken_block_rule(*, last_slot: int, slot: int) -> Rule | None:
    """None when a block is safe: above the highest slot signed (NEVER allows slot 0)."""
    return None if slot > last_slot else Rule.BLOCK_SLOT


def broken_attestation_rule(
    *, last_source: int, last_target: int, source: int, target: int
) -> Rule | None:
    """None when an attestation is safe: source >= the highest source and target > the
    highest target (the source is named first when both are broken)."""
    if source < last_source:
        return Rule.ATTESTATION_SOURCE
    if target <= last_target:
        return Rule.ATTESTATION_TARGET
    return None


def attestations_safe(
    *,
    sources: Iterable[int],
    last_sources: Iterable[int],
    targets: Iterable[int],
    last_targets: Iterable[int],
) -> list[bool]:
    """Whether each attestation is safe (`broken_attestation_rule` is None), over whole
    columns at once (C-level loops, for big batches)."""
    return list(map(and_, map(ge, sources, last_sources), map(gt, targets, last_targets)))


def batch_safe_by_columns(
    *,
    last_sources: Iterable[int],
    sources: Iterable[int],
    last_targets: Iterable[int],
    targets: Iterable[int],
    items: int,
) -> bool:
    """Whether every item of a batch of `items` attestations is allowed, judged from the
    record's columns before (`last_*`) and after (`sources`, `targets`) taking it in.

    The columns hold every key of the record in one order; the after-columns are the
    before-columns with each item's key set to the item's source and target (a later item
    of the same key winning) and no key added. Only the batch's keys can change, and there
    are at most `items` of them, so `items` raised targets mean the keys are distinct and
    every item's target is above its key's last; every source at least its last completes
    the rule for each item. Conversely a batch of distinct keys that are all
    allowed passes. (Two C-level passes over the columns: for a batch that covers much of
    the record, cheaper than looking every key up.)
    """
    return all(map(ge, sources, last_sources)) and sum(map(gt, targets, last_targets)) == items


def is_uint64(value: object) -> bool:
    """True for a Python int (not bool) in [0, 2**64 - 1]."""
    return type(value) is int and 0 <= value <= UINT64_MAX


def merge_maximum(first: Watermark, second: Watermark) -> Watermark:
    """Each field the higher of the two; never lowers either input."""

    def higher(a: int | None, b: int | None) -> int | None:
        if a is None:
            return b
        if b is None:
            return a
        return max(a, b)

    return Watermark(
        higher(first.slot, second.slot),
        higher(first.source, second.source),
        higher(first.target, second.target),
    )
