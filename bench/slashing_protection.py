"""Benchmark of the slashing-protection record (figures go to docs/performance.md).

Prints, in one run:
1. a 10,000-key record_attestations batch (median of 20) against the bare durable write of
   the same bytes (temp file, fsync, rename, directory fsync), with every key at one
   source and target (a slot's attestations share their checkpoints) and again with four
   different pairs across the keys;
2. the same keys recorded one call each over 200 keys, extrapolated to 10,000;
3. the import of a complete interchange of 10,000 validators x 1,000 attestations and 100
   blocks (generated in a temp dir, deleted afterwards): time and peak RSS, against a bare
   streaming parse of the same file with ijson's yajl2 C backend;
4. with --db URL (a PostgreSQL server's database this run may create databases beside),
   the shared PostgreSQL record: the same 10,000-key batch as one transaction, against the
   file record's batch of part 1 and against one transaction per key; and the import of
   part 3's file into the database, against the file record's import. Without --db it
   says part 4 was not run. The recorded figures used a local server with its default
   durability (fsync and synchronous_commit on) on a Unix socket.

`--batch-only` prints 1, 2 and 4's batch lines alone (seconds instead of minutes);
`--import-only` prints part 3 alone (four rounds, without the exact parser's line); part
3 also times the import with the command's terminal progress bar drawing (into a
buffer), beside the import without it in every round (the order flipped each round).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import ijson
import orjson

# Run as a script, this file's directory would come first on sys.path and its own name
# would shadow the package it measures.
_REPO = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _REPO / "bench"]
sys.path.insert(0, str(_REPO))

from slashing_protection import SlashingProtection  # noqa: E402
from slashing_protection.durable import write_durably  # noqa: E402

ZERO_ROOT = "0x" + "00" * 32


def write_complete_interchange(
    path: Path, validators: int, attestations: int = 1000, blocks: int = 100
) -> int:
    """A complete-form interchange with signing roots, as a client with full history exports.

    Every validator gets the same history (only the pubkey differs), so the file is large
    without costing minutes to generate; parsing does not care. Returns the file size.
    """
    attestation_text = [
        f'{{"source_epoch":"{epoch}","target_epoch":"{epoch + 1}",'
        f'"signing_root":"0x{epoch * 0x9E3779B97F4A7C15:064x}"}}'
        for epoch in range(attestations)
    ]
    block_text = [
        f'{{"slot":"{slot * 32}","signing_root":"0x{slot * 0xC2B2AE3D27D4EB4F:064x}"}}'
        for slot in range(blocks)
    ]
    attestation_part = ",".join(attestation_text).encode()
    block_part = ",".join(block_text).encode()
    with open(path, "wb") as stream:
        stream.write(
            b'{"metadata":{"interchange_format_version":"5","genesis_validators_root":"%s"},'
            b'"data":[' % ZERO_ROOT.encode()
        )
        for index in range(validators):
            if index:
                stream.write(b",")
            stream.write(b'{"pubkey":"0x%096x","signed_blocks":[' % (index + 1))
            stream.write(block_part)
            stream.write(b'],"signed_attestations":[')
            stream.write(attestation_part)
            stream.write(b"]}")
        stream.write(b"]}")
    return os.path.getsize(path)


# Peak RSS is read from VmHWM: ru_maxrss would include this parent's own peak, which
# Linux carries across fork and exec.
_PEAK = """
def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""

_BARE_PARSE = _PEAK + """
import collections, sys, time, ijson
started = time.perf_counter()
with open(sys.argv[1], "rb") as stream:
    collections.deque(ijson.basic_parse(stream, buf_size=16 * 1024), maxlen=0)
elapsed = time.perf_counter() - started
print(elapsed, peak_kib())
"""

