"""Generate the project's own BLS test cases, with py_ecc as the only oracle.

    /work/devenv/bin/python vectors/crypto/generate.py

writes decoding.json, verify.json, batches.json and sign.json next to this file.
Everything is deterministic (keys come from SHA-256 of fixed labels, "random"
encodings from a seeded generator), so a rerun rewrites identical files.
Expected values are known by construction (who signed what); each one is also
checked against py_ecc (the specification's reference implementation in pure
Python) before it is written, and the script stops if the two disagree. Takes a
few minutes: py_ecc needs ~0.2 s per pairing.

The crypto_backend package is never imported here, so the cases do not depend
on the code they test.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from py_ecc.bls import G2ProofOfPossession as Oracle
from py_ecc.bls.g2_primitives import pubkey_to_G1, signature_to_G2, subgroup_check
from py_ecc.optimized_bls12_381 import curve_order, field_modulus

HERE = Path(__file__).resolve().parent
G1_IDENTITY = b"\xc0" + b"\x00" * 47
G2_IDENTITY = b"\xc0" + b"\x00" * 95
MAX_SIGNERS = 17


def digest(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


def secret_key(index: int) -> int:
    return int.from_bytes(digest(f"crypto_backend vectors key {index}"), "big") % curve_order or 1


SECRETS = [secret_key(index) for index in range(MAX_SIGNERS + 3)]
PUBKEYS = [Oracle.SkToPk(sk) for sk in SECRETS]


def negate(encoding: bytes) -> bytes:
    """-P: flip the sort bit (0x20) of a compressed non-identity point."""
    return bytes([encoding[0] ^ 0x20]) + encoding[1:]


def sign(sk: int, message: bytes) -> bytes:
    return Oracle.Sign(sk, message)


def aggregate(signatures: Sequence[bytes]) -> bytes:
    return Oracle.Aggregate(list(signatures))


def hexed(data: bytes) -> str:
    return "0x" + data.hex()


def require(condition: bool, what: str) -> None:
    if not condition:
        raise SystemExit(f"py_ecc disagrees with the construction: {what}")


# -- decoding ------------------------------------------------------------------


def oracle_point(group: str, encoding: bytes) -> bool:
    decode = pubkey_to_G1 if group == "G1" else signature_to_G2
    try:
        point = decode(encoding)
    except (ValueError, AssertionError, TypeError):
        return False
    return bool(subgroup_check(point))


def with_x(group: str, x_parts: Sequence[int], flags: int) -> bytes:
    """Compressed encoding with given x limbs (G2: x_im then x_re) and top flags."""
    raw = b"".join(part.to_bytes(48, "big") for part in x_parts)
    return bytes([raw[0] | flags]) + raw[1:]


def find_x(group: str, rng: random.Random, want: str) -> bytes:
    """An x-only encoding that is off the curve ('off_curve') or on it but outside
    the subgroup ('off_subgroup'), found by trial with py_ecc."""
    limbs = 1 if group == "G1" else 2
    decode = pubkey_to_G1 if group == "G1" else signature_to_G2
    for _ in range(10_000):
        encoding = with_x(group, [rng.randrange(field_modulus) for _ in range(limbs)], 0x80)
        try:
            point = decode(encoding)
        except ValueError:
            if want == "off_curve":
                return encoding
            continue
        if want == "off_subgroup" and not subgroup_check(point):
            return encoding
    raise SystemExit(f"no {want} {group} encoding found")


def decoding_cases() -> list[dict[str, Any]]:
    rng = random.Random(20240601)
    cases: list[dict[str, Any]] = []

    def add(group: str, name: str, encoding: bytes, point: bool, key: bool | None) -> None:
        require(oracle_point(group, encoding) == point, f"{group} {name} point={point}")
        if group == "G1":
            require(Oracle.KeyValidate(encoding) == key, f"{name} key={key}")
        cases.append(
            {"name": f"{group.lower()}_{name}", "group": group, "encoding": hexed(encoding),
             "point": point, "key": key}
        )

    signatures = [sign(SECRETS[i], digest(f"decoding {i}")) for i in range(3)]
    for group, valid_encodings, identity, length in (
        ("G1", PUBKEYS[:3], G1_IDENTITY, 48),
        ("G2", signatures, G2_IDENTITY, 96),
    ):
        key_if_g1: Callable[[bool], bool | None] = (
            (lambda valid: valid) if group == "G1" else (lambda valid: None)
        )
        for index, encoding in enumerate(valid_encodings):
            add(group, f"valid_{index}", encoding, True, key_if_g1(True))
            add(group, f"sort_flag_flipped_{index}", negate(encoding), True, key_if_g1(True))
            add(group, f"compression_flag_cleared_{index}",
                bytes([encoding[0] & 0x7F]) + encoding[1:], False, key_if_g1(False))
            add(group, f"infinity_flag_set_{index}",
                bytes([encoding[0] | 0x40]) + encoding[1:], False, key_if_g1(False))
            add(group, f"truncated_{index}", encoding[:-1], False, key_if_g1(False))
            add(group, f"extended_{index}", encoding + b"\x00", False, key_if_g1(False))
        add(group, "identity", identity, True, key_if_g1(False))
        zeros = b"\x00" * (length - 1)
        add(group, "identity_last_byte_set", b"\xc0" + zeros[:-1] + b"\x01", False,
            key_if_g1(False))
        add(group, "identity_first_x_byte_set", b"\xc0\x01" + zeros[1:], False, key_if_g1(False))
        add(group, "identity_with_sort_flag", b"\xe0" + zeros, False, key_if_g1(False))
        add(group, "identity_without_compression_flag", b"\x40" + zeros, False,
            key_if_g1(False))
        add(group, "all_zero", b"\x00" * length, False, key_if_g1(False))
        add(group, "all_ones", b"\xff" * length, False, key_if_g1(False))
        add(group, "x_zero_without_infinity_flag", b"\x80" + zeros, False, key_if_g1(False))
        limbs = 1 if group == "G1" else 2
        for offset, label in ((0, "equal_to"), (1, "one_past"), (2**381 - 1 - field_modulus,
                                                                  "max_past")):
            for limb in range(limbs):
                parts = [1] * limbs
                parts[limb] = field_modulus + offset
                where = "x" if group == "G1" else ("x_im" if limb == 0 else "x_re")
                add(group, f"{where}_{label}_modulus", with_x(group, parts, 0x80), False,
                    key_if_g1(False))
        for index in range(2):
            add(group, f"off_curve_{index}", find_x(group, rng, "off_curve"), False,
                key_if_g1(False))
            add(group, f"off_subgroup_{index}", find_x(group, rng, "off_subgroup"), False,
                key_if_g1(False))
        for index in range(6):
            encoding = bytes([rng.randrange(256) for _ in range(length)])
            valid = oracle_point(group, encoding)
            add(group, f"random_{index}", encoding, valid,
                key_if_g1(valid and encoding != identity))
    return cases


# -- verify / fast_aggregate_verify / aggregate_verify ---------------------------


def verify_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def add(name: str, function: str, expected: bool, **inputs: Any) -> None:
        oracle_inputs = {key: value for key, value in inputs.items()}
        if function == "verify":
            got = Oracle.Verify(oracle_inputs["pubkey"], oracle_inputs["message"],
                                oracle_inputs["signature"])
        elif function == "fast_aggregate_verify":
            got = Oracle.FastAggregateVerify(oracle_inputs["pubkeys"], oracle_inputs["message"],
                                             oracle_inputs["signature"])
        elif function == "eth_fast_aggregate_verify":
            if not oracle_inputs["pubkeys"] and oracle_inputs["signature"] == G2_IDENTITY:
                got = True
            else:
                got = Oracle.FastAggregateVerify(
                    oracle_inputs["pubkeys"], oracle_inputs["message"], oracle_inputs["signature"]
                )
        else:
            got = Oracle.AggregateVerify(oracle_inputs["pubkeys"], oracle_inputs["messages"],
                                         oracle_inputs["signature"])
        require(got == expected, f"{name}: expected {expected}")
        encoded = {
            key: ([hexed(item) for item in value] if isinstance(value, list) else hexed(value))
            for key, value in inputs.items()
        }
        cases.append({"name": name, "function": function, "input": encoded, "expected": expected})
        print(f"  {name}: {expected}", flush=True)

    for signers in range(1, MAX_SIGNERS + 1):
        keys = PUBKEYS[:signers]
        message = digest(f"fast_aggregate_verify {signers}")
        signature = aggregate([sign(sk, message) for sk in SECRETS[:signers]])
        add(f"fast_aggregate_verify_{signers}_valid", "fast_aggregate_verify", True,
            pubkeys=keys, message=message, signature=signature)
        add(f"fast_aggregate_verify_{signers}_wrong_message", "fast_aggregate_verify", False,
            pubkeys=keys, message=digest("another message"), signature=signature)
        add(f"fast_aggregate_verify_{signers}_extra_key", "fast_aggregate_verify", False,
            pubkeys=[*keys, PUBKEYS[signers]], message=message, signature=signature)
        if signers > 1:
            add(f"fast_aggregate_verify_{signers}_missing_key", "fast_aggregate_verify", False,
                pubkeys=keys[:-1], message=message, signature=signature)
        messages = [digest(f"aggregate_verify {signers} {i}") for i in range(signers)]
        signature = aggregate([sign(sk, m) for sk, m in zip(SECRETS, messages, strict=False)])
        add(f"aggregate_verify_{signers}_valid", "aggregate_verify", True,
            pubkeys=keys, messages=messages, signature=signature)
        add(f"aggregate_verify_{signers}_last_message_changed", "aggregate_verify", False,
            pubkeys=keys, messages=[*messages[:-1], digest("another message")],
            signature=signature)
        if signers > 1:
            add(f"aggregate_verify_{signers}_messages_swapped", "aggregate_verify", False,
                pubkeys=keys, messages=[messages[1], messages[0], *messages[2:]],
                signature=signature)

    message = digest("edge cases")
    p, q = PUBKEYS[0], PUBKEYS[1]
    sig_p, sig_q = sign(SECRETS[0], message), sign(SECRETS[1], message)
    sig_neg_p = sign(curve_order - SECRETS[0], message)
    add("verify_valid", "verify", True, pubkey=p, message=message, signature=sig_p)
    add("verify_negated_key_with_negated_secret", "verify", True, pubkey=negate(p),
        message=message, signature=sig_neg_p)
    add("verify_negated_key", "verify", False, pubkey=negate(p), message=message,
        signature=sig_p)
    add("verify_identity_key_identity_signature", "verify", False, pubkey=G1_IDENTITY,
        message=message, signature=G2_IDENTITY)
    add("verify_empty_message", "verify", True, pubkey=p, message=b"",
        signature=sign(SECRETS[0], b""))
    add("verify_long_message", "verify", True, pubkey=p, message=b"\xab" * 100,
        signature=sign(SECRETS[0], b"\xab" * 100))
    add("verify_identity_signature", "verify", False, pubkey=p, message=message,
        signature=G2_IDENTITY)
    for name, keys, signature, expected in (
        ("cancelling_keys_identity_signature", [p, negate(p)], G2_IDENTITY, False),
        ("cancelling_keys_their_signatures", [p, negate(p)], aggregate([sig_p, sig_neg_p]),
         False),
        # P and -P inside a larger list leave a valid, non-identity aggregate.
        ("cancelling_keys_with_a_third", [p, negate(p), q], sig_q, True),
        ("identity_key_alone", [G1_IDENTITY], G2_IDENTITY, False),
        ("identity_key_with_valid_keys", [p, q, G1_IDENTITY], aggregate([sig_p, sig_q]), False),
        ("empty_keys_identity_signature", [], G2_IDENTITY, False),
        ("empty_keys_zero_signature", [], b"\x00" * 96, False),
    ):
        add(f"fast_aggregate_verify_{name}", "fast_aggregate_verify", expected,
            pubkeys=keys, message=message, signature=signature)
        add(f"eth_fast_aggregate_verify_{name}", "eth_fast_aggregate_verify",
            expected or name == "empty_keys_identity_signature", pubkeys=keys, message=message,
            signature=signature)
    add("fast_aggregate_verify_repeated_signer", "fast_aggregate_verify", True,
        pubkeys=[p, q, p], message=message, signature=aggregate([sig_p, sig_q, sig_p]))
    add("fast_aggregate_verify_repeated_signer_listed_once", "fast_aggregate_verify", False,
        pubkeys=[p, q], message=message, signature=aggregate([sig_p, sig_q, sig_p]))
    add("aggregate_verify_repeated_message", "aggregate_verify", True,
        pubkeys=[p, q], messages=[message, message], signature=aggregate([sig_p, sig_q]))
    # The specification checks each key, not their sum: e(P, H) e(-P, H) = 1 = e(g1, O),
    # and O is indeed the aggregate of the two keys' signatures. True, as py_ecc says.
    add("aggregate_verify_cancelling_keys", "aggregate_verify", True,
        pubkeys=[p, negate(p)], messages=[message, message], signature=G2_IDENTITY)
    add("aggregate_verify_identity_key", "aggregate_verify", False,
        pubkeys=[p, G1_IDENTITY], messages=[message, digest("x")], signature=sig_p)
    add("aggregate_verify_empty", "aggregate_verify", False, pubkeys=[], messages=[],
        signature=G2_IDENTITY)
    return cases


# -- batches (verify_signature_sets) ---------------------------------------------


def batch_cases() -> dict[str, Any]:
    """A pool of signature sets (valid and invalid) and batches naming them by index."""
    sets: list[dict[str, Any]] = []

    def add_set(name: str, pubkeys: list[bytes], message: bytes, signature: bytes,
                valid: bool) -> int:
        if pubkeys:
            got = Oracle.FastAggregateVerify(pubkeys, message, signature)
        else:
            got = False
        require(got == valid, f"set {name}: expected {valid}")
        sets.append({"name": name, "pubkeys": [hexed(k) for k in pubkeys],
                     "message": hexed(message), "signature": hexed(signature), "valid": valid})
        print(f"  set {name}: {valid}", flush=True)
        return len(sets) - 1

    valid_sets = []
    invalid_sets = []
    shared = digest("shared batch message")
    for index in range(MAX_SIGNERS):
        # A mix: single signers, small committees, and every third set on one message.
        signers = list(range(index, index + 1 + index % 3))
        signers = [s % len(SECRETS) for s in signers]
        message = shared if index % 3 == 0 else digest(f"batch message {index}")
        keys = [PUBKEYS[s] for s in signers]
        signature = aggregate([sign(SECRETS[s], message) for s in signers])
        valid_sets.append(add_set(f"valid_{index}", keys, message, signature, True))
        bad_signature = aggregate([sign(SECRETS[s], digest(f"other {index}")) for s in signers])
        invalid_sets.append(add_set(f"wrong_message_{index}", keys, message, bad_signature, False))

    message = digest("cancelling batch message")
    p = PUBKEYS[0]
    sig_p = sign(SECRETS[0], message)
    sig_neg_p = sign(curve_order - SECRETS[0], message)
    key_p = add_set("key_p", [p], message, sig_p, True)
    key_neg_p = add_set("key_minus_p", [negate(p)], message, sig_neg_p, True)
    cancelling = add_set("keys_p_and_minus_p", [p, negate(p)], message, G2_IDENTITY, False)
    identity_key = add_set("identity_key", [G1_IDENTITY], message, G2_IDENTITY, False)
    identity_sig = add_set("identity_signature", [p], message, G2_IDENTITY, False)
    identity_sig_2 = add_set("identity_signature_other_key", [PUBKEYS[1]], message, G2_IDENTITY,
                             False)
    repeated = add_set("repeated_signer", [p, PUBKEYS[1], p], message,
                       aggregate([sig_p, sign(SECRETS[1], message), sig_p]), True)
    empty = add_set("no_keys", [], message, G2_IDENTITY, False)
    swapped_a = add_set("swapped_signature_a", [PUBKEYS[2]], digest("swap a"),
                        sign(SECRETS[3], digest("swap b")), False)
    swapped_b = add_set("swapped_signature_b", [PUBKEYS[3]], digest("swap b"),
                        sign(SECRETS[2], digest("swap a")), False)

    batches: list[dict[str, Any]] = []
    for size in range(2, MAX_SIGNERS + 1):
        members = valid_sets[:size]
        batches.append({"name": f"{size}_sets_valid", "sets": members, "expected": True})
        for position in range(size):
            with_bad = list(members)
            with_bad[position] = invalid_sets[position]
            batches.append({"name": f"{size}_sets_bad_at_{position}", "sets": with_bad,
                            "expected": False})
    for name, members, expected in (
        ("p_and_minus_p_as_separate_sets", [key_p, key_neg_p], True),
        ("p_and_minus_p_in_a_valid_batch", [*valid_sets[:5], key_p, key_neg_p], True),
        ("cancelling_keys_alone", [cancelling], False),
        ("cancelling_keys_in_a_valid_batch", [*valid_sets[:5], cancelling], False),
        ("identity_key_in_a_valid_batch", [valid_sets[0], identity_key, valid_sets[1]], False),
        ("identity_signatures_only", [identity_sig, identity_sig_2], False),
        ("identity_signature_in_a_valid_batch", [*valid_sets[:3], identity_sig], False),
        ("repeated_signer_in_a_valid_batch", [*valid_sets[:3], repeated], True),
        ("a_set_without_keys", [valid_sets[0], empty], False),
        # Each signature belongs to the other set: their sum is right, each set is wrong.
        ("swapped_signatures", [swapped_a, swapped_b], False),
        ("empty_batch", [], False),
        ("one_valid_set", [valid_sets[0]], True),
        ("one_invalid_set", [invalid_sets[0]], False),
    ):
        batches.append({"name": name, "sets": members, "expected": expected})
    return {"sets": sets, "batches": batches}


# -- sign / sign_many ------------------------------------------------------------


def sign_cases() -> dict[str, Any]:
    messages = [digest("sign_many message"), b"", b"\x01" * 100]
    return {
        "messages": [hexed(m) for m in messages],
        "keys": [
            {
                "secret": hexed(sk.to_bytes(32, "big")),
                "pubkey": hexed(pk),
                "signatures": [hexed(sign(sk, m)) for m in messages],
            }
            for sk, pk in zip(SECRETS, PUBKEYS, strict=True)
        ],
    }


def write(name: str, description: str, content: Any) -> None:
    document = {"description": description, "generator": "vectors/crypto/generate.py",
                **(content if isinstance(content, dict) else {"cases": content})}
    (HERE / name).write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {name}", flush=True)


def main() -> None:
    write("decoding.json",
          "Compressed G1/G2 encodings: 'point' = decodes to a point of the subgroup "
          "(identity included); 'key' = valid public key (KeyValidate, identity refused).",
          decoding_cases())
    write("sign.json", "sign / sign_many: each key's signature of each message.", sign_cases())
    write("verify.json",
          "verify, fast_aggregate_verify, eth_fast_aggregate_verify and aggregate_verify at "
          "1 to 17 signers, plus identity, cancelling-key and repeated-signer cases.",
          verify_cases())
    write("batches.json",
          "verify_signature_sets: a pool of sets (each valid or not on its own) and batches "
          "of them by index; a batch is valid iff every set is and it is not empty.",
          batch_cases())


if __name__ == "__main__":
    main()
