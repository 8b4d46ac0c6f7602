"""Fixtures for the simulated chain's tests."""

from __future__ import annotations

import pyblst
import pytest

import crypto_backend

_DST = b"BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_"
_G1 = pyblst.BlstP1Element.uncompress(
    bytes.fromhex(
        "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac58"
        "6c55e83ff97a1aeffb3af00adb22c6bb"
    )
)


def _verify_signature_sets(sets):  # type: ignore[no-untyped-def]
    # TEMPORARY until the batched crypto backend lands on main.
    for pubkeys, message, signature in sets:
        try:
            points = [pyblst.BlstP1Element.uncompress(pk) for pk in pubkeys]
            sig = pyblst.BlstP2Element.uncompress(signature)
        except ValueError:
            return False
        if not points:
            return False
        total = points[0]
        for point in points[1:]:
            total = total + point
        if total == pyblst.BlstP1Element():
            return False
        hashed = pyblst.BlstP2Element.hash_to_group(message, _DST)
        if not pyblst.final_verify(pyblst.miller_loop(total, hashed), pyblst.miller_loop(_G1, sig)):
            return False
    return True


def _aggregate(signatures):  # type: ignore[no-untyped-def]
    points = [pyblst.BlstP2Element.uncompress(s) for s in signatures]
    total = points[0]
    for point in points[1:]:
        total = total + point
    return bytes(total.compress())


@pytest.fixture(autouse=True, scope="session")
def _batched_crypto_until_it_lands():  # type: ignore[no-untyped-def]
    if not hasattr(crypto_backend, "verify_signature_sets"):
        crypto_backend.verify_signature_sets = _verify_signature_sets  # type: ignore[attr-defined]
        crypto_backend.aggregate = _aggregate  # type: ignore[attr-defined]
    yield


# --- a running devnet and a scripted client ------------------------------------------------

import contextlib  # noqa: E402
import time  # noqa: E402
from collections.abc import AsyncIterator  # noqa: E402
from pathlib import Path  # noqa: E402

from tests.devnet.driver import Driver  # noqa: E402
from validator.beacon import BeaconNodeClient, RequestTimeouts  # noqa: E402
from validator.devnet import SimulatedBeaconNode  # noqa: E402

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


import asyncio  # noqa: E402