_IMPORT = _PEAK + """
import io, os, sys, time
from pathlib import Path
from rich.console import Console
from slashing_protection import SlashingProtection
from slashing_protection.interchange.exact import parse_exact
from slashing_protection.progress import terminal_progress
started = time.perf_counter()
cpu_started = time.process_time()
with SlashingProtection.open_offline(Path(sys.argv[2])) as record:
    if sys.argv[3] == "exact":
        with open(sys.argv[1], "rb") as stream:
            parsed = parse_exact(stream, sys.argv[1])
        assert len(parsed.marks) == int(sys.argv[4])
    elif sys.argv[3] == "progress":
        # The command's terminal bar, drawn into a buffer that acts as a terminal.
        screen = Console(file=io.StringIO(), force_terminal=True, width=120)
        size = os.path.getsize(sys.argv[1])
        with terminal_progress(size, "importing", show=True, console=screen) as progress:
            covered = record.import_interchange(Path(sys.argv[1]), progress=progress)
        assert len(covered) == int(sys.argv[4]) and "importing" in screen.file.getvalue()
    else:
        covered = record.import_interchange(Path(sys.argv[1]))
        assert len(covered) == int(sys.argv[4])
elapsed = time.perf_counter() - started
print(elapsed, peak_kib(), time.process_time() - cpu_started)
"""

_DB_IMPORT = _PEAK + """
import sys, time
from pathlib import Path
from slashing_protection.postgres import PostgresSlashingProtection
started = time.perf_counter()
with PostgresSlashingProtection.open_offline(sys.argv[2]) as record:
    covered = record.import_interchange(Path(sys.argv[1]))
    assert len(covered) == int(sys.argv[3])
elapsed = time.perf_counter() - started
print(elapsed, peak_kib())
"""


