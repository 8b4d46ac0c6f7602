"""Write minimal_roots.json: minimal-preset known answers, roots computed by hand.

No official minimal-preset ``ssz_static`` cases are available to this project (see
../shared/vectors/ssz/README.md: mainnet only), so these roots come from the hand
merkleization of tests/support/roots_by_hand.py, which shares no code with
remerkleable or validator.consensus.ssz and reproduces every official mainnet root of
the same containers (tests/validator/consensus/test_ssz_minimal_preset.py checks both).
Values are random but fixed by the seed; run from the repository root:

    .venv/bin/python vectors/ssz/make_minimal_roots.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.roots_by_hand import (  # noqa: E402
    MINIMAL_BY_HAND,
    Shape,
    bits_to_bytes,
    root_by_hand,
    shapes_by_hand,
)

SEED = 20261201
CASES = {
    "SyncAggregate": 2,
    "SyncCommitteeContribution": 2,
    "ContributionAndProof": 3,
    "electra.Attestation": 2,
    "electra.AggregateAndProof": 3,
    "deneb.ExecutionPayload": 2,
    "deneb.BeaconBlock": 1,
    "electra.BeaconBlock": 2,
}
# Few items per list keeps the file small; every limit still shapes the root.
MAX_ITEMS = 2
MAX_BITLIST_BITS = 40
MAX_BYTELIST_BYTES = 48


def random_value(shape: Shape, rng: random.Random) -> Any:
    """A random value of ``shape`` in the Beacon API JSON form."""
    kind = shape[0]
    if kind == "uint":
        return str(rng.getrandbits(8 * shape[1]))
    if kind == "bytes":
        return "0x" + rng.randbytes(shape[1]).hex()
    if kind == "bytelist":
        return "0x" + rng.randbytes(rng.randint(0, min(shape[1], MAX_BYTELIST_BYTES))).hex()
    if kind == "bitvector":
        bits = [rng.random() < 0.5 for _ in range(shape[1])]
        return "0x" + bits_to_bytes(bits).hex()
    if kind == "bitlist":
        bits = [rng.random() < 0.5 for _ in range(rng.randint(0, min(shape[1], MAX_BITLIST_BITS)))]
        return "0x" + bits_to_bytes([*bits, True]).hex()  # with the delimiter bit
    if kind == "list":
        count = rng.randint(0, min(shape[2], MAX_ITEMS))
        return [random_value(shape[1], rng) for _ in range(count)]
    if kind == "vector":
        return [random_value(shape[1], rng) for _ in range(shape[2])]
    if kind == "container":
        return {name: random_value(field, rng) for name, field in shape[1]}
    raise ValueError(kind)


def build_document() -> dict[str, Any]:
    rng = random.Random(SEED)
    shapes = shapes_by_hand(MINIMAL_BY_HAND)
    cases = []
    for name, count in CASES.items():
        for number in range(count):
            value = random_value(shapes[name], rng)
            root = root_by_hand(shapes[name], value)
            cases.append({"type": name, "case": number, "root": "0x" + root.hex(), "value": value})
    return {
        "preset": "minimal",
        "preset_values": MINIMAL_BY_HAND,
        "source": "roots by hand (tests/support/roots_by_hand.py), random values, seed "
        f"{SEED}; written by vectors/ssz/make_minimal_roots.py",
        "cases": cases,
    }


def main() -> None:
    document = build_document()
    target = Path(__file__).with_name("minimal_roots.json")
    target.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(document['cases'])} cases to {target}")


if __name__ == "__main__":
    main()
