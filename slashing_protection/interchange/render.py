"""Rendering the record: the minimal interchange, in one layout, in pieces per entry.

The record is always written in one layout: compact JSON, one entry per line, e.g.

  {"metadata":{"interchange_format_version":"5","genesis_validators_root":"0x…"},"data":[
  {"pubkey":"0x…","signed_blocks":[{"slot":"5"}],"signed_attestations":[{"source_epoch":
  "0","target_epoch":"2"}]},
  {"pubkey":"0x…","signed_blocks":[],"signed_attestations":[]}
  ]}

(the second entry is on one line; broken here only to fit). Each entry is rendered in two
pieces: its start, up to the attestation list, which only a block or an import changes,
and its end, the attestation and the separator before the next entry, which every
recorded attestation changes.
"""

from __future__ import annotations

import io
from itertools import compress, repeat
from operator import eq

import orjson

from slashing_protection.interchange.model import FORMAT_VERSION
from slashing_protection.rule import NEVER

_ATTESTED_END = b'"}]}'  # closes the attestation, its list and the entry
_UNATTESTED_END = b"]}"  # closes an empty attestation list and the entry
_SOURCE_OPEN = b'{"source_epoch":"'
_TARGET_OPEN = b'","target_epoch":"'

RENDER_FOOTER = b"\n]}\n"
RENDER_SEPARATOR = b",\n"


def render_header(genesis_validators_root: bytes) -> bytes:
    return (
        b'{"metadata":{"interchange_format_version":"%s","genesis_validators_root":"0x%s"},'
        b'"data":[\n' % (FORMAT_VERSION.encode(), genesis_validators_root.hex().encode())
    )


def render_entry_start(pubkey: bytes, slot: int) -> bytes:
    """A key's entry up to its attestation list (slot NEVER: no block signed)."""
    block = b"" if slot == NEVER else b'{"slot":"%d"}' % slot
    return b'{"pubkey":"0x%s","signed_blocks":[%s],"signed_attestations":[' % (
        pubkey.hex().encode(),
        block,
    )


def render_entry_end(source: int, target: int) -> bytes:
    """The rest of a key's entry and the separator (source NEVER: never attested)."""
    if source == NEVER:
        return _UNATTESTED_END + RENDER_SEPARATOR
    return b"%s%d%s%d%s" % (
        _SOURCE_OPEN,
        source,
        _TARGET_OPEN,
        target,
        _ATTESTED_END + RENDER_SEPARATOR,
    )


# Marks the end of each (source, target) pair in the column rendering below. It is a value
# no source or target takes (they are uint64 or NEVER), so its text cannot be mistaken.
_PAIR_END = -2


def render_entry_ends(sources: list[int], targets: list[int]) -> list[bytes]:
    """`render_entry_end` for whole columns at once (a 10,000-key batch).

    orjson renders all the numbers in one call as "[s,t,-2,s,t,-2,…]"; three replacements
    turn the separators into the text around the numbers, and one split cuts the entries
    apart, so that no per-key work runs in Python except for keys that never attested.
    """
    count = len(sources)
    if count == 0:
        return []
    first_source, first_target = sources[0], targets[0]
    if sources.count(first_source) == count and targets.count(first_target) == count:
        # Every key at the same source and target, as after a slot in which the whole
        # record attested (one checkpoint pair per epoch): one rendering serves all.
        return [render_entry_end(first_source, first_target)] * count
    numbers = [_PAIR_END] * (3 * count)
    numbers[0::3] = sources
    numbers[1::3] = targets
    text = orjson.dumps(numbers)[1 : -len(b",-2]")]  # b"s,t,-2,s,t,-2,…,s,t"
    between_entries = _ATTESTED_END + RENDER_SEPARATOR + b"\0" + _SOURCE_OPEN
    ends = (
        text.replace(b",-2,", b"\0")
        .replace(b",", _TARGET_OPEN)
        .replace(b"\0", between_entries)
        .split(b"\0")
    )
    ends[0] = _SOURCE_OPEN + ends[0]
    ends[-1] += _ATTESTED_END + RENDER_SEPARATOR
    if NEVER in sources:
        for index in compress(range(count), map(eq, sources, repeat(NEVER))):
            ends[index] = _UNATTESTED_END + RENDER_SEPARATOR
    return ends


def write_minimal(out: io.BytesIO, genesis_validators_root: bytes, pieces: list[bytes]) -> None:
    """Write, at out's position, the minimal interchange of entries rendered as pieces
    (`render_entry_start`, `render_entry_end`, …): header, entries, footer."""
    out.write(render_header(genesis_validators_root))
    out.writelines(pieces)
    if pieces:  # the last entry is followed by the footer, not a separator
        out.seek(-len(RENDER_SEPARATOR), io.SEEK_CUR)
    out.write(RENDER_FOOTER)


def render_minimal(genesis_validators_root: bytes, pieces: list[bytes]) -> bytes:
    """`write_minimal` as bytes."""
    out = io.BytesIO()
    write_minimal(out, genesis_validators_root, pieces)
    return out.getvalue()
