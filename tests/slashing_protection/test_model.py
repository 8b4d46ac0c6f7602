"""The record against a brute-force model that keeps every message's full history.

Random sequences of block and attestation batches, imports, registrations and reopenings
are run on a real record and on the model. The model allows a block only above every slot
in the key's history and an attestation only when its source is at least, and its target
above, every one in the history; the record's verdicts must match exactly. Independently,
no two messages the record allowed may be slashable with each other (same slot for
blocks; double vote or surround for attestations, as in the consensus specification).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slashing_protection import SlashingProtection, Watermark
from tests.support.records import ROOT, entry, interchange, pubkey, verdicts_allowed

KEYS = [pubkey(n) for n in range(3)]
small = st.integers(0, 12)

operations = st.lists(
    st.one_of(
        st.tuples(st.just("block"), st.integers(0, 3), small),
        st.tuples(
            st.just("attest"),
            st.lists(st.tuples(st.integers(0, 3), small, small), min_size=1, max_size=5),
        ),
        st.tuples(
            st.just("import"),
            st.integers(0, 2),
            st.lists(small, max_size=3),
            st.lists(st.tuples(small, small), max_size=3),
        ),
        st.tuples(st.just("register"), st.integers(0, 2)),
        st.tuples(st.just("reopen")),
    ),
    max_size=25,
)


class FullHistory:
    """Every slot and (source, target) a key has signed or imported."""

    def __init__(self) -> None:
        self.blocks: dict[bytes, list[int]] = {}
        self.attestations: dict[bytes, list[tuple[int, int]]] = {}

    def register(self, key: bytes) -> None:
        self.blocks.setdefault(key, [])
        self.attestations.setdefault(key, [])

    def block(self, key: bytes, slot: int) -> bool:
        if key not in self.blocks or any(slot <= s for s in self.blocks[key]):
            return False
        self.blocks[key].append(slot)
        return True

    def attest(self, key: bytes, source: int, target: int) -> bool:
        history = self.attestations.get(key)
        if history is None or any(source < s or target <= t for s, t in history):
            return False
        history.append((source, target))
        return True

    def watermark(self, key: bytes) -> Watermark:
        slots = self.blocks[key]
        pairs = self.attestations[key]
        return Watermark(
            max(slots, default=None),
            max((s for s, _ in pairs), default=None),
            max((t for _, t in pairs), default=None),
        )


def _slashable(first: tuple[int, int], second: tuple[int, int]) -> bool:
    (s1, t1), (s2, t2) = first, second
    double_vote = t1 == t2
    surround = (s1 < s2 and t2 < t1) or (s2 < s1 and t1 < t2)
    return double_vote or surround


@settings(deadline=None, max_examples=200)
@given(operations)
def test_record_matches_full_history_model(ops: list[tuple[Any, ...]]) -> None:
    model = FullHistory()
    model.register(KEYS[0])
    signed_blocks: dict[bytes, list[int]] = {key: [] for key in KEYS}
    signed_atts: dict[bytes, list[tuple[int, int]]] = {key: [] for key in KEYS}
    with tempfile.TemporaryDirectory() as directory:
        record = SlashingProtection.open(Path(directory), ROOT, register=[KEYS[0]])
        try:
            for op in ops:
                kind = op[0]
                if kind == "block":
                    key = pubkey(op[1])  # index 3 is a key nobody registered
                    verdict = record.record_block(key, op[2]).allowed
                    assert verdict == model.block(key, op[2])
                    if verdict:
                        signed_blocks[key].append(op[2])
                elif kind == "attest":
                    items = [(pubkey(k), s, t) for k, s, t in op[1]]
                    verdicts = verdicts_allowed(record.record_attestations(items))
                    assert verdicts == [model.attest(*item) for item in items]
                    for (key, s, t), ok in zip(items, verdicts, strict=True):
                        if ok:
                            signed_atts[key].append((s, t))
                elif kind == "import":
                    key = KEYS[op[1]]
                    record.import_interchange(
                        interchange([entry(key, slots=tuple(op[2]), attestations=tuple(op[3]))])
                    )
                    model.register(key)
                    model.blocks[key].extend(op[2])
                    model.attestations[key].extend(op[3])
                elif kind == "register":
                    record.register([KEYS[op[1]]])
                    model.register(KEYS[op[1]])
                else:
                    record.close()
                    record = SlashingProtection.open(Path(directory), ROOT)
                for key in model.blocks:
                    assert record.watermark(key) == model.watermark(key)
        finally:
            record.close()
    for key in KEYS:
        assert len(set(signed_blocks[key])) == len(signed_blocks[key])
        pairs = signed_atts[key]
        for i, first in enumerate(pairs):
            for second in pairs[i + 1 :]:
                assert not _slashable(first, second), (key.hex()[:8], first, second)
