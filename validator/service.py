"""``validator run``: start-up, the duty loop, and an orderly stop.

Start-up, in this order, each step one call of ``validator.startup.Startup`` (steps
1 to 6 together are ``Startup.start_signing``, which ``validator signer`` composes too),
each stopping the process with one readable line when it cannot be done:

0. ``read_proposer_config``: ``--proposer-config``, before anything is opened, so a
   bad file touches nothing;
1. ``start_metrics``: the metrics server (``--metrics``), so a stuck start-up can be
   watched;
2. ``connect_beacon_node``: wait for a beacon node that answers and is synced;
3. ``read_chain``: read the chain (genesis, spec, fork schedule) into a ``ChainSpec``;
4. ``open_record``: open the slashing-protection record for the chain's
   genesis_validators_root: the file record, taking the directory's lock, or with
   ``--slashing-protection-db`` the shared PostgreSQL record (unreachable at start: the
   process stops; lost later: nothing is signed until it is back); with
   ``--init-slashing-protection`` the directory's keys are registered as never having
   signed (an existing entry is never lowered); without it there must be a record
   already;
5. ``open_key_gate``: read and remove the clean-shutdown marker of the previous run
   (``validator.clean_shutdown``); with ``--doppelganger-protection``, check that
   the beacon node serves the liveness endpoint;
6. ``admit_keys``: decrypt the keystores (every core, progress on a terminal) and hand
   the keys to the signer through the key gate (``validator.duties.doppelganger``):
   halted keys are refused, with doppelganger protection the keys that must wait are
   held back; a key the record does not know is refused by the signer at every
   message and named in a warning here;
7. ``start_keymanager``: the Keymanager API (``--keymanager``);
8. ``ValidatorService._perform_duties``: the duty loop, until SIGINT/SIGTERM (or a
   doppelganger: exit status 3), with the builder registrations each epoch when the
   builder flow is on for any key (the start's round before the loop).

Stopping: the loop takes no new duty, running duties get a short grace period
(a record write in progress always completes), the clean-shutdown marker is
written, then the servers, the beacon node connection and finally the record's
lock are released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

import crypto_backend
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtectionError
from validator.clean_shutdown import write_clean_shutdown
from validator.consensus.spec import ChainSpec
from validator.duties.context import DutyContext
from validator.duties.doppelganger import SLASHING_TOPICS, KeyGate
from validator.duties.registrations import BuilderRegistrations, cancel_and_wait
from validator.duties.scheduler import DutyScheduler
from validator.duties.slot_clock import SlotClock
from validator.duties.tracker import DutyTracker
from validator.key_settings import KeyOverrides, ProposerSettings
from validator.keymanager_server import KeymanagerServer
from validator.proposer_config import (
    NO_PROPOSER_CONFIG,
    ProposerConfig,
    ProposerConfigError,
    load_proposer_config,
    warn_unknown_keys,
)
from validator.startup import (
    DEFAULT_KEYMANAGER_ADDRESS,
    DEFAULT_KEYMANAGER_PORT,
    MIN_TIMEOUT_SLOT_SECONDS,
    RunningParts,
    RunOptions,
    Startup,
    StartupError,
    check_options,
    read_chain,
)
from validator.status_view import LiveParts

log = logging.getLogger("validator.service")

#: Exit status of a run stopped because a doppelganger was found.
EXIT_DOPPELGANGER = 3


class ValidatorService:
    """One run of the validator client (``await run(stop)``).

    ``run`` owns every part it starts (one exit stack); ``running`` (the started parts)
    and ``scheduler`` only let a driver look in while it runs.
    """

    def __init__(self, options: RunOptions) -> None:
        check_options(options)
        self.options = options
        self.store = ValidatorStore(options.validators_dir)
        self.running: RunningParts | None = None
        self.scheduler: DutyScheduler | None = None
        #: 0, or EXIT_DOPPELGANGER once a doppelganger stopped the run.
        self.exit_status = 0
        #: The builder registrations, when the builder flow is on for any key.
        self.registrations: BuilderRegistrations | None = None
        #: What the status page (``--status-page``) reads, filled in as the parts start.
        self.status = LiveParts(options.validators_dir)

    # -- what a driver looks at ----------------------------------------------------------

    @property
    def chain(self) -> ChainSpec | None:
        return None if self.running is None else self.running.chain

    @property
    def gate(self) -> KeyGate | None:
        return None if self.running is None else self.running.gate

    @property
    def keymanager_server(self) -> KeymanagerServer | None:
        return None if self.running is None else self.running.keymanager_server

    @property
    def unregistered(self) -> list[bytes]:
        """The keys without a record entry (their slashable messages are refused)."""
        return [] if self.running is None else self.running.unregistered

    # -- run ---------------------------------------------------------------------------

    async def run(
        self,
        stop: asyncio.Event,
        *,
        last_slot: int | None = None,
        slot_count: int | None = None,
        on_slot: Callable[[int], None] | None = None,
    ) -> None:
        """Start, perform duties until ``stop`` is set, then stop cleanly.

        ``last_slot``, ``slot_count`` and ``on_slot`` are for a driver, not flags of
        ``validator run``: the devnet stops after its ``--slots`` and shows progress at
        every slot.
        """
        check_can_start(self.options)
        proposer_config = read_proposer_config(self.options.proposer_config)  # step 0
        async with contextlib.AsyncExitStack() as parts:
            # Entered first so that it unwinds last: every signature made is on
            # record before the lock is let go, after the servers and the client.
            record_lock = parts.enter_context(contextlib.ExitStack())
            startup = Startup(
                self.options,
                self.store,
                parts=parts,
                record_lock=record_lock,
                stop=stop,
                on_doppelganger=lambda: self._found_doppelganger(stop),
                status=self.status,
            )
            running = self.running = await startup.start_signing()  # steps 1 to 6
            if running is None:
                return
            await startup.start_keymanager(running, proposer_config)  # step 7
            if stop.is_set():
                return
            await self._perform_duties(  # step 8
                running,
                parts,
                stop,
                proposer_config,
                last_slot=last_slot,
                slot_count=slot_count,
                on_slot=on_slot,
            )

    def _found_doppelganger(self, stop: asyncio.Event) -> None:
        self.exit_status = EXIT_DOPPELGANGER
        stop.set()

    async def _perform_duties(
        self,
        running: RunningParts,
        parts: contextlib.AsyncExitStack,
        stop: asyncio.Event,
        proposer_config: ProposerConfig,
        *,
        last_slot: int | None,
        slot_count: int | None,
        on_slot: Callable[[int], None] | None,
    ) -> None:
        """The duty loop until ``stop``; then the duties in flight finish, the gate stops
        and the clean-shutdown marker is written."""
        options = self.options
        client, chain, signer, gate = running.client, running.chain, running.signer, running.gate
        assert client is not None  # validator run always has its beacon nodes
        clock = SlotClock(chain)
        tracker = self.status.tracker = DutyTracker(client, chain, signer.pubkeys)
        gate.known_indices = lambda: tracker.indices
        gate_stop = asyncio.Event()
        gate_task = asyncio.create_task(gate.run(gate_stop), name="key-gate")
        parts.push_async_callback(_stop_gate, gate, gate_stop, gate_task)
        settings = ProposerSettings(
            default_fee_recipient=options.suggested_fee_recipient,
            default_graffiti=options.graffiti,
            overrides=self._overrides,
            builder=options.builder,
            builder_boost_factor=options.builder_boost_factor,
            proposer_config=proposer_config,
        )
        warn_unknown_keys(proposer_config, {*signer.pubkeys(), *gate.waiting()})
        registrations = None
        if options.builder or proposer_config.enables_builder():
            registrations = BuilderRegistrations(client, signer, chain, settings)
        self.registrations = registrations
        await tracker.resolve_indices()
        log.info(
            "%d validator(s) known to the chain, %d key(s) not (yet)",
            len(tracker.indices),
            len(tracker.unresolved),
        )
        if registrations is not None:
            # Before the duty loop, so that the first proposal has the builders' bids.
            pending = await registrations.first_round(clock)
            if pending is not None:
                parts.push_async_callback(cancel_and_wait, pending)
        context = DutyContext(client, signer, chain, clock, tracker, settings)
        self.scheduler = self.status.scheduler = scheduler = DutyScheduler(
            context,
            on_slot=on_slot,
            extra_topics=SLASHING_TOPICS,
            on_event=gate.on_event,
            registrations=registrations,
        )
        try:
            await scheduler.run(stop, last_slot=last_slot, slot_count=slot_count)
        finally:
            log.info("stopping: finishing the duties in flight")
            await scheduler.drain(options.stop_grace)
        await _stop_gate(gate, gate_stop, gate_task)
        await asyncio.to_thread(self._mark_clean_shutdown, gate, chain)

    def _overrides(self, pubkey: bytes) -> KeyOverrides:
        if not self.store.is_known(pubkey):
            return KeyOverrides()  # a key a --remote-signer-url lists: the defaults apply
        settings = self.store.settings(pubkey)
        return KeyOverrides(
            fee_recipient=settings.fee_recipient,
            graffiti=settings.graffiti,
            gas_limit=settings.gas_limit,
        )

    def _mark_clean_shutdown(self, gate: KeyGate, chain: ChainSpec) -> None:
        try:
            write_clean_shutdown(
                self.options.validators_dir,
                chain.genesis_validators_root,
                gate.epoch(),
                gate.signing_watermarks(),
            )
        except (OSError, SlashingProtectionError) as error:
            log.warning("cannot write the clean-shutdown marker (the next start waits): %s", error)


def read_proposer_config(path: Path | None) -> ProposerConfig:
    """Step 0: ``--proposer-config``, or none; StartupError naming the field."""
    if path is None:
        return NO_PROPOSER_CONFIG
    try:
        config = load_proposer_config(path)
    except ProposerConfigError as error:
        raise StartupError(str(error)) from None
    log.info("proposer config %s: %d key(s) of their own", path, len(config.keys))
    return config


def check_can_start(options: RunOptions) -> None:
    """What every start checks first: the directory exists, and the crypto backend can
    say which BLS code signs and verifies (backend, versions, threads, SIMD path: the
    first thing to know when comparing two hosts' speed), which it logs."""
    if not options.validators_dir.is_dir():
        raise StartupError(f"the validators directory {options.validators_dir} does not exist")
    try:
        crypto_info = crypto_backend.info()
    except ValueError as error:  # VALIDATOR_BLS_SIMD=require without IFMA, ...
        raise StartupError(str(error)) from None
    log.info("crypto backend: %s", crypto_info)


async def _stop_gate(
    gate: KeyGate, gate_stop: asyncio.Event, gate_task: asyncio.Task[None]
) -> None:
    gate_stop.set()
    # It wakes on the event; a beacon node request in progress gets a moment to end.
    done, _ = await asyncio.wait({gate_task}, timeout=5.0)
    if not done:
        gate_task.cancel()
    await asyncio.gather(gate_task, return_exceptions=True)
    await gate.close()


__all__ = [
    "DEFAULT_KEYMANAGER_ADDRESS",
    "DEFAULT_KEYMANAGER_PORT",
    "EXIT_DOPPELGANGER",
    "MIN_TIMEOUT_SLOT_SECONDS",
    "RunOptions",
    "StartupError",
    "ValidatorService",
    "check_can_start",
    "read_chain",
]
