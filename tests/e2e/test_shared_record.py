"""Three clients, the same keys, one shared record on a real PostgreSQL, the simulated chain.

Each client has its own validators directory (as on three hosts) holding the same keystores,
and all three use one database through ``--slashing-protection-db``. Whichever client records
a duty first signs it; the other two are refused by the record, so the chain receives every
attestation and block of those keys once. Then clients are killed with SIGKILL at random
moments and started again, then one more is killed, then the PostgreSQL server itself (every
one of its processes), which is restarted, and so is the client: still nothing slashable,
nothing received twice, and duties resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from slashing_protection.postgres import db_init
from tests.e2e.conftest import VALIDATORS, ChainStarter, ClientProcess, ClientStarter
from tests.support.pg_cluster import Cluster, ClusterUnavailable
from tests.support.postgres import start_cluster
from tests.support.validators_dir import make_validators_dir

pytestmark = pytest.mark.slow

SIGNED_KINDS = ("attestation", "block")
KILL_ROUNDS = 2  # clients killed with SIGKILL and restarted before the database crash


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A throwaway cluster of our own: this test kills its server."""
    made = start_cluster()
    try:
        yield made
    finally:
        made.destroy()


def kill_server(cluster: Cluster) -> None:
    """SIGKILL the postmaster and every backend it started: a crash, no shutdown at all."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                # Field 4 of /proc/PID/stat is the parent; the name (field 2) has no spaces here.
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                    children.append(int(entry.name))
    for pid in (postmaster, *children):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


async def restart_server(cluster: Cluster) -> None:
    """Start the killed cluster again (crash recovery); a backend may take a moment to go."""
    for attempt in range(10):
        try:
            await asyncio.to_thread(cluster.start)
            return
        except ClusterUnavailable:
            if attempt == 9:
                raise
            await asyncio.sleep(0.5)


class Readers:
    """Read every client's JSON log lines as they come, so none of their pipes fills."""

    def __init__(self) -> None:
        self.tasks: dict[ClientProcess, asyncio.Task[None]] = {}

    def follow(self, client: ClientProcess) -> None:
        self.tasks[client] = asyncio.create_task(self._read(client))

    @staticmethod
    async def _read(client: ClientProcess) -> None:
        assert client.process.stderr is not None
        while raw := await client.process.stderr.readline():
            if raw.startswith(b"{"):
                client.lines.append(orjson.loads(raw))
            else:
                client.lines.append({"text": raw.decode(errors="replace")})

    async def finish(self, client: ClientProcess) -> None:
        """Read a dead client's last lines, up to the end of its pipe."""
        await self.tasks.pop(client)

    async def stop_following(self, client: ClientProcess) -> None:
        task = self.tasks.pop(client)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def published(clients: list[ClientProcess]) -> Counter[tuple[str, int, int]]:
    """How many times each (kind, slot, validator) was published, over all clients."""
    seen: Counter[tuple[str, int, int]] = Counter()
    for client in clients:
        for entry in client.lines:
            if entry.get("kind") in SIGNED_KINDS and entry.get("result") == "published":
                for index in entry["validators"]:
                    seen[(entry["kind"], entry["slot"], index)] += 1
    return seen


async def until_published(
    clients: list[ClientProcess],
    kind: str,
    more_than: int,
    *,
    alive: list[ClientProcess] | None = None,
    timeout: float = 40,
) -> int:
    """Wait until the clients together published more than `more_than` of `kind`; every
    client of `alive` (by default all) must keep running meanwhile."""
    async with asyncio.timeout(timeout):
        while True:
            count = sum(n for (k, _, _), n in published(clients).items() if k == kind)
            if count > more_than:
                return count
            for client in clients if alive is None else alive:
                assert client.process.returncode is None, client.lines[-3:]
            await asyncio.sleep(0.1)


def count_of(clients: list[ClientProcess], kind: str) -> int:
    return sum(n for (k, _, _), n in published(clients).items() if k == kind)


