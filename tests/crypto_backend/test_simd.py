"""The SIMD layer of the native core (the kernels crate's ``lane``, ``field::fpx8`` and
``decode``).

- the lane operations and the 8-lane field arithmetic of the portable layer against
  Python integers, on 100,000 random and edge inputs per operation;
- the IFMA layer against the portable layer on the same inputs (skipped, with a line
  saying why, on a CPU without AVX-512 IFMA, except under VALIDATOR_BLS_SIMD=require);
- 8-lane G1 and G2 decompression with the subgroup checks against blst's decode,
  verdict and point, on every input class, and the signature paths through them;
- the dispatch: VALIDATOR_BLS_SIMD read at import, info()["simd"], require's refusal;
- ``--soak``: the same differentials on 10,000,000 inputs.

Every official vector runs under each SIMD mode in test_official_vectors.py.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from py_ecc.optimized_bls12_381 import FQ, add, multiply, normalize

import crypto_backend
from crypto_backend import _native, simd
from crypto_backend._native import testing
from tests.crypto_backend.conftest import ifma_or_skip, simd_mode
from tests.support.official_vectors import REPO_ROOT

P = int(
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
    16,
)
R_ORDER = crypto_backend.CURVE_ORDER
COFACTOR = 0x396C8C005555E1568C00AAAB0000AAAB
MONTGOMERY_R = 1 << 416
R_INVERSE = pow(MONTGOMERY_R, -1, P)
BLST_R = 1 << 384
BLST_R_INVERSE = pow(BLST_R, -1, P)
MASK52 = (1 << 52) - 1
U64 = (1 << 64) - 1
CASES = 100_000
SOAK_CASES = 10_000_000


# -- lane operations ------------------------------------------------------------------

WORD_EDGES = [
    0, 1, 2, 3, MASK52 - 1, MASK52, MASK52 + 1, 1 << 51, (1 << 53) - 1, 1 << 63,
    (1 << 63) - 1, U64, U64 - 1, 0xAAAA_AAAA_AAAA_AAAA, 0x5555_5555_5555_5555,
]


def words(count: int, rng: random.Random) -> list[int]:
    """Edge words, then random words of every width (52-bit limbs, full 64-bit, small)."""
    out = [WORD_EDGES[i % len(WORD_EDGES)] for i in range(min(count, 3 * len(WORD_EDGES)))]
    while len(out) < count:
        width = rng.choice((64, 52, 53, 58, 8))
        out.append(rng.getrandbits(width))
    rng.shuffle(out)
    return out


def _lo(a: int, b: int, c: int) -> int:
    return (a + (((b & MASK52) * (c & MASK52)) & MASK52)) & U64


def _hi(a: int, b: int, c: int) -> int:
    return (a + (((b & MASK52) * (c & MASK52)) >> 52)) & U64


LANE_REFERENCE: dict[str, Callable[[int, int, int], int]] = {
    "madd52lo": _lo,
    "madd52hi": _hi,
    "add": lambda a, b, c: (a + b) & U64,
    "sub": lambda a, b, c: (a - b) & U64,
    "and": lambda a, b, c: a & b,
    "or": lambda a, b, c: a | b,
    "shr52": lambda a, b, c: a >> 52,
    "shr63": lambda a, b, c: a >> 63,
    # The lane read as signed: Python's >> on a negative int rounds down, as sra does.
    "sra52": lambda a, b, c: ((a - (1 << 64) if a >> 63 else a) >> 52) & U64,
    "shl12": lambda a, b, c: (a << 12) & U64,
    "eq": lambda a, b, c: int(a == b),
    "lt": lambda a, b, c: int(a < b),
    "select": lambda a, b, c: b if c & 1 else a,
}


def lane_inputs(count: int, rng: random.Random) -> tuple[list[int], list[int], list[int]]:
    a, b, c = words(count, rng), words(count, rng), words(count, rng)
    # Equal pairs, so that eq and lt see both answers often.
    for index in range(0, count, 7):
        b[index] = a[index]
    return a, b, c


def run_lane_op(op: str, layer: str, a: list[int], b: list[int], c: list[int]) -> list[int]:
    packed = [array("Q", values).tobytes() for values in (a, b, c)]
    out = array("Q")
    out.frombytes(testing.lane_op(op, layer, *packed))
    return out.tolist()


@pytest.mark.parametrize("op", sorted(LANE_REFERENCE))
def test_portable_lane_op_matches_python_integers(op: str, seed: int) -> None:
    rng = random.Random(seed ^ zlib.crc32(op.encode()))
    a, b, c = lane_inputs(CASES, rng)
    got = run_lane_op(op, "portable", a, b, c)
    reference = LANE_REFERENCE[op]
    wrong = [i for i in range(CASES) if got[i] != reference(a[i], b[i], c[i])]
    assert not wrong, f"{op}: {len(wrong)} lanes differ, first a,b,c = "\
        f"{a[wrong[0]]:#x},{b[wrong[0]]:#x},{c[wrong[0]]:#x} (seed {seed})"


@pytest.mark.parametrize("op", sorted(LANE_REFERENCE))
def test_ifma_lane_op_matches_portable(op: str, seed: int) -> None:
    ifma_or_skip()
    a, b, c = lane_inputs(CASES, random.Random(seed ^ zlib.crc32(op.encode())))
    assert run_lane_op(op, "avx512ifma", a, b, c) == run_lane_op(op, "portable", a, b, c)


def _permute_reference(a: list[int], b: list[int], index: list[int]) -> list[int]:
    """Vector by vector: lane k is lane index[k] & 7 of a, or of b where bit 3 is set."""
    out = []
    for start in range(0, len(a), 8):
        for k in range(8):
            chosen = index[start + k]
            source = b if chosen & 8 else a
            out.append(source[start + (chosen & 7)])
    return out


def test_portable_permute_matches_python_integers(seed: int) -> None:
    """permute2 moves lanes across the vector (the cyclotomic kernel's layout), so it
    has its own reference: any index, its bits above the fourth ignored."""
    a, b, index = lane_inputs(CASES, random.Random(seed ^ 0x9e2))
    assert run_lane_op("permute2", "portable", a, b, index) == _permute_reference(a, b, index)
    # The comparison can fail: an index of small values picks real lanes of both.
    small = [word % 16 for word in index]
    got = run_lane_op("permute2", "portable", a, b, small)
    assert got == _permute_reference(a, b, small) and got != a


def test_ifma_permute_matches_portable(seed: int) -> None:
    ifma_or_skip()
    a, b, index = lane_inputs(CASES, random.Random(seed ^ 0x9e3))
    assert run_lane_op("permute2", "avx512ifma", a, b, index) == \
        run_lane_op("permute2", "portable", a, b, index)


def test_the_ifma_kernels_are_compiled_whole_with_the_features() -> None:
    """This host cannot run the IFMA layer, but it can read the machine code: every
    function that touches a 512-bit register must be one entered through
    ``Ifma::run`` (so none runs on the portable or blst path), and no intrinsic may
    be left as a call (a kernel compiled without the features)."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    listing = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", _native.__file__],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout
    using_zmm: Counter[str] = Counter()
    function = ""
    for line in listing.splitlines():
        if line.endswith(">:"):
            function = line.split("<", 1)[1]
        elif "zmm" in line:
            using_zmm[function] += 1
        elif "call" in line and ("_mm512" in line or "avx512" in line):
            pytest.fail(f"an intrinsic left as a call in {function}: {line.strip()}")
    assert using_zmm, "no AVX-512 code at all: the IFMA layer was not built"
    assert all("Ifma3run13with_features" in name for name in using_zmm), sorted(using_zmm)
    assert listing.count("vpmadd52luq") > 1000


