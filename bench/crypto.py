"""crypto_backend against its baselines, side by side in one run.

    python bench/crypto.py

Each line times our call and its baseline in alternating rounds (so load on the
machine hits both alike), prints the medians, their ratio, and the ratio the
issue asks for with PASS or MISS. It always exits 0: the figures are for a
person to judge. Lane processes are started and warmed (their key caches
filled) before any lane figure is taken, so no line includes process start-up.
"""

from __future__ import annotations

import os
import platform
import secrets
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

if __package__ is None:  # run as a script from a checkout without installation
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import crypto_backend  # noqa: E402
from crypto_backend import lanes  # noqa: E402

DST = crypto_backend.DST


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def compare(
    label: str,
    ours: Callable[[], object],
    baseline: Callable[[], object],
    goal: float,
    rounds: int,
    pairs: int = 1,
) -> None:
    """Time ``pairs`` alternating calls of each side per round; print the medians
    over rounds of the per-call times, and the median of the per-round ratios (each
    round's two sides share the machine's state, which drifts between rounds here)."""
    ours_times: list[float] = []
    baseline_times: list[float] = []
    for round_index in range(rounds):
        ours_total = baseline_total = 0.0
        for pair in range(pairs):
            # Alternate the order so neither side always runs second.
            if (round_index + pair) % 2:
                ours_total += timed(ours)
                baseline_total += timed(baseline)
            else:
                baseline_total += timed(baseline)
                ours_total += timed(ours)
        ours_times.append(ours_total / pairs)
        baseline_times.append(baseline_total / pairs)
    ours_median = statistics.median(ours_times)
    baseline_median = statistics.median(baseline_times)
    ratio = statistics.median(o / b for o, b in zip(ours_times, baseline_times, strict=True))
    verdict = "PASS" if ratio <= goal else "MISS"
    print(
        f"[{verdict}] {label}: {_ms(ours_median)} vs {_ms(baseline_median)}"
        f" = {ratio:.2f}x (goal <= {goal:.2f}x; median ratio of {rounds} rounds"
        + (f" of {pairs} alternating calls each)" if pairs > 1 else ")"),
        flush=True,
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _set_lanes(count: int) -> None:
    lanes.set_lane_count(count)
    if count > 1:
        started = crypto_backend.start_lanes()
        if started != count:
            raise SystemExit(f"could not start {count} lanes (got {started})")


def main() -> None:
    crypto_backend.use("blst")
    print(
        f"crypto_backend benchmark: backend {crypto_backend.backend_name()}, "
        f"pyblst {metadata.version('pyblst')}, Python {platform.python_version()}, "
        f"{len(os.sched_getaffinity(0))} usable cores, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )

    secret_keys = [secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1 for _ in range(1000)]
    pubkeys = [crypto_backend.sk_to_pk(sk) for sk in secret_keys]
    message = secrets.token_bytes(32)

    # -- signing -------------------------------------------------------------
    def thousand_signs() -> None:
        for sk in secret_keys:
            crypto_backend.sign(sk, message)

    def sign_many() -> None:
        crypto_backend.sign_many(secret_keys, message)

    _set_lanes(1)
    sign_many()  # first call outside the timing, as for the 2-lane line
    compare("sign_many(1,000 keys, one message), 1 lane  vs  1,000 x sign",
            sign_many, thousand_signs, 0.55, rounds=9)
    _set_lanes(2)
    sign_many()
    compare("sign_many(1,000 keys, one message), 2 lanes  vs  1,000 x sign",
            sign_many, thousand_signs, 0.35, rounds=9)

    # -- batch verification ----------------------------------------------------
    distinct_messages = [secrets.token_bytes(32) for _ in range(64)]
    distinct_sets = [
        crypto_backend.SignatureSet([pk], m, crypto_backend.sign(sk, m))
        for sk, pk, m in zip(secret_keys[:64], pubkeys[:64], distinct_messages, strict=True)
    ]
    shared_signatures = crypto_backend.sign_many(secret_keys[:64], message)
    shared_sets = [
        crypto_backend.SignatureSet([pk], message, signature)
        for pk, signature in zip(pubkeys[:64], shared_signatures, strict=True)
    ]

    def verify_each(sets: list[crypto_backend.SignatureSet]) -> Callable[[], None]:
        def run() -> None:
            for keys, text, signature in sets:
                if not crypto_backend.verify(keys[0], text, signature):
                    raise SystemExit("benchmark data failed to verify")
        return run

    def batch(sets: list[crypto_backend.SignatureSet]) -> Callable[[], None]:
        def run() -> None:
            if not crypto_backend.verify_signature_sets(sets):
                raise SystemExit("benchmark batch failed to verify")
        return run

    for lane_total in (1, 2):
        _set_lanes(lane_total)
        batch(distinct_sets)()  # fills the lanes' key caches
        batch(shared_sets)()
        lane_label = "1 lane" if lane_total == 1 else f"{lane_total} lanes"
        compare(f"verify_signature_sets(64 sets, 64 messages), {lane_label}  vs  64 x verify",
                batch(distinct_sets), verify_each(distinct_sets), 0.70, rounds=15)
        compare(f"verify_signature_sets(64 sets, one message), {lane_label}  vs  64 x verify",
                batch(shared_sets), verify_each(shared_sets), 0.35, rounds=15)

    # -- one verify against raw pyblst ------------------------------------------
    from pyblst import BlstP1Element, BlstP2Element, final_verify, miller_loop

    generator = BlstP1Element.uncompress(crypto_backend.constants.G1_GENERATOR)
    pubkey, signature = pubkeys[0], crypto_backend.sign(secret_keys[0], message)
    pubkey_point = BlstP1Element.uncompress(pubkey)
    signature_point = BlstP2Element.uncompress(signature)

    def backend_verify() -> None:
        if not crypto_backend.verify(pubkey, message, signature):
            raise SystemExit("benchmark signature failed to verify")

    def raw_on_decoded_points() -> None:
        hashed = BlstP2Element.hash_to_group(message, DST)
        key_side = miller_loop(pubkey_point, hashed)
        if not final_verify(key_side, miller_loop(generator, signature_point)):
            raise SystemExit("raw check failed")

    def raw_with_signature_decode() -> None:
        decoded = BlstP2Element.uncompress(signature)
        hashed = BlstP2Element.hash_to_group(message, DST)
        key_side = miller_loop(pubkey_point, hashed)
        if not final_verify(key_side, miller_loop(generator, decoded)):
            raise SystemExit("raw check failed")

    _set_lanes(1)
    backend_verify()  # caches the key
    print(
        "raw pyblst check = BlstP2Element.hash_to_group + miller_loop(pk, H) + "
        "miller_loop(g1, sig) + final_verify, on the public key and signature points "
        "decoded beforehand; verify gets bytes and also decodes and checks the signature "
        "(~0.1 ms) and looks the key up in its cache:",
        flush=True,
    )
    compare("verify  vs  raw pyblst pairing check on decoded points",
            backend_verify, raw_on_decoded_points, 1.10, rounds=9, pairs=50)
    compare("verify  vs  the same raw check plus BlstP2Element.uncompress(signature)",
            backend_verify, raw_with_signature_decode, 1.10, rounds=9, pairs=50)

    # -- fast_aggregate_verify over 512 cached keys -----------------------------------
    committee = pubkeys[:512]
    committee_signature = crypto_backend.aggregate(
        crypto_backend.sign_many(secret_keys[:512], message)
    )

    def committee_verify() -> None:
        if not crypto_backend.fast_aggregate_verify(committee, message, committee_signature):
            raise SystemExit("benchmark committee failed to verify")

    committee_verify()  # caches the keys
    compare("fast_aggregate_verify(512 cached keys)  vs  verify",
            committee_verify, backend_verify, 1.5, rounds=11, pairs=20)
    crypto_backend.shutdown_lanes()


if __name__ == "__main__":
    main()
