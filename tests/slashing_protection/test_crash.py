"""Crash safety: SIGKILL a recording process at random moments, 250 times.

A forked child opens the record and records blocks and attestation batches as fast as it
can, some of them slashable on purpose, and after every True verdict "releases" the
signature by writing a line to a pipe. The parent kills it with SIGKILL after a random
delay (often in the middle of a durable write), then checks that the record opens (the
kernel freed the lock; a leftover temp file is removed), that it covers every signature
the child released, and that no watermark went down since the previous round.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

from slashing_protection import SlashingProtection, Watermark
from tests.support.records import ROOT, pubkey, verdicts_allowed

KEYS = [pubkey(n) for n in range(6)]
ROUNDS = 250


def _child(directory: Path, write_fd: int, seed: int) -> None:
    """Record forever, releasing each allowed message on the pipe. Never returns."""
    try:
        rng = random.Random(seed)
        record = SlashingProtection.open(directory, ROOT, register=KEYS)
        out = os.fdopen(write_fd, "w", buffering=1)
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


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode()


def _at_least(mark: Watermark, floor: Watermark) -> bool:
    def ge(value: int | None, minimum: int | None) -> bool:
        return minimum is None or (value is not None and value >= minimum)

    return (
        ge(mark.slot, floor.slot)
        and ge(mark.source, floor.source)
        and ge(mark.target, floor.target)
    )


def test_sigkill_at_random_moments_never_loses_a_released_signature(tmp_path: Path) -> None:
    rng = random.Random(3076)
    previous = {key: Watermark.never_signed() for key in KEYS}
    released_total = leftovers = 0
    SlashingProtection.open(tmp_path, ROOT, register=KEYS).close()  # as --init-slashing-protection
    for round_number in range(ROUNDS):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns to pytest
            os.close(read_fd)
            _child(tmp_path, write_fd, round_number)
        os.close(write_fd)
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), f"round {round_number}: the child exited on its own"
        released = _read_all(read_fd).splitlines()
        released_total += len(released)
        with SlashingProtection.open(tmp_path, ROOT) as record:
            leftovers += record.leftover_removed
            for line in released:
                kind, index, *numbers = line.split()
                mark = record.watermark(KEYS[int(index)])
                assert mark is not None
                if kind == "B":
                    assert mark.slot is not None and mark.slot >= int(numbers[0]), line
                else:
                    source, target = map(int, numbers)
                    assert mark.source is not None and mark.source >= source, line
                    assert mark.target is not None and mark.target >= target, line
                    assert not record.check_attestation(KEYS[int(index)], source, target).allowed
            for key in KEYS:
                mark = record.watermark(key)
                assert mark is not None and _at_least(mark, previous[key]), round_number
                previous[key] = mark
    print(f"released {released_total} signatures, {leftovers} kills inside a write")
    assert released_total >= ROUNDS // 2, "the children released too little to test anything"
    assert leftovers > 0, "no kill landed inside a durable write"
