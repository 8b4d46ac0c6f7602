"""The identity rules, path by path, and that they act before any pairing.

Some libraries drop a pair holding the identity from a pairing product (and an
empty product is one), so an identity key, or keys P and -P that sum to the
identity, would verify under the identity signature if they ever reached the
pairing. Each test here runs under ``no_pairing`` (conftest): on arkworks the
backend's pairing is replaced by one that fails the test if called, on the
native backend its pairing counter must not move.
"""

from __future__ import annotations

from typing import Any

import pytest

import crypto_backend
from crypto_backend.backend import Backend
from crypto_backend.constants import G1_POINT_AT_INFINITY, G2_POINT_AT_INFINITY

MESSAGE = b"identity rules"
SECRET = 0x1234_5678_9ABC_DEF0_1234_5678_9ABC_DEF0
OTHER_SECRET = 0x0FED_CBA9_8765_4321


def negate(encoding: bytes) -> bytes:
    return bytes([encoding[0] ^ 0x20]) + encoding[1:]


@pytest.fixture
def keys(backend: Backend[Any, Any]) -> tuple[bytes, bytes, bytes]:
    p = crypto_backend.sk_to_pk(SECRET)
    return p, negate(p), crypto_backend.sk_to_pk(OTHER_SECRET)


def test_negating_a_key_flips_the_sort_bit_and_gives_a_valid_key(
    keys: tuple[bytes, bytes, bytes],
) -> None:
    p, minus_p, _ = keys
    assert crypto_backend.key_validate(minus_p)
    assert crypto_backend.sk_to_pk(crypto_backend.CURVE_ORDER - SECRET) == minus_p
    assert crypto_backend.eth_aggregate_pubkeys([p, minus_p]) == G1_POINT_AT_INFINITY


def test_key_validate_refuses_the_identity(backend: Backend[Any, Any]) -> None:
    assert not crypto_backend.key_validate(G1_POINT_AT_INFINITY)
    # It is a point of G1 all the same: the refusal is the wrapper's.
    assert backend.g1_is_identity(backend.decode_g1(G1_POINT_AT_INFINITY))


def test_verify_refuses_the_identity_key(no_pairing: None) -> None:
    assert not crypto_backend.verify(G1_POINT_AT_INFINITY, MESSAGE, G2_POINT_AT_INFINITY)


@pytest.mark.parametrize("function", ["fast_aggregate_verify", "eth_fast_aggregate_verify"])
def test_fast_aggregate_paths_refuse_identity_keys_and_identity_sums(
    function: str, no_pairing: None, keys: tuple[bytes, bytes, bytes]
) -> None:
    p, minus_p, q = keys
    verify = getattr(crypto_backend, function)
    signature = crypto_backend.sign(OTHER_SECRET, MESSAGE)
    assert not verify([G1_POINT_AT_INFINITY], MESSAGE, G2_POINT_AT_INFINITY)
    assert not verify([q, G1_POINT_AT_INFINITY], MESSAGE, signature)
    assert not verify([p, minus_p], MESSAGE, G2_POINT_AT_INFINITY)
    assert not verify([p, minus_p, p, minus_p], MESSAGE, G2_POINT_AT_INFINITY)


def test_only_eth_fast_aggregate_verify_accepts_no_keys_with_the_identity_signature(
    no_pairing: None,
) -> None:
    assert not crypto_backend.fast_aggregate_verify([], MESSAGE, G2_POINT_AT_INFINITY)
    assert crypto_backend.eth_fast_aggregate_verify([], MESSAGE, G2_POINT_AT_INFINITY)
    assert not crypto_backend.eth_fast_aggregate_verify([], MESSAGE, b"\x00" * 96)


def test_aggregate_verify_refuses_an_identity_key(
    no_pairing: None, keys: tuple[bytes, bytes, bytes]
) -> None:
    p, _, _ = keys
    assert not crypto_backend.aggregate_verify(
        [p, G1_POINT_AT_INFINITY], [MESSAGE, b"other"], crypto_backend.sign(SECRET, MESSAGE)
    )


