"""Clean release build of the native extension: the single-crate layout of before
against the workspace of crates, side by side in one run.

    python bench/native_build.py [--old-commit 2c2c4ed]

Each side is ``cargo build --release`` of the extension crate from an empty target
directory, with the same cargo registry cache (dependencies already downloaded,
nothing fetched), one after the other so that neither competes with the other. The
old layout is built from a ``git worktree`` of ``--old-commit`` in a temporary
directory, the new one from this checkout. Prints each side's wall and CPU time
(the build's own processes), the machine's load average before and after each (so
a reader sees what else ran), and the ratio against the goal (at most 0.50x) with
PASS or MISS. It always exits 0: the figures are for a person to judge. Takes as
long as the two builds (on a busy 2-core host, over ten minutes).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "2c2c4ed"
GOAL = 0.50


@dataclass(frozen=True)
class BuildTime:
    wall_s: float
    cpu_s: float
    load_before: float
    load_after: float


def clean_build(source: Path, package: str | None, target: Path) -> BuildTime:
    """``cargo build --release`` of ``source``'s extension into an empty ``target``."""
    shutil.rmtree(target, ignore_errors=True)
    command = ["cargo", "build", "--release", "--offline", "--quiet", "--target-dir", str(target)]
    if package is not None:
        command += ["-p", package]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run(command, cwd=source, check=True, timeout=3600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return BuildTime(wall, cpu, load_before, os.getloadavg()[0])


def describe(label: str, result: BuildTime) -> str:
    return (f"{label}: {result.wall_s:.0f} s wall, {result.cpu_s:.0f} s CPU "
            f"(load average {result.load_before:.1f} before, {result.load_after:.1f} after)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-commit", default=OLD_COMMIT)
    args = parser.parse_args()
    print(f"[INFO] {os.cpu_count()} CPUs; cargo: "
          + subprocess.run(["cargo", "--version"], capture_output=True, text=True,
                           check=True).stdout.strip(), flush=True)
    with tempfile.TemporaryDirectory(prefix="native-build-") as scratch:
        old_tree = Path(scratch) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old_tree),
                        args.old_commit], cwd=REPO_ROOT, check=True)
        try:
            old = clean_build(old_tree, None, Path(scratch) / "old-target")
            print("[INFO] " + describe(f"old layout ({args.old_commit}, one crate)", old),
                  flush=True)
            new = clean_build(REPO_ROOT, "crypto_backend_native", Path(scratch) / "new-target")
            print("[INFO] " + describe("new layout (workspace of crates)", new), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old_tree)],
                           cwd=REPO_ROOT, check=False)
    ratio = new.wall_s / old.wall_s
    verdict = "PASS" if ratio <= GOAL else "MISS"
    print(f"[{verdict}] clean cargo build --release of the extension, new vs old layout: "
          f"{ratio:.2f}x wall ({new.cpu_s / old.cpu_s:.2f}x CPU), goal <= {GOAL:.2f}x",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
