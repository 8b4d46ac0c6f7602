"""Interop keys against published pairs.

The pairs are the eth2.0-pm "mocked start" test vectors (interop/mocked_start/
keygen_10_validators.yaml), as transcribed in Nethermind's consensus client
tests (NethermindEth/nethermind, commit 1fa078c1, src/Nethermind/
Nethermind.BeaconNode.Eth1Bridge.Test/MockedStart/QuickStartTests.cs); Nimbus,
Lodestar and Lighthouse test the same derivation against the same file.
"""

from __future__ import annotations

import pytest

from validator.consensus.interop import (
    CURVE_ORDER,
    interop_keypair,
    interop_secret_key,
    interop_secret_keys,
)

PUBLISHED = [
    (
        0,
        "25295f0d1d592a90b333e26e85149708208e9f8e8bc18f6c77bd62f8ad7a6866",
        "a99a76ed7796f7be22d5b7e85deeb7c5677e88e511e0b337618f8c4eb61349b4bf2d153f649f7b53359fe8b94a38e44c",
    ),
    (
        1,
        "51d0b65185db6989ab0b560d6deed19c7ead0e24b9b6372cbecb1f26bdfad000",
        "b89bebc699769726a318c8e9971bd3171297c61aea4a6578a7a4f94b547dcba5bac16a89108b6b6a1fe3695d1a874a0b",
    ),
    (
        2,
        "315ed405fafe339603932eebe8dbfd650ce5dafa561f6928664c75db85f97857",
        "a3a32b0f8b4ddb83f1a0a853d81dd725dfe577d4f4c3db8ece52ce2b026eca84815c1a7e8e92a4de3d755733bf7e4a9b",
    ),
    (
        5,
        "055794614bc85ed5436c1f5cab586aab6ca84835788621091f4f3b813761e7a8",
        "ab0bdda0f85f842f431beaccf1250bf1fd7ba51b4100fd64364b6401fda85bb0069b3e715b58819684e7fc0b10a72a34",
    ),
    (
        9,
        "2b3b88a041168a1c4cd04bdd8de7964fd35238f95442dc678514f9dadb81ec34",
        "9893413c00283a3f9ed9fd9845dda1cea38228d22567f9541dccc357e54a2d6a6e204103c92564cbc05f4905ac7c493a",
    ),
]


@pytest.mark.parametrize(("index", "secret_hex", "pubkey_hex"), PUBLISHED)
def test_published_interop_pairs(index: int, secret_hex: str, pubkey_hex: str) -> None:
    assert interop_secret_key(index) == int(secret_hex, 16)
    secret, pubkey = interop_keypair(index)
    assert secret == int(secret_hex, 16)
    assert pubkey.hex() == pubkey_hex


def test_short_key_keeps_its_value() -> None:
    # Index 63's key has a leading zero byte (same test file, GeneratePrivateKey63).
    key = interop_secret_key(63)
    assert key.to_bytes(32, "big").hex() == (
        "006edac0cf64bfd91bc691c4165efe1eb5cf80672ac06d2096f72a48a5dad4bd"
    )


def test_range_and_bounds() -> None:
    keys = interop_secret_keys(4, start=1)
    assert keys == [interop_secret_key(index) for index in (1, 2, 3, 4)]
    assert len(set(interop_secret_keys(200))) == 200
    assert all(0 < key < CURVE_ORDER for key in interop_secret_keys(200))
    with pytest.raises(ValueError, match="non-negative"):
        interop_secret_key(-1)
