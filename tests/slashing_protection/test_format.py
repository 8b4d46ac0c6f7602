"""The record's bytes on disk: always the same layout, whatever path rendered them.

Entries are rendered one key at a time (`render_entry_start`, `render_entry_end`), or, for
big batches, whole columns at a time (`render_entry_ends`), with a special case for keys
that have never attested. These tests hold every path to an independent rendering built
with the standard `json` module, on random states and after random sequences of operations
(batches small and big against records small and large), and to a document written by the
implementation that kept one rendered fragment per key: the layout is part of the record's
contract, byte for byte.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slashing_protection import SlashingProtection, Watermark
from slashing_protection.interchange import (
    render_entry_end,
    render_entry_ends,
    render_entry_start,
    render_minimal,
)
from slashing_protection.rule import NEVER, UINT64_MAX
from tests.support.records import ROOT, entry, interchange, pubkey, record_bytes, verdicts_allowed

A, B, C, D = pubkey(1), pubkey(2), pubkey(3), pubkey(4)


def reference_document(root: bytes, marks: list[tuple[bytes, Watermark]]) -> bytes:
    """The minimal interchange as the record writes it, built independently of the code."""

    def compact(value: object) -> str:
        return json.dumps(value, separators=(",", ":"))

    entries = [
        compact(
            {
                "pubkey": "0x" + key.hex(),
                "signed_blocks": [] if mark.slot is None else [{"slot": str(mark.slot)}],
                "signed_attestations": []
                if mark.source is None
                else [{"source_epoch": str(mark.source), "target_epoch": str(mark.target)}],
            }
        )
        for key, mark in marks
    ]
    metadata = compact(
        {"interchange_format_version": "5", "genesis_validators_root": "0x" + root.hex()}
    )
    data = ",\n".join(entries)
    return f'{{"metadata":{metadata},"data":[\n{data}\n]}}\n'.encode()


def test_a_document_written_by_the_fragment_implementation_is_reproduced(
    tmp_path: Path,
) -> None:
    # Written by the implementation before the column rendering (commit 4aa544b) for the
    # operations below: a block and an attestation, a registered key that never signed, the
    # largest uint64, and a key with a block at slot 0 and no attestation; the export names
    # keys in another order than the record's.
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B, C]) as record:
        assert record.record_block(A, 5).allowed
        highest = [(A, 0, 2), (C, UINT64_MAX, UINT64_MAX)]
        assert verdicts_allowed(record.record_attestations(highest)) == [True] * 2
        record.import_interchange(interchange([entry(D, slots=(0,))]))
        exported = record.export_interchange([D, C])
    head = (
        b'{"metadata":{"interchange_format_version":"5","genesis_validators_root":'
        b'"0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"},"data":[\n'
    )
    a = (
        b'{"pubkey":"0x30f61d4b94e1d74e6a751248ff2007f715a16cd214365fcef3e5751664a568475eccd842'
        b'd1396aa5cfa83f5b9d20c586","signed_blocks":[{"slot":"5"}],"signed_attestations":'
        b'[{"source_epoch":"0","target_epoch":"2"}]}'
    )
    b = (
        b'{"pubkey":"0x16c3abe08229a2818138b0992078f647e3c9a0eb281ddb95933c7b2ab88336235cc91546'
        b'29143813aa02ddf1525c667b","signed_blocks":[],"signed_attestations":[]}'
    )
    c = (
        b'{"pubkey":"0x45a4efa5c0261ed746ee7bd2e4a86fa11c0e9ad103d0ae8c47e5d28422bc1513769c1b70'
        b'0e6880bd087dbc826647a501","signed_blocks":[],"signed_attestations":'
        b'[{"source_epoch":"18446744073709551615","target_epoch":"18446744073709551615"}]}'
    )
    d = (
        b'{"pubkey":"0x79378dedd86a41cc16e0ff5fa7c48659ae2f6e9d8f2e84d92ec3fea06535aff99d82b0e5'
        b'c984c9dcb3e023e058dd1806","signed_blocks":[{"slot":"0"}],"signed_attestations":[]}'
    )
    assert record_bytes(tmp_path) == head + b",\n".join([a, b, c, d]) + b"\n]}\n"
    assert exported == head + b",\n".join([d, c]) + b"\n]}\n"


def test_an_empty_record_renders_as_an_empty_data_array() -> None:
    assert render_minimal(ROOT, []) == reference_document(ROOT, [])


_epoch = st.one_of(st.integers(0, 40), st.integers(0, UINT64_MAX), st.just(UINT64_MAX))
_mark = st.builds(
    Watermark,
    st.one_of(st.none(), _epoch),
    st.none(),
    st.none(),
) | st.tuples(st.one_of(st.none(), _epoch), _epoch, _epoch).map(lambda t: Watermark(*t))


@settings(deadline=None, max_examples=300)
@given(st.lists(_mark, max_size=12))
def test_keys_and_columns_render_any_state_as_the_reference_does(marks: list[Watermark]) -> None:
    keyed = [(pubkey(n), mark) for n, mark in enumerate(marks)]

    def internal(value: int | None) -> int:
        return NEVER if value is None else value

    starts = [render_entry_start(key, internal(mark.slot)) for key, mark in keyed]
    sources = [internal(mark.source) for _, mark in keyed]
    targets = [internal(mark.target) for _, mark in keyed]
    ends = list(map(render_entry_end, sources, targets))
    assert render_entry_ends(sources, targets) == ends
    pieces = [piece for entry in zip(starts, ends, strict=True) for piece in entry]
    assert render_minimal(ROOT, pieces) == reference_document(ROOT, keyed)


@pytest.mark.parametrize(
    ("source", "target"), [(NEVER, NEVER), (0, 0), (7, 9), (UINT64_MAX, UINT64_MAX)]
)
@pytest.mark.parametrize("count", [1, 2, 1000])
def test_columns_that_hold_one_pair_render_as_each_key_alone_would(
    source: int, target: int, count: int
) -> None:
    expected = [render_entry_end(source, target)] * count
    assert render_entry_ends([source] * count, [target] * count) == expected
    # One key differing anywhere, in its source, its target or both, takes the general
    # path and still renders each key.
    for index in (0, count - 1):
        for other_source, other_target in ((3, target), (source, 5), (3, 5)):
            sources, targets = [source] * count, [target] * count
            sources[index], targets[index] = other_source, other_target
            changed = list(expected)
            changed[index] = render_entry_end(other_source, other_target)
            assert render_entry_ends(sources, targets) == changed


def _operations(pool: int) -> st.SearchStrategy[list[tuple[object, ...]]]:
    """Operations on keys 0 .. pool (key `pool` is not registered at first)."""
    key = st.integers(0, pool)
    return st.lists(
        st.one_of(
            st.tuples(st.just("block"), key, _epoch),
            st.tuples(
                st.just("attest"),
                st.lists(st.tuples(key, _epoch, _epoch), min_size=1, max_size=pool + 1),
            ),
            # A batch that is allowed by construction (big ones take the column paths).
            st.tuples(st.just("advance"), st.lists(key, min_size=1, max_size=pool + 1)),
            st.tuples(
                st.just("import"),
                key,
                st.lists(_epoch, max_size=2),
                st.lists(st.tuples(_epoch, _epoch), max_size=2),
            ),
            st.tuples(st.just("register"), st.lists(key, max_size=pool)),
            st.tuples(st.just("reopen")),
        ),
        max_size=20,
    )


def _next_attestation(record: SlashingProtection, key: bytes) -> tuple[bytes, int, int]:
    mark = record.watermark(key)
    if mark is None or mark.target is None or mark.source is None:
        return key, 0, 0
    return key, mark.source, min(mark.target + 1, UINT64_MAX)


_scenarios = st.sampled_from([6, 40]).flatmap(
    lambda pool: st.tuples(
        st.just(pool),
        st.lists(st.integers(0, pool - 1), min_size=1, max_size=pool),
        _operations(pool),
    )
)


@settings(deadline=None, max_examples=200)
@given(_scenarios)
def test_the_file_and_exports_match_the_reference_after_any_operations(
    scenario: tuple[int, list[int], list[tuple[object, ...]]],
) -> None:
    """Every write must leave exactly the reference bytes, and exports must agree."""
    pool, first, operations = scenario
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        record = SlashingProtection.open(directory, ROOT, register=[pubkey(n) for n in first])
        try:
            for operation in operations:
                kind = operation[0]
                if kind == "block":
                    record.record_block(pubkey(operation[1]), operation[2])  # type: ignore[arg-type]
                elif kind == "attest":
                    items = [(pubkey(k), s, t) for k, s, t in operation[1]]  # type: ignore[attr-defined]
                    record.record_attestations(items)
                elif kind == "advance":
                    keys = dict.fromkeys(pubkey(k) for k in operation[1])  # type: ignore[attr-defined]
                    record.record_attestations([_next_attestation(record, key) for key in keys])
                elif kind == "import":
                    _, key, slots, attestations = operation
                    record.import_interchange(
                        interchange(
                            [entry(pubkey(key), tuple(slots), tuple(attestations))]  # type: ignore[arg-type]
                        )
                    )
                elif kind == "register":
                    record.register([pubkey(n) for n in operation[1]])  # type: ignore[attr-defined]
                else:
                    record.close()
                    record = SlashingProtection.open(directory, ROOT)
                keys = record.pubkeys()
                marks = [(key, record.watermark(key)) for key in keys]
                expected = reference_document(ROOT, marks)  # type: ignore[arg-type]
                assert record_bytes(directory) == expected
                assert record.export_interchange() == expected
                named = [pubkey(1000), *reversed(keys[::2])]  # key 1000 is never in play
                assert record.export_interchange(named) == reference_document(
                    ROOT,
                    [(key, record.watermark(key)) for key in reversed(keys[::2])],  # type: ignore[misc]
                )
        finally:
            record.close()


def test_a_written_document_never_changes_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes render into one reused buffer; a document handed out must stay as written."""
    import slashing_protection.record as record_module

    real_write = record_module.write_durably
    kept: list[tuple[bytes, bytes]] = []

    def keeping_write(path: Path, data: bytes, **options: Any) -> None:
        real_write(path, data, **options)
        kept.append((data, bytes(data)))  # the object handed out, and a copy of it now

    monkeypatch.setattr(record_module, "write_durably", keeping_write)
    with SlashingProtection.open(tmp_path, ROOT, register=[A, B]) as record:
        for epoch in range(5):
            items = [(A, epoch, epoch + 1), (B, epoch, epoch + 1)]
            assert verdicts_allowed(record.record_attestations(items)) == [True, True]
            assert record.record_block(A, epoch).allowed
        record.register([C])
        assert verdicts_allowed(record.record_attestations([(C, 100, 1000)])) == [True]
        final = record_bytes(tmp_path)
    assert len(kept) == 13
    assert all(data == copy for data, copy in kept)
    assert kept[-1][0] == final
