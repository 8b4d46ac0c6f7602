"""Decrypting many keystores at once over every core.

The KDF (scrypt n=2^18: most of a second of one core per key) dominates
start-up with many keys, so the work goes to a pool of worker processes, one
per usable core (`keymanager.decrypt_worker`). Workers are started with the
`spawn` method, never `fork`: a forked child would inherit the parent's threads
and locks (the store's lock, the slashing-protection lock's descriptor) in
whatever state they were.

Every keystore is parsed in the parent first, so a malformed file is reported
before any worker starts, and every secret is checked against its keystore's
pubkey in the parent. Any failure names the file and stops the whole load: a
key that cannot be decrypted is never skipped silently.

Note for entry points: `spawn` re-imports the parent's `__main__` module in
each worker (under the name `__mp_main__`), so a `__main__` that imports a lot
at top level makes every worker slower to start.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field

from keymanager.decrypt_worker import open_in_worker, prepare_worker, scrypt_scratch_bytes
from keymanager.errors import KeystoreError, KeystoreLoadError
from keymanager.keystore import checked_secret, estimated_cost, parse_keystore
from keymanager.keystore_crypto import SealedSecret, open_secret
from slashing_protection.progress import terminal_progress

# Below this much work (in standard-scrypt units, under a second each here)
# starting worker processes costs more than it saves: cheap devnet keystores
# are decrypted in this process.
POOL_MIN_COST = 2.0


@dataclass(frozen=True)
class DecryptJob:
    """One keystore to decrypt; `label` names it in errors (the file path)."""

    label: str
    keystore_json: bytes
    password: str = field(repr=False)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def decrypt_many(
    jobs: Sequence[DecryptJob],
    *,
    processes: int | None = None,
    use_pool: bool | None = None,
    progress: bool | None = None,
) -> list[int]:
    """The secret keys of `jobs`, in order.

    `processes` defaults to `usable_cores()`. `use_pool=None` decides from the
    estimated work (cheap keystores are decrypted in this process); True or
    False forces it. `progress=None` shows a progress bar only when stderr is a
    terminal. Raises `KeystoreLoadError` naming the first keystore that fails.
    """
    keystores = []
    for job in jobs:
        try:
            keystores.append(parse_keystore(job.keystore_json))
        except KeystoreError as error:
            raise KeystoreLoadError(f"{job.label}: {error}") from None
    if not jobs:
        return []
    if processes is not None and processes < 1:
        raise ValueError(f"processes must be at least 1, got {processes}")
    workers = min(processes or usable_cores(), len(jobs))
    if use_pool is None:
        use_pool = workers > 1 and sum(map(estimated_cost, keystores)) >= POOL_MIN_COST
    sealed = [keystore.sealed() for keystore in keystores]
    with _progress_bar(len(jobs), progress) as advance:
        if use_pool:
            plaintexts = _open_in_pool(jobs, sealed, workers, advance)
        else:
            plaintexts = []
            for job, secret in zip(jobs, sealed, strict=True):
                try:
                    plaintexts.append(open_secret(secret, job.password))
                except KeystoreError as error:
                    raise KeystoreLoadError(f"{job.label}: {error}") from None
                advance()
    secrets = []
    for job, keystore, plaintext in zip(jobs, keystores, plaintexts, strict=True):
        try:
            secrets.append(checked_secret(plaintext, keystore.pubkey))
        except KeystoreError as error:
            raise KeystoreLoadError(f"{job.label}: {error}") from None
    return secrets


def _open_in_pool(
    jobs: Sequence[DecryptJob],
    sealed: Sequence[SealedSecret],
    workers: int,
    advance: Callable[[], None],
) -> list[bytes]:
    plaintexts: list[bytes] = [b""] * len(jobs)
    scratch = max(scrypt_scratch_bytes(secret.kdf) for secret in sealed)
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=prepare_worker,
        initargs=(scratch,),
    )
    try:
        pending: dict[Future[bytes], int] = {
            pool.submit(open_in_worker, secret, job.password): index
            for index, (job, secret) in enumerate(zip(jobs, sealed, strict=True))
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                index = pending.pop(future)
                try:
                    plaintexts[index] = future.result()
                except KeystoreError as error:
                    raise KeystoreLoadError(f"{jobs[index].label}: {error}") from None
                except BrokenProcessPool as error:
                    raise KeystoreLoadError(
                        f"{jobs[index].label}: the decryption worker process died ({error})"
                    ) from None
                advance()
    finally:
        # On failure, queued keystores are dropped; the running ones finish first.
        pool.shutdown(wait=True, cancel_futures=True)
    return plaintexts


@contextmanager
def _progress_bar(total: int, show: bool | None) -> Iterator[Callable[[], None]]:
    """``advance()`` once per keystore opened, on the terminal's bar (keys done, keys/s)."""
    with terminal_progress(
        total, "decrypting keystores", unit="keys", show=show, transient=False
    ) as update:
        if update is None:
            yield lambda: None
            return
        done = 0

        def advance() -> None:
            nonlocal done
            done += 1
            update(done)

        yield advance
