"""``validator run``: start-up, the duty loop, and an orderly stop.

Start-up, in this order, each step stopping the process with one readable line
when it cannot be done:

0. read ``--proposer-config`` (before anything is opened, so a bad file touches
   nothing);
1. the metrics server (``--metrics``), so a stuck start-up can be watched;
2. wait for a beacon node that answers and is synced;
3. read the chain (genesis, spec, fork schedule) into a ``ChainSpec``;
4. open the slashing-protection record for the chain's genesis_validators_root:
   the file record, taking the directory's lock, or with ``--slashing-protection-db``
   the shared PostgreSQL record (unreachable at start: the process stops; lost
   later: nothing is signed until it is back); with ``--init-slashing-protection``
   the directory's keys are registered as never having signed (an existing entry
   is never lowered); without it there must be a record already;
5. read and remove the clean-shutdown marker of the previous run
   (``validator.clean_shutdown``); with ``--doppelganger-protection``, check that
   the beacon node serves the liveness endpoint;
6. decrypt the keystores (every core, progress on a terminal) and hand the keys
   to the signer through the key gate (``validator.duties.doppelganger``): halted
   keys are refused, with doppelganger protection the keys that must wait are
   held back; a key the record does not know is refused by the signer at every
   message and named in a warning here;
7. the Keymanager API (``--keymanager``);
8. the duty loop, until SIGINT/SIGTERM (or a doppelganger: exit status 3), with
   the builder registrations each epoch when the builder flow is on for any key.

Stopping: the loop takes no new duty, running duties get a short grace period
(a record write in progress always completes), the clean-shutdown marker is
written, then the servers, the beacon node connection and finally the record's
lock are released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crypto_backend
from keymanager.api import DEFAULT_HOST as KEYMANAGER_DEFAULT_HOST
from keymanager.api import DEFAULT_PORT as KEYMANAGER_DEFAULT_PORT
from keymanager.api.token import TokenFileError, load_or_create_token
from keymanager.errors import StoreError
from keymanager.store import ValidatorStore
from slashing_protection import RecordLockedError, SlashingProtectionError
from slashing_protection.lock import DirectoryLock
from slashing_protection.opening import is_database_url, open_record
from slashing_protection.protocol import SlashingProtectionRecord
from validator.beacon import BeaconNode, BeaconNodeClient, BeaconNodeError, RequestTimeouts
from validator.chain_genesis import GENESIS_FILE, GenesisMismatchError, keep_genesis
from validator.clean_shutdown import consume_clean_shutdown, write_clean_shutdown
from validator.consensus.spec import ChainSpec, ChainSpecError, Genesis, parse_spec_data
from validator.duties.context import DutyContext
from validator.duties.doppelganger import SLASHING_TOPICS, KeyGate, LivenessUnsupportedError
from validator.duties.registrations import BuilderRegistrations, cancel_and_wait
from validator.duties.scheduler import DutyScheduler
from validator.duties.slot_clock import SlotClock
from validator.duties.tracker import DutyTracker
from validator.halts import HaltError, HaltStore
from validator.key_settings import DEFAULT_BUILDER_BOOST_FACTOR, KeyOverrides, ProposerSettings
from validator.keymanager_server import KeymanagerServer, KeymanagerStartError, start_keymanager
from validator.metrics_server import DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT, MetricsServer
from validator.proposer_config import (
    NO_PROPOSER_CONFIG,
    ProposerConfig,
    ProposerConfigError,
    load_proposer_config,
    warn_unknown_keys,
)
from validator.signing.remote_keys import RemoteKeySources
from validator.signing.signer import Signer

log = logging.getLogger("validator.service")

#: Request timeouts are sized to the slot, but never below those of a 4-second slot:
#: sub-second devnet slots would otherwise leave a loaded machine no time to answer.
MIN_TIMEOUT_SLOT_SECONDS = 4.0
DEFAULT_KEYMANAGER_ADDRESS = KEYMANAGER_DEFAULT_HOST
DEFAULT_KEYMANAGER_PORT = KEYMANAGER_DEFAULT_PORT
#: Exit status of a run stopped because a doppelganger was found.
EXIT_DOPPELGANGER = 3


class StartupError(Exception):
    """The validator cannot start; the message is one line an operator can act on."""


@dataclass
class RunOptions:
    """Everything ``validator run`` takes (flags in docs/cli.md)."""

    beacon_node_urls: Sequence[str]
    validators_dir: Path
    init_slashing_protection: bool = False
    #: Watch the chain for 2 epochs before a key's first signature (docs/running.md).
    doppelganger_protection: bool = False
    #: A postgresql:// URL: the shared record instead of the directory's file record.
    slashing_protection_db: str | None = None
    keymanager: bool = False
    keymanager_address: str = DEFAULT_KEYMANAGER_ADDRESS
    keymanager_port: int = DEFAULT_KEYMANAGER_PORT
    keymanager_token_file: Path | None = None
    metrics: bool = False
    metrics_address: str = DEFAULT_METRICS_ADDRESS
    metrics_port: int = DEFAULT_METRICS_PORT
    suggested_fee_recipient: bytes | None = None
    graffiti: str | None = None
    #: Register every key with external builders and take their blocks (``--builder``).
    builder: bool = False
    #: ``--builder-boost-factor``: what produceBlockV3 is told for keys whose builder flow is on.
    builder_boost_factor: int = DEFAULT_BUILDER_BOOST_FACTOR
    #: ``--proposer-config``: per-key settings in Teku's JSON shape (validator.proposer_config).
    proposer_config: Path | None = None
    #: Remote signers (Web3Signer API) whose every listed key this client validates with.
    remote_signer_urls: Sequence[str] = ()
    #: The bearer token every remote signer of this client is sent (``--remote-signer-token-file``).
    remote_signer_token_file: Path | None = None
    #: Whether remote keys (``--remote-signer-url`` and the directory's remote_keys) sign;
    #: ``validator signer`` serves its keystores only.
    use_remote_keys: bool = True
    #: Middlewares of the remote signer sessions (the tests' strict Web3Signer API checks).
    remote_signer_middlewares: Sequence[Any] = ()
    #: Client middlewares (strict OpenAPI checks in tests and the devnet's strict mode).
    middlewares: Sequence[Any] = ()
    #: Progress bar while decrypting keystores: None shows it on a terminal only.
    progress: bool | None = None
    #: Processes decrypting keystores (None: every usable core).
    decrypt_processes: int | None = None
    #: Seconds running duties may take to finish once a stop is asked for.
    stop_grace: float = 2.0
    health_check_interval: float = 6.0


async def read_chain(client: BeaconNodeClient) -> ChainSpec:
    """The chain the beacon nodes follow, from their genesis, spec and fork schedule.

    Genesis is asked of every configured node, and all that answer must report the
    same one: the far-future guard counts epochs from its time, so one node must not
    be able to move it.
    """
    try:
        geneses, spec, forks = await asyncio.gather(
            client.get_genesis_of_every_node(), client.get_spec(), client.get_fork_schedule()
        )
    except BeaconNodeError as error:
        raise StartupError(f"cannot read the chain's configuration: {error}") from None
    genesis = _agreed_genesis(geneses)
    try:
        return ChainSpec.from_models(genesis, parse_spec_data(spec), forks)
    except ChainSpecError as error:
        raise StartupError(f"the beacon node's chain cannot be used: {error}") from None


def _agreed_genesis(answers: Sequence[tuple[BeaconNode, Genesis | BeaconNodeError]]) -> Genesis:
    """The genesis every answering node reports; StartupError when they differ or none answers."""
    answered = [(node, genesis) for node, genesis in answers if isinstance(genesis, Genesis)]
    for node, error in answers:
        if isinstance(error, BeaconNodeError):
            log.warning("beacon node %s did not give its genesis: %s", node.name, error)
    if not answered:
        errors = "; ".join(str(error) for _, error in answers)
        raise StartupError(f"cannot read the chain's configuration: {errors}")
    first_node, first = answered[0]
    for node, genesis in answered[1:]:
        if genesis != first:
            raise StartupError(
                f"the beacon nodes disagree on genesis: {first_node.name} reports time "
                f"{first.genesis_time}, root 0x{first.genesis_validators_root.hex()}; "
                f"{node.name} reports time {genesis.genesis_time}, root "
                f"0x{genesis.genesis_validators_root.hex()}"
            )
    return first


class ValidatorService:
    """One run of the validator client (``await run(stop)``).

    ``run`` owns every part it starts (one exit stack); the attributes below
    only let a driver look in while it runs: the chain once read, the running
    duty scheduler, the Keymanager API, and the keys without a record.
    """

    def __init__(self, options: RunOptions) -> None:
        if not options.beacon_node_urls:
            raise StartupError("give at least one --beacon-node-url")
        database = options.slashing_protection_db
        if database is not None and not is_database_url(database):
            raise StartupError(
                "--slashing-protection-db must be a postgresql:// (or postgres://) URL"
            )
        self.options = options
        self.store = ValidatorStore(options.validators_dir)
        self.chain: ChainSpec | None = None
        self.scheduler: DutyScheduler | None = None
        self.keymanager_server: KeymanagerServer | None = None
        self.unregistered: list[bytes] = []
        self.gate: KeyGate | None = None
        #: 0, or EXIT_DOPPELGANGER once a doppelganger stopped the run.
        self.exit_status = 0
        self.remote_sources: RemoteKeySources | None = None
        #: The builder registrations, when the builder flow is on for any key.
        self.registrations: BuilderRegistrations | None = None

    # -- start-up steps ------------------------------------------------------------

    def _read_proposer_config(self) -> ProposerConfig:
        """Step 0: ``--proposer-config``, or none."""
        path = self.options.proposer_config
        if path is None:
            return NO_PROPOSER_CONFIG
        try:
            config = load_proposer_config(path)
        except ProposerConfigError as error:
            raise StartupError(str(error)) from None
        log.info("proposer config %s: %d key(s) of their own", path, len(config.keys))
        return config

    async def _wait_for_node(self, client: BeaconNodeClient, stop: asyncio.Event) -> bool:
        waiting = asyncio.create_task(client.wait_for_synced_node())
        stopping = asyncio.create_task(stop.wait())
        warned_at = 0.0
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            while True:
                done, _ = await asyncio.wait(
                    {waiting, stopping}, timeout=5.0, return_when=asyncio.FIRST_COMPLETED
                )
                if waiting in done:
                    node = waiting.result()
                    log.info("beacon node %s is synced", node.name)
                    return True
                if stopping in done:
                    return False
                if loop.time() - warned_at >= 30.0:
                    warned_at = loop.time()
                    states = ", ".join(
                        f"{node.name}: {node.health.value}"
                        + (f" ({node.last_error})" if node.last_error else "")
                        for node in client.nodes
                    )
                    log.warning(
                        "waiting %.0f s for a synced beacon node: %s", loop.time() - started, states
                    )
        finally:
            for task in (waiting, stopping):
                task.cancel()
            await asyncio.gather(waiting, stopping, return_exceptions=True)

    def _open_record(self, chain: ChainSpec, pubkeys: Sequence[bytes]) -> SlashingProtectionRecord:
        options = self.options
        register = list(pubkeys) if options.init_slashing_protection else []
        location = options.slashing_protection_db or options.validators_dir
        try:
            record = open_record(
                location,
                chain.genesis_validators_root,
                register=register,
                create=options.init_slashing_protection,
                missing_hint="if these keys have never signed anywhere, start once with "
                "--init-slashing-protection",
            )
        except SlashingProtectionError as error:
            raise StartupError(str(error)) from None
        return record

    def _lock_directory(self) -> DirectoryLock:
        directory = self.options.validators_dir
        try:
            return DirectoryLock.acquire(directory)
        except RecordLockedError:
            raise StartupError(
                f"the validators directory {directory} is in use by another process (a "
                "running validator or slashing-protection command)"
            ) from None
        except SlashingProtectionError as error:
            raise StartupError(str(error)) from None

    def _remote_signer_token(self) -> str | None:
        token_file = self.options.remote_signer_token_file
        if token_file is None:
            return None
        try:
            return load_or_create_token(
                self.options.validators_dir, token_file, api="remote signer"
            )
        except TokenFileError as error:
            raise StartupError(f"--remote-signer-token-file: {error}") from None

    def _record_where(self) -> str:
        """The record's location for logs (a database URL without its password)."""
        if self.options.slashing_protection_db is None:
            return str(self.options.validators_dir)
        from slashing_protection.postgres import describe_url

        return describe_url(self.options.slashing_protection_db)

    def _overrides(self, pubkey: bytes) -> KeyOverrides:
        if not self.store.is_known(pubkey):
            return KeyOverrides()  # a key a --remote-signer-url lists: the defaults apply
        settings = self.store.settings(pubkey)
        return KeyOverrides(
            fee_recipient=settings.fee_recipient,
            graffiti=settings.graffiti,
            gas_limit=settings.gas_limit,
        )

    async def _load_keys(self) -> dict[bytes, int]:
        try:
            return await asyncio.to_thread(
                self.store.load_all,
                processes=self.options.decrypt_processes,
                progress=self.options.progress,
            )
        except StoreError as error:
            raise StartupError(f"cannot load the keystores: {error}") from None

    async def _start_keymanager(
        self,
        record: SlashingProtectionRecord,
        gate: KeyGate,
        chain: ChainSpec,
        client: BeaconNodeClient,
        proposer_config: ProposerConfig = NO_PROPOSER_CONFIG,
    ) -> KeymanagerServer:
        options = self.options
        # What GET answers for a key without its own setting: the proposer config, then flags.
        layered = ProposerSettings(
            default_fee_recipient=options.suggested_fee_recipient, proposer_config=proposer_config
        )
        try:
            return await start_keymanager(
                store=self.store,
                record=record,
                signer=gate.signer,
                gate=gate,
                chain=chain,
                client=client,
                address=options.keymanager_address,
                port=options.keymanager_port,
                token_file=options.keymanager_token_file,
                default_fee_recipient=options.suggested_fee_recipient,
                default_graffiti=options.graffiti or "",
                remote=self.remote_sources,
                defaults_of=lambda pubkey: (
                    layered.fee_recipient(pubkey),
                    layered.gas_limit(pubkey),
                ),
            )
        except KeymanagerStartError as error:
            raise StartupError(str(error)) from None

    async def _open_gate(
        self,
        signer: Signer,
        record: SlashingProtectionRecord,
        chain: ChainSpec,
        client: BeaconNodeClient,
        stop: asyncio.Event,
    ) -> KeyGate:
        """The key gate, after consuming the clean-shutdown marker (every start does)."""
        options = self.options
        try:
            clean = await asyncio.to_thread(
                consume_clean_shutdown, options.validators_dir, chain.genesis_validators_root
            )
        except OSError as error:
            raise StartupError(
                f"cannot remove the clean-shutdown marker in {options.validators_dir}: "
                f"{error.strerror or error}"
            ) from None

        def found_doppelganger() -> None:
            self.exit_status = EXIT_DOPPELGANGER
            stop.set()

        gate = KeyGate(
            signer=signer,
            record=record,
            halts=HaltStore(options.validators_dir),
            chain=chain,
            client=client,
            protection=options.doppelganger_protection,
            clean_shutdown=clean,
            on_doppelganger=found_doppelganger,
        )
        if options.doppelganger_protection:
            try:
                await gate.check_liveness_support()
            except LivenessUnsupportedError as error:
                raise StartupError(str(error)) from None
            except BeaconNodeError as error:
                # Not a refusal to serve it: the keys wait until the node answers.
                log.warning("doppelganger protection: the liveness endpoint failed: %s", error)
        self.gate = gate
        return gate

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

    def _warn_unregistered(self, record: SlashingProtectionRecord, keys: Iterable[bytes]) -> None:
        self.unregistered = [pk for pk in sorted(keys) if not record.contains(pk)]
        if self.unregistered:
            shown = ", ".join("0x" + pk.hex() for pk in self.unregistered[:3])
            more = len(self.unregistered) - 3
            log.warning(
                "%d key(s) have no slashing-protection record: %s%s; their blocks and "
                "attestations will be refused (import their history, or start once with "
                "--init-slashing-protection if they never signed)",
                len(self.unregistered),
                shown,
                f" and {more} more" if more > 0 else "",
            )

    async def _start_metrics(self, parts: contextlib.AsyncExitStack) -> None:
        """Step 1 (``--metrics``), stopped by ``parts``."""
        options = self.options
        if options.metrics:
            metrics_server = MetricsServer(options.metrics_address, options.metrics_port)
            parts.push_async_callback(metrics_server.stop)
            try:
                await metrics_server.start()
            except OSError as error:
                raise StartupError(str(error)) from None

    async def _start_signing(
        self,
        parts: contextlib.AsyncExitStack,
        record_lock: contextlib.ExitStack,
        stop: asyncio.Event,
    ) -> tuple[BeaconNodeClient, ChainSpec, SlashingProtectionRecord, Signer, KeyGate] | None:
        """Steps 2-5: the beacon node, the chain, the record (its lock on ``record_lock``) and
        the keys in a signer, through the key gate (halted keys refused, under doppelganger
        protection waiting ones held); None when a stop came first. ``validator signer``
        starts the same way (``validator.signer_server``), so both hold keys and record
        alike."""
        options = self.options
        client = BeaconNodeClient(
            options.beacon_node_urls,
            middlewares=list(options.middlewares),
            health_check_interval=options.health_check_interval,
        )
        parts.push_async_callback(client.close)
        await client.start()
        if not await self._wait_for_node(client, stop):
            return None
        chain = await read_chain(client)
        self.chain = chain
        client.timeouts = RequestTimeouts.for_slot(
            max(chain.seconds_per_slot, MIN_TIMEOUT_SLOT_SECONDS)
        )
        try:
            local_pubkeys = await asyncio.to_thread(self.store.local_pubkeys)
        except StoreError as error:
            raise StartupError(f"cannot list the keystores: {error}") from None
        remote = RemoteKeySources(
            self.store, chain, self._remote_signer_token(), options.remote_signer_middlewares
        )
        parts.push_async_callback(remote.close)
        # The Keymanager API's remote keys get their signers here too (not the signer's).
        self.remote_sources = remote if options.use_remote_keys else None
        try:
            remote_keys = await remote.initial(options.remote_signer_urls, options.use_remote_keys)
        except StoreError as error:
            raise StartupError(f"cannot list the remote keys: {error}") from None
        if options.slashing_protection_db is not None:
            # The file record locks the directory itself; with the shared record the
            # directory still holds halts and the clean-shutdown marker, which `validator
            # resume` and a second client on it must not touch while this one runs.
            directory_lock = self._lock_directory()
            record_lock.callback(directory_lock.release)
        record = await asyncio.to_thread(self._open_record, chain, [*local_pubkeys, *remote_keys])
        record_lock.callback(log.info, "slashing-protection record closed and its lock released")
        record_lock.callback(record.close)
        try:
            kept = keep_genesis(
                options.validators_dir, chain.genesis_time, chain.genesis_validators_root
            )
        except GenesisMismatchError as error:
            raise StartupError(str(error)) from None
        if kept:
            log.info("genesis time %d kept in %s", chain.genesis_time, GENESIS_FILE)
        log.info(
            "slashing-protection record of chain 0x%s opened in %s (%d key(s) in it)",
            chain.genesis_validators_root.hex(),
            self._record_where(),
            len(record.pubkeys()),
        )
        if stop.is_set():
            return None
        keys = await self._load_keys()
        both = [pubkey for pubkey in keys if pubkey in remote_keys]
        if both:
            log.info("%d key(s) with a keystore here sign through their remote signer", len(both))
            keys = {pubkey: secret for pubkey, secret in keys.items() if pubkey not in remote_keys}
        signer = Signer(chain, record)
        gate = await self._open_gate(signer, record, chain, client, stop)
        try:
            await gate.admit(keys)
        except HaltError as error:
            raise StartupError(str(error)) from None
        log.info("%d key(s) loaded from %s", len(keys), options.validators_dir)
        if remote_keys:
            # Through the same gate: halted ones refused, under protection they wait too.
            try:
                await gate.admit(remote_keys)
            except HaltError as error:
                raise StartupError(str(error)) from None
            log.info("%d remote key(s) sign through their remote signer", len(remote_keys))
        self._warn_unregistered(record, [*keys, *remote_keys])
        remote.keep_listing(gate.admit, record if options.init_slashing_protection else None)
        return client, chain, record, signer, gate

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
        options = self.options
        if not options.validators_dir.is_dir():
            raise StartupError(f"the validators directory {options.validators_dir} does not exist")
        # Which BLS code signs and verifies (backend, library versions, threads, SIMD
        # path): the first thing to know when comparing two hosts' speed.
        try:
            crypto_info = crypto_backend.info()
        except ValueError as error:  # VALIDATOR_BLS_SIMD=require without IFMA, ...
            raise StartupError(str(error)) from None
        log.info("crypto backend: %s", crypto_info)
        proposer_config = self._read_proposer_config()
        async with contextlib.AsyncExitStack() as parts:
            # Entered first so that it unwinds last: every signature made is on
            # record before the lock is let go, after the servers and the client.
            record_lock = parts.enter_context(contextlib.ExitStack())
            await self._start_metrics(parts)
            started = await self._start_signing(parts, record_lock, stop)
            if started is None:
                return
            client, chain, record, signer, gate = started
            if options.keymanager:
                keymanager = await self._start_keymanager(
                    record, gate, chain, client, proposer_config
                )
                parts.push_async_callback(keymanager.stop)
                self.keymanager_server = keymanager
            if stop.is_set():
                return
            clock = SlotClock(chain)
            tracker = DutyTracker(client, chain, signer.pubkeys)
            gate.known_indices = lambda: tracker.indices
            gate_stop = asyncio.Event()
            gate_task = asyncio.create_task(gate.run(gate_stop), name="key-gate")
            parts.push_async_callback(self._stop_gate, gate, gate_stop, gate_task)
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
            self.scheduler = scheduler = DutyScheduler(
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
            await self._stop_gate(gate, gate_stop, gate_task)
            await asyncio.to_thread(self._mark_clean_shutdown, gate, chain)

    @staticmethod
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
