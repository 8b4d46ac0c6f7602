"""Keystore and Keymanager API benchmarks.

Parts (run all, or one with --part NAME):
  decrypt   decrypt N scrypt (n=2^18, r=8, p=1) keystores in one process, then on a
            pool of 1 and of 2 spawned worker processes; goal: pool of 2 <= 0.55x one process.
  startup   ValidatorStore.load_all (what `validator run` does at start) over scrypt n=2^18
            keystores: warm (key cache present) with --startup-keys (10,000) against cold
            (no cache) with --cold-keys (500); goals: warm <= 10 s, warm / cold <= 0.01,
            the cold time of 10,000 keys taken as --cold-keys' per-key time x 10,000.
  list      GET /eth/v1/keystores with 10,000 keys loaded, through the real Keymanager API
            server on 127.0.0.1, from a client in another process; p50/p99 latency over
            --requests sequential requests; goal: p99 <= 100 ms.

Each part is a function in PARTS taking the parsed arguments.

The machine may be shared: each timed run (`_measure`) first waits for other
processes to go quiet and is repeated when they used more than 0.05 of a core
while it ran; the output shows that load per run and summaries use undisturbed
runs only.

Keep this module's top level to the standard library: spawned decryption
workers re-import the main module, and every import here would delay them.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# First, even when an editable install lists it later: bench/slashing_protection.py would
# otherwise shadow the package of that name for `python bench/keystores.py`.
if sys.path[:1] != [str(REPO_ROOT)]:
    sys.path.insert(0, str(REPO_ROOT))

DECRYPT_GOAL = 0.55
STARTUP_WARM_GOAL_SECONDS = 10.0
STARTUP_RATIO_GOAL = 0.01
LIST_GOAL_P99_MS = 100.0
# Other processes using more than this many cores on average disturb a timed run.
DISTURBANCE_LIMIT = 0.05
PASSWORD = "benchmark password"


def _encrypt_standard(secret: int) -> bytes:
    from keymanager.keystore import STANDARD_SCRYPT, encrypt_keystore

    return encrypt_keystore(secret, PASSWORD, kdf=STANDARD_SCRYPT).to_json()


def _system_busy_seconds() -> float | None:
    """CPU time all processes on the machine have used so far (Linux /proc/stat)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    """CPU time of this process and its finished children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _others_cores(seconds: float) -> float | None:
    """Cores used on average by other processes over the next `seconds`."""
    busy, own = _system_busy_seconds(), _own_cpu_seconds()
    time.sleep(seconds)
    busy_after = _system_busy_seconds()
    if busy is None or busy_after is None:
        return None
    return max(0.0, (busy_after - busy) - (_own_cpu_seconds() - own)) / seconds


@dataclass
class Measurement:
    seconds: float
    result: object
    others_cores: float | None  # other processes' load during the run, in cores
    attempts: int


def _measure(action: Callable[[], object], args: argparse.Namespace) -> Measurement:
    """Time `action` on a quiet machine; retry a run that other processes disturbed.

    The machine is shared: before a run we wait (up to --quiet-wait seconds)
    until other processes use under 0.05 of a core, and a run during which they
    used more than that is repeated (up to --attempts times; the last is kept).
    """
    for attempt in range(1, args.attempts + 1):
        deadline = time.monotonic() + args.quiet_wait
        while time.monotonic() < deadline:
            others = _others_cores(1.0)
            if others is None or others < DISTURBANCE_LIMIT:
                break
        busy, own = _system_busy_seconds(), _own_cpu_seconds()
        start = time.perf_counter()
        result = action()
        seconds = time.perf_counter() - start
        busy_after = _system_busy_seconds()
        others_cores = None
        if busy is not None and busy_after is not None:
            others_time = (busy_after - busy) - (_own_cpu_seconds() - own)
            others_cores = max(0.0, others_time) / seconds
        if others_cores is None or others_cores < DISTURBANCE_LIMIT or attempt == args.attempts:
            return Measurement(seconds, result, others_cores, attempt)
    raise AssertionError("unreachable")


def _wait_until_quiet(args: argparse.Namespace) -> str:
    """Wait (up to --quiet-wait seconds) for other processes to go quiet; a note on it."""
    deadline = time.monotonic() + args.quiet_wait
    while True:
        others = _others_cores(1.0)
        if others is None:
            return "others' load unknown"
        if others < DISTURBANCE_LIMIT or time.monotonic() >= deadline:
            flag = "" if others < DISTURBANCE_LIMIT else " DISTURBED"
            return f"others {others:.2f} cores before{flag}"


def _describe(measurement: Measurement) -> str:
    if measurement.others_cores is None:
        return f"{measurement.seconds:.2f} s"
    flag = "" if measurement.others_cores < DISTURBANCE_LIMIT else " DISTURBED"
    return (
        f"{measurement.seconds:.2f} s (others {measurement.others_cores:.2f} cores,"
        f" attempt {measurement.attempts}{flag})"
    )


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
        descriptions = []
        for name, run in runs.items():
            measurement = _measure(run, args)
            if measurement.result != secrets:
                raise SystemExit(f"{name}: decrypted secrets differ from the ones encrypted")
            if measurement.others_cores is None or measurement.others_cores < DISTURBANCE_LIMIT:
                times[name].append(measurement.seconds)
            descriptions.append(f"{name} {_describe(measurement)}")
        print(f"  round {round_number}: " + ", ".join(descriptions))
    if not all(times.values()):
        print("  no undisturbed run of every kind: no summary (the machine was busy)")
        return
    # Summaries use undisturbed runs only.
    for label, pick in (("best", min), ("median", statistics.median)):
        chosen = {name: pick(values) for name, values in times.items()}
        ratio = chosen["pool of 2"] / chosen["1 process"]
        scaling = chosen["pool of 2"] / chosen["pool of 1"]
        verdict = "meets" if ratio <= DECRYPT_GOAL else "MISSES"
        print(
            f"  {label} of undisturbed runs: "
            + ", ".join(f"{name} {chosen[name]:.2f} s" for name in runs)
            + f"; pool of 2 / 1 process = {ratio:.3f} ({verdict} the goal <= {DECRYPT_GOAL}),"
            + f" pool of 2 / pool of 1 = {scaling:.3f}"
        )
    print(f"  load average (1 min) after: {os.getloadavg()[0]:.2f}")


def _percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    rank = max(1, min(len(sorted_values), round(fraction * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


def _list_client(port: int, token: str, requests: int, results: object) -> None:
    """Runs in a spawned process: sequential GETs over one keep-alive connection."""
    import http.client
    import json

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    times = []
    keys = 0
    for _ in range(requests):
        start = time.perf_counter()
        connection.request("GET", "/eth/v1/keystores", headers=headers)
        response = connection.getresponse()
        body = response.read()
        times.append(time.perf_counter() - start)
        if response.status != 200:
            raise SystemExit(f"GET /eth/v1/keystores answered {response.status}: {body[:200]!r}")
        keys = len(json.loads(body)["data"])
    connection.close()
    results.put((times, keys, len(body)))  # type: ignore[attr-defined]


def _write_keystores_fast(directory: Path, secrets: list[int]) -> None:
    """Benchmark setup: real keystores (pbkdf2 c=1) in the store's layout, written without
    fsync (the store's own durable writes would take minutes for 10,000 files)."""
    from keymanager.keystore import Pbkdf2Cost, encrypt_keystore
    from keymanager.pubkeys import format_pubkey

    keystores = directory / "keystores"
    passwords = directory / "secrets"
    keystores.mkdir(mode=0o700, parents=True)
    passwords.mkdir(mode=0o700)
    for index, secret in enumerate(secrets):
        keystore = encrypt_keystore(
            secret, PASSWORD, kdf=Pbkdf2Cost(c=1), path=f"m/12381/3600/{index}/0/0"
        )
        assert keystore.pubkey is not None
        name = format_pubkey(keystore.pubkey)
        (keystores / f"{name}.json").write_bytes(keystore.to_json())
        (passwords / name).write_text(PASSWORD)


def _write_standard_keystores(directory: Path, secrets: list[int]) -> dict[bytes, int]:
    """Benchmark setup: real EIP-2335 keystores with scrypt n=2^18, r=8, p=1, in the
    store's layout, written without fsync.

    To make 10,000 of them in seconds they share one salt and one password, so one scrypt
    gives the decryption key of all (each still has its own IV, ciphertext and checksum).
    A reader gains nothing from that: the store runs the full scrypt for every keystore it
    decrypts (the cold part measures exactly that). Returns pubkey -> secret.
    """
    import hashlib
    import json
    import uuid

    from crypto_backend import sk_to_pk
    from keymanager.keystore_crypto import (
        ScryptInput,
        aes_128_ctr,
        checksum,
        derive_decryption_key,
        normalize_password,
    )
    from keymanager.pubkeys import format_pubkey

    salt = hashlib.sha256(b"bench/keystores.py startup salt").digest()
    kdf = ScryptInput(salt=salt, dklen=32, n=2**18, r=8, p=1)
    decryption_key = derive_decryption_key(kdf, normalize_password(PASSWORD))
    keystores, passwords = directory / "keystores", directory / "secrets"
    keystores.mkdir(mode=0o700, parents=True)
    passwords.mkdir(mode=0o700)
    by_pubkey = {}
    for index, secret in enumerate(secrets):
        iv = os.urandom(16)
        ciphertext = aes_128_ctr(decryption_key, iv, secret.to_bytes(32, "big"))
        pubkey = sk_to_pk(secret)
        document = {
            "crypto": {
                "kdf": {
                    "function": "scrypt",
                    "params": {"dklen": 32, "n": kdf.n, "r": kdf.r, "p": kdf.p, "salt": salt.hex()},
                    "message": "",
                },
                "checksum": {
                    "function": "sha256",
                    "params": {},
                    "message": checksum(decryption_key, ciphertext).hex(),
                },
                "cipher": {
                    "function": "aes-128-ctr",
                    "params": {"iv": iv.hex()},
                    "message": ciphertext.hex(),
                },
            },
            "description": "",
            "pubkey": pubkey.hex(),
            "path": f"m/12381/3600/{index}/0/0",
            "uuid": str(uuid.uuid4()),
            "version": 4,
        }
        name = format_pubkey(pubkey)
        (keystores / f"{name}.json").write_text(json.dumps(document, indent=2))
        (passwords / name).write_text(PASSWORD)
        by_pubkey[pubkey] = secret
    return by_pubkey


def bench_startup(args: argparse.Namespace) -> None:
    import tempfile

    from keymanager.key_cache import write_cache
    from keymanager.store import ValidatorStore

    print(
        f"start-up: load_all over scrypt n=2^18 r=8 p=1 keystores; warm {args.startup_keys} keys "
        f"(key cache present), cold {args.cold_keys} keys (no cache); load average (1 min) "
        f"before: {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as temp:
        warm_dir, cold_dir = Path(temp) / "warm", Path(temp) / "cold"
        setup = time.perf_counter()
        warm_secrets = [0xB007 + index for index in range(args.startup_keys)]
        expected_warm = _write_standard_keystores(warm_dir, warm_secrets)
        # The cache as a cold start writes it (write_cache is the loader's own call),
        # without the hours of decrypting 10,000 keystores first.
        warm_store = ValidatorStore(warm_dir)
        with warm_store.lock:
            material = warm_store._material(expected_warm)
        write_cache(warm_store.key_cache_path, expected_warm, material)
        expected_cold = _write_standard_keystores(
            cold_dir, [0xC01D + index for index in range(args.cold_keys)]
        )
        setup_seconds = time.perf_counter() - setup
        print(f"  setup (write both directories and the warm cache): {setup_seconds:.1f} s")

        def warm() -> object:
            return ValidatorStore(warm_dir).load_all(progress=False)

        def cold() -> object:
            cache = cold_dir / "key-cache.json"
            cache.unlink(missing_ok=True)
            return ValidatorStore(cold_dir).load_all(progress=False)

        warm_run = _measure(warm, args)
        if warm_run.result != expected_warm:
            raise SystemExit("warm start: the loaded secrets differ from the ones written")
        cold_run = _measure(cold, args)
        if cold_run.result != expected_cold:
            raise SystemExit("cold start: the loaded secrets differ from the ones written")
        if not (cold_dir / "key-cache.json").exists():
            raise SystemExit("cold start wrote no key cache")
    per_key = cold_run.seconds / args.cold_keys
    cold_full = per_key * args.startup_keys
    ratio = warm_run.seconds / cold_full
    print(f"  warm, {args.startup_keys} keys: {_describe(warm_run)}")
    print(
        f"  cold, {args.cold_keys} keys: {_describe(cold_run)} = {per_key:.3f} s a key "
        f"(decrypt and write the cache); x {args.startup_keys} = {cold_full:.0f} s"
    )
    warm_verdict = "meets" if warm_run.seconds <= STARTUP_WARM_GOAL_SECONDS else "MISSES"
    ratio_verdict = "meets" if ratio <= STARTUP_RATIO_GOAL else "MISSES"
    print(
        f"  {args.startup_keys} keys: warm {warm_run.seconds:.2f} s vs cold {cold_full:.0f} s "
        f"(per-key cold x {args.startup_keys}): warm/cold = {ratio:.5f} ({ratio_verdict} the "
        f"goal <= {STARTUP_RATIO_GOAL}); warm {warm_verdict} the goal <= "
        f"{STARTUP_WARM_GOAL_SECONDS:.0f} s"
    )


def bench_list(args: argparse.Namespace) -> None:
    import asyncio
    import multiprocessing
    import tempfile

    from keymanager.api import KeymanagerContext, bound_port, start_keymanager_server
    from keymanager.store import ValidatorStore
    from slashing_protection import SlashingProtection
    from validator.consensus.chain_preset import SimulatedChainConfig
    from validator.consensus.interop import interop_secret_keys
    from validator.keymanager_server import KeymanagerSigning
    from validator.signing.signer import Signer

    root = bytes(range(32))
    chain = SimulatedChainConfig(genesis_time=1_700_000_000, genesis_validators_root=root)
    with tempfile.TemporaryDirectory(prefix="bench-keymanager-") as temp:
        directory = Path(temp)
        setup_start = time.perf_counter()
        secrets = interop_secret_keys(args.list_keys)
        _write_keystores_fast(directory, secrets)
        store = ValidatorStore(directory)
        loaded = store.load_all(progress=False)
        setup_seconds = time.perf_counter() - setup_start

        async def serve_and_measure() -> tuple[list[float], int, int, float]:
            with SlashingProtection.open(directory, root, register=list(loaded)) as record:
                signer = Signer(chain.chain_spec(), record)
                await signer.add_keys(loaded)

                async def no_index(pubkey: bytes) -> int | None:
                    return None

                context = KeymanagerContext(
                    store=store,
                    record=record,
                    signer=KeymanagerSigning(signer),
                    genesis_validators_root=root,
                    resolve_validator_index=no_index,
                )
                runner = await start_keymanager_server(context, "127.0.0.1", 0)
                try:
                    port = bound_port(runner)
                    assert port is not None
                    token = (directory / "api-token.txt").read_text().strip()
                    spawn = multiprocessing.get_context("spawn")
                    results = spawn.Queue()
                    note = _wait_until_quiet(args)
                    client = spawn.Process(
                        target=_list_client, args=(port, token, args.requests, results)
                    )
                    client.start()
                    loop = asyncio.get_running_loop()
                    times, keys, size = await loop.run_in_executor(None, results.get, True, 600)
                    await loop.run_in_executor(None, client.join, 60)
                    return times, keys, size, note
                finally:
                    await runner.cleanup()

        times, keys, size, note = asyncio.run(serve_and_measure())
    ordered = sorted(times)
    p50 = _percentile(ordered, 0.50) * 1000
    p99 = _percentile(ordered, 0.99) * 1000
    verdict = "meets" if p99 <= LIST_GOAL_P99_MS else "MISSES"
    print(
        f"GET /eth/v1/keystores, {keys} keys loaded ({size / 1e6:.2f} MB answer), "
        f"{len(times)} sequential requests over HTTP on 127.0.0.1 ({note}); "
        f"setup (write + decrypt {args.list_keys} pbkdf2 c=1 keystores) {setup_seconds:.1f} s"
    )
    print(
        f"  first {times[0] * 1000:.1f} ms, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms ({verdict} the goal p99 <= {LIST_GOAL_P99_MS:.0f} ms)"
    )


PARTS: dict[str, Callable[[argparse.Namespace], None]] = {
    "decrypt": bench_decrypt,
    "startup": bench_startup,
    "list": bench_list,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--part", choices=sorted(PARTS), help="run only this part")
    parser.add_argument("--keys", type=int, default=8, help="keystores to decrypt (default 8)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (default 3)")
    parser.add_argument(
        "--list-keys", type=int, default=10_000, help="keys loaded for the list part (10,000)"
    )
    parser.add_argument(
        "--startup-keys", type=int, default=10_000, help="keys of the warm start (10,000)"
    )
    parser.add_argument(
        "--cold-keys", type=int, default=500, help="keys of the cold start (default 500)"
    )
    parser.add_argument(
        "--requests", type=int, default=300, help="GET requests in the list part (default 300)"
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        help="before each timed run, wait up to this many seconds for an idle machine",
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=5,
        help="repeat a run disturbed by other processes up to this many times",
    )
    args = parser.parse_args()
    for name, part in PARTS.items():
        if args.part in (None, name):
            part(args)


if __name__ == "__main__":
    main()
