"""``SimulatedBeaconNode``: the devnet as one object to start, query and stop.

    node = SimulatedBeaconNode(devnet_state_dir(validators_dir), validator_count=64,
                               seconds_per_slot=2.0)
    port = await node.start()          # serving http://127.0.0.1:<port>
    ...
    await node.stop()
    print(node.summary())

The node runs on the caller's event loop; ``python -m validator.devnet`` runs
it in a process of its own.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from validator.consensus.encoding import to_hex
from validator.consensus.ssz.preset import MAINNET, PRESETS
from validator.devnet.beacon_api.server import build_app
from validator.devnet.chain.blocktree import BlockTree
from validator.devnet.chain.faults import Fault, FaultInjector
from validator.devnet.chain.finality import FinalityTracker
from validator.devnet.chain.ledger import Ledger
from validator.devnet.chain.registry import ValidatorLifecycle, ValidatorRegistry
from validator.devnet.chain.relay import SimulatedRelay
from validator.devnet.chain.simulated_chain import DevnetChain, genesis_block_record
from validator.devnet.chain.state_directory import (
    STATE_VERSION,
    ChainIdentity,
    DevnetStateError,
    DevnetStore,
)
from validator.devnet.judge.slasher import Slasher, SlasherStateError
from validator.devnet.strict_mode.chain_api import StrictMode

log = logging.getLogger("validator.devnet")

DEFAULT_EPOCHS_PER_SYNC_COMMITTEE_PERIOD = 8


class SimulatedBeaconNode:
    def __init__(
        self,
        state_dir: Path,
        validator_count: int,
        seconds_per_slot: float,
        slots_per_epoch: int = 8,
        fault: Fault | str | None = None,
        strict: bool = False,
        *,
        epochs_per_sync_committee_period: int = DEFAULT_EPOCHS_PER_SYNC_COMMITTEE_PERIOD,
        genesis_delay: float = 0.0,
        count_duties_from_slot: int | None = None,
        preset: str = MAINNET.name,
        gloas_fork_epoch: int | None = None,
        builder: bool = False,
    ) -> None:
        """A devnet kept in ``state_dir`` (use ``devnet_state_dir(validators_dir)``).

        ``genesis_delay``: for a new chain, seconds from now to genesis.
        ``count_duties_from_slot``: judge missed duties from this slot on
        (default: the first slot that starts after ``start()``); see
        ``start_counting_duties`` to move it later once the client is up.
        ``preset``: the preset's name (``mainnet`` or ``minimal``), for a new chain.
        ``builder``: run the simulated builder and relay (``validator.devnet.chain.relay``).
        """
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        if validator_count <= 0:
            raise ValueError("validator_count must be positive")
        slot_duration_ms = round(seconds_per_slot * 1000)
        if slot_duration_ms <= 0:
            raise ValueError("seconds_per_slot must be at least 0.001")
        if slots_per_epoch <= 0 or epochs_per_sync_committee_period <= 0:
            raise ValueError(
                "slots_per_epoch and epochs_per_sync_committee_period must be positive"
            )
        self.state_dir = Path(state_dir)
        self.validator_count = validator_count
        self.slot_duration_ms = slot_duration_ms
        self.slots_per_epoch = slots_per_epoch
        self.epochs_per_sync_committee_period = epochs_per_sync_committee_period
        self.preset = preset
        self.gloas_fork_epoch = gloas_fork_epoch
        self.fault = Fault.parse(fault) if isinstance(fault, str) else fault
        self.strict = strict
        self.builder = builder
        self.genesis_delay = genesis_delay
        self._count_from = count_duties_from_slot
        self._store = DevnetStore(self.state_dir)
        self._chain: DevnetChain | None = None
        self._runner: web.AppRunner | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._timers: set[asyncio.TimerHandle] = set()
        self._persist_lock = asyncio.Lock()
        self._pending_write: asyncio.Future[None] | None = None
        self._runs = 1
        self._running = False
        self._strict: StrictMode | None = None
        self._port: int | None = None
        self._host = "127.0.0.1"

    # --- properties -----------------------------------------------------------------

    @property
    def chain(self) -> DevnetChain:
        if self._chain is None:
            raise RuntimeError("the devnet has not been started")
        return self._chain

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the devnet has not been started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def genesis_time(self) -> int:
        return self.chain.identity.genesis_time

    @property
    def genesis_validators_root(self) -> bytes:
        return self.chain.identity.genesis_validators_root

    # --- life cycle ---------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Load or create the chain, serve the Beacon API; returns the port it listens on."""
        if self._running:
            raise RuntimeError("the devnet is already running")
        self._store.lock()
        self._running = True
        self._chain = None
        try:
            chain = await self._open_chain()
            self._chain = chain
            middlewares: list[Any] = []
            if self.strict:
                self._strict = await StrictMode.load(chain)
                middlewares = self._strict.middlewares()
            app = build_app(chain, middlewares)
            runner = web.AppRunner(app, access_log=None, handle_signals=False)
            await runner.setup()
            site = web.TCPSite(runner, host, port)
            await site.start()
            self._runner = runner
            server = site._server
            assert server is not None
            sockets = getattr(server, "sockets", None) or []
            self._port = int(sockets[0].getsockname()[1]) if sockets else port
            self._host = host
            await self._persist()
            self._ticker = asyncio.create_task(self._run_slots(), name="devnet slots")
        except BaseException:
            await self._shutdown()
            raise
        log.info(
            "devnet of %d validators on %s, genesis %d, slot %d",
            self.validator_count,
            self.url,
            chain.identity.genesis_time,
            chain.current_slot(),
        )
        return self.port

    async def stop(self) -> None:
        """Stop serving, write the state a last time, release the directory (idempotent)."""
        if not self._running:
            return
        await self._shutdown()

    async def _shutdown(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            try:
                await self._ticker
            except asyncio.CancelledError:
                pass
            self._ticker = None
        if self._pending_write is not None:
            try:
                await self._pending_write
            except OSError:
                log.exception("cannot write the devnet state")
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        if self._chain is not None:
            self._chain.events.disconnect_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        try:
            if self._chain is not None:
                await self._persist()
        finally:
            self._store.unlock()
            self._running = False

    def start_counting_duties(self, slot: int | None = None) -> int:
        """Judge missed duties from ``slot`` (default: the next slot); returns that slot."""
        chain = self.chain
        first = chain.current_slot() + 1 if slot is None else slot
        chain.ledger.start_counting_from(first)
        return chain.ledger.count_from_slot

    def summary(self) -> dict[str, Any]:
        chain = self.chain
        finality = chain.finality
        summary: dict[str, Any] = {
            "slots": chain.slots_seen,
            **chain.ledger.summary(),
        }
        summary.update(
            {
                "validators": self.validator_count,
                "seconds_per_slot": chain.seconds_per_slot,
                "slots_per_epoch": chain.slots_per_epoch,
                "preset": chain.preset.name,
                "genesis_time": chain.identity.genesis_time,
                "genesis_validators_root": to_hex(chain.identity.genesis_validators_root),
                "fault": self.fault.value if self.fault else None,
                "strict": self.strict,
                "builder": self.builder,
                "current_slot": chain.current_slot(),
                "head_slot": chain.tree.head.slot,
                "head_root": to_hex(chain.tree.head.root),
                "justified_epoch": finality.current_justified.epoch,
                "previous_justified_epoch": finality.previous_justified.epoch,
                "finalized_epoch": finality.finalized.epoch,
                "counting_duties_from_slot": chain.ledger.count_from_slot,
                "slasher_records": {
                    "attestations": chain.slasher.attestation_records,
                    "blocks": chain.slasher.block_records,
                },
                "slashings": [finding.to_json() for finding in chain.findings],
                "runs": self._runs,
                "strict_violation_details": [
                    str(violation)
                    for violation in (self._strict.violations if self._strict else [])
                ][:20],
                "events_published": dict(sorted(chain.events.published.items())),
            }
        )
        return summary

    # --- loading and saving -----------------------------------------------------------

    def _requested(self) -> dict[str, object]:
        return {
            "preset": self.preset,
            "gloas_fork_epoch": self.gloas_fork_epoch,
            "validator_count": self.validator_count,
            "slot_duration_ms": self.slot_duration_ms,
            "slots_per_epoch": self.slots_per_epoch,
            "epochs_per_sync_committee_period": self.epochs_per_sync_committee_period,
        }

    async def _open_chain(self) -> DevnetChain:
        store = self._store
        state = store.load_state()
        if state is None:
            registry = await asyncio.to_thread(ValidatorRegistry.interop, self.validator_count)
            root = await asyncio.to_thread(registry.genesis_validators_root)
            identity = ChainIdentity(
                genesis_time=math.ceil(time.time() + self.genesis_delay),
                genesis_validators_root=root,
                validator_count=self.validator_count,
                slot_duration_ms=self.slot_duration_ms,
                slots_per_epoch=self.slots_per_epoch,
                epochs_per_sync_committee_period=self.epochs_per_sync_committee_period,
                preset=self.preset,
                gloas_fork_epoch=self.gloas_fork_epoch,
            )
            await asyncio.to_thread(store.save_pubkeys, list(registry.pubkeys))
        else:
            try:
                identity = ChainIdentity.from_json(state["identity"])
            except (KeyError, TypeError, ValueError) as failure:
                raise DevnetStateError(f"cannot read the devnet state: {failure}") from None
            identity.check_compatible(self.state_dir, self._requested())
            pubkeys = await asyncio.to_thread(store.load_pubkeys, identity.validator_count)
            if pubkeys is None:
                registry = await asyncio.to_thread(ValidatorRegistry.interop, self.validator_count)
                await asyncio.to_thread(store.save_pubkeys, list(registry.pubkeys))
            else:
                registry = ValidatorRegistry(pubkeys)
            self._runs = int(state.get("runs", 0)) + 1
        if identity.preset not in PRESETS:
            raise DevnetStateError(f"the devnet state names an unknown preset {identity.preset!r}")
        genesis = genesis_block_record(identity.genesis_validators_root, PRESETS[identity.preset])
        try:
            if state is None:
                tree = BlockTree(genesis, identity.slots_per_epoch)
                finality = FinalityTracker()
                lifecycle = ValidatorLifecycle()
                cumulative: dict[str, int] = {}
                pins: dict[int, int] = {}
            else:
                tree = BlockTree.from_json(genesis, identity.slots_per_epoch, state["blocks"])
                finality = FinalityTracker.from_json(state["finality"])
                lifecycle = ValidatorLifecycle.from_json(state["lifecycle"])
                cumulative = {str(k): int(v) for k, v in state["counters"].items()}
                pins = {int(k): int(v) for k, v in state.get("proposer_pins", {}).items()}
        except (KeyError, TypeError, ValueError) as failure:
            raise DevnetStateError(f"cannot read the devnet state: {failure}") from None
        try:
            slasher = await asyncio.to_thread(
                Slasher.open, store.slasher_directory, identity.slots_per_epoch
            )
        except SlasherStateError as failure:
            raise DevnetStateError(str(failure)) from None
        now_slot = max(
            0, math.floor((time.time() - identity.genesis_time) * 1000 / identity.slot_duration_ms)
        )
        count_from = self._count_from if self._count_from is not None else now_slot + 1
        ledger = Ledger(identity.slots_per_epoch, count_from, cumulative)
        chain = DevnetChain(identity, registry, tree, finality, lifecycle, slasher, ledger)
        chain.duties.proposer_pins.update(pins)
        if self.fault is not None:
            chain.faults = FaultInjector(self.fault, chain, self._schedule)
        if self.builder:
            chain.relay = SimulatedRelay()
        return chain

    def _state_json(self) -> bytes:
        chain = self.chain
        return orjson.dumps(
            {
                "version": STATE_VERSION,
                "identity": chain.identity.to_json(),
                "runs": self._runs,
                "strict_violation_details": [
                    str(violation)
                    for violation in (self._strict.violations if self._strict else [])
                ][:20],
                "last_slot": chain.current_slot(),
                "blocks": chain.tree.to_json(),
                "finality": chain.finality.to_json(),
                "lifecycle": chain.lifecycle.to_json(),
                "proposer_pins": {
                    str(slot): proposer for slot, proposer in chain.duties.proposer_pins.items()
                },
                "counters": chain.ledger.cumulative(),
            }
        )

    async def _persist(self) -> None:
        """Write the chain state and the slasher's changed files (the writing in a thread)."""
        async with self._persist_lock:
            chain = self.chain
            state = self._state_json()
            segments = chain.slasher.take_dirty_segments()

            def write() -> None:
                Slasher.write_segments(segments)
                self._store.save_state(state)

            # Shielded: a cancelled ticker must not leave a half-done write racing the next one.
            self._pending_write = asyncio.ensure_future(asyncio.to_thread(write))
            await asyncio.shield(self._pending_write)

    # --- time -----------------------------------------------------------------------

    def _schedule(self, at: float, action: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()

        def run() -> None:
            self._timers.discard(handle)
            try:
                action()
            except Exception:
                log.exception("devnet fault action failed")

        handle = loop.call_later(max(0.0, at - time.time()), run)
        self._timers.add(handle)

    async def _run_slots(self) -> None:
        chain = self.chain
        next_slot = max(0, chain.slot_at(time.time()) + 1)
        while True:
            delay = chain.slot_start(next_slot) - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            now_slot = chain.slot_at(time.time())
            while next_slot <= now_slot:
                chain.on_slot_start(next_slot)
                if chain.faults is not None:
                    chain.faults.on_slot_start(next_slot)
                next_slot += 1
            try:
                await self._persist()
            except OSError:
                log.exception("cannot write the devnet state")
