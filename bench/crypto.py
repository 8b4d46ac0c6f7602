"""crypto_backend against its baselines, side by side in one run.

    python bench/crypto.py [--simd-only]

Prints ``crypto_backend.info()`` first. Each line times our call and its
baseline in alternating rounds (so load on the machine hits both alike), prints
the medians, their ratio, and the line's goal ratio with PASS or MISS. It
always exits 0: the figures are for a person to judge. Every line's call is made
once before any timing (lane threads started, keys cached where the line says
so). A watcher thread samples this process's children every 100 ms all along; the last line
says how many it saw (lanes are threads, so it must be 0, whatever
``VALIDATOR_BLS_LANES`` says). The SIMD lines come first (``--simd-only``: only
them): the path that ran, and each SIMD-dispatched call against
``VALIDATOR_BLS_SIMD=off``.
"""

from __future__ import annotations

import os
import platform
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import psutil

if __package__ is None:  # run as a script from a checkout without installation
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import crypto_backend  # noqa: E402
from crypto_backend import baseline, simd  # noqa: E402

DST = crypto_backend.DST


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def compare(
    label: str,
    ours: Callable[[], object],
    baseline: Callable[[], object],
    goal: float | None,
    rounds: int,
    pairs: int = 1,
) -> None:
    """Time ``pairs`` alternating calls of each side per round; print the medians
    over rounds of the per-call times, and the median of the per-round ratios (each
    round's two sides share the machine's state, which drifts between rounds here).
    Without a goal the line is ``[INFO]``: a figure, not a goal's verdict."""
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
    if goal is None:
        verdict, goal_text = "INFO", "no goal"
    else:
        verdict, goal_text = ("PASS" if ratio <= goal else "MISS"), f"goal <= {goal:.2f}x"
    print(
        f"[{verdict}] {label}: {_ms(ours_median)} vs {_ms(baseline_median)}"
        f" = {ratio:.2f}x ({goal_text}; median ratio of {rounds} rounds"
        + (f" of {pairs} alternating calls each)" if pairs > 1 else ")"),
        flush=True,
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


class ChildWatch:
    """Samples this process's children every 100 ms until stopped, and once more then.

    psutil finds children by reading every process's /proc entry, with the GIL held: 1 to
    3 ms a sample here. At 10 ms intervals that held the GIL up to a third of the time and
    stalled the Python threads of the two-thread line between their calls."""

    def __init__(self) -> None:
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        me = psutil.Process()
        while True:
            self.most = max(self.most, len(me.children(recursive=True)))
            if self._stop.wait(0.1):
                break

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.most


def simd_lines(secret_keys: list[int], pubkeys: list[bytes], message: bytes) -> None:
    """The SIMD layer against VALIDATOR_BLS_SIMD=off, one thread. Where the CPU has
    AVX-512 IFMA the lines carry the SIMD layer's goals; elsewhere ``auto`` is the blst path
    itself, so each line shows what the dispatch costs (goal: within 1.02x)."""
    ifma = simd.ifma_available()
    auto_path = "avx512ifma" if ifma else "none"
    print(f"SIMD: VALIDATOR_BLS_SIMD={simd.mode()} ran path {simd.path()!r}; "
          f"auto picks {auto_path!r} on this CPU"
          + ("" if ifma else " (no avx512ifma in /proc/cpuinfo: the IFMA lines cannot be "
             "measured here; the lines below compare auto with off, i.e. the dispatch cost)"),
          flush=True)
    crypto_backend.set_lane_count(1)

    def under(mode: str, call: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            simd.configure(mode)
            return call()
        return run

    def goal(ifma_goal: float) -> float:
        # Without IFMA, auto is the blst path: the dispatch may cost at most 2%.
        return ifma_goal if ifma else 1.02

    rounds_of_mul = 20_000
    if ifma:
        compare("8-lane Fp multiplication (avx512ifma)  vs  8 blst mul_mont_384",
                lambda: baseline.lane_fp_mul_seconds("avx512ifma", rounds_of_mul),
                lambda: baseline.blst_fp_mul_seconds(rounds_of_mul), 0.18, rounds=9)
        # The line above is a dependent chain (latency); this is the throughput beside it.
        independent = statistics.median(
            baseline.lane_fp_mul_independent_seconds("avx512ifma", rounds_of_mul)
            for _ in range(9))
        blst_rounds = statistics.median(
            baseline.blst_fp_mul_seconds(rounds_of_mul) for _ in range(9))
        print(f"[INFO] 8-lane Fp multiplication (avx512ifma), independent products: "
              f"{independent / rounds_of_mul * 1e9:.0f} ns each vs 8 blst mul_mont_384 "
              f"{blst_rounds / rounds_of_mul * 1e9:.0f} ns = {independent / blst_rounds:.2f}x",
              flush=True)
    portable = statistics.median(
        baseline.lane_fp_mul_seconds("portable", rounds_of_mul) for _ in range(9))
    blst_mul = statistics.median(baseline.blst_fp_mul_seconds(rounds_of_mul) for _ in range(9))
    print(f"[INFO] 8-lane Fp multiplication on the portable layer: "
          f"{portable / rounds_of_mul * 1e9:.0f} ns vs 8 blst mul_mont_384 "
          f"{blst_mul / rounds_of_mul * 1e9:.0f} ns"
          f" = {portable / blst_mul:.2f}x (the layer tests run on; never a default)", flush=True)

    rounds = 9
    fresh = iter([
        [crypto_backend.sk_to_pk(secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1)
         for _ in range(4096)]
        for _ in range(4 * rounds + 2)
    ])

    def validate_many() -> None:
        crypto_backend.key_validate_many(next(fresh))

    # Under off, key_validate_many is 4,096 blst key validations (decode, subgroup
    # check, identity refusal) through the key cache; every call sees new keys.
    under("auto", validate_many)()
    compare("key_validate_many(4,096 new keys), SIMD auto  vs  VALIDATOR_BLS_SIMD=off",
            under("auto", validate_many), under("off", validate_many), goal(0.22),
            rounds=rounds)

    # eth_aggregate_pubkeys validates every key (cache misses here) before summing.
    big_rounds = 5
    many_fresh = iter([
        [crypto_backend.sk_to_pk(secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1)
         for _ in range(16_384)]
        for _ in range(2 * big_rounds + 1)
    ])

    def aggregate_new_keys() -> None:
        crypto_backend.eth_aggregate_pubkeys(next(many_fresh))

    under("auto", aggregate_new_keys)()
    compare("eth_aggregate_pubkeys(16,384 new keys), SIMD auto  vs  VALIDATOR_BLS_SIMD=off",
            under("auto", aggregate_new_keys), under("off", aggregate_new_keys), goal(0.22),
            rounds=big_rounds)

    signatures = crypto_backend.sign_many(secret_keys[:512], message)
    sets = [
        crypto_backend.SignatureSet([pk], m, crypto_backend.sign(sk, m))
        for sk, pk, m in zip(secret_keys[:64], pubkeys[:64],
                             [secrets.token_bytes(32) for _ in range(64)], strict=True)
    ]
    four_messages = [secrets.token_bytes(32) for _ in range(4)]
    sets_over_four = [
        crypto_backend.SignatureSet([pk], four_messages[index % 4],
                                    crypto_backend.sign(sk, four_messages[index % 4]))
        for index, (sk, pk) in enumerate(zip(secret_keys[:64], pubkeys[:64], strict=True))
    ]
    signature = crypto_backend.sign(secret_keys[0], message)
    committee_signature = crypto_backend.aggregate(signatures)
    # No line may get slower than blst by more than 2% where the lanes do not pay.
    lines: list[tuple[str, Callable[[], object], float, int, int]] = [
        ("aggregate(512 signatures)", lambda: crypto_backend.aggregate(signatures), 0.22, 9, 3),
        ("sign_many(1,000 keys, one message)",
         lambda: crypto_backend.sign_many(secret_keys, message), 0.30, 7, 2),
        ("verify_signature_sets(64 sets, 64 messages)",
         lambda: crypto_backend.verify_signature_sets(sets), 0.6, 11, 3),
        ("verify_signature_sets(64 sets, 4 messages)",
         lambda: crypto_backend.verify_signature_sets(sets_over_four), 0.45, 11, 3),
        ("verify (one pair, key cached)",
         lambda: crypto_backend.verify(pubkeys[0], message, signature), 0.75, 9, 20),
        ("fast_aggregate_verify(512 cached keys)",
         lambda: crypto_backend.fast_aggregate_verify(pubkeys[:512], message,
                                                      committee_signature), 0.75, 9, 5),
        ("sign(sk, m)", lambda: crypto_backend.sign(secret_keys[0], message), 1.02, 9, 20),
    ]
    for label, call, ifma_goal, line_rounds, pairs in lines:
        call()
        compare(f"{label}, SIMD auto  vs  VALIDATOR_BLS_SIMD=off", under("auto", call),
                under("off", call), goal(ifma_goal), rounds=line_rounds, pairs=pairs)
    def batch_of_64() -> None:
        if not crypto_backend.verify_signature_sets(sets):
            raise SystemExit("benchmark batch failed to verify")

    # The 8-lane Miller loop: its goal line needs IFMA; the portable
    # layer's figure says what the kernel's arithmetic costs there, never the goal.
    if not ifma:
        print("[INFO] verify_signature_sets(64 sets, 64 messages) on the avx512ifma Miller "
              "kernel vs VALIDATOR_BLS_SIMD=off (goal <= 0.60x): could not be measured, this "
              "CPU has no avx512ifma", flush=True)
    compare("verify_signature_sets(64 sets, 64 messages), SIMD portable (the test layer, "
            "not the goal line)  vs  VALIDATOR_BLS_SIMD=off",
            under("portable", batch_of_64), under("off", batch_of_64), None, rounds=5)
    # The Miller loops and final exponentiation alone, without the batch's decodes and
    # weighted sums: 64 pairs, 8 kernel passes on the portable layer.
    pairs = [(set_.pubkeys[0], set_.signature) for set_ in sets]
    if ifma:
        compare("Miller product + final exp of 64 pairs, avx512ifma kernel  vs  "
                "blst_miller_loop_n", lambda: baseline.miller_final_exp(pairs, "avx512ifma"),
                lambda: baseline.miller_final_exp(pairs, "none"), None, rounds=7)
    compare("Miller product + final exp of 64 pairs, portable kernel (the test layer, "
            "not a goal line)  vs  blst_miller_loop_n",
            lambda: baseline.miller_final_exp(pairs, "portable"),
            lambda: baseline.miller_final_exp(pairs, "none"), None, rounds=5)
    # The final exponentiation of one pairing check alone (verify's last step): the
    # cyclotomic kernel spreads one value over the lanes.
    # 50 random Fp12 values (coordinates below 2^380 < p) a round.
    fp12_values = b"".join(secrets.randbits(380).to_bytes(48, "big") for _ in range(12 * 50))
    if ifma:
        compare("final exponentiation of 50 values, avx512ifma cyclotomic kernel  vs  "
                "blst_final_exp", lambda: baseline.final_exp(fp12_values, "avx512ifma"),
                lambda: baseline.final_exp(fp12_values, "none"), None, rounds=7)
    # The hash to G2 of verify_signature_sets' distinct messages, alone.
    distinct = [secrets.token_bytes(32) for _ in range(64)]
    if ifma:
        compare("hash to G2 of 64 messages, avx512ifma kernel  vs  blst_hash_to_g2",
                lambda: baseline.hash_many_to_g2(distinct, "avx512ifma"),
                lambda: baseline.hash_many_to_g2(distinct, "none"), None, rounds=9)
    compare("hash to G2 of 64 messages, portable kernel (the test layer, not a goal line)  vs  "
            "blst_hash_to_g2", lambda: baseline.hash_many_to_g2(distinct, "portable"),
            lambda: baseline.hash_many_to_g2(distinct, "none"), None, rounds=3)
    sign_many_line = ("sign_many(1,000 keys, one message) on avx512ifma  vs  blst hash once + "
                      "1,000 blst multiplications")
    if not ifma:
        print(f"[INFO] {sign_many_line} (goal <= 0.30x): not measured, this CPU has no "
              "avx512ifma (the 'SIMD auto' sign_many line above is blst on both sides)",
              flush=True)
    sign_many = under("portable", lambda: crypto_backend.sign_many(secret_keys, message))
    blst_sign_many = under("off", lambda: crypto_backend.sign_many(secret_keys, message))
    portable_times = [timed(sign_many) for _ in range(3)]
    blst_times = [timed(blst_sign_many) for _ in range(3)]
    portable_median, blst_median = statistics.median(portable_times), statistics.median(blst_times)
    print(f"[INFO] sign_many(1,000 keys, one message) on the portable layer (8-lane kernel, "
          f"plain u64 code): {_ms(portable_median)} vs blst hash once + 1,000 blst "
          f"multiplications {_ms(blst_median)} = {portable_median / blst_median:.2f}x "
          "(the layer tests run on; never a default, not the IFMA goal line)", flush=True)
    simd.configure("auto")
    crypto_backend.set_lane_count(None)


def main() -> None:
    watch = ChildWatch()
    crypto_backend.use("blst")
    print(f"crypto_backend.info(): {crypto_backend.info()}", flush=True)
    print(
        f"Python {platform.python_version()}, {len(os.sched_getaffinity(0))} usable cores, "
        f"pyblst {metadata.version('pyblst')} (baseline only), load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        flush=True,
    )

    secret_keys = [secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1 for _ in range(1000)]
    pubkeys = [crypto_backend.sk_to_pk(sk) for sk in secret_keys]
    message = secrets.token_bytes(32)
    simd_lines(secret_keys, pubkeys, message)
    if "--simd-only" in sys.argv[1:]:
        print(f"child processes seen during the run: {watch.stop()}", flush=True)
        return

    # -- sign against the pyblst path of before ---------------------------------------
    from pyblst import BlstP2Element

    def pyblst_sign() -> None:
        BlstP2Element.hash_to_group(message, DST).scalar_mul(secret_keys[0]).compress()

    def native_sign() -> None:
        crypto_backend.sign(secret_keys[0], message)

    hashed = baseline.hash_to_g2(message)

    def bare_multiplication() -> None:
        baseline.sign_hashed(secret_keys[0], hashed)

    crypto_backend.set_lane_count(1)
    compare("sign(sk, m)  vs  pyblst's sign path (hash_to_group, scalar_mul, compress)",
            native_sign, pyblst_sign, 0.60, rounds=9, pairs=20)
    compare("sign(sk, m)  vs  hash_to_g2 + bare blst_sign_pk_in_g1 (baseline module)",
            native_sign, lambda: (baseline.sign_hashed(secret_keys[0],
                                                       baseline.hash_to_g2(message))),
            1.05, rounds=9, pairs=20)
    def median_of(call: Callable[[], object]) -> str:
        return _ms(statistics.median(timed(call) for _ in range(50)))

    print(f"for reference, alone: the bare multiplication on a message hashed beforehand "
          f"{median_of(bare_multiplication)}, hash_to_g2 "
          f"{median_of(lambda: baseline.hash_to_g2(message))}, pyblst's hash_to_group "
          f"{median_of(lambda: BlstP2Element.hash_to_group(message, DST))}", flush=True)

    # -- sign_many ------------------------------------------------------------------
    def thousand_signs() -> None:
        for sk in secret_keys:
            crypto_backend.sign(sk, message)

    def sign_many() -> None:
        crypto_backend.sign_many(secret_keys, message)

    for lanes, goal in ((1, 0.55), (2, 0.30)):
        crypto_backend.set_lane_count(lanes)
        sign_many()
        compare(f"sign_many(1,000 keys, one message), {_threads(lanes)}  vs  1,000 x sign",
                sign_many, thousand_signs, goal, rounds=7)

    # -- batch verification ----------------------------------------------------------
    distinct_messages = [secrets.token_bytes(32) for _ in range(64)]
    distinct_sets = [
        crypto_backend.SignatureSet([pk], m, crypto_backend.sign(sk, m))
        for sk, pk, m in zip(secret_keys[:64], pubkeys[:64], distinct_messages, strict=True)
    ]

    def verify_each() -> None:
        for keys, text, signature in distinct_sets:
            if not crypto_backend.verify(keys[0], text, signature):
                raise SystemExit("benchmark data failed to verify")

    def batch() -> None:
        if not crypto_backend.verify_signature_sets(distinct_sets):
            raise SystemExit("benchmark batch failed to verify")

    for lanes, goal in ((1, 0.60), (2, 0.35)):
        crypto_backend.set_lane_count(lanes)
        batch()
        compare(f"verify_signature_sets(64 sets, 64 messages), {_threads(lanes)}  vs  64 x verify",
                batch, verify_each, goal, rounds=11)

    # -- one verify against a bare blst core_verify -------------------------------------
    crypto_backend.set_lane_count(1)
    pubkey, signature = pubkeys[0], crypto_backend.sign(secret_keys[0], message)
    pubkey_point = baseline.decode_pubkey(pubkey)

    def backend_verify() -> None:
        if not crypto_backend.verify(pubkey, message, signature):
            raise SystemExit("benchmark signature failed to verify")

    def bare_core_verify() -> None:
        if not baseline.core_verify(pubkey_point, message, signature):
            raise SystemExit("bare core_verify failed")

    backend_verify()  # caches the key, as the baseline holds it decoded
    compare("verify (bytes, key cached)  vs  bare blst core_verify (key decoded, signature bytes)",
            backend_verify, bare_core_verify, 1.05, rounds=9, pairs=30)

    # -- two Python threads verifying at once -----------------------------------------
    def serial_verifies() -> None:
        for _ in range(2 * 20):
            backend_verify()

    def two_threads_verifying() -> None:
        workers = [
            threading.Thread(target=lambda: [backend_verify() for _ in range(20)])
            for _ in range(2)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    compare("2 x 20 verify on 2 Python threads at once  vs  the same 40 verify on one thread",
            two_threads_verifying, serial_verifies, 0.65, rounds=9)

    # -- loading 10,000 keys ------------------------------------------------------------
    rounds = 3
    # Fresh keys for every call of either side, so both start from an empty cache.
    fresh = iter([
        [crypto_backend.sk_to_pk(secrets.randbelow(crypto_backend.CURVE_ORDER - 1) + 1)
         for _ in range(10_000)]
        for _ in range(4 * rounds + 2)
    ])

    def warm() -> None:
        crypto_backend.warm_pubkeys(next(fresh))

    def validate_each() -> None:
        for key in next(fresh):
            crypto_backend.key_validate(key)

    crypto_backend.set_lane_count(2)
    warm()
    compare("warm_pubkeys(10,000 new keys), 2 threads  vs  10,000 x key_validate (new keys)",
            warm, validate_each, 0.55, rounds=rounds)
    # What one lane does against the same loop: the 2-thread line is this times the
    # machine's gain from a second core.
    crypto_backend.set_lane_count(1)
    warm()
    compare("warm_pubkeys(10,000 new keys), 1 thread  vs  10,000 x key_validate (new keys)",
            warm, validate_each, None, rounds=rounds)

    # -- a committee ---------------------------------------------------------------------
    committee = pubkeys[:512]
    committee_signature = crypto_backend.aggregate(
        crypto_backend.sign_many(secret_keys[:512], message)
    )

    def committee_verify() -> None:
        if not crypto_backend.fast_aggregate_verify(committee, message, committee_signature):
            raise SystemExit("benchmark committee failed to verify")

    crypto_backend.set_lane_count(1)
    committee_verify()  # caches the keys
    compare("fast_aggregate_verify(512 cached keys)  vs  verify",
            committee_verify, backend_verify, 1.5, rounds=9, pairs=20)
    crypto_backend.set_lane_count(None)
    print(f"child processes seen during the run: {watch.stop()}", flush=True)


def _threads(count: int) -> str:
    return "1 thread" if count == 1 else f"{count} threads"


if __name__ == "__main__":
    main()