# -- 8-lane field arithmetic -------------------------------------------------------------

FIELD_EDGES = [
    0, 1, 2, 3, P - 1, P - 2, (P - 1) // 2, (P + 1) // 2, MASK52, MASK52 + 1, 1 << 380,
    (1 << 380) - 1, MONTGOMERY_R % P, P - MONTGOMERY_R % P, BLST_R % P,
    sum(MASK52 << (52 * i) for i in range(7)),  # every limb but the top one full
]

FIELD_REFERENCE: dict[str, Callable[[int, int], int]] = {
    "mul": lambda a, b: a * b * R_INVERSE % P,
    "sqr": lambda a, b: a * a * R_INVERSE % P,
    "add": lambda a, b: (a + b) % P,
    "sub": lambda a, b: (a - b) % P,
    "neg": lambda a, b: -a % P,
    "to_montgomery": lambda a, b: a * MONTGOMERY_R % P,
    "from_montgomery": lambda a, b: a * R_INVERSE % P,
    "to_blst": lambda a, b: a * R_INVERSE * BLST_R % P,
    "from_blst": lambda a, b: a * BLST_R_INVERSE * MONTGOMERY_R % P,
    # a square root (when there is one) of the value a stands for, in Montgomery form
    "sqrt_pow": lambda a, b: pow(a * R_INVERSE % P, (P + 1) // 4, P) * MONTGOMERY_R % P,
}
# Python's pow takes 0.3 ms here: the exact root is compared on the first 2,000
# cases, and every case's root must square to +-a (test below).
FIELD_CASES = {"sqrt_pow": 2_000}


def field_elements(count: int, rng: random.Random) -> list[int]:
    out = [FIELD_EDGES[i % len(FIELD_EDGES)] for i in range(min(count, 3 * len(FIELD_EDGES)))]
    while len(out) < count:
        out.append(rng.randrange(P) if rng.random() < 0.9 else rng.randrange(1 << 64))
    rng.shuffle(out)
    return out


def run_field_op(op: str, layer: str, a: list[int], b: list[int]) -> list[int]:
    encode: Callable[[list[int]], bytes] = lambda values: b"".join(  # noqa: E731
        value.to_bytes(48, "big") for value in values
    )
    out = testing.fpx8_op(op, layer, encode(a), encode(b))
    return [int.from_bytes(out[i:i + 48], "big") for i in range(0, len(out), 48)]


@pytest.mark.parametrize("op", sorted(FIELD_REFERENCE))
def test_portable_field_op_matches_python_integers(op: str, seed: int) -> None:
    count = FIELD_CASES.get(op, CASES)
    rng = random.Random(seed ^ zlib.crc32(op.encode()))
    a, b = field_elements(count, rng), field_elements(count, rng)
    got = run_field_op(op, "portable", a, b)
    reference = FIELD_REFERENCE[op]
    wrong = [i for i in range(count) if got[i] != reference(a[i], b[i])]
    assert not wrong, f"{op}: {len(wrong)} lanes differ, first a, b = "\
        f"{a[wrong[0]]:#x}, {b[wrong[0]]:#x} (seed {seed})"


def test_portable_sqrt_exponentiation_squares_back_on_every_case(seed: int) -> None:
    # 20,000 exponentiations are ten million 8-lane multiplications (3 s here).
    rng = random.Random(seed)
    a = field_elements(20_000, rng)
    roots = run_field_op("sqrt_pow", "portable", a, a)
    for value, root in zip(a, roots, strict=True):
        # a^((p+1)/4) squared is a^((p+1)/2) = a * (a | p): +a for a square, -a else.
        square = pow(root * R_INVERSE, 2, P)
        plain = value * R_INVERSE % P
        assert square in (plain, -plain % P), f"a = {value:#x} (seed {seed})"


@pytest.mark.parametrize("op", sorted(FIELD_REFERENCE))
def test_ifma_field_op_matches_portable(op: str, seed: int) -> None:
    ifma_or_skip()
    count = FIELD_CASES.get(op, CASES)
    rng = random.Random(seed ^ zlib.crc32(op.encode()))
    a, b = field_elements(count, rng), field_elements(count, rng)
    assert run_field_op(op, "avx512ifma", a, b) == run_field_op(op, "portable", a, b)


def test_field_input_at_or_above_the_modulus_is_refused() -> None:
    group = (P.to_bytes(48, "big")) * 8
    with pytest.raises(ValueError, match="below p"):
        testing.fpx8_op("mul", "portable", group, group)


# -- G1 decompression ---------------------------------------------------------------------


def _compress(x: int, y: int) -> bytes:
    raw = bytearray(x.to_bytes(48, "big"))
    raw[0] |= 0x80 | (0x20 if y > (P - 1) // 2 else 0)
    return bytes(raw)


def _on_curve_x(rng: random.Random) -> tuple[int, int]:
    """A random point of E(Fp) (almost surely outside G1: the cofactor is large)."""
    while True:
        x = rng.randrange(P)
        rhs = (x**3 + 4) % P
        y = pow(rhs, (P + 1) // 4, P)
        if y * y % P == rhs:
            return x, y


def _point_of_order(order: int, power: int, rng: random.Random) -> tuple[FQ, FQ, FQ]:
    """A point of order ``order`` (a prime that divides #E(Fp) ``power`` times)."""
    while True:
        x, y = _on_curve_x(rng)
        point = multiply((FQ(x), FQ(y), FQ(1)), R_ORDER * COFACTOR // order**power)
        # Now of order dividing order**power: multiply by the order until one more
        # step would give the identity.
        while point[2] != FQ.zero() and multiply(point, order)[2] != FQ.zero():
            point = multiply(point, order)
        if point[2] != FQ.zero():
            return point


def _small_order_points(rng: random.Random) -> list[bytes]:
    """Points of order 3, 11 and 33: their double-and-add chains meet the addition
    formula's exceptional cases, so the kernel must leave them to blst."""
    three, eleven = _point_of_order(3, 1, rng), _point_of_order(11, 2, rng)
    found = []
    for point in (three, eleven, add(three, eleven)):
        x, y = (int(value) for value in normalize(point))
        found += [_compress(x, y), _compress(x, -y % P)]
    return found


def g1_input_classes(rng: random.Random, valid: int) -> dict[str, list[bytes]]:
    """Every kind of 48-byte (and wrong-length) input a public key decode meets."""
    keys = [crypto_backend.sk_to_pk(rng.randrange(1, R_ORDER)) for _ in range(valid)]
    on_curve = [_on_curve_x(rng) for _ in range(valid)]
    zero = bytes(47)
    return {
        "valid": keys,
        "sign flag flipped (the negated key, also valid)": [
            bytes([k[0] ^ 0x20]) + k[1:] for k in keys],
        "compression flag cleared": [bytes([k[0] & 0x7F]) + k[1:] for k in keys[:50]],
        "infinity flag on a point": [bytes([k[0] | 0x40]) + k[1:] for k in keys[:50]],
        "identity": [b"\xc0" + zero],
        "malformed identity": [b"\xe0" + zero, b"\x40" + zero, b"\xc0" + zero[:-1] + b"\x01",
                               b"\xc1" + zero, b"\xd0" + zero],
        "x at or past the modulus": [
            _compress(P + k, 0) for k in range(0, 40)] + [b"\x9f" + b"\xff" * 47],
        "x = 0 (on the curve, not in the group)": [b"\x80" + zero, b"\xa0" + zero],
        "off the curve or off the subgroup (random x)": [
            _compress(rng.randrange(P), rng.randrange(P)) for _ in range(valid)],
        "on the curve, off the subgroup": [
            _compress(x, y if sign else P - y)
            for (x, y), sign in zip(on_curve, (rng.random() < 0.5 for _ in on_curve), strict=True)],
        "small order": _small_order_points(rng),
        "random bytes": [rng.randbytes(48) for _ in range(valid)],
        "wrong length": [b"", b"\xc0" + zero[:-1], keys[0] + b"\x00", keys[0][:47]],
    }


def test_portable_g1_decode_gives_blst_verdicts_and_points_on_every_input_class(
    seed: int,
) -> None:
    rng = random.Random(seed)
    classes = g1_input_classes(rng, valid=150)
    every = [key for keys in classes.values() for key in keys]
    rng.shuffle(every)
    before = testing.counters()
    ours = testing.g1_decode_on(every, "portable")
    blst = testing.g1_decode_on(every, "none")
    after = testing.counters()
    for index, (got, want) in enumerate(zip(ours, blst, strict=True)):
        assert got == want, f"input {every[index].hex()}: {got!r} != blst's {want!r} (seed {seed})"
    verdicts = Counter("ok" if isinstance(item, bytes) else item for item in blst)
    assert set(verdicts) == {
        "ok", "bad encoding", "point not on the curve", "point not in the subgroup",
        "point not in the G1 subgroup", "a G1 point is 48 bytes",
    }, verdicts
    assert after["g1_lane_passes"] > before["g1_lane_passes"]
    # The small-order points reached the exceptional cases and went to blst.
    assert after["g1_undecided_lanes"] > before["g1_undecided_lanes"]


def test_ifma_g1_decode_matches_portable(seed: int) -> None:
    ifma_or_skip()
    classes = g1_input_classes(random.Random(seed), valid=150)
    every = [key for keys in classes.values() for key in keys]
    assert testing.g1_decode_on(every, "avx512ifma") == testing.g1_decode_on(every, "portable")


def _compress_g2(x0: int, x1: int, larger: bool) -> bytes:
    raw = bytearray(x1.to_bytes(48, "big") + x0.to_bytes(48, "big"))
    raw[0] |= 0x80 | (0x20 if larger else 0)
    return bytes(raw)


def g2_input_classes(rng: random.Random, valid: int) -> dict[str, list[bytes]]:
    """Every kind of 96-byte (and wrong-length) input a signature decode meets."""
    signatures = [
        crypto_backend.sign(rng.randrange(1, R_ORDER), rng.randbytes(8)) for _ in range(valid)
    ]
    zero = bytes(95)
    below = lambda: rng.randrange(P)  # noqa: E731
    return {
        "valid": signatures,
        "sign flag flipped (the negated signature, also valid)": [
            bytes([s[0] ^ 0x20]) + s[1:] for s in signatures],
        "compression flag cleared": [bytes([s[0] & 0x7F]) + s[1:] for s in signatures[:30]],
        "infinity flag on a point": [bytes([s[0] | 0x40]) + s[1:] for s in signatures[:30]],
        "identity": [crypto_backend.G2_POINT_AT_INFINITY],
        "malformed identity": [b"\xe0" + zero, b"\x40" + zero, b"\xc0" + zero[:-1] + b"\x01",
                               b"\xc1" + zero, b"\xc0" + zero[:47] + b"\x01" + zero[48:]],
        "x1 at or past the modulus": [_compress_g2(below(), P + k, False) for k in range(20)],
        "x0 at or past the modulus": [
            _compress_g2(0, 0, False)[:48] + (P + k).to_bytes(48, "big") for k in range(20)],
        "x = 0": [_compress_g2(0, 0, False), _compress_g2(0, 0, True)],
        "random x (half on the twist, off the subgroup; half off it)": [
            _compress_g2(below(), below(), rng.random() < 0.5) for _ in range(2 * valid)],
        "random x with x1 = 0 or x0 = 0": [
            _compress_g2(below(), 0, rng.random() < 0.5) for _ in range(20)] + [
            _compress_g2(0, below(), rng.random() < 0.5) for _ in range(20)],
        "random bytes": [rng.randbytes(96) for _ in range(valid)],
        "wrong length": [b"", signatures[0][:95], signatures[0] + b"\x00", signatures[0][:48]],
    }


def test_portable_g2_decode_gives_blst_verdicts_and_points_on_every_input_class(
    seed: int,
) -> None:
    rng = random.Random(seed)
    every = [item for items in g2_input_classes(rng, valid=100).values() for item in items]
    rng.shuffle(every)
    before = testing.counters()["g2_lane_passes"]
    ours = testing.g2_decode_on(every, "portable")
    blst = testing.g2_decode_on(every, "none")
    assert testing.counters()["g2_lane_passes"] > before
    for index, (got, want) in enumerate(zip(ours, blst, strict=True)):
        assert got == want, f"input {every[index].hex()}: {got!r} != blst's {want!r} (seed {seed})"
    verdicts = Counter("ok" if isinstance(item, bytes) else item for item in blst)
    assert set(verdicts) == {
        "ok", "bad encoding", "point not on the curve", "point not in the G2 subgroup",
        "a G2 point is 96 bytes",
    }, verdicts


def test_ifma_g2_decode_matches_portable(seed: int) -> None:
    ifma_or_skip()
    classes = g2_input_classes(random.Random(seed), valid=100)
    every = [item for items in classes.values() for item in items]
    assert testing.g2_decode_on(every, "avx512ifma") == testing.g2_decode_on(every, "portable")


def test_signature_paths_through_the_lanes_answer_as_blst(seed: int) -> None:
    """aggregate (long and short lists, a bad signature anywhere), verify and the batch
    check decode their signatures through the G2 kernel under portable."""
    rng = random.Random(seed)
    keys = [rng.randrange(1, R_ORDER) for _ in range(40)]
    message = rng.randbytes(32)
    signatures = crypto_backend.sign_many(keys, message)
    bad = [item for name, items in g2_input_classes(rng, valid=2).items()
           if name.startswith("random x (") for item in items]
    crypto_backend.use("blst")
    sets = [
        crypto_backend.SignatureSet([crypto_backend.sk_to_pk(k)], message, s)
        for k, s in zip(keys[:9], signatures[:9], strict=True)
    ]

    def answers() -> list[object]:
        out: list[object] = [crypto_backend.aggregate(signatures)]
        for position in (0, 17, 39):
            spoiled = list(signatures)
            spoiled[position] = bad[position % len(bad)]
            try:
                out.append(crypto_backend.aggregate(spoiled))
            except crypto_backend.BlsError as error:
                out.append(str(error))
        out.append(crypto_backend.verify(crypto_backend.sk_to_pk(keys[0]), message, signatures[0]))
        out.append(crypto_backend.verify(crypto_backend.sk_to_pk(keys[1]), message, bad[0]))
        out.append(crypto_backend.verify_signature_sets(sets))
        out.append(crypto_backend.verify_signature_sets(
            sets[:-1] + [crypto_backend.SignatureSet(sets[-1].pubkeys, message, bad[1])]))
        return out

    with simd_mode("off"):
        expected = answers()
    with simd_mode("portable"):
        before = testing.counters()["g2_lane_passes"]
        assert answers() == expected
        assert testing.counters()["g2_lane_passes"] > before
    assert expected[-4:] == [True, False, True, False]


@pytest.mark.parametrize("count", [1, 7, 8, 9, 70, 200])
def test_key_validate_many_through_the_lanes_answers_as_blst(count: int) -> None:
    """Full chunks, short ones and the remainder; the identity is refused above the
    kernels whatever path decoded it."""
    rng = random.Random(count)
    classes = g1_input_classes(rng, valid=max(count // 4, 1))
    pool = [key for keys in classes.values() for key in keys]
    # The identity and one valid key first, so that every list has a lane to fill.
    keys = [crypto_backend.G1_POINT_AT_INFINITY, classes["valid"][0]]
    keys += [rng.choice(pool) for _ in range(count - 1)]
    crypto_backend.use("blst")
    with simd_mode("off"):
        expected = crypto_backend.key_validate_many(keys)
    with simd_mode("portable"):
        passes = testing.counters()["g1_lane_passes"]
        assert crypto_backend.key_validate_many(keys) == expected
        assert testing.counters()["g1_lane_passes"] > passes
        assert expected[0] is False
    with simd_mode("portable"):
        crypto_backend.warm_pubkeys(keys)
        assert [crypto_backend.key_validate(key) for key in keys] == expected


# -- the dispatch -----------------------------------------------------------------------

INFO_SCRIPT = "import crypto_backend; print(crypto_backend.info()['simd'])"


def _python(script: str, mode: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, simd.SIMD_ENV: mode}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env,
        cwd=REPO_ROOT, timeout=60,
    )


@pytest.mark.parametrize(
    ("mode", "path"),
    [("off", "none"), ("portable", "portable"), ("", "auto"), ("auto", "auto"),
     (" Portable ", "portable")],
)
def test_the_mode_is_read_at_import(mode: str, path: str) -> None:
    if path == "auto":
        path = "avx512ifma" if simd.ifma_available() else "none"
    done = _python(INFO_SCRIPT, mode)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == path


def test_require_fails_at_start_without_ifma() -> None:
    done = _python(INFO_SCRIPT, "require")
    if simd.ifma_available():
        assert done.returncode == 0 and done.stdout.strip() == "avx512ifma"
        return
    assert done.returncode != 0
    assert "ValueError: VALIDATOR_BLS_SIMD=require, but this CPU has no AVX-512 IFMA" in done.stderr


def test_an_unknown_mode_is_an_error_not_a_fallback() -> None:
    done = _python(INFO_SCRIPT, "fast")
    assert done.returncode != 0
    assert "VALIDATOR_BLS_SIMD must be auto, off, portable or require" in done.stderr


def test_validator_run_stops_at_start_with_one_line_under_require_without_ifma(
    tmp_path: Path,
) -> None:
    if simd.ifma_available():
        pytest.skip("this CPU has AVX-512 IFMA: require is honoured here")
    validator = Path(sys.executable).with_name("validator")
    env = {**os.environ, simd.SIMD_ENV: "require"}
    done = subprocess.run(
        [str(validator), "run", "--beacon-node-url", "http://127.0.0.1:9",
         "--validators-dir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert any("VALIDATOR_BLS_SIMD=require, but this CPU has no AVX-512 IFMA" in line
               for line in lines), done.stderr
    assert "Traceback" not in done.stderr


def test_configure_switches_the_path_and_info_reports_it() -> None:
    crypto_backend.use("blst")
    with simd_mode("portable"):
        assert crypto_backend.info()["simd"] == "portable"
    with simd_mode("off"):
        assert crypto_backend.info()["simd"] == "none"
    with pytest.raises(ValueError, match="must be auto, off, portable or require"):
        simd.configure("sometimes")


def test_arkworks_reports_no_simd() -> None:
    previous = crypto_backend.backend_name()
    crypto_backend.use("arkworks")
    try:
        with simd_mode("portable"):
            assert crypto_backend.info()["simd"] == "none"
    finally:
        crypto_backend.use(previous)


# -- soak ---------------------------------------------------------------------------------


def _in_batches(total: int, batch: int = 200_000) -> Iterator[int]:
    done = 0
    while done < total:
        yield min(batch, total - done)
        done += batch


@pytest.mark.parametrize("op", ["madd52lo", "madd52hi", "sub", "lt"])
def test_soak_lane_ops(op: str, seed: int, soak: None) -> None:
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for count in _in_batches(SOAK_CASES):
        a, b, c = lane_inputs(count, rng)
        want = [LANE_REFERENCE[op](x, y, z) for x, y, z in zip(a, b, c, strict=True)]
        for layer in layers:
            assert run_lane_op(op, layer, a, b, c) == want, (op, layer, seed)


@pytest.mark.parametrize("op", ["mul", "add", "sub"])
def test_soak_field_ops(op: str, seed: int, soak: None) -> None:
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for count in _in_batches(SOAK_CASES):
        a, b = field_elements(count, rng), field_elements(count, rng)
        want = [FIELD_REFERENCE[op](x, y) for x, y in zip(a, b, strict=True)]
        for layer in layers:
            assert run_field_op(op, layer, a, b) == want, (op, layer, seed)


def test_soak_g1_decode(seed: int, soak: None) -> None:
    """10,000,000 decodes: random x on and off the curve, both signs, one key in 20
    valid (well over an hour on the portable layer of a 2-core host)."""
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for count in _in_batches(SOAK_CASES, 20_000):
        keys = [
            crypto_backend.sk_to_pk(rng.randrange(1, R_ORDER)) if index % 20 == 0
            else _compress(rng.randrange(P), rng.randrange(P))
            for index in range(count)
        ]
        want = testing.g1_decode_on(keys, "none")
        for layer in layers:
            assert testing.g1_decode_on(keys, layer) == want, (layer, seed)


def test_soak_g2_decode(seed: int, soak: None) -> None:
    """10,000,000 signature decodes: random x, both signs, one in 20 a real signature."""
    rng = random.Random(seed)
    layers = ["portable"] + (["avx512ifma"] if simd.ifma_available() else [])
    for count in _in_batches(SOAK_CASES, 20_000):
        signatures = [
            crypto_backend.sign(rng.randrange(1, R_ORDER), rng.randbytes(8)) if index % 20 == 0
            else _compress_g2(rng.randrange(P), rng.randrange(P), rng.random() < 0.5)
            for index in range(count)
        ]
        want = testing.g2_decode_on(signatures, "none")
        for layer in layers:
            assert testing.g2_decode_on(signatures, layer) == want, (layer, seed)
