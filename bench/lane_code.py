"""The compiled IFMA kernels, read from their machine code: counts per
kernel and llvm-mca's estimate of their cost on four AVX-512 IFMA CPUs.

    python bench/lane_code.py [--mca llvm-mca-19] [--kernel WORD]

Every kernel runs on the IFMA layer through one ``Ifma::run`` entry compiled with
the features (``bls_lanes::lane::Ifma::run::with_features::<K>``). This builds the
kernels crate as the extension's release profile does, with symbols that name the
kernel type K (``-C symbol-mangling-version=v0``, into ``target/lane_code``; about a
minute; machine code in the library, so thin LTO off for it), reads each entry from
``objdump -d`` (any x86 host: nothing runs) and prints per kernel: instructions,
52-bit multiply-adds (``vpmadd52luq``/``vpmadd52huq``), 512-bit loads and stores,
how many of those touch the stack (spills and reloads: ``rsp``/``rbp``-relative),
branches, and loads plus stores per multiply-add. Then it feeds each function's
instructions (branches dropped: the kernels are straight-line code but for their
loops over public bits, so a loop body counts once) to ``llvm-mca`` for ``znver4``,
``znver5``, ``icelake-server`` and ``sapphirerapids`` and prints its cycles per pass
of the block and per lane (a pass is 8 lanes). These are static estimates, for
comparing one build with another, not timings.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

CPUS = ("znver4", "znver5", "icelake-server", "sapphirerapids")
ENTRY = "Ifma>::run::with_features::<"
REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET = REPO_ROOT / "target" / "lane_code"
STACK = re.compile(r"\((%rsp|%rbp)")


@dataclass
class Kernel:
    name: str
    lines: list[str]


def build_kernels() -> Path:
    subprocess.run(
        ["cargo", "rustc", "--release", "--quiet", "-p", "bls_lanes", "--lib",
         "--target-dir", str(TARGET), "--", "-C", "symbol-mangling-version=v0"],
        cwd=REPO_ROOT, check=True, timeout=1800,
        # Machine code in the rlib, not LTO bitcode (the kernels are whole inside
        # their entries either way).
        env={**os.environ, "CARGO_PROFILE_RELEASE_LTO": "false"},
    )
    return TARGET / "release" / "libbls_lanes.rlib"


def kernels(library: Path) -> list[Kernel]:
    listing = subprocess.run(
        ["objdump", "-d", "-C", "--no-show-raw-insn", str(library)],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    found: list[Kernel] = []
    current: Kernel | None = None
    for line in listing.splitlines():
        if line.endswith(">:"):
            name = line.split("<", 1)[1][:-2]
            current = None
            if ENTRY in name:
                kernel = name.split(ENTRY, 1)[1].rsplit(">", 1)[0].replace("bls_lanes::", "")
                current = Kernel(kernel, [])
                found.append(current)
        elif current is not None and "\t" in line:
            instruction = line.split("\t", 1)[1].strip()
            if instruction:
                current.lines.append(instruction)
    return found


def counts(kernel: Kernel) -> Counter[str]:
    seen: Counter[str] = Counter()
    for text in kernel.lines:
        mnemonic, _, operands = text.partition(" ")
        seen["instructions"] += 1
        if mnemonic.startswith("vpmadd52"):
            seen["madd52"] += 1
        if mnemonic.startswith("j") or mnemonic.startswith("call"):
            seen["branches"] += 1
        if "zmm" in operands and "(" in operands:
            # AT&T order: source first. A memory source is a load, else a store
            # (a memory operand of an arithmetic instruction is a load too).
            first = operands.split(",", 1)[0]
            is_store = mnemonic.startswith("vmov") and "(" not in first
            seen["stores" if is_store else "loads"] += 1
            if STACK.search(operands):
                seen["stack"] += 1
    return seen


def mca_cycles(mca: str, cpu: str, kernel: Kernel) -> float | None:
    body = [
        text for text in kernel.lines
        if not re.match(r"(j\w*|call\w*|ret\w*|nop\w*|int3|ud2|endbr64|push|pop)\b", text)
    ]
    # objdump's symbolic suffixes (`<name+0x..>`) are not assembler syntax.
    source = "\n".join(re.sub(r"\s*<[^>]*>", "", text) for text in body) + "\n"
    result = subprocess.run(
        [mca, f"-mcpu={cpu}", "-iterations=10", "-timeline=false", "-resource-pressure=false",
         "-instruction-info=false"],
        input=source, capture_output=True, text=True, timeout=600,
    )
    match = re.search(r"Total Cycles:\s+(\d+)", result.stdout)
    if result.returncode != 0 or match is None:
        return None
    return int(match.group(1)) / 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mca", default=shutil.which("llvm-mca-19") or "llvm-mca")
    parser.add_argument("--kernel", default="", help="only kernels whose name contains this")
    args = parser.parse_args()
    library = build_kernels()
    found = [kernel for kernel in kernels(library) if args.kernel in kernel.name]
    print(f"[INFO] {library.name}: {len(found)} IFMA kernel entries", flush=True)
    print(f"{'kernel':58} {'instr':>7} {'madd52':>7} {'loads':>6} {'stores':>6} "
          f"{'stack':>6} {'branch':>6} {'mem/madd':>8}")
    for kernel in found:
        seen = counts(kernel)
        per = (seen["loads"] + seen["stores"]) / seen["madd52"] if seen["madd52"] else 0.0
        print(f"{kernel.name[-58:]:58} {seen['instructions']:7} {seen['madd52']:7} "
              f"{seen['loads']:6} {seen['stores']:6} {seen['stack']:6} {seen['branches']:6} "
              f"{per:8.2f}", flush=True)
    if shutil.which(args.mca) is None:
        print(f"[INFO] {args.mca} not found (Debian: apt-get install llvm-19): no estimates")
        return
    print(f"\nllvm-mca ({args.mca}), cycles per pass of each block (8 lanes) / per lane")
    print(f"{'kernel':58} " + " ".join(f"{cpu:>20}" for cpu in CPUS))
    for kernel in found:
        cells = []
        for cpu in CPUS:
            cycles = mca_cycles(args.mca, cpu, kernel)
            cells.append(f"{'n/a':>20}" if cycles is None
                         else f"{cycles:11.0f} / {cycles / 8:6.0f}")
        print(f"{kernel.name[-58:]:58} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
