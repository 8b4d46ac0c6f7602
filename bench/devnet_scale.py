"""The client at scale: a devnet of 10,000 validators at 4-second slots for 2 epochs.

Runs ``validator devnet`` (the chain in its own process, the client in this
one) and prints:

- the share of attestation duties the chain received before two thirds of their
  slot (goal >= 99%), from the chain's summary;
- the client's mean CPU over the duty slots, in percent of one core (goal <= 50%):
  this process plus its children except the chain (signing lanes count);
- the per-slot record-and-sign time: the signer's attestation batch (checks, one
  durable record write, the signatures) from ``validator_attestation_batch_seconds``.

    python bench/devnet_scale.py [--validators 10000] [--seconds-per-slot 4] [--epochs 2]

The keystores (cheap devnet KDF) are made in a temporary directory first; their
making and loading are outside the measured window.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import psutil
from prometheus_client import REGISTRY

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from validator.devnet.command.interop_keystores import write_interop_keystores  # noqa: E402
from validator.devnet.command.run import DevnetOptions, run_devnet  # noqa: E402


class CpuSampler(threading.Thread):
    """Samples (wall time, CPU seconds of this process and its non-chain children)."""

    def __init__(self, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._halt = threading.Event()
        self._me = psutil.Process()
        self._done_children: dict[int, float] = {}

    def client_cpu(self) -> float:
        times = self._me.cpu_times()
        total = times.user + times.system
        for child in self._me.children(recursive=True):
            try:
                if "validator.devnet" in " ".join(child.cmdline()):
                    continue
                child_times = child.cpu_times()
                self._done_children[child.pid] = child_times.user + child_times.system
            except psutil.Error:
                continue
        # Children that ended keep their last reading.
        return total + sum(self._done_children.values())

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append((time.time(), self.client_cpu()))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def cpu_between(self, start: float, end: float) -> float:
        def at(when: float) -> float:
            before = [s for s in self.samples if s[0] <= when]
            after = [s for s in self.samples if s[0] >= when]
            if not before:
                return after[0][1]
            if not after:
                return before[-1][1]
            (t0, c0), (t1, c1) = before[-1], after[0]
            return c0 if t1 == t0 else c0 + (c1 - c0) * (when - t0) / (t1 - t0)

        return at(end) - at(start)


def histogram(name: str) -> tuple[float, float, list[tuple[float, float]]]:
    """(sum, count, cumulative buckets) of a histogram in the default registry."""
    total = count = 0.0
    buckets: list[tuple[float, float]] = []
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if sample.name == f"{name}_sum":
                total = sample.value
            elif sample.name == f"{name}_count":
                count = sample.value
            elif sample.name == f"{name}_bucket":
                buckets.append((float(sample.labels["le"]), sample.value))
    return total, count, sorted(buckets)


def quantile_bound(buckets: list[tuple[float, float]], count: float, q: float) -> float:
    """The upper bound of the bucket holding the q-quantile."""
    for bound, cumulative in buckets:
        if count and cumulative / count >= q:
            return bound
    return float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--validators", type=int, default=10_000)
    parser.add_argument("--seconds-per-slot", type=float, default=4.0)
    parser.add_argument("--slots-per-epoch", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="devnet-scale-") as temp:
        directory = Path(temp) / "validators"
        directory.mkdir()
        started = time.monotonic()
        write_interop_keystores(directory, range(arguments.validators))
        keystores_seconds = time.monotonic() - started
        summary_file = Path(temp) / "summary.json"
        slots = arguments.epochs * arguments.slots_per_epoch
        options = DevnetOptions(
            validators=arguments.validators,
            slots=slots,
            seconds_per_slot=arguments.seconds_per_slot,
            slots_per_epoch=arguments.slots_per_epoch,
            validators_dir=directory,
            summary=summary_file,
            progress=False,
            log_level=logging.ERROR,
            # Room for the client to load 10,000 keystores before slot 0.
            genesis_delay=max(20.0, arguments.validators / 500),
        )
        sampler = CpuSampler()
        sampler.start()
        code = run_devnet(options)
        sampler.stop()
        summary = orjson.loads(summary_file.read_bytes())

    sps = arguments.seconds_per_slot
    first = int(summary["counting_duties_from_slot"])
    window_start = int(summary["genesis_time"]) + first * sps
    window_end = int(summary["genesis_time"]) + (summary["current_slot"] + 1) * sps
    window_end = min(window_end, sampler.samples[-1][0])
    cpu = sampler.cpu_between(window_start, window_end)
    share = summary.get("attestations_before_two_thirds_share")
    batch_sum, batch_count, batch_buckets = histogram("validator_attestation_batch_seconds")

    print(
        f"devnet: {arguments.validators} validators, {sps:g} s slots, "
        f"{arguments.slots_per_epoch} slots per epoch, {arguments.epochs} epochs; "
        f"{psutil.cpu_count()} cores; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"keystores made (devnet KDF) in {keystores_seconds:.1f} s (outside the window)")
    print(
        f"exit {code}; slots {summary['slots']}, duties judged from slot {first}; "
        f"blocks {summary['blocks_proposed']}, attestations {summary['attestations_received']}, "
        f"aggregates {summary['aggregates_received']}, sync messages "
        f"{summary['sync_messages_received']}, contributions {summary['contributions_received']}"
    )
    print(
        f"invalid signatures {summary['invalid_signatures']}, slashable "
        f"{summary['slashable_messages']}, missed duties {summary['missed_duties']}, "
        f"client refusals {summary['client_refusals']}"
    )
    verdict = "PASS" if share is not None and share >= 0.99 else "MISS"
    shown = "n/a" if share is None else f"{share:.2%}"
    print(f"[{verdict}] attestations received before 2/3 of their slot: {shown} (goal >= 99%)")
    window = window_end - window_start
    percent = 100 * cpu / window if window > 0 else float("nan")
    verdict = "PASS" if percent <= 50 else "MISS"
    print(
        f"[{verdict}] client CPU over the duty window: {cpu:.1f} s in {window:.1f} s = "
        f"{percent:.1f}% of one core (goal <= 50%)"
    )
    if batch_count:
        mean_ms = 1000 * batch_sum / batch_count
        p50_ms = 1000 * quantile_bound(batch_buckets, batch_count, 0.5)
        max_ms = 1000 * quantile_bound(batch_buckets, batch_count, 1.0)
        print(
            f"record-and-sign per slot (attestation batch): mean {mean_ms:.1f} ms over "
            f"{int(batch_count)} batches; p50 <= {p50_ms:g} ms, max <= {max_ms:g} ms"
        )


if __name__ == "__main__":
    main()
