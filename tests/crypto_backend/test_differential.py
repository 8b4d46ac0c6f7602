"""blst against arkworks (and py_ecc on a small sample, pyblst on the decodings), on
live seeded inputs.

Any disagreement between two independent implementations behind the same
wrapper is a bug in one of them or in the wrapper.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from py_ecc.bls import G2ProofOfPossession as Oracle
from py_ecc.bls.g2_primitives import is_inf, pubkey_to_G1, signature_to_G2, subgroup_check
from pyblst import BlstP1Element, BlstP2Element

import crypto_backend
from crypto_backend import selection
from crypto_backend.constants import CURVE_ORDER
from crypto_backend.errors import BlsError

T = TypeVar("T")
FIELD_MODULUS = int(
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
    16,
)
BLST = selection.backend_named("blst")
ARKWORKS = selection.backend_named("arkworks")


def on_each_backend(call: Callable[[], T]) -> dict[str, T | type[BaseException]]:
    """The call's result (or exception type) under each backend, via the public ``use``."""
    previous = crypto_backend.backend_name()
    results: dict[str, T | type[BaseException]] = {}
    try:
        for name in selection.BACKEND_NAMES:
            crypto_backend.use(name)
            try:
                results[name] = call()
            except (BlsError, ValueError) as error:
                results[name] = type(error)
    finally:
        crypto_backend.use(previous)
    return results


def agree(call: Callable[[], T]) -> T | type[BaseException]:
    results = on_each_backend(call)
    values = list(results.values())
    assert all(value == values[0] for value in values), results
    return values[0]


def secret(rng: random.Random) -> int:
    return rng.randrange(1, CURVE_ORDER)


def negate(encoding: bytes) -> bytes:
    return bytes([encoding[0] ^ 0x20]) + encoding[1:]


# -- decoding ------------------------------------------------------------------


