"""Run the devnet in a process of its own: ``python -m validator.devnet --state-dir DIR ...``.

When it listens it prints one JSON line on stdout (``{"ready": true, "url": ...,
"port": ..., ...}``); on SIGTERM or SIGINT (or after ``--slots`` slots) it
stops, prints the summary as one JSON line and writes it to ``--summary``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from validator.devnet.chain.faults import Fault
from validator.devnet.chain.state_directory import DevnetStateError
from validator.devnet.node import SimulatedBeaconNode
from validator.devnet.strict_mode.openapi_spec import SpecLoadError

app = typer.Typer(add_completion=False, help="The simulated beacon chain (validator devnet).")


async def _serve(node: SimulatedBeaconNode, host: str, port: int, slots: int) -> dict[str, object]:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    actual_port = await node.start(host, port)
    ready = {
        "ready": True,
        "url": node.url,
        "port": actual_port,
        "pid": os.getpid(),
        "genesis_time": node.genesis_time,
        "genesis_validators_root": "0x" + node.genesis_validators_root.hex(),
    }
    sys.stdout.write(orjson.dumps(ready).decode() + "\n")
    sys.stdout.flush()
    try:
        while not stop.is_set():
            if slots and node.chain.slots_seen >= slots:
                break
            try:
                await asyncio.wait_for(stop.wait(), timeout=min(1.0, node.chain.seconds_per_slot))
            except TimeoutError:
                pass
    finally:
        await node.stop()
    return node.summary()


@app.command()
def main(
    state_dir: Annotated[Path, typer.Option(help="The devnet's state directory.")],
    validators: Annotated[int, typer.Option(min=1, help="Number of interop validators.")] = 64,
    seconds_per_slot: Annotated[float, typer.Option(help="Slot duration in seconds.")] = 2.0,
    slots_per_epoch: Annotated[int, typer.Option(min=1)] = 8,
    preset: Annotated[
        str, typer.Option(help="The chain's preset: mainnet or minimal (a new chain's).")
    ] = "mainnet",
    gloas_fork_epoch: Annotated[
        int | None,
        typer.Option(
            min=1, help="Schedule Gloas (ePBS) at this epoch (a new chain's; default off)."
        ),
    ] = None,
    fault: Annotated[str | None, typer.Option(help="Misbehave: " + ", ".join(Fault))] = None,
    strict: Annotated[
        bool, typer.Option(help="Hold every exchange to the Beacon API spec.")
    ] = False,
    builder: Annotated[
        bool,
        typer.Option(
            "--builder",
            help="Run a simulated builder and relay: registrations, blinded blocks.",
        ),
    ] = False,
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="0 picks a free port.")] = 0,
    slots: Annotated[
        int, typer.Option(help="Stop after this many slots (0: run until signalled).")
    ] = 0,
    genesis_delay: Annotated[float, typer.Option(help="New chain: seconds until genesis.")] = 0.0,
    summary: Annotated[Path | None, typer.Option(help="Write the summary here as JSON.")] = None,
    log_level: Annotated[str, typer.Option()] = "INFO",
) -> None:
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        node = SimulatedBeaconNode(
            state_dir,
            validators,
            seconds_per_slot,
            slots_per_epoch,
            fault=fault,
            strict=strict,
            builder=builder,
            genesis_delay=genesis_delay,
            preset=preset,
            gloas_fork_epoch=gloas_fork_epoch,
        )
        result = asyncio.run(_serve(node, host, port, slots))
    except (DevnetStateError, SpecLoadError, ValueError, OSError) as failure:
        typer.echo(f"devnet: {failure}", err=True)
        raise typer.Exit(2) from None
    encoded = orjson.dumps(result, option=orjson.OPT_SORT_KEYS)
    if summary is not None:
        summary.write_bytes(encoded + b"\n")
    sys.stdout.write(encoded.decode() + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    app()
