"""Write src/field/scheduled.rs: the 8-lane Fp multiplication and squaring of
`field::fpx8`, the same arithmetic with its lane operations in the order of a
static list schedule.

    python crypto_backend/native/kernels/schedule_field_ops.py [--check]

Why: on the Intel IFMA host a product's ~300 vector operations share the core's two
512-bit ports, and the core picks among the operations it has taken in so far, not
the whole product. Written as rows (the whole 8x8 product, then the reduction rows),
the reduction's serial chain starts late and the ports idle while it runs; in this
order the chain's operations come first wherever they are ready. Measured side by
side on that host, a dependent chain of products took 0.88-0.91x the time of the
rows, of squarings 0.90x (docs/performance.md).

The schedule models that core: two ports, either taking a multiply-add, an addition
or a mask, only the first a shift; 4 cycles for a multiply-add, 1 for the others,
plus the 3 cycles measured for a value's round trip between a multiply-add and
another kind of operation (taken as 1 out of the multiply-add, 2 into it); limb i
of the first operand ready 3i cycles after limb 0 (a carry pass made it), the
second operand ready. Each cycle it issues the ready operations with the longest
path to the end first, ties in the order the operations were built.

The operations themselves are `fpx8`'s:
- the multiplication starts columns 0 to 7 at 2^52 - 1 (free: it is the first
  multiply-add's accumulator in place of zero), so that each reduction row's carry
  out of the cleared column, (t + 2^52 - 1) >> 52, is one shift, and m's
  multiply-add starts from -1/p's digit, which takes the 2^52 - 1 back out of m
  (`bias_digit`);
- the squaring is `sqr_inline`'s (doubled off-diagonal products), unbiased.
`--check` exits 1 if the file differs from what this script writes (a test runs it).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "src" / "field" / "scheduled.rs"

MASK52 = (1 << 52) - 1
P_INV_NEG = 0x3FFFCFFFCFFFD  # -p^-1 mod 2^52, as fpx8's P_INV_NEG
MULTIPLY_ADD = ("madd52lo", "madd52hi")
LATENCY = {"madd52lo": 4, "madd52hi": 4, "add": 1, "and": 1, "sra52": 1}
PORTS = {"madd52lo": (0, 1), "madd52hi": (0, 1), "add": (0, 1), "and": (0, 1), "sra52": (0,)}
FROM_MULTIPLY_ADD_DELAY = 1
TO_MULTIPLY_ADD_DELAY = 2
LIMB_ARRIVAL = 3


def bias_digit() -> int:
    """m's starting digit for a column biased by 2^52 - 1: m = (t - (2^52 - 1)) * (-1/p)
    = t * (-1/p) + (-1/p) mod 2^52, as -(2^52 - 1) is 1 mod 2^52: -1/p's own digit,
    which `reduce` starts the biased rows' m from (`p_inv_neg`)."""
    return (-MASK52 * P_INV_NEG) % (1 << 52)


@dataclass
class Operation:
    kind: str
    args: list[str]
    name: str


@dataclass
class Graph:
    """Operations in the order built; an argument is an operation's name or an
    input (a[i], b[j], p[j], zero, mask, p_inv_neg)."""

    operations: list[Operation] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def op(self, kind: str, args: list[str], name: str) -> str:
        assert name not in self.index, name
        self.index[name] = len(self.operations)
        self.operations.append(Operation(kind, args, name))
        return name

    def dependencies(self, operation: Operation) -> list[int]:
        return [self.index[arg] for arg in operation.args if arg in self.index]


class Columns:
    """The 16 column sums, each value named after its column and update count."""

    def __init__(self, graph: Graph, start: list[str]) -> None:
        self.graph, self.value, self.updates = graph, list(start), [0] * 16

    def update(self, column: int, kind: str, factors: list[str]) -> None:
        """A multiply-add into the column's sum."""
        self.set(column, kind, [self.value[column], *factors])

    def set(self, column: int, kind: str, args: list[str]) -> None:
        """The column's sum becomes this operation's result."""
        self.updates[column] += 1
        self.value[column] = self.graph.op(kind, args, f"t{column}_{self.updates[column]}")


def reduce(graph: Graph, t: Columns, biased: set[int]) -> list[str]:
    """`fpx8::montgomery_reduce`: 8 rows, then the carry pass; columns in `biased`
    hold 2^52 - 1 on top of their value."""
    for i in range(8):
        start = "p_inv_neg" if i in biased else "zero"
        m = graph.op("madd52lo", [start, t.value[i], "p_inv_neg"], f"m{i}")
        if i in biased:
            carry = graph.op("sra52", [t.value[i]], f"carry{i}")
        else:
            rounded = graph.op("add", [t.value[i], "mask"], f"rounded{i}")
            carry = graph.op("sra52", [rounded], f"carry{i}")
        low = graph.op("madd52lo", [carry, m, "p[1]"], f"low{i}")
        high = graph.op("madd52hi", [t.value[i + 1], m, "p[0]"], f"high{i}")
        t.set(i + 1, "add", [high, low])
        for j in range(1, 8):
            t.update(i + j + 1, "madd52hi", [m, f"p[{j}]"])
            if j >= 2:
                t.update(i + j, "madd52lo", [m, f"p[{j}]"])
    limbs = t.value[8:16]
    for j in range(7):
        out = graph.op("sra52", [limbs[j]], f"carry_out{j}")
        limbs[j + 1] = graph.op("add", [limbs[j + 1], out], f"limb{j + 1}_carried")
        limbs[j] = graph.op("and", [limbs[j], "mask"], f"limb{j}")
    return limbs


