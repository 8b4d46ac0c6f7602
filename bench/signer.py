"""``validator signer`` throughput: one slot's attestations for 1,000 keys over loopback HTTP.

The signer API (``validator.signer_server.SignerApi``, the same one ``validator signer``
serves) runs in a child process over its own slashing-protection record; this process
asks it. Side by side, for the same 1,000 keys and the same kind of attestation:

  in-process   one ``Signer.sign_attestations`` batch with the keys held locally (what
               ``validator run`` does with local keys): checks, one record write, sign_many.
  remote       the client's path for remote keys: the same batch through
               ``Signer.sign_attestations`` with every key remote, so the client's record
               write, then 1,000 Web3Signer requests (kept-alive connections, at most
               --connections in flight), the answers checked in one batch verification.
  requests     the same 1,000 requests bare (no client record, no check), each timed
               from its start (a connection free) to its answer: p50 / p99
               per-request latency with --connections requests in flight.
  single       --single requests one after another: the latency of a lone request.

Each figure is the median of --rounds rounds (a new target epoch each, so every round
is signable). The ratio is remote / in-process wall time. The machine may be shared:
the 1-minute load average before each part is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

from slashing_protection import SlashingProtection  # noqa: E402
from validator.consensus import signing_roots  # noqa: E402
from validator.consensus.chain_preset import SimulatedChainConfig  # noqa: E402
from validator.consensus.interop import interop_keypair  # noqa: E402
from validator.consensus.spec import ChainSpec  # noqa: E402
from validator.consensus.ssz import AttestationData, Checkpoint  # noqa: E402
from validator.signing.types import AttestationRequest  # noqa: E402

GVR = sha256(b"bench signer").digest()
# A chain a day old: every target epoch the rounds use is well behind the wall clock.
GENESIS_TIME = int(time.time()) // 3600 * 3600 - 86_400


def chain() -> ChainSpec:
    return SimulatedChainConfig(genesis_time=GENESIS_TIME, genesis_validators_root=GVR).chain_spec()


def keys(count: int) -> list[tuple[int, bytes]]:
    return [interop_keypair(index) for index in range(count)]


def attestation(target: int) -> AttestationData:
    return AttestationData(
        slot=target * 8,
        index=0,
        beacon_block_root=sha256(b"head %d" % target).digest(),
        source=Checkpoint(epoch=target - 1, root=sha256(b"source %d" % target).digest()),
        target=Checkpoint(epoch=target, root=sha256(b"target %d" % target).digest()),
    )


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


# ---------------------------------------------------------------------- the server


async def serve(directory: Path, count: int, port_file: Path) -> None:
    from validator.signer_server import SignerApi, start_signer_api
    from validator.signing.signer import Signer

    held = keys(count)
    with SlashingProtection.open(directory, GVR, register=[pk for _, pk in held]) as record:
        signer = Signer(chain(), record)
        await signer.add_keys({pubkey: secret for secret, pubkey in held})
        runner = await start_signer_api(SignerApi(signer, chain()), "127.0.0.1", 0)
        port_file.write_text(str(runner.addresses[0][1]))
        await asyncio.Event().wait()  # until the parent kills us


# ---------------------------------------------------------------------- the parts


async def in_process(directory: Path, held: list[tuple[int, bytes]], target: int) -> float:
    from validator.signing.signer import Signer

    with SlashingProtection.open(directory, GVR, register=[pk for _, pk in held]) as record:
        signer = Signer(chain(), record)
        await signer.add_keys({pubkey: secret for secret, pubkey in held})
        data = attestation(target)
        started = time.perf_counter()
        results = await signer.sign_attestations([AttestationRequest(pk, data) for _, pk in held])
        seconds = time.perf_counter() - started
    assert all(result.signed for result in results)
    return seconds


async def remote(
    directory: Path, url: str, held: list[tuple[int, bytes]], target: int, connections: int
) -> float:
    from validator.signing.remote import RemoteSigner, RemoteSignerSettings
    from validator.signing.signer import Signer

    settings = RemoteSignerSettings(timeout=30.0, max_connections=connections)
    with SlashingProtection.open(directory, GVR, register=[pk for _, pk in held]) as record:
        signer = Signer(chain(), record)
        client = RemoteSigner(url, settings)
        await signer.add_remote_keys({pubkey: client for _, pubkey in held})
        data = attestation(target)
        try:
            started = time.perf_counter()
            results = await signer.sign_attestations(
                [AttestationRequest(pk, data) for _, pk in held]
            )
            seconds = time.perf_counter() - started
        finally:
            await client.close()
    refused = [result.refusal for result in results if not result.signed]
    assert not refused, refused[:2]
    return seconds


async def requests(
    url: str, pubkeys: list[bytes], target: int, connections: int
) -> tuple[float, list[float]]:
    """Bare requests, ``connections`` in flight: (wall time, each request's latency)."""
    import aiohttp
    import orjson

    from validator.signing.web3signer import SignType, request_for

    spec = chain()
    data = attestation(target)
    root = signing_roots.attestation_signing_root(spec, data)
    body = orjson.dumps(request_for(SignType.ATTESTATION, spec, data, root).to_json())
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=connections)
    # Timed from when a request may start (one of the connections is free) to its answer,
    # so the latency is the signer's under that concurrency, not the client's queue.
    in_flight = asyncio.Semaphore(connections)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(pubkey: bytes) -> None:
            async with in_flight:
                started = time.perf_counter()
                async with session.post(
                    f"{url}/api/v1/eth2/sign/0x{pubkey.hex()}",
                    data=body,
                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                ) as response:
                    await response.read()
                    assert response.status == 200, response.status
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        if connections == 1:
            for pubkey in pubkeys:
                await one(pubkey)
        else:
            await asyncio.gather(*(one(pubkey) for pubkey in pubkeys))
        return time.perf_counter() - started, latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def bench(args: argparse.Namespace) -> None:
    held = keys(args.keys)
    pubkeys = [pubkey for _, pubkey in held]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "server").mkdir()
        port_file = root / "port"
        server = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--serve",
                str(root / "server"),
                "--keys",
                str(args.keys),
                "--port-file",
                str(port_file),
            ],
        )
        try:
            for _ in range(600):
                if port_file.exists() and port_file.read_text():
                    break
                await asyncio.sleep(0.1)
            url = f"http://127.0.0.1:{port_file.read_text()}"
            print(
                f"{args.keys} keys, signer API in process {server.pid} at {url}, "
                f"{args.connections} connections, {args.rounds} rounds"
            )
            target = 10
            local_times, remote_times, bare_times, latencies = [], [], [], []
            for round_ in range(args.rounds):
                directory = root / f"client-{round_}"
                (directory / "local").mkdir(parents=True)
                target += 1
                local_times.append(await in_process(directory / "local", held, target))
                target += 1
                remote_times.append(await remote(directory, url, held, target, args.connections))
                target += 1
                wall, each = await requests(url, pubkeys, target, args.connections)
                bare_times.append(wall)
                latencies.extend(each)
                print(
                    f"  round {round_ + 1}: in-process {local_times[-1] * 1000:.0f} ms, "
                    f"remote {remote_times[-1] * 1000:.0f} ms, bare requests "
                    f"{wall * 1000:.0f} ms ({load()})"
                )
            target += 1
            _, lone = await requests(url, pubkeys[: args.single], target, 1)
        finally:
            server.kill()
            server.wait()
    local = statistics.median(local_times)
    through = statistics.median(remote_times)
    print(f"in-process batch ({args.keys} attestations): {local * 1000:.0f} ms")
    print(
        f"remote batch through validator signer:     {through * 1000:.0f} ms "
        f"({args.keys / through:.0f} signatures/s)"
    )
    print(f"ratio remote / in-process: {through / local:.1f}x")
    print(
        f"per request, {args.connections} in flight: p50 {percentile(latencies, 0.5) * 1000:.1f} "
        f"ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms "
        f"(bare batch {statistics.median(bare_times) * 1000:.0f} ms)"
    )
    print(
        f"lone request ({args.single} one after another): p50 "
        f"{percentile(lone, 0.5) * 1000:.1f} ms, p99 {percentile(lone, 0.99) * 1000:.1f} ms "
        f"({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single", type=int, default=200)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve, args.keys, args.port_file))
    else:
        asyncio.run(bench(args))


if __name__ == "__main__":
    main()
