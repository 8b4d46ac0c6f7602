"""The per-epoch builder registration round for 10,000 keys: the first against a later one.

``validator.duties.registrations.BuilderRegistrations`` runs in this process over a
``Signer`` holding --keys local keys, against a beacon node stand-in in a child
process that takes ``POST /eth/v1/validator/register_validator`` (so its CPU is not
this process's). Side by side in one run:

  first   the start-up round: every key's ValidatorRegistrationV1 built, signed
          (one signature per key: each message is the key's own) and sent in batches;
  later   the rounds of the next epochs: the kept messages sent again, nothing signed.

Each figure is this process's CPU time (``time.process_time``: every thread, so the
signing threads count too) for one round; "later" is the median of --rounds rounds.
The goal: a later round costs at most 0.05 of the first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from hashlib import sha256
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if sys.path[:1] != [str(REPO_ROOT)]:
    sys.path.insert(0, str(REPO_ROOT))

import crypto_backend  # noqa: E402
from slashing_protection import SlashingProtection  # noqa: E402
from validator.consensus.chain_preset import SimulatedChainConfig  # noqa: E402

GOAL = 0.05
FEE_RECIPIENT = bytes.fromhex("42" * 20)
GVR = sha256(b"bench builder registrations").digest()


# ---------------------------------------------------------------------- the stand-in


async def serve(port_file: Path) -> None:
    from aiohttp import web

    received = 0

    async def syncing(request: web.Request) -> web.Response:
        body = {
            "data": {
                "head_slot": "1",
                "sync_distance": "0",
                "is_syncing": False,
                "is_optimistic": False,
                "el_offline": False,
            }
        }
        return web.json_response(body)

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def register(request: web.Request) -> web.Response:
        nonlocal received
        received += len(await request.json())
        return web.Response(status=200)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.add_routes(
        [
            web.get("/eth/v1/node/syncing", syncing),
            web.get("/eth/v1/node/health", health),
            web.post("/eth/v1/validator/register_validator", register),
        ]
    )
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    port_file.write_text(str(port))
    await asyncio.Event().wait()


# ---------------------------------------------------------------------- the client


async def measure(url: str, count: int, rounds: int, directory: Path) -> tuple[float, list[float]]:
    from validator.beacon import BeaconNodeClient
    from validator.duties.registrations import BuilderRegistrations
    from validator.key_settings import ProposerSettings
    from validator.signing.signer import Signer

    generator = random.Random(2025)
    secrets = [generator.randrange(1, 2**250) for _ in range(count)]
    keys = {crypto_backend.sk_to_pk(secret): secret for secret in secrets}
    chain = SimulatedChainConfig(genesis_time=int(time.time()), genesis_validators_root=GVR)
    spec = chain.chain_spec()
    with SlashingProtection.open(directory, GVR, create=True) as record:
        signer = Signer(spec, record)
        await signer.add_keys(keys)
        client = BeaconNodeClient([url], health_check_interval=60.0)
        await client.start()
        try:
            settings = ProposerSettings(default_fee_recipient=FEE_RECIPIENT, builder=True)
            registrations = BuilderRegistrations(client, signer, spec, settings)
            started = time.process_time()
            first = await registrations.round(0)
            first_cpu = time.process_time() - started
            assert first.signed == count and first.failed_batches == 0, first
            later = []
            for epoch in range(1, rounds + 1):
                started = time.process_time()
                report = await registrations.round(epoch)
                later.append(time.process_time() - started)
                assert report.signed == 0 and report.submitted == count, report
        finally:
            await client.close()
    return first_cpu, later


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve is not None:
        asyncio.run(serve(arguments.serve))
        return
    with tempfile.TemporaryDirectory() as folder:
        port_file = Path(folder) / "port"
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the beacon node stand-in did not start")
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port_file.read_text()}"
            record_dir = Path(folder) / "record"
            record_dir.mkdir()
            print(
                f"{arguments.keys} keys, {crypto_backend.info()['backend']} backend, "
                f"load {os.getloadavg()[0]:.2f}"
            )
            first, later = asyncio.run(measure(url, arguments.keys, arguments.rounds, record_dir))
        finally:
            server.terminate()
            server.wait(timeout=10)
    median = statistics.median(later)
    ratio = median / first
    print(f"first round (sign {arguments.keys} and send): {first * 1000:9.1f} ms CPU")
    print(
        f"later round (send, no signing), median of {len(later)}: {median * 1000:9.1f} ms CPU "
        f"(each: {', '.join(f'{value * 1000:.1f}' for value in later)})"
    )
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"ratio later / first: {ratio:.4f} (goal <= {GOAL}: {verdict})")


if __name__ == "__main__":
    main()
