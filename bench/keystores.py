"""Keystore and Keymanager API benchmarks.

Parts (run all, or one with --part NAME):
  decrypt   decrypt N scrypt (n=2^18, r=8, p=1) keystores in one process, then on a
            pool of 1 and of 2 spawned worker processes; goal: pool of 2 <= 0.55x one process.

Each part is a function in PARTS taking the parsed arguments; a part for
GET /eth/v1/keystores latency joins them when the Keymanager API exists.

Keep this module's top level to the standard library: spawned decryption
workers re-import the main module, and every import here would delay them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

DECRYPT_GOAL = 0.55
PASSWORD = "benchmark password"


def _encrypt_standard(secret: int) -> bytes:
    from keymanager.keystore import STANDARD_SCRYPT, encrypt_keystore

    return encrypt_keystore(secret, PASSWORD, kdf=STANDARD_SCRYPT).to_json()


def _cpu_idle_fraction(seconds: float) -> float | None:
    """Share of all cores' time spent idle over the next `seconds` (Linux /proc/stat)."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as stat:
            values = [int(value) for value in stat.readline().split()[1:]]
        return values[3] + values[4], sum(values)  # idle + iowait, total

    try:
        idle_before, total_before = sample()
        time.sleep(seconds)
        idle_after, total_after = sample()
    except OSError:
        return None
    return (idle_after - idle_before) / max(1, total_after - total_before)


def _wait_for_quiet(max_wait: float, *, threshold: float = 0.95) -> str:
    """Wait until the machine is idle (it is shared); returns a note for the output."""
    deadline = time.monotonic() + max_wait
    while True:
        idle = _cpu_idle_fraction(2.0)
        if idle is None:
            return "idle unknown"
        if idle >= threshold:
            return f"idle {idle:.0%} before"
        if time.monotonic() >= deadline:
            return f"NOT QUIET: idle {idle:.0%} before"


def _timed(action: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def bench_decrypt(args: argparse.Namespace) -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from keymanager.decrypt_pool import DecryptJob, decrypt_many, usable_cores

    secrets = [0xB0E5 + index for index in range(args.keys)]
    print(
        f"decrypt {args.keys} keystores, scrypt n=2^18 r=8 p=1, "
        f"{usable_cores()} usable cores, {args.rounds} rounds, "
        f"load average (1 min) before: {os.getloadavg()[0]:.2f}"
    )
    # Setup, not timed: making the keystores costs as much as opening them.
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=usable_cores(), mp_context=spawn) as pool:
        documents = list(pool.map(_encrypt_standard, secrets))
    jobs = [
        DecryptJob(f"keystore {index}", document, PASSWORD)
        for index, document in enumerate(documents)
    ]
    runs: dict[str, Callable[[], object]] = {
        "1 process": lambda: decrypt_many(jobs, processes=1, use_pool=False),
        "pool of 1": lambda: decrypt_many(jobs, processes=1, use_pool=True),
        "pool of 2": lambda: decrypt_many(jobs, processes=2, use_pool=True),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_number in range(1, args.rounds + 1):
        notes = []
        for name, run in runs.items():
            notes.append(_wait_for_quiet(args.quiet_wait))
            seconds, result = _timed(run)
            if result != secrets:
                raise SystemExit(f"{name}: decrypted secrets differ from the ones encrypted")
            times[name].append(seconds)
        ratio = times["pool of 2"][-1] / times["1 process"][-1]
        print(
            f"  round {round_number}: "
            + ", ".join(
                f"{name} {times[name][-1]:.2f} s ({note})"
                for name, note in zip(runs, notes, strict=True)
            )
            + f"; pool of 2 / 1 process = {ratio:.3f}"
        )
    # Other work on the machine only ever adds time, so the best round is the
    # least disturbed one; the median is printed too.
    for label, pick in (("best", min), ("median", statistics.median)):
        chosen = {name: pick(values) for name, values in times.items()}
        ratio = chosen["pool of 2"] / chosen["1 process"]
        scaling = chosen["pool of 2"] / chosen["pool of 1"]
        verdict = "meets" if ratio <= DECRYPT_GOAL else "MISSES"
        print(
            f"  {label}: "
            + ", ".join(f"{name} {chosen[name]:.2f} s" for name in runs)
            + f"; pool of 2 / 1 process = {ratio:.3f} ({verdict} the goal <= {DECRYPT_GOAL}),"
            + f" pool of 2 / pool of 1 = {scaling:.3f}"
        )
    print(f"  load average (1 min) after: {os.getloadavg()[0]:.2f}")


PARTS: dict[str, Callable[[argparse.Namespace], None]] = {
    "decrypt": bench_decrypt,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--part", choices=sorted(PARTS), help="run only this part")
    parser.add_argument("--keys", type=int, default=8, help="keystores to decrypt (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        help="before each timed run, wait up to this many seconds for an idle machine",
    )
    args = parser.parse_args()
    for name, part in PARTS.items():
        if args.part in (None, name):
            part(args)


if __name__ == "__main__":
    main()