def test_aggregate_verify_follows_the_specification_for_cancelling_keys(
    keys: tuple[bytes, bytes, bytes],
) -> None:
    # Each key is valid and the identity is the true aggregate of their two
    # signatures of one message; the specification (and py_ecc) answer True.
    p, minus_p, _ = keys
    assert crypto_backend.aggregate(
        [crypto_backend.sign(SECRET, MESSAGE),
         crypto_backend.sign(crypto_backend.CURVE_ORDER - SECRET, MESSAGE)]
    ) == G2_POINT_AT_INFINITY
    assert crypto_backend.aggregate_verify([p, minus_p], [MESSAGE, MESSAGE], G2_POINT_AT_INFINITY)


def test_signature_sets_refuse_identity_keys_and_identity_sums_before_pairing(
    no_pairing: None, keys: tuple[bytes, bytes, bytes], one_lane: None
) -> None:
    p, minus_p, q = keys
    good = ([q], MESSAGE, crypto_backend.sign(OTHER_SECRET, MESSAGE))
    for bad in (
        ([G1_POINT_AT_INFINITY], MESSAGE, G2_POINT_AT_INFINITY),
        ([q, G1_POINT_AT_INFINITY], MESSAGE, good[2]),
        ([p, minus_p], MESSAGE, G2_POINT_AT_INFINITY),
        ([], MESSAGE, G2_POINT_AT_INFINITY),
    ):
        assert not crypto_backend.verify_signature_sets([bad])
        assert not crypto_backend.verify_signature_sets([good, bad, good])
        assert not crypto_backend.verify_signature_sets([bad, *([good] * 20)])


def test_a_batch_whose_weighted_signature_sum_is_the_identity_is_refused(
    no_pairing: None, keys: tuple[bytes, bytes, bytes], one_lane: None
) -> None:
    p, _, q = keys
    sets = [([p], MESSAGE, G2_POINT_AT_INFINITY), ([q], b"other", G2_POINT_AT_INFINITY)]
    assert not crypto_backend.verify_signature_sets(sets)


def test_keys_that_cancel_are_fine_as_separate_sets(
    keys: tuple[bytes, bytes, bytes], one_lane: None
) -> None:
    p, minus_p, _ = keys
    sets = [
        ([p], MESSAGE, crypto_backend.sign(SECRET, MESSAGE)),
        ([minus_p], MESSAGE, crypto_backend.sign(crypto_backend.CURVE_ORDER - SECRET, MESSAGE)),
    ]
    assert crypto_backend.verify_signature_sets(sets)


def test_eth_aggregate_pubkeys_refuses_identity_inputs_but_returns_an_identity_sum(
    keys: tuple[bytes, bytes, bytes],
) -> None:
    p, minus_p, q = keys
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.eth_aggregate_pubkeys([q, G1_POINT_AT_INFINITY])
    assert crypto_backend.eth_aggregate_pubkeys([p, minus_p]) == G1_POINT_AT_INFINITY
    assert crypto_backend.eth_aggregate_pubkeys([p, minus_p, q]) == q


@pytest.mark.parametrize(
    "refused", [G1_POINT_AT_INFINITY, b"\x00" * 48, b"\xc0" + b"\x00" * 46 + b"\x01"]
)
def test_a_refused_key_in_any_position_is_false(
    backend: Backend[Any, Any], refused: bytes, one_lane: None
) -> None:
    secrets = [11, 12, 13, 14, 15]
    keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    signature = crypto_backend.aggregate(crypto_backend.sign_many(secrets, MESSAGE))
    assert crypto_backend.fast_aggregate_verify(keys, MESSAGE, signature)
    for position in range(len(keys) + 1):
        with_refused = [*keys[:position], refused, *keys[position:]]
        assert not crypto_backend.fast_aggregate_verify(with_refused, MESSAGE, signature)
        assert not crypto_backend.verify_signature_sets(
            [(keys[:1], MESSAGE, crypto_backend.sign(11, MESSAGE)),
             (with_refused, MESSAGE, signature)]
        )
    with pytest.raises(crypto_backend.BlsError):
        crypto_backend.eth_aggregate_pubkeys([*keys, refused])
