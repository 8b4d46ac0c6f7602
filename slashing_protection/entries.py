"""The record's content in memory, its rendering, and the judging of a batch against it.

`Entries` holds every key's highest block slot, attestation source and target, and the
record's rendering in two pieces per key, so that a change re-renders only what it changes.
`judge_batch` applies the minimal rule (`rule`) to a batch of attestations against one
`Entries` and gives the `Entries` with the allowed ones taken in. Nothing here touches the
disk: `record.SlashingProtection` writes an `Entries` durably and only then takes it in.

The argument checks (`check_pubkey`, `check_uint64`, ...) live here too: the batch judging
checks only what it must, where it matters (see `judge_batch`).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress, repeat
from operator import countOf, not_
from typing import Any

import orjson

from slashing_protection.interchange import (
    PUBKEY_BYTES,
    render_entry_end,
    render_entry_ends,
    render_entry_start,
)
from slashing_protection.rule import (
    NEVER,
    UINT64_MAX,
    attestations_safe,
    batch_safe_by_columns,
    broken_attestation_rule,
    is_uint64,
)

# Stands for "no record" in the column comparisons: no uint64 source is >= it and no
# uint64 target is > it, so an unknown key is refused without a separate test.
_UNKNOWN = UINT64_MAX + 1


def check_pubkey(pubkey: object) -> bytes:
    if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
        raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
    return pubkey


def check_uint64(value: object, what: str) -> int:
    if not is_uint64(value):
        raise ValueError(f"{what} must be an int in [0, 2**64 - 1], got {value!r:.40}")
    assert isinstance(value, int)
    return value


def check_uint64_column(values: list[Any], what: str) -> None:
    """`check_uint64` for a whole column (a 10,000-key batch) with two C-level passes.

    Exactly int (not bool or another subclass), then rendered by orjson, which refuses an
    int above 2**64 - 1 and writes a "-" for any below 0. Only a column that fails is
    walked item by item, to name the bad value.
    """
    if countOf(map(type, values), int) == len(values):
        try:
            rendered = orjson.dumps(values)
        except orjson.JSONEncodeError:  # beyond 64 bits
            pass
        else:
            if b"-" not in rendered:
                return
    for value in values:
        check_uint64(value, what)


def to_internal(value: int | None) -> int:
    return NEVER if value is None else value


def to_public(value: int) -> int | None:
    return None if value == NEVER else value


class Entries:
    """The record's content, and its rendering.

    - `slot`, `source`, `target`: per key, its highest block slot, attestation source and
      target (NEVER for "never signed"; source and target are NEVER together).
    - `position`: per key, its place in the record: 0, 1, 2, … in the dicts' order.
    - `pieces`: the record's entries rendered, two pieces per key at 2 * position: the
      entry's start (`render_entry_start`) and its end (`render_entry_end`).

    The four dicts hold the same keys in the same order: keys are only ever added, to all
    of them at once, and a dict keeps a key's place when its value changes.

    An instance is never changed once made. A change makes a new one, copying what it
    changes and sharing the rest; the record takes it in by swapping one reference, and
    only after the durable write of its rendering succeeded.
    """

    __slots__ = ("slot", "source", "target", "position", "pieces")

    def __init__(
        self,
        slot: dict[bytes, int],
        source: dict[bytes, int],
        target: dict[bytes, int],
        position: dict[bytes, int],
        pieces: list[bytes],
    ) -> None:
        self.slot = slot
        self.source = source
        self.target = target
        self.position = position
        self.pieces = pieces

    @classmethod
    def empty(cls) -> Entries:
        return cls({}, {}, {}, {}, [])

    def is_big(self, count: int) -> bool:
        """Whether work on whole columns (O(record), in C) beats work per key (O(count), in
        Python) for a batch of `count` keys; on a 10,000-key record the two broke even
        between 3,000 and 5,000 keys in our measurements."""
        return 3 * count >= len(self.slot)

    def with_entries(self, entries: dict[bytes, tuple[int, int, int]]) -> Entries:
        """These keys' (slot, source, target) set; keys not in the record are appended."""
        slot, source, target = self.slot.copy(), self.source.copy(), self.target.copy()
        position, pieces = self.position.copy(), self.pieces.copy()
        for pubkey, (new_slot, new_source, new_target) in entries.items():
            index = position.get(pubkey)
            if index is None:  # a new key goes at the end, of the dicts and of the pieces
                index = position[pubkey] = len(position)
                pieces += (b"", b"")
            slot[pubkey] = new_slot
            source[pubkey] = new_source
            target[pubkey] = new_target
            pieces[2 * index] = render_entry_start(pubkey, new_slot)
            pieces[2 * index + 1] = render_entry_end(new_source, new_target)
        return Entries(slot, source, target, position, pieces)

    def with_block(self, pubkey: bytes, new_slot: int) -> Entries:
        """A key already in the record with a new highest slot."""
        slot, pieces = self.slot.copy(), self.pieces.copy()
        slot[pubkey] = new_slot
        self._check_same_keys(slot)
        pieces[2 * self.position[pubkey]] = render_entry_start(pubkey, new_slot)
        return Entries(slot, self.source, self.target, self.position, pieces)

    def with_attestations(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> Entries:
        """Keys already in the record, each once, with new highest sources and targets."""
        source, target = self.source.copy(), self.target.copy()
        source.update(zip(pubkeys, sources, strict=True))
        target.update(zip(pubkeys, targets, strict=True))
        self._check_same_keys(source)
        return self._with_attestation_columns(source, target, pubkeys, sources, targets)

    def with_batch_if_all_allowed(
        self, pubkeys: list[bytes], sources: list[int], targets: list[int]
    ) -> Entries | None:
        """The record with a whole batch taken in, if every item is allowed (the keys are
        distinct keys of the record and each item passes the rule); otherwise None.

        Takes the batch in first, then judges it from the whole columns before and after
        (`batch_safe_by_columns`): the columns after are needed anyway, and this costs
        less than looking every key up when the batch covers much of the record.
        """
        source, target = self.source.copy(), self.target.copy()
        source.update(zip(pubkeys, sources, strict=True))
        target.update(zip(pubkeys, targets, strict=True))
        if len(source) != len(self.source):  # a key that the record does not hold
            return None
        if not batch_safe_by_columns(
            last_sources=self.source.values(),
            sources=source.values(),
            last_targets=self.target.values(),
            targets=target.values(),
            items=len(pubkeys),
        ):
            return None
        return self._with_attestation_columns(source, target, pubkeys, sources, targets)

    def _with_attestation_columns(
        self,
        source: dict[bytes, int],
        target: dict[bytes, int],
        pubkeys: list[bytes],
        sources: list[int],
        targets: list[int],
    ) -> Entries:
        """The record with these new source and target dicts, which differ from its own
        only for `pubkeys` (now at `sources` and `targets`); re-renders the entries' ends."""
        pieces = self.pieces.copy()
        if self.is_big(len(pubkeys)):
            pieces[1::2] = render_entry_ends(list(source.values()), list(target.values()))
        else:
            position = self.position
            for pubkey, new_source, new_target in zip(pubkeys, sources, targets, strict=True):
                pieces[2 * position[pubkey] + 1] = render_entry_end(new_source, new_target)
        return Entries(self.slot, source, target, self.position, pieces)

    def _check_same_keys(self, changed: dict[bytes, Any]) -> None:
        # Only keys that the record holds may be changed (callers judge unknown keys
        # refused), or the columns would no longer line up; cheap, so checked anyway.
        if len(changed) != len(self.slot):
            raise RuntimeError("a change named a key that is not in the record")

    def pieces_of(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """The rendered entries of the named keys that the record holds, in the order first
        named, once each."""
        pieces, position = self.pieces, self.position
        wanted = [position[pubkey] for pubkey in dict.fromkeys(pubkeys) if pubkey in position]
        return [piece for index in wanted for piece in pieces[2 * index : 2 * index + 2]]


def judge_batch(
    entries: Entries, pubkeys: list[bytes], sources: list[int], targets: list[int]
) -> tuple[list[bool], Entries | None]:
    """The batch's verdicts, and the record with its allowed items taken in (None when
    nothing is allowed). Raises ValueError for a malformed argument.

    Arguments are checked where it matters: a key found in the record is valid by
    construction, numbers are checked before they are rendered, and refused items are
    checked so that a malformed argument still raises.
    """
    if entries.is_big(len(pubkeys)):
        # A big batch in which all is allowed (every key of the record once, say) is
        # judged from whole columns, which costs less than looking every key up. Its
        # numbers are checked first: they are about to be compared and rendered.
        check_uint64_column(sources, "source")
        check_uint64_column(targets, "target")
        updated = entries.with_batch_if_all_allowed(pubkeys, sources, targets)
        if updated is not None:
            return [True] * len(pubkeys), updated
    if len(set(pubkeys)) != len(pubkeys):
        check_columns(pubkeys, sources, targets)
        verdicts, changed, new_sources, new_targets = _judge_in_order(
            entries, pubkeys, sources, targets
        )
    else:
        verdicts = attestations_safe(
            sources=sources,
            last_sources=map(entries.source.get, pubkeys, repeat(_UNKNOWN)),
            targets=targets,
            last_targets=map(entries.target.get, pubkeys, repeat(_UNKNOWN)),
        )
        if all(verdicts):
            changed, new_sources, new_targets = pubkeys, sources, targets
        else:
            refused = list(map(not_, verdicts))
            check_columns(
                list(compress(pubkeys, refused)),
                list(compress(sources, refused)),
                list(compress(targets, refused)),
            )
            changed = list(compress(pubkeys, verdicts))
            new_sources = list(compress(sources, verdicts))
            new_targets = list(compress(targets, verdicts))
        check_uint64_column(new_sources, "source")
        check_uint64_column(new_targets, "target")
    if not changed:
        return verdicts, None
    return verdicts, entries.with_attestations(changed, new_sources, new_targets)


def check_columns(pubkeys: list[Any], sources: list[Any], targets: list[Any]) -> None:
    """Validate whole columns at once; fall back to item checks to name the bad one."""
    if pubkeys and (
        set(map(type, pubkeys)) != {bytes} or set(map(len, pubkeys)) != {PUBKEY_BYTES}
    ):
        for pubkey in pubkeys:
            check_pubkey(pubkey)
    check_uint64_column(sources, "source")
    check_uint64_column(targets, "target")


def _judge_in_order(
    entries: Entries, pubkeys: list[bytes], sources: list[int], targets: list[int]
) -> tuple[list[bool], list[bytes], list[int], list[int]]:
    """The batch rule one item at a time, for batches that name a key twice."""
    latest: dict[bytes, tuple[int, int]] = {}
    verdicts = []
    for pubkey, source, target in zip(pubkeys, sources, targets, strict=True):
        last = latest.get(pubkey)
        if last is None:
            last_source = entries.source.get(pubkey)
            if last_source is None:
                verdicts.append(False)
                continue
            last = (last_source, entries.target[pubkey])
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
        [latest[pubkey][0] for pubkey in changed],
        [latest[pubkey][1] for pubkey in changed],
    )