def _mutations(valid: list[bytes], length: int, rng: random.Random) -> list[tuple[str, bytes]]:
    zeros = b"\x00" * (length - 1)
    cases: list[tuple[str, bytes]] = [
        ("identity", b"\xc0" + zeros),
        ("identity_last_bit", b"\xc0" + zeros[:-1] + b"\x01"),
        ("identity_sort_flag", b"\xe0" + zeros),
        ("identity_no_compression_flag", b"\x40" + zeros),
        ("zero", b"\x00" * length),
    ]
    limbs = length // 48
    for limb in range(limbs):
        for offset in (0, 1, rng.randrange(2**381 - FIELD_MODULUS)):
            raw = bytearray((1).to_bytes(48, "big") * limbs)
            raw[limb * 48:(limb + 1) * 48] = (FIELD_MODULUS + offset).to_bytes(48, "big")
            raw[0] |= 0x80
            cases.append((f"x{limb}_past_modulus_{offset}", bytes(raw)))
    for index, encoding in enumerate(valid):
        cases.append((f"valid_{index}", encoding))
        cases.append((f"negated_{index}", negate(encoding)))
        for flag in (0x80, 0x40, 0x20):
            cases.append((f"flag_{flag:x}_flipped_{index}", bytes([encoding[0] ^ flag]) +
                          encoding[1:]))
        for trial in range(6):
            # A flipped bit in x: mostly off the curve, sometimes on it and off the subgroup.
            raw = bytearray(encoding)
            bit = rng.randrange(3, length * 8)
            raw[bit // 8] ^= 0x80 >> (bit % 8)
            cases.append((f"bit_{bit}_flipped_{index}_{trial}", bytes(raw)))
    for index in range(20):
        raw = bytearray(rng.randbytes(length))
        raw[0] = (raw[0] & 0x1F) | 0x80
        cases.append((f"random_x_{index}", bytes(raw)))
    for index in range(5):
        cases.append((f"random_{index}", rng.randbytes(length)))
    return cases


def _decode_verdict(backend: Any, group: str, encoding: bytes) -> bytes | None:
    decode = backend.decode_g1 if group == "G1" else backend.decode_g2
    encode = backend.encode_g1 if group == "G1" else backend.encode_g2
    try:
        return bytes(encode(decode(encoding)))
    except BlsError:
        return None


def _decoding_cases(group: str) -> list[tuple[str, bytes]]:
    rng = random.Random(f"differential decoding {group}")
    secrets = [secret(rng) for _ in range(8)]
    if group == "G1":
        valid = [BLST.encode_g1(BLST.g1_generator_times(sk)) for sk in secrets]
        return _mutations(valid, 48, rng)
    hashed = BLST.hash_to_g2(b"differential", crypto_backend.DST)
    valid = [BLST.encode_g2(BLST.g2_times(hashed, sk)) for sk in secrets]
    return _mutations(valid, 96, rng)


@pytest.mark.parametrize("group", ["G1", "G2"])
def test_decoding_agrees(group: str) -> None:
    cases = _decoding_cases(group)
    accepted = 0
    for name, encoding in cases:
        blst_result = _decode_verdict(BLST, group, encoding)
        arkworks_result = _decode_verdict(ARKWORKS, group, encoding)
        assert blst_result == arkworks_result, name
        # Whatever is accepted re-encodes to exactly the input.
        assert blst_result in (None, encoding), name
        # pyblst (the C library through another wrapper) agrees with the native core.
        assert _pyblst_verdict(group, encoding) == blst_result, name
        if group == "G1":
            is_key = blst_result is not None and encoding != crypto_backend.G1_POINT_AT_INFINITY
            assert (BLST.pubkey(encoding) is not None) is is_key, name
            assert (ARKWORKS.pubkey(encoding) is not None) is is_key, name
        accepted += blst_result is not None
    # The sample holds both verdicts, in good numbers.
    assert 10 <= accepted <= len(cases) - 50


def _pyblst_verdict(group: str, encoding: bytes) -> bytes | None:
    element = BlstP1Element if group == "G1" else BlstP2Element
    try:
        encoded = bytes(element.uncompress(encoding).compress())
    except ValueError:
        return None
    return encoded if encoded == encoding else None


def _oracle_verdict(group: str, encoding: bytes) -> bytes | None:
    decode = pubkey_to_G1 if group == "G1" else signature_to_G2
    try:
        point = decode(encoding)
    except (ValueError, AssertionError):
        return None
    return encoding if subgroup_check(point) else None


@pytest.mark.parametrize("group", ["G1", "G2"])
def test_decoding_agrees_with_py_ecc_on_a_sample(group: str) -> None:
    cases = random.Random(f"py_ecc sample {group}").sample(_decoding_cases(group), 24)
    for name, encoding in cases:
        expected = _oracle_verdict(group, encoding)
        assert _decode_verdict(BLST, group, encoding) == expected, name
        assert _decode_verdict(ARKWORKS, group, encoding) == expected, name
        if group == "G1":
            key_ok = expected is not None and not is_inf(pubkey_to_G1(encoding))
            assert (BLST.pubkey(encoding) is not None) is key_ok, name


# -- signing and aggregation ---------------------------------------------------


def test_keys_signatures_and_sums_agree_and_match_py_ecc() -> None:
    rng = random.Random("differential signing")
    secrets = [secret(rng) for _ in range(6)]
    message = rng.randbytes(32)
    pubkeys = agree(lambda: [crypto_backend.sk_to_pk(sk) for sk in secrets])
    signatures = agree(lambda: crypto_backend.sign_many(secrets, message))
    assert isinstance(pubkeys, list) and isinstance(signatures, list)
    assert agree(lambda: [crypto_backend.sign(sk, message) for sk in secrets]) == signatures
    aggregate = agree(lambda: crypto_backend.aggregate(signatures))
    aggregate_key = agree(lambda: crypto_backend.eth_aggregate_pubkeys(pubkeys))
    # py_ecc on two of them (it needs ~0.15 s per signature).
    for sk in secrets[:2]:
        assert Oracle.SkToPk(sk) == pubkeys[secrets.index(sk)]
        assert Oracle.Sign(sk, message) == signatures[secrets.index(sk)]
    assert Oracle.Aggregate(signatures) == aggregate
    assert Oracle._AggregatePKs(pubkeys) == aggregate_key
    assert Oracle.FastAggregateVerify(pubkeys, message, aggregate)


def test_keys_that_cancel_sum_to_the_identity_on_both_backends() -> None:
    key = crypto_backend.sk_to_pk(random.Random("cancel").randrange(1, CURVE_ORDER))
    assert agree(lambda: crypto_backend.eth_aggregate_pubkeys([key, negate(key)])) == (
        crypto_backend.G1_POINT_AT_INFINITY
    )


@pytest.mark.parametrize("length", [1, 2, 3, 15, 16, 17, 31, 33, 64, 129])
def test_sums_with_repeats_cancellations_and_identities_equal_the_summed_secret(
    length: int,
) -> None:
    """aggregate and eth_aggregate_pubkeys against sign and sk_to_pk of the summed
    secret, on lists across the lengths where blst's batch addition changes shape
    (from 16 points it adds in a tree), with repeated entries (doublings inside the
    tree), an entry and its negation (P + (-P)), and, among the signatures, the
    identity; on both backends."""
    rng = random.Random(f"sums {length}")
    pool = [secret(rng) for _ in range(max(1, length // 3))]
    secrets = [rng.choice(pool) for _ in range(length)]
    if length >= 3:
        secrets[1] = CURVE_ORDER - secrets[0]
        secrets[2] = secrets[0]
    message = rng.randbytes(32)
    keys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    signatures = [crypto_backend.sign(sk, message) for sk in secrets]
    signed = list(secrets)
    if length >= 15:
        signatures[length // 2] = crypto_backend.G2_POINT_AT_INFINITY
        signed[length // 2] = 0
    key_total = sum(secrets) % CURVE_ORDER
    signature_total = sum(signed) % CURVE_ORDER
    want_key = crypto_backend.sk_to_pk(key_total) if key_total else (
        crypto_backend.G1_POINT_AT_INFINITY
    )
    want_signature = crypto_backend.sign(signature_total, message) if signature_total else (
        crypto_backend.G2_POINT_AT_INFINITY
    )
    assert agree(lambda: crypto_backend.aggregate(signatures)) == want_signature
    assert agree(lambda: crypto_backend.eth_aggregate_pubkeys(keys)) == want_key


# -- verification at 1 to 17 signers ---------------------------------------------


@pytest.mark.parametrize("signers", range(1, 18))
def test_verify_functions_agree(signers: int) -> None:
    rng = random.Random(f"differential signers {signers}")
    secrets = [secret(rng) for _ in range(signers)]
    pubkeys = [crypto_backend.sk_to_pk(sk) for sk in secrets]
    message = rng.randbytes(32)
    aggregate = crypto_backend.aggregate(crypto_backend.sign_many(secrets, message))
    other = rng.randbytes(32)
    assert agree(lambda: crypto_backend.fast_aggregate_verify(pubkeys, message, aggregate))
    assert not agree(lambda: crypto_backend.fast_aggregate_verify(pubkeys, other, aggregate))
    assert agree(lambda: crypto_backend.eth_fast_aggregate_verify(pubkeys, message, aggregate))
    if signers > 1:
        assert not agree(
            lambda: crypto_backend.fast_aggregate_verify(pubkeys[1:], message, aggregate)
        )
    messages = [rng.randbytes(32) for _ in range(signers)]
    distinct = crypto_backend.aggregate(
        [crypto_backend.sign(sk, m) for sk, m in zip(secrets, messages, strict=True)]
    )
    assert agree(lambda: crypto_backend.aggregate_verify(pubkeys, messages, distinct))
    assert not agree(
        lambda: crypto_backend.aggregate_verify(pubkeys, [*messages[:-1], other], distinct)
    )
    single = crypto_backend.sign(secrets[0], message)
    assert agree(lambda: crypto_backend.verify(pubkeys[0], message, single))
    assert not agree(lambda: crypto_backend.verify(pubkeys[-1], other, single))


@pytest.mark.parametrize("size", range(2, 18))
def test_signature_sets_agree_with_one_bad_set(size: int, one_lane: None) -> None:
    rng = random.Random(f"differential batch {size}")
    sets = []
    for index in range(size):
        secrets = [secret(rng) for _ in range(1 + index % 3)]
        # Some sets share a message, as attestations of one committee do.
        message = b"shared" if index % 4 == 0 else rng.randbytes(32)
        signature = crypto_backend.aggregate(crypto_backend.sign_many(secrets, message))
        sets.append(([crypto_backend.sk_to_pk(sk) for sk in secrets], message, signature))
    assert agree(lambda: crypto_backend.verify_signature_sets(sets))
    bad_position = rng.randrange(size)
    keys, message, signature = sets[bad_position]
    broken = list(sets)
    broken[bad_position] = (keys, message + b"!", signature)
    assert not agree(lambda: crypto_backend.verify_signature_sets(broken))