def _timed_subprocess(code: str, *args: str) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of a fresh interpreter running `code`."""
    repo = Path(__file__).resolve().parent.parent
    output = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(output[0]), int(output[1]) / 1024


def _cpu_seconds_of_import(*args: str) -> tuple[float, float, float]:
    """(seconds, peak RSS in MiB, CPU seconds of every thread) of one `_IMPORT` run: CPU
    time moves far less than wall time when other work shares the host."""
    repo = Path(__file__).resolve().parent.parent
    output = subprocess.run(
        [sys.executable, "-c", _IMPORT, *args], cwd=repo, capture_output=True, text=True,
        check=True,
    ).stdout.split()  # fmt: skip
    return float(output[0]), int(output[1]) / 1024, float(output[2])


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _batch_series(
    directory: Path,
    pubkeys: list[bytes],
    rounds: int,
    item: Callable[[int, int, bytes], tuple[bytes, int, int]],
) -> tuple[list[float], list[float], bytes]:
    """`rounds` batches of every key (item(round, index, pubkey)), each followed by the bare
    durable write of the record it produced: (batch times, floor times, last record)."""
    batch_times: list[float] = []
    floor_times: list[float] = []
    floor_path = directory / "floor.json"
    data = b""
    directory.mkdir()
    with SlashingProtection.open(directory, bytes(32), register=pubkeys) as record:
        for round_index in range(rounds):
            items = [item(round_index, index, pubkey) for index, pubkey in enumerate(pubkeys)]
            started = time.perf_counter()
            verdicts = record.record_attestations(items)
            batch_times.append(time.perf_counter() - started)
            assert all(verdict.allowed for verdict in verdicts)
            data = record.path.read_bytes()
            started = time.perf_counter()
            write_durably(floor_path, data)
            floor_times.append(time.perf_counter() - started)
    return batch_times, floor_times, data


def bench_batch(directory: Path, keys: int = 10_000, rounds: int = 20) -> float:
    pubkeys = [hashlib.sha384(n.to_bytes(8, "big")).digest() for n in range(keys)]
    # As in a slot where every key attests: one source and target for all.
    batch_times, floor_times, data = _batch_series(
        directory / "one-checkpoint", pubkeys, rounds, lambda r, _i, pk: (pk, r, r + 1)
    )
    # Four different (source, target) pairs across the keys, so that the record's
    # rendering cannot share one entry ending between all keys.
    mixed_times, mixed_floor_times, _ = _batch_series(
        directory / "mixed", pubkeys, rounds,
        lambda r, i, pk: (pk, 8 * r + i % 4, 8 * r + 4 + i % 4),
    )
    document = orjson.loads(data)
    started = time.perf_counter()
    json.dumps(document)
    json_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    orjson.dumps(document)
    orjson_ms = (time.perf_counter() - started) * 1000

    single_keys = pubkeys[:200]
    with SlashingProtection.open(directory / "one-checkpoint", bytes(32)) as record:
        started = time.perf_counter()
        for pubkey in single_keys:
            assert record.record_attestations([(pubkey, rounds, rounds + 1)])[0].allowed
        single_s = time.perf_counter() - started
    batch_ms, floor_ms = _median_ms(batch_times), _median_ms(floor_times)
    mixed_ms, mixed_floor_ms = _median_ms(mixed_times), _median_ms(mixed_floor_times)
    print(f"record_attestations, one batch of {keys:,} keys (median of {rounds}):")
    print(f"  batch (judge + render + durable write): {batch_ms:8.2f} ms")
    print(f"  bare durable write of the same {len(data) / 2**20:.2f} MiB: {floor_ms:8.2f} ms")
    print(f"  ratio batch / floor: {batch_ms / floor_ms:.2f}x  (goal <= 3x and <= 30 ms)")
    print(f"  the same with four different (source, target) pairs across the keys: "
          f"{mixed_ms:.2f} ms / {mixed_floor_ms:.2f} ms = {mixed_ms / mixed_floor_ms:.2f}x")
    print(f"  for reference, serialising the same document: json {json_ms:.1f} ms, "
          f"orjson {orjson_ms:.1f} ms")
    per_call_ms = single_s / len(single_keys) * 1000
    print(f"one call per key over {len(single_keys)} keys: {per_call_ms:.2f} ms per call, "
          f"extrapolated to {keys:,} keys: {per_call_ms * keys / 1000:.1f} s "
          f"({per_call_ms * keys / batch_ms:.0f}x the batch)")
    return batch_ms


def bench_db_batch(url: str, file_batch_ms: float, keys: int = 10_000, rounds: int = 20) -> None:
    """Part 4's batch lines: one transaction for the slot's 10,000 attestations."""
    from slashing_protection.postgres import PostgresSlashingProtection

    pubkeys = [hashlib.sha384(n.to_bytes(8, "big")).digest() for n in range(keys)]
    times: list[float] = []
    mixed_times: list[float] = []
    with PostgresSlashingProtection.open(url, bytes(32), register=pubkeys) as record:
        for round_index in range(rounds):
            items = [(pubkey, round_index, round_index + 1) for pubkey in pubkeys]
            started = time.perf_counter()
            verdicts = record.record_attestations(items)
            times.append(time.perf_counter() - started)
            assert all(verdict.allowed for verdict in verdicts)
        for round_index in range(rounds):
            base = 8 * (round_index + rounds)
            items = [(pk, base + i % 4, base + 4 + i % 4) for i, pk in enumerate(pubkeys)]
            started = time.perf_counter()
            verdicts = record.record_attestations(items)
            mixed_times.append(time.perf_counter() - started)
            assert all(verdict.allowed for verdict in verdicts)
        refused_items = [(pubkey, 0, 1) for pubkey in pubkeys]  # what the other hosts see
        refused_times: list[float] = []
        for _ in range(6):  # the first after passing batches, then slot after slot
            started = time.perf_counter()
            refused = record.record_attestations(refused_items)
            assert not any(verdict.allowed for verdict in refused)
            refused_times.append(time.perf_counter() - started)
        refused_ms = refused_times[0] * 1000
        refused_again_ms = _median_ms(refused_times[1:])
        single_keys = pubkeys[:500]
        target = 8 * 2 * rounds + 100
        started = time.perf_counter()
        for pubkey in single_keys:
            assert record.record_attestations([(pubkey, target, target + 1)])[0].allowed
        single_s = time.perf_counter() - started
    db_ms, mixed_ms = _median_ms(times), _median_ms(mixed_times)
    per_key_ms = single_s / len(single_keys) * 1000
    print(f"shared PostgreSQL record, one batch of {keys:,} keys in one transaction "
          f"(median of {rounds}):")
    print(f"  batch (judge and raise rows in key order + commit): {db_ms:8.2f} ms "
          f"(goal <= 50 ms)")
    print(f"  against the file record's batch above: {db_ms:.2f} ms / {file_batch_ms:.2f} ms "
          f"= {db_ms / file_batch_ms:.2f}x")
    print(f"  with four different (source, target) pairs across the keys: {mixed_ms:.2f} ms")
    print(f"  the same batch refused in full (a host whose peers signed first): "
          f"{refused_ms:.2f} ms the first time, {refused_again_ms:.2f} ms slot after slot "
          f"(median of 5)")
    print(f"  one transaction per key over {len(single_keys)} keys: {per_key_ms:.2f} ms per "
          f"key, extrapolated to {keys:,}: {per_key_ms * keys / 1000:.1f} s "
          f"({per_key_ms * keys / db_ms:.0f}x the one-transaction batch)")


def bench_import(
    directory: Path,
    validators: int = 10_000,
    db_urls: list[str] | None = None,
    *,
    attempts: int = 2,
    exact_parser: bool = True,
) -> None:
    path = directory / "complete.json"
    started = time.perf_counter()
    size = write_complete_interchange(path, validators)
    generated = time.perf_counter() - started
    print(f"import of a complete interchange: {validators:,} validators x 1,000 attestations "
          f"and 100 blocks, {size / 1e9:.2f} GB ({size / 2**30:.2f} GiB), generated in "
          f"{generated:.1f} s")
    runs: dict[str, list[tuple[float, float]]] = {"bare": [], "import": [], "progress": []}
    cpu_runs: dict[str, list[float]] = {"import": [], "progress": []}
    for attempt in range(attempts):
        runs["bare"].append(_timed_subprocess(_BARE_PARSE, str(path)))
        # Side by side, the order flipped every round (the second of a pair runs warmer).
        for mode in ("import", "progress")[:: 1 if attempt % 2 == 0 else -1]:
            target = directory / f"validators-{mode}-{attempt}"
            target.mkdir()
            seconds, rss, cpu = _cpu_seconds_of_import(
                str(path), str(target), "default" if mode == "import" else "progress",
                str(validators),
            )  # fmt: skip
            runs[mode].append((seconds, rss))
            cpu_runs[mode].append(cpu)
    exact = None
    if exact_parser:
        exact_dir = directory / "validators-exact"
        exact_dir.mkdir()
        exact = _timed_subprocess(_IMPORT, str(path), str(exact_dir), "exact", str(validators))
    for name, label in (
        ("bare", "bare streaming parse (ijson yajl2_c basic_parse, events discarded)"),
        ("import", "import_interchange (validate, reduce, merge, durable write)"),
        ("progress", "the same with the terminal progress bar drawing"),
    ):
        for seconds, rss in runs[name]:
            print(f"  {label}: {seconds:6.2f} s, peak RSS {rss:6.1f} MiB")
    bare = min(seconds for seconds, _ in runs["bare"])
    best = min(seconds for seconds, _ in runs["import"])
    peak = max(rss for _, rss in runs["import"])
    print(f"  best import / best bare parse: {best:.2f} s / {bare:.2f} s = {best / bare:.2f}x "
          f"(goal <= 2x), peak RSS {peak:.1f} MiB (goal <= 256), time goal <= 20 s")
    with_bar = min(seconds for seconds, _ in runs["progress"])
    paired = statistics.median(
        bar / plain
        for (bar, _), (plain, _) in zip(runs["progress"], runs["import"], strict=True)
    )
    print(f"  with the progress bar: best {with_bar:.2f} s, {with_bar / bare:.2f}x the bare "
          f"parse; with bar / without: best {with_bar / best:.3f}, median of the rounds' "
          f"ratios {paired:.3f} (goal: within 3%)")
    cpu_paired = statistics.median(
        bar / plain for bar, plain in zip(cpu_runs["progress"], cpu_runs["import"], strict=True)
    )
    print(f"  CPU seconds, without the bar: {', '.join(f'{c:.2f}' for c in cpu_runs['import'])}"
          f"; with it: {', '.join(f'{c:.2f}' for c in cpu_runs['progress'])}; median of the "
          f"rounds' ratios {cpu_paired:.3f}")
    if exact is not None:
        print(f"  exact parser alone (the path for unusual layouts): {exact[0]:.2f} s, "
              f"peak RSS {exact[1]:.1f} MiB ({exact[0] / bare:.2f}x the bare parse)")
    if db_urls:
        db_runs = [
            _timed_subprocess(_DB_IMPORT, str(path), url, str(validators)) for url in db_urls
        ]
        for seconds, rss in db_runs:
            print(f"  import into the shared PostgreSQL record (parse, then one transaction): "
                  f"{seconds:6.2f} s, peak RSS {rss:6.1f} MiB")
        db_best = min(seconds for seconds, _ in db_runs)
        db_peak = max(rss for _, rss in db_runs)
        print(f"  best database import / best file record import: {db_best:.2f} s / "
              f"{best:.2f} s = {db_best / best:.2f}x (goal <= 2x), peak RSS {db_peak:.1f} MiB")
    path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--batch-only",
        action="store_true",
        help="run parts 1 and 2 only (seconds instead of about a minute; for iterating)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="a PostgreSQL database to create part 4's databases from (without it, part 4 is "
        "not run)",
    )
    parser.add_argument(
        "--import-only",
        action="store_true",
        help="run part 3 only (the import, with and without its progress bar)",
    )
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, "
          f"ijson backend {ijson.backend}, orjson {orjson.__version__}")
    with tempfile.TemporaryDirectory(prefix="bench-sp-") as temp, _databases(args.db) as urls:
        if args.import_only:
            bench_import(Path(temp), attempts=4, exact_parser=False)
            return
        file_batch_ms = bench_batch(Path(temp))
        if urls:
            bench_db_batch(urls[0], file_batch_ms)
        else:
            print("shared PostgreSQL record (part 4): not run; pass --db URL of a server's "
                  "database (postgresql://...) to run it")
        if not args.batch_only:
            bench_import(Path(temp), db_urls=urls[1:])


@contextlib.contextmanager
def _databases(given: str | None) -> Iterator[list[str]]:
    """Three empty databases with the schema, made beside ``given``: the batch's and two
    imports' (fresh ones, so the imports are measured as the first, like the file record's
    into a new directory). No databases without ``given``."""
    if given is None:
        yield []
        return
    import psycopg

    from slashing_protection.postgres import db_init, describe_url

    admin = given
    names = [f"bench_sp_{os.getpid()}_{n}" for n in range(3)]
    try:
        with psycopg.connect(admin, autocommit=True) as connection:
            version = connection.execute("SHOW server_version").fetchone()
            settings = connection.execute(
                "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM "
                "pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers')"
            ).fetchone()
            for name in names:
                connection.execute(f"CREATE DATABASE {name}".encode())
        urls = [_with_dbname(admin, name) for name in names]
        for url in urls:
            db_init(url)
        where = describe_url(admin)
        print(f"PostgreSQL {version[0] if version else '?'} on {where}; "
              f"{settings[0] if settings else ''}")
        yield urls
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            for name in names:
                connection.execute(f"DROP DATABASE IF EXISTS {name}".encode())


def _with_dbname(url: str, dbname: str) -> str:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return make_conninfo(**{**conninfo_to_dict(url), "dbname": dbname})


if __name__ == "__main__":
    main()