def multiplication() -> tuple[Graph, list[str]]:
    graph = Graph()
    t = Columns(graph, ["mask"] * 8 + ["zero"] * 8)
    for i in range(8):
        for j in range(8):
            t.update(i + j, "madd52lo", [f"a[{i}]", f"b[{j}]"])
            if i + j < 14:  # hi(a7*b7) is 0 (fpx8's module comment)
                t.update(i + j + 1, "madd52hi", [f"a[{i}]", f"b[{j}]"])
    return graph, reduce(graph, t, biased=set(range(8)))


def squaring() -> tuple[Graph, list[str]]:
    graph = Graph()
    t = Columns(graph, ["zero"] * 16)
    for i in range(8):
        for j in range(i + 1, 8):
            t.update(i + j, "madd52lo", [f"a[{i}]", f"a[{j}]"])
            t.update(i + j + 1, "madd52hi", [f"a[{i}]", f"a[{j}]"])
    for i in range(1, 8):
        t.set(i, "add", [t.value[i], t.value[i]])
        t.set(i + 7, "add", [t.value[i + 7], t.value[i + 7]])
    for i in range(8):
        t.update(2 * i, "madd52lo", [f"a[{i}]", f"a[{i}]"])
        if i < 7:
            t.update(2 * i + 1, "madd52hi", [f"a[{i}]", f"a[{i}]"])
    return graph, reduce(graph, t, biased=set())


def delay(producer: Operation, consumer: Operation) -> int:
    produced, consumed = producer.kind in MULTIPLY_ADD, consumer.kind in MULTIPLY_ADD
    if produced and not consumed:
        return FROM_MULTIPLY_ADD_DELAY
    if consumed and not produced:
        return TO_MULTIPLY_ADD_DELAY
    return 0


def schedule(graph: Graph) -> list[int]:
    operations = graph.operations
    users: list[list[int]] = [[] for _ in operations]
    for index, operation in enumerate(operations):
        for dependency in graph.dependencies(operation):
            users[dependency].append(index)
    # The longest path from each operation to the end, delays included.
    priority = [0] * len(operations)
    for index in reversed(range(len(operations))):
        operation = operations[index]
        priority[index] = LATENCY[operation.kind] + max(
            (delay(operation, operations[user]) + priority[user] for user in users[index]),
            default=0)

    def arrival(operation: Operation) -> int:
        # The first operand's limbs come out of the last carry pass one by one.
        limbs = [int(arg[2]) for arg in operation.args if arg.startswith("a[")]
        return LIMB_ARRIVAL * max(limbs, default=0)

    done: dict[int, int] = {}
    waiting = list(range(len(operations)))
    order: list[int] = []
    cycle = 0
    while waiting:
        ready = [
            index for index in waiting
            if arrival(operations[index]) <= cycle and all(
                dependency in done
                and done[dependency] + delay(operations[dependency], operations[index]) <= cycle
                for dependency in graph.dependencies(operations[index]))
        ]
        ready.sort(key=lambda index: (-priority[index], index))
        busy: set[int] = set()
        for index in ready:
            free = [port for port in PORTS[operations[index].kind] if port not in busy]
            if free:
                busy.add(free[0])
                done[index] = cycle + LATENCY[operations[index].kind]
                order.append(index)
                waiting.remove(index)
        cycle += 1
    return order


def emit(name: str, doc: str, graph: Graph, outputs: list[str], operands: str) -> str:
    lines = [f"/// {line}" if line else "///" for line in doc.split("\n")]
    used = {arg for operation in graph.operations for arg in operation.args}
    lines += [
        "#[inline(always)]",
        f"pub(crate) fn {name}<O: LaneOps>(o: O, {operands}) -> Fe<O> {{",
        *(["    let zero = o.splat(0);"] if "zero" in used else []),
        "    let mask = o.splat(MASK52);",
        "    let p_inv_neg = o.splat(P_INV_NEG);",
        "    let p = Fpx8::new(o).constant(&P);",
    ]
    for index in schedule(graph):
        operation = graph.operations[index]
        args = ", ".join(operation.args)
        call = "o.sra::<52>" if operation.kind == "sra52" else f"o.{operation.kind}"
        lines.append(f"    let {operation.name} = {call}({args});")
    lines.append(f"    [{', '.join(outputs)}]")
    lines.append("}")
    return "\n".join(lines)


def source() -> str:
    header = '''//! GENERATED by `crypto_backend/native/kernels/schedule_field_ops.py`: do not edit;
//! change the script and run it (a test checks the two agree).
//!
//! `fpx8`'s 8-lane multiplication and squaring, their lane operations in the order
//! of a static list schedule for a core with two 512-bit ports (the script says
//! why and how). Same arithmetic, same bits as the rows of `Fpx8::add_product` and
//! `Fpx8::montgomery_reduce`; only the order of the lines differs, and the
//! multiplication's columns 0 to 7 start at 2^52 - 1 so that each reduction row's
//! carry is one shift (m's multiply-add starts from -1/p's digit to take it out).

use crate::field::fpx8::{Fe, Fpx8, P, P_INV_NEG};
use crate::lane::{LaneOps, MASK52};
'''
    assert bias_digit() == P_INV_NEG
    mul_graph, mul_out = multiplication()
    sqr_graph, sqr_out = squaring()
    mul = emit("mul", "a*b/R mod p in [0, 2p), as `Fpx8::mul` (its bounds).", mul_graph, mul_out,
               "a: &Fe<O>, b: &Fe<O>")
    sqr = emit("sqr", "a^2/R mod p in [0, 2p), as `Fpx8::sqr`: the same bits as `mul(a, a)`.",
               sqr_graph, sqr_out, "a: &Fe<O>")
    return f"{header}\n{mul}\n\n{sqr}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the file differs from what this script writes")
    arguments = parser.parse_args()
    text = source()
    if arguments.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT} is not what {Path(__file__).name} writes: run it", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
