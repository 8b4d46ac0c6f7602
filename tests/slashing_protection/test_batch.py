"""Batches judged from whole columns agree with the rule applied one item at a time.

A batch that names much of the record is first taken in and then judged by comparing the
record's columns before and after it (`rule.batch_safe_by_columns`); anything else is
judged key by key. Both must give exactly the verdicts of the rule applied in order, a key
named twice being judged against its own earlier verdict.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from slashing_protection import SlashingProtection, Watermark
from slashing_protection.rule import NEVER, batch_safe_by_columns, broken_attestation_rule
from tests.support.records import ROOT, entry, interchange, pubkey, verdicts_allowed

_epoch = st.integers(0, 6)
_last = st.one_of(st.just((NEVER, NEVER)), st.tuples(_epoch, _epoch))


@settings(deadline=None, max_examples=500)
@given(
    st.lists(_last, min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 7), _epoch, _epoch), min_size=1, max_size=10),
)
def test_column_judgment_is_the_rule_for_distinct_keys_and_refuses_repeats(
    lasts: list[tuple[int, int]], items: list[tuple[int, int, int]]
) -> None:
    items = [(key, source, target) for key, source, target in items if key < len(lasts)]
    last_source = {key: source for key, (source, _) in enumerate(lasts)}
    last_target = {key: target for key, (_, target) in enumerate(lasts)}
    source, target = last_source.copy(), last_target.copy()
    source.update((key, s) for key, s, _ in items)
    target.update((key, t) for key, _, t in items)
    keys = [key for key, _, _ in items]
    expected = len(set(keys)) == len(keys) and all(
        (
            broken_attestation_rule(
                last_source=last_source[key], last_target=last_target[key], source=s, target=t
            )
            is None
        )
        for key, s, t in items
    )
    judged = batch_safe_by_columns(
        last_sources=last_source.values(),
        sources=source.values(),
        last_targets=last_target.values(),
        targets=target.values(),
        items=len(items),
    )
    assert judged == expected


def _in_order(
    marks: dict[bytes, tuple[int, int]], items: list[tuple[bytes, int, int]]
) -> list[bool]:
    """The rule applied item by item; `marks` (source, target per key) is updated."""
    verdicts = []
    for key, source, target in items:
        last = marks.get(key)
        allowed = last is not None and (
            broken_attestation_rule(
                last_source=last[0], last_target=last[1], source=source, target=target
            )
            is None
        )
        if allowed:
            marks[key] = (source, target)
        verdicts.append(allowed)
    return verdicts


@settings(deadline=None, max_examples=150)
@given(
    st.lists(st.one_of(st.none(), st.tuples(_epoch, _epoch)), min_size=1, max_size=12),
    st.lists(
        st.lists(st.tuples(st.integers(0, 13), _epoch, _epoch), min_size=1, max_size=16),
        min_size=1,
        max_size=4,
    ),
)
def test_batches_of_any_size_get_the_verdicts_of_the_rule_in_order(
    history: list[tuple[int, int] | None], batches: list[list[tuple[int, int, int]]]
) -> None:
    """Records of up to 12 keys, batches of 1 to 16 items (small and big), keys 12 and 13
    unknown, repeats allowed; the verdicts and what the record holds must match."""
    keys = [pubkey(n) for n in range(len(history))]
    known = list(zip(keys, history, strict=True))
    marks = {key: (NEVER, NEVER) if att is None else att for key, att in known}
    with tempfile.TemporaryDirectory() as name:
        with SlashingProtection.open(Path(name), ROOT, register=keys) as record:
            record.import_interchange(
                interchange([entry(key, attestations=(att,)) for key, att in known if att])
            )
            for batch in batches:
                items = [(pubkey(n), source, target) for n, source, target in batch]
                verdicts = record.record_attestations(items)
                assert verdicts_allowed(verdicts) == _in_order(marks, items)
                for key, (source, target) in marks.items():
                    public = (None, None) if source == NEVER else (source, target)
                    assert record.watermark(key) == Watermark(None, *public)