async def test_three_clients_share_one_record_through_a_client_and_a_database_crash(
    tmp_path: Path,
    cluster: Cluster,
    start_chain: ChainStarter,
    start_client: ClientStarter,
) -> None:
    seed = random.randrange(2**32)
    print(f"seed {seed}")  # the kill's moment and victim, to replay a failure
    rng = random.Random(seed)
    url = cluster.url()
    db_init(url)
    directories = [make_validators_dir(tmp_path / f"host{n}", VALIDATORS) for n in range(3)]
    chain, ready = await start_chain(directories[0])
    beacon = str(ready["url"])
    shared = ("--slashing-protection-db", url)

    # The database unreachable at start: one line, exit 1, before any duty.
    nowhere = f"postgresql://postgres@/postgres?host={tmp_path / 'no-server'}"
    refused = await start_client(beacon, directories[0], "--slashing-protection-db", nowhere)
    assert await refused.stop(None, timeout=60) == 1
    errors = [e["text"] for e in refused.lines if "text" in e and e["text"].startswith("error:")]
    assert len(errors) == 1 and "slashing-protection database" in errors[0], refused.lines[-3:]

    readers = Readers()
    clients = [
        await start_client(beacon, directory, "--init-slashing-protection", *shared)
        for directory in directories
    ]
    for client in clients:
        readers.follow(client)
    # Two epochs of attestations (16 validators, 4 slots an epoch) and a few blocks.
    await until_published(clients, "attestation", 2 * VALIDATORS)
    await until_published(clients, "block", 2)
    # Every duty was taken by one client or another, not always the same one.
    signers = {n for n, c in enumerate(clients) if count_of([c], "attestation")}

    everyone = list(clients)  # every client started, killed ones too: what was published

    # Clients killed at random moments of a slot and started again, KILL_ROUNDS times; the
    # two others take the duties meanwhile.
    for _ in range(KILL_ROUNDS):
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        place = rng.randrange(3)
        victim = clients[place]
        victim.process.send_signal(signal.SIGKILL)
        await victim.process.wait()
        await readers.finish(victim)
        survivors = [c for c in clients if c is not victim]
        before = count_of(everyone, "attestation")
        await until_published(everyone, "attestation", before + VALIDATORS, alive=survivors)
        clients[place] = await start_client(beacon, directories[place], *shared)
        readers.follow(clients[place])
        everyone.append(clients[place])

    # Then one more killed, and left down while the database crashes.
    await asyncio.sleep(rng.uniform(0.0, 1.0))
    victim = clients[rng.randrange(3)]
    victim.process.send_signal(signal.SIGKILL)
    await victim.process.wait()
    await readers.finish(victim)
    survivors = [c for c in clients if c is not victim]
    before = count_of(everyone, "attestation")
    await until_published(everyone, "attestation", before + VALIDATORS, alive=survivors)

    # The database itself crashes: the survivors keep running and sign nothing meanwhile.
    kill_server(cluster)
    down_at = time.monotonic()
    await asyncio.sleep(1.5)  # three slots
    at_outage = count_of(everyone, "attestation")
    await asyncio.sleep(1.0)
    for client in survivors:
        assert client.process.returncode is None, client.lines[-3:]
    # At most what was committed before the crash came out afterwards.
    assert count_of(everyone, "attestation") - at_outage <= VALIDATORS
    await restart_server(cluster)
    print(f"database down for {time.monotonic() - down_at:.1f} s")
    restarted = await start_client(beacon, directories[clients.index(victim)], *shared)
    readers.follow(restarted)
    everyone.append(restarted)
    # Duties resume by themselves: two more epochs' worth after the database came back.
    after = count_of(everyone, "attestation")
    running = [*survivors, restarted]
    await until_published(everyone, "attestation", after + 2 * VALIDATORS, alive=running)
    await until_published(everyone, "block", count_of(everyone, "block"), alive=running)
    assert restarted.process.returncode is None, restarted.lines[-3:]

    for client in [*survivors, restarted]:
        await readers.stop_following(client)
        assert await client.stop() == 0, client.lines[-3:]
    summary: dict[str, Any] | None = await chain.stop()
    assert summary is not None
    print({key: summary[key] for key in ("attestations_received", "blocks_proposed")})

    assert summary["slashable_messages"] == 0, summary["slashings"][:3]
    assert summary["invalid_signatures"] == 0
    # The chain got each attestation and block once, not once per client.
    assert summary["duplicate_attestations"] == 0
    assert summary["duplicate_blocks"] == 0
    twice = {key: n for key, n in published(everyone).items() if n > 1}
    assert not twice, sorted(twice)[:5]
    assert summary["attestations_received"] >= count_of(everyone, "attestation")
    # The survivors noticed the outage as refusals (the record's write failures), not crashes.
    outage_lines = [
        e
        for c in survivors
        for e in c.lines
        if "slashing-protection database" in str(e.get("message", ""))
    ]
    assert outage_lines, "no client logged the database outage"
    print(f"clients that signed before the crash: {sorted(signers)}")
