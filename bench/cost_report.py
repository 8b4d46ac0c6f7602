"""The hardware-independent cost report of the 8-lane kernels: per kernel pass (8
lanes), the lane operations by kind, per lane element, and the critical path in
cycles on four latency models, before and after a change.

    python bench/cost_report.py [--save FILE] [--baseline FILE]

It runs ``cargo run --release -p bls_lanes --example cost_report -- --json``: each
kernel pass once on the counting lane layer (``bls_lanes::lane::counting``), which
computes the portable layer's values (the example checks the answers against it)
and counts every lane operation; the critical path is the longest chain of
dependent operations with the latencies of LLVM's scheduling models for Zen 4, Zen
5, Ice Lake SP and Sapphire Rapids (their sources are in counting.rs). Nothing is
timed, so the figures are the same on every host. ``--save`` keeps this run's
figures as JSON; ``--baseline`` prints them next to a saved run's (before -> after).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
COMMAND = [
    "cargo",
    "run",
    "--quiet",
    "--release",
    "-p",
    "bls_lanes",
    "--example",
    "cost_report",
    "--",
    "--json",
]


def run_report() -> dict[str, Any]:
    output = subprocess.run(
        COMMAND, cwd=REPO_ROOT, check=True, capture_output=True, text=True
    ).stdout
    report: dict[str, Any] = json.loads(output)
    return report


def total(kernel: dict[str, Any]) -> int:
    return int(sum(kernel["counts"]))


def madds(report: dict[str, Any], kernel: dict[str, Any]) -> int:
    kinds: list[str] = report["kinds"]
    counts: list[int] = kernel["counts"]
    return counts[kinds.index("madd52lo")] + counts[kinds.index("madd52hi")]


def print_counts(report: dict[str, Any]) -> None:
    kinds: list[str] = report["kinds"]
    print("Lane operations per pass (8 lanes)")
    print(f"{'kernel':<14}" + "".join(f"{kind:>10}" for kind in kinds) + f"{'total':>11}")
    for kernel in report["kernels"]:
        cells = "".join(f"{count:>10}" for count in kernel["counts"])
        print(f"{kernel['name']:<14}{cells}{total(kernel):>11}")
    print()
    print(f"{'per lane element':<18}{'madds':>12}{'all ops':>12}  one pass is")
    for kernel in report["kernels"]:
        lanes = kernel["lanes"]
        print(
            f"{kernel['name']:<18}{madds(report, kernel) / lanes:>12.1f}"
            f"{total(kernel) / lanes:>12.1f}  {kernel['what']}"
        )


def print_paths(report: dict[str, Any]) -> None:
    models: list[str] = report["models"]
    print()
    print("Critical path per pass, cycles [multiply-add issue bound, cycles]")
    print(f"{'kernel':<14}" + "".join(f"{model:>24}" for model in models))
    for kernel in report["kernels"]:
        cells = "".join(
            f"{f'{path} [{bound:.0f}]':>24}"
            for path, bound in zip(kernel["critical_path"], kernel["madd_issue_bound"], strict=True)
        )
        print(f"{kernel['name']:<14}{cells}")


def print_comparison(before: dict[str, Any], after: dict[str, Any]) -> None:
    models: list[str] = after["models"]
    old = {kernel["name"]: kernel for kernel in before["kernels"]}
    print()
    print("Before -> after (baseline run -> this run), per pass")
    header = f"{'kernel':<14}{'madds':>20}{'all ops':>22}"
    print(header + "".join(f"{model:>24}" for model in models))
    for kernel in after["kernels"]:
        previous = old.get(kernel["name"])
        if previous is None:
            print(f"{kernel['name']:<14}  (not in the baseline)")
            continue
        line = (
            f"{kernel['name']:<14}"
            f"{f'{madds(before, previous)} -> {madds(after, kernel)}':>20}"
            f"{f'{total(previous)} -> {total(kernel)}':>22}"
        )
        for index in range(len(models)):
            pair = f"{previous['critical_path'][index]} -> {kernel['critical_path'][index]}"
            line += f"{pair:>24}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--save", type=Path, help="write this run's figures (JSON) here")
    parser.add_argument("--baseline", type=Path, help="a saved run to compare with")
    args = parser.parse_args()
    report = run_report()
    print_counts(report)
    print_paths(report)
    if args.baseline is not None:
        print_comparison(json.loads(args.baseline.read_text()), report)
    if args.save is not None:
        args.save.write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nsaved to {args.save}")


if __name__ == "__main__":
    main()
