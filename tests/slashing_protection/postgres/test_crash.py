"""SIGKILL a process that records in the shared record at random moments, 60 times.

As tests/slashing_protection/test_crash.py does for the file record: a forked
child records attestation batches and blocks as fast as it can (some slashable on
purpose) and "releases" each allowed message on a pipe; the parent kills it after a
random delay (with or without a transaction open), then checks that the database
covers every released message and that no watermark went down. A client that
vanishes mid-transaction is rolled back by the server.
"""

from __future__ import annotations

import os
import random
import signal
import time

from slashing_protection import Watermark
from slashing_protection.postgres import PostgresSlashingProtection
from tests.slashing_protection.test_crash import _at_least, _read_all
from tests.support.records import ROOT, pubkey, verdicts_allowed

KEYS = [pubkey(n) for n in range(6)]
ROUNDS = 60


def _child(url: str, write_fd: int, seed: int) -> None:
    """Record forever, releasing each allowed message on the pipe. Never returns."""
    try:
        rng = random.Random(seed)
        record = PostgresSlashingProtection.open(url, ROOT)
        out = os.fdopen(write_fd, "w", buffering=1)
        out.write("ready\n")
        while True:
            batch = []
            for index in rng.sample(range(len(KEYS)), rng.randint(1, len(KEYS))):
                mark = record.watermark(KEYS[index])
                assert mark is not None
                source = max(0, (mark.source or 0) + rng.choice([-1, 0, 0, 1]))
                last_target = -1 if mark.target is None else mark.target
                target = max(0, last_target + rng.choice([0, 1, 1, 2]))
                batch.append((index, source, target))
            verdicts = verdicts_allowed(
                record.record_attestations([(KEYS[i], s, t) for i, s, t in batch])
            )
            for (index, source, target), ok in zip(batch, verdicts, strict=True):
                if ok:
                    out.write(f"A {index} {source} {target}\n")
            index = rng.randrange(len(KEYS))
            mark = record.watermark(KEYS[index])
            assert mark is not None
            slot = max(0, (-1 if mark.slot is None else mark.slot) + rng.choice([0, 1, 3]))
            if record.record_block(KEYS[index], slot).allowed:
                out.write(f"B {index} {slot}\n")
    except BaseException:
        os._exit(70)
    os._exit(0)


def test_sigkill_at_random_moments_never_loses_a_released_signature(pg_url: str) -> None:
    rng = random.Random(3076)
    previous = {key: Watermark.never_signed() for key in KEYS}
    released_total = 0
    PostgresSlashingProtection.open(pg_url, ROOT, register=KEYS).close()
    with PostgresSlashingProtection.open(pg_url, ROOT) as observer:
        for round_number in range(ROUNDS):
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns to pytest
                os.close(read_fd)
                _child(pg_url, write_fd, round_number)
            os.close(write_fd)
            ready = os.read(read_fd, 6)
            assert ready == b"ready\n", f"round {round_number}: the child did not start"
            time.sleep(rng.uniform(0.0, 0.05))
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            assert os.WIFSIGNALED(status), f"round {round_number}: the child exited on its own"
            released = _read_all(read_fd).splitlines()
            released_total += len(released)
            for line in released:
                kind, index, *numbers = line.split()
                mark = observer.watermark(KEYS[int(index)])
                assert mark is not None
                if kind == "B":
                    assert mark.slot is not None and mark.slot >= int(numbers[0]), line
                else:
                    source, target = map(int, numbers)
                    assert mark.source is not None and mark.source >= source, line
                    assert mark.target is not None and mark.target >= target, line
                    assert not observer.check_attestation(KEYS[int(index)], source, target).allowed
            for key in KEYS:
                mark = observer.watermark(key)
                assert mark is not None and _at_least(mark, previous[key]), round_number
                previous[key] = mark
    print(f"released {released_total} signatures")
    assert released_total >= ROUNDS, "the children released too little to test anything"
