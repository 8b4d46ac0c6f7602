"""The generated field code (crypto_backend/native/kernels/src/field/scheduled.rs) and
its generator, schedule_field_ops.py:

- the checked-in file is what the generator writes (no hand edits, no stale file);
- each schedule is an order of all the operations in which every value is made
  before it is used;
- the operations, evaluated in that order on Python integers, give the Montgomery
  product a*b/R mod p (and a^2/R) in [0, 2p), limbs below 2^52, for random and
  edge inputs below 2p, so the order and the columns' start of 2^52 - 1 are
  checked here as well as by the kernels' differentials against blst.
"""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from types import ModuleType
from typing import Any

from tests.support.official_vectors import REPO_ROOT

GENERATOR = REPO_ROOT / "crypto_backend" / "native" / "kernels" / "schedule_field_ops.py"
P = int(
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
    16,
)
R = 1 << 416
MASK = (1 << 52) - 1
WORD = (1 << 64) - 1


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("schedule_field_ops", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _limbs(value: int) -> list[int]:
    return [(value >> (52 * j)) & MASK for j in range(8)]


def _signed(word: int) -> int:
    return word - (1 << 64) if word >> 63 else word


def _evaluate(generator: ModuleType, graph: Any, order: list[int], outputs: list[str],
              a: int, b: int) -> int:
    """The operations in their scheduled order, on 64-bit lane words as the lane
    layer defines them (wrapping; madd52 reads the low 52 bits of its factors)."""
    values: dict[str, int] = {"zero": 0, "mask": MASK, "p_inv_neg": generator.P_INV_NEG}
    for j, limb in enumerate(_limbs(P)):
        values[f"p[{j}]"] = limb
    for j, (limb_a, limb_b) in enumerate(zip(_limbs(a), _limbs(b), strict=True)):
        values[f"a[{j}]"], values[f"b[{j}]"] = limb_a, limb_b
    for index in order:
        operation = graph.operations[index]
        args = [values[arg] for arg in operation.args]
        if operation.kind == "madd52lo":
            result = args[0] + (((args[1] & MASK) * (args[2] & MASK)) & MASK)
        elif operation.kind == "madd52hi":
            result = args[0] + (((args[1] & MASK) * (args[2] & MASK)) >> 52)
        elif operation.kind == "add":
            result = args[0] + args[1]
        elif operation.kind == "and":
            result = args[0] & args[1]
        elif operation.kind == "sra52":
            result = _signed(args[0]) >> 52
        else:
            raise AssertionError(operation.kind)
        values[operation.name] = result & WORD
    limbs = [values[name] for name in outputs]
    assert all(limb <= MASK for limb in limbs[:7]), "limbs 0 to 6 below 2^52"
    return sum(limb << (52 * j) for j, limb in enumerate(limbs))


def test_checked_in_file_is_what_the_generator_writes() -> None:
    result = subprocess.run([sys.executable, str(GENERATOR), "--check"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_each_schedule_orders_every_operation_after_its_inputs() -> None:
    generator = _generator()
    for build in (generator.multiplication, generator.squaring):
        graph, _ = build()
        order = generator.schedule(graph)
        assert sorted(order) == list(range(len(graph.operations)))
        position = {index: place for place, index in enumerate(order)}
        for index, operation in enumerate(graph.operations):
            for dependency in graph.dependencies(operation):
                assert position[dependency] < position[index], operation.name


def test_scheduled_operations_compute_the_montgomery_product() -> None:
    generator = _generator()
    rng = random.Random(0x5CED)
    edges = [0, 1, P - 1, P, P + 1, 2 * P - 1, MASK, 1 << 380, (1 << 381) - 1]
    inputs = [(x, y) for x in edges for y in edges]
    inputs += [(rng.randrange(2 * P), rng.randrange(2 * P)) for _ in range(300)]
    r_inverse = pow(R, -1, P)
    mul_graph, mul_outputs = generator.multiplication()
    sqr_graph, sqr_outputs = generator.squaring()
    mul_order, sqr_order = generator.schedule(mul_graph), generator.schedule(sqr_graph)
    for a, b in inputs:
        product = _evaluate(generator, mul_graph, mul_order, mul_outputs, a, b)
        assert product < 2 * P and product % P == a * b * r_inverse % P, (a, b)
        square = _evaluate(generator, sqr_graph, sqr_order, sqr_outputs, a, a)
        assert square < 2 * P and square % P == a * a * r_inverse % P, a
