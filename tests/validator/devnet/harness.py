"""A running devnet and a connected scripted client for the simulated chain's tests."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from tests.validator.devnet.driver import Driver
from validator.beacon import BeaconNodeClient, RequestTimeouts
from validator.devnet import SimulatedBeaconNode

SECONDS_PER_SLOT = 0.4
SLOTS_PER_EPOCH = 4
VALIDATORS = 8


async def wait_for_genesis(node: SimulatedBeaconNode) -> None:
    delay = node.genesis_time - time.time()
    if delay > 0:
        await asyncio.sleep(delay)


@contextlib.asynccontextmanager
async def running_devnet(
    state_dir: Path,
    *,
    validators: int = VALIDATORS,
    seconds_per_slot: float = SECONDS_PER_SLOT,
    slots_per_epoch: int = SLOTS_PER_EPOCH,
    **options: object,
) -> AsyncIterator[SimulatedBeaconNode]:
    node = SimulatedBeaconNode(
        state_dir,
        validators,
        seconds_per_slot,
        slots_per_epoch,
        **options,  # type: ignore[arg-type]
    )
    await node.start()
    try:
        await wait_for_genesis(node)
        yield node
    finally:
        await node.stop()


@contextlib.asynccontextmanager
async def connected_driver(
    node: SimulatedBeaconNode, middlewares: tuple[object, ...] = ()
) -> AsyncIterator[Driver]:
    client = BeaconNodeClient(
        [node.url],
        timeouts=RequestTimeouts.for_slot(4.0),
        middlewares=middlewares,  # type: ignore[arg-type]
    )
    async with client:
        spec = node.chain.spec
        yield Driver(client, spec, node.validator_count)
