"""The shared record's batch: argument checks, the SQL a batch runs (the one-statement
judge-and-raise, or its rows locked in pubkey order, watermarks raised with GREATEST),
the locked rows as columns, and the batch's judging by the minimal rule."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress, repeat
from operator import countOf
from typing import Any

import orjson

# The single-value argument checks are the file record's own: one rule for both.
from slashing_protection.entries import check_pubkey, check_uint64
from slashing_protection.interchange import PUBKEY_BYTES
from slashing_protection.rule import (
    UINT64_MAX,
    attestations_safe,
    broken_attestation_rule,
)

# Stands for "no record" in the column comparisons (as in the file record): no uint64
# source is >= it and no uint64 target is > it.
_UNKNOWN = UINT64_MAX + 1
KEYS_TABLE = "slashing_protection_keys"

# --------------------------------------------------------------------------- argument checks


def check_column(values: list[Any], what: str) -> None:
    """`check_uint64` over a column, in C-level passes unless one value is wrong."""
    if countOf(map(type, values), int) == len(values) and (
        not values or (min(values) >= 0 and max(values) <= UINT64_MAX)
    ):
        return
    for value in values:
        check_uint64(value, what)


def check_pubkeys(pubkeys: list[Any]) -> None:
    if pubkeys and (set(map(type, pubkeys)) != {bytes} or set(map(len, pubkeys)) != {48}):
        for pubkey in pubkeys:
            check_pubkey(pubkey)


def numbers_literal(values: Iterable[int]) -> str:
    """A numeric[] literal ("{1,2,3}") rendered in one C call (NEVER is -1, see NULLIF)."""
    return "{" + orjson.dumps(list(values))[1:-1].decode() + "}"


def keys_param(pubkeys: list[bytes]) -> dict[str, Any]:
    return {"keys": b"".join(pubkeys), "count": len(pubkeys)}


def _split_keys(blob: bytes | None) -> list[bytes]:
    if not blob:
        return []
    return [blob[i : i + PUBKEY_BYTES] for i in range(0, len(blob), PUBKEY_BYTES)]


def _parse_numbers(text: str | None) -> list[int]:
    return orjson.loads("[" + text + "]") if text else []


# The locked rows of a batch, aggregated into one value per column. The four aggregates
# read the locked rows in one pass, so their entries line up. Keys travel as one bytea of
# 48-byte pieces: far cheaper for the driver than a bytea[] of 10,000 items.
LOCK_ROWS = f"""
WITH locked AS (
    SELECT pubkey, block_slot, source_epoch, target_epoch FROM {KEYS_TABLE}
    WHERE pubkey IN (
        SELECT substring(%(keys)b::bytea FROM n * 48 + 1 FOR 48)
        FROM generate_series(0, %(count)s::int - 1) AS n
    )
    ORDER BY pubkey FOR NO KEY UPDATE
)
SELECT string_agg(pubkey, ''::bytea),
       string_agg(coalesce(block_slot, -1)::text, ','),
       string_agg(coalesce(source_epoch, -1)::text, ','),
       string_agg(coalesce(target_epoch, -1)::text, ',')
FROM locked
"""

RAISE_ATTESTATIONS = f"""
UPDATE {KEYS_TABLE} AS k
SET source_epoch = GREATEST(k.source_epoch, u.source),
    target_epoch = GREATEST(k.target_epoch, u.target)
FROM (
    SELECT substring(%(keys)b::bytea FROM (n::int - 1) * 48 + 1 FOR 48) AS pubkey,
           source, target
    FROM unnest(%(sources)s::numeric[], %(targets)s::numeric[])
        WITH ORDINALITY AS x(source, target, n)
) AS u
WHERE k.pubkey = u.pubkey
"""

# The usual batch in one statement: each allowed row is judged, locked and raised by the
# update itself (rows are touched once, not locked first and updated after). The batch is
# sorted by key and drives the join (in the plans seen, it probes a hash of the keys
# table), so rows lock in key order; should the planner ever pick another order,
# PostgreSQL's deadlock detection aborts one of two crossing transactions and it is
# retried. A row is raised only where the rule allows the item and the row holds at least
# what this process has committed or seen (the rollback alarm's floor, NEVER where it has
# seen nothing); the update's row count tells the caller whether every item passed. When
# one did not, the caller undoes this statement and judges the batch in full.
# The items travel grouped: one slot's attestations share their checkpoints (and this
# process's floors are mostly the previous slot's, shared too), so each distinct
# (source, target, floors) is sent once with the range of keys, sorted into groups, that
# carry it. Five numeric arrays of 10,000 values cost the server more to parse than the
# whole update of the rows.
RAISE_ATTESTATIONS_IF_ALLOWED = f"""
WITH batch AS (
    SELECT substring(%(keys)b::bytea FROM (g.start + i) * 48 + 1 FOR 48) AS pubkey,
           g.source, g.target, g.seen_slot, g.seen_source, g.seen_target
    FROM unnest(%(starts)s::int[], %(counts)s::int[], %(sources)s::numeric[],
                %(targets)s::numeric[], %(seen_slots)s::numeric[], %(seen_sources)s::numeric[],
                %(seen_targets)s::numeric[])
        AS g(start, count, source, target, seen_slot, seen_source, seen_target)
    CROSS JOIN LATERAL generate_series(0, g.count - 1) AS i
    ORDER BY pubkey
)
UPDATE {KEYS_TABLE} AS k
SET source_epoch = GREATEST(k.source_epoch, b.source),
    target_epoch = GREATEST(k.target_epoch, b.target)
FROM batch AS b
WHERE k.pubkey = b.pubkey
  AND b.source >= coalesce(k.source_epoch, -1) AND b.target > coalesce(k.target_epoch, -1)
  AND coalesce(k.block_slot, -1) >= b.seen_slot
  AND coalesce(k.source_epoch, -1) >= b.seen_source
  AND coalesce(k.target_epoch, -1) >= b.seen_target
"""


def grouped_batch_params(
    pubkeys: list[bytes], rows: list[tuple[int, int, int, int, int]]
) -> dict[str, Any]:
    """RAISE_ATTESTATIONS_IF_ALLOWED's parameters for distinct keys and their rows
    (source, target, seen slot, seen source, seen target): the keys ordered by group, each
    group's start, count and values."""
    groups: dict[tuple[int, int, int, int, int], list[bytes]] = {}
    if len(set(rows)) == 1:
        groups[rows[0]] = pubkeys
    else:
        for pubkey, row in zip(pubkeys, rows, strict=True):
            groups.setdefault(row, []).append(pubkey)
    counts = list(map(len, groups.values()))
    starts = [0]
    for count in counts[:-1]:
        starts.append(starts[-1] + count)
    values = list(zip(*groups, strict=True))
    return {
        "keys": b"".join(b"".join(keys) for keys in groups.values()),
        "starts": numbers_literal(starts),
        "counts": numbers_literal(counts),
        "sources": numbers_literal(values[0]),
        "targets": numbers_literal(values[1]),
        "seen_slots": numbers_literal(values[2]),
        "seen_sources": numbers_literal(values[3]),
        "seen_targets": numbers_literal(values[4]),
    }


RAISE_BLOCK = f"""
UPDATE {KEYS_TABLE} SET block_slot = GREATEST(block_slot, %s::numeric) WHERE pubkey = %s
"""

# Many keys' values in one statement (the status page's whole table), keys passed as
# in LOCK_ROWS; nothing is locked: a display read, never judged against.
READ_MANY = f"""
SELECT pubkey, coalesce(block_slot, -1), coalesce(source_epoch, -1), coalesce(target_epoch, -1)
FROM {KEYS_TABLE}
WHERE pubkey IN (
    SELECT substring(%(keys)b::bytea FROM n * 48 + 1 FOR 48)
    FROM generate_series(0, %(count)s::int - 1) AS n
)
"""

READ_ONE = f"""
SELECT coalesce(block_slot, -1), coalesce(source_epoch, -1), coalesce(target_epoch, -1)
FROM {KEYS_TABLE} WHERE pubkey = %s
"""

MERGE = f"""
INSERT INTO {KEYS_TABLE} (pubkey, block_slot, source_epoch, target_epoch)
SELECT u.pubkey, NULLIF(u.slot, -1), NULLIF(u.source, -1), NULLIF(u.target, -1)
FROM unnest(%s::bytea[], %s::numeric[], %s::numeric[], %s::numeric[])
    WITH ORDINALITY AS u(pubkey, slot, source, target, n)
ORDER BY u.n
ON CONFLICT (pubkey) DO UPDATE SET
    block_slot = GREATEST({KEYS_TABLE}.block_slot, EXCLUDED.block_slot),
    source_epoch = GREATEST({KEYS_TABLE}.source_epoch, EXCLUDED.source_epoch),
    target_epoch = GREATEST({KEYS_TABLE}.target_epoch, EXCLUDED.target_epoch)
"""

REGISTER = f"""
INSERT INTO {KEYS_TABLE} (pubkey)
SELECT u.pubkey FROM unnest(%s::bytea[]) WITH ORDINALITY AS u(pubkey, n) ORDER BY u.n
ON CONFLICT (pubkey) DO NOTHING
"""


class LockedRows:
    """A batch's rows as locked: per key its (slot, source, target), NEVER for none."""

    __slots__ = ("slot", "source", "target")

    def __init__(self, row: tuple[Any, ...] | None) -> None:
        keys = _split_keys(row[0] if row else None)
        slots = _parse_numbers(row[1] if row else None)
        sources = _parse_numbers(row[2] if row else None)
        targets = _parse_numbers(row[3] if row else None)
        self.slot = dict(zip(keys, slots, strict=True))
        self.source = dict(zip(keys, sources, strict=True))
        self.target = dict(zip(keys, targets, strict=True))


def judge_batch(
    locked: LockedRows,
    lowered: set[bytes],
    pubkeys: list[bytes],
    sources: list[int],
    targets: list[int],
) -> tuple[list[bool], list[bytes], list[int], list[int]]:
    """The batch's verdicts by the rule, and the keys it raises with their new values.

    Keys without a row, or rolled back (`lowered`), are refused. A key named twice is
    judged against its own earlier verdict, as in the file record.
    """
    last_source, last_target = locked.source, locked.target
    if lowered:
        last_source = {k: v for k, v in last_source.items() if k not in lowered}
        last_target = {k: v for k, v in last_target.items() if k not in lowered}
    if len(set(pubkeys)) == len(pubkeys):
        verdicts = attestations_safe(
            sources=sources,
            last_sources=map(last_source.get, pubkeys, repeat(_UNKNOWN)),
            targets=targets,
            last_targets=map(last_target.get, pubkeys, repeat(_UNKNOWN)),
        )
        if all(verdicts):
            return verdicts, pubkeys, sources, targets
        return (
            verdicts,
            list(compress(pubkeys, verdicts)),
            list(compress(sources, verdicts)),
            list(compress(targets, verdicts)),
        )
    latest: dict[bytes, tuple[int, int]] = {}
    verdicts = []
    for pubkey, source, target in zip(pubkeys, sources, targets, strict=True):
        last = latest.get(pubkey)
        if last is None:
            stored = last_source.get(pubkey)
            if stored is None:
                verdicts.append(False)
                continue
            last = (stored, last_target[pubkey])
        allowed = (
            broken_attestation_rule(
                last_source=last[0], last_target=last[1], source=source, target=target
            )
            is None
        )
        if allowed:
            latest[pubkey] = (source, target)
        verdicts.append(allowed)
    changed = list(latest)
    return (
        verdicts,
        changed,
        [latest[key][0] for key in changed],
        [latest[key][1] for key in changed],
    )

