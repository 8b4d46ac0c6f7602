"""Start-up as named parts: what ``validator run`` and ``validator signer`` both start.

`Startup` performs the start-up steps one call each (numbered as in
``validator.service``'s docstring), every part it starts registered on the caller's exit
stacks so that it stops in reverse order; `Startup.start_signing` composes steps 1 to 6
into one `RunningParts`: the beacon node client, the chain, the record, the signer, the
key gate and the servers. Each step stops the process with one readable line
(`StartupError`) when it cannot be done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keymanager.api import DEFAULT_HOST as KEYMANAGER_DEFAULT_HOST
from keymanager.api import DEFAULT_PORT as KEYMANAGER_DEFAULT_PORT
from keymanager.api.token import TokenFileError, load_or_create_token
from keymanager.errors import StoreError
from keymanager.store import ValidatorStore
from slashing_protection import RecordLockedError, SlashingProtectionError
from slashing_protection.lock import DirectoryLock
from slashing_protection.networks import network_of
from slashing_protection.opening import is_database_url, open_record
from slashing_protection.protocol import SlashingProtectionRecord
from validator.beacon import BeaconNode, BeaconNodeClient, BeaconNodeError, RequestTimeouts
from validator.chain_genesis import GENESIS_FILE, GenesisMismatchError, keep_genesis
from validator.clean_shutdown import consume_clean_shutdown
from validator.consensus.networks import Network, network
from validator.consensus.spec import ChainSpec, ChainSpecError, Genesis, parse_spec_data
from validator.duties.doppelganger import KeyGate, LivenessUnsupportedError
from validator.halts import HaltError, HaltStore
from validator.key_settings import DEFAULT_BUILDER_BOOST_FACTOR, ProposerSettings
from validator.keymanager_server import KeymanagerServer, KeymanagerStartError, start_keymanager
from validator.metrics_server import DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT, MetricsServer
from validator.proposer_config import NO_PROPOSER_CONFIG, ProposerConfig
from validator.signing.remote import RemoteSigner
from validator.signing.remote_keys import RemoteKeySources
from validator.signing.signer import Signer
from validator.status_page import render
from validator.status_view import LiveParts, StatusView

log = logging.getLogger("validator.service")

#: Request timeouts are sized to the slot, but never below those of a 4-second slot:
#: sub-second devnet slots would otherwise leave a loaded machine no time to answer.
MIN_TIMEOUT_SLOT_SECONDS = 4.0
DEFAULT_KEYMANAGER_ADDRESS = KEYMANAGER_DEFAULT_HOST
DEFAULT_KEYMANAGER_PORT = KEYMANAGER_DEFAULT_PORT


class StartupError(Exception):
    """The validator cannot start; the message is one line an operator can act on."""


@dataclass
class RunOptions:
    """Everything ``validator run`` takes (flags in docs/cli.md)."""

    beacon_node_urls: Sequence[str]
    validators_dir: Path
    #: A built-in network (mainnet, sepolia, hoodi): a beacon node serving another chain is
    #: refused at start, and ``validator signer`` needs no beacon node at all.
    network: str | None = None
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
    #: The status page at / of the metrics server (which it starts even without ``metrics``).
    status_page: bool = False
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


def check_options(options: RunOptions, *, needs_beacon_node: bool = True) -> None:
    """The option checks that need nothing started (StartupError); ``validator signer``
    with ``--network`` needs no beacon node."""
    if options.network is not None:
        try:
            network(options.network)
        except ValueError as error:
            raise StartupError(f"--network: {error}") from None
    if not options.beacon_node_urls and (needs_beacon_node or options.network is None):
        raise StartupError("give at least one --beacon-node-url")
    database = options.slashing_protection_db
    if database is not None and not is_database_url(database):
        raise StartupError("--slashing-protection-db must be a postgresql:// (or postgres://) URL")


@dataclass
class RunningParts:
    """The parts a started validator (or signer) runs on, each stopped by start-up's exit
    stacks: the beacon node client, the chain it follows, the open record, the signer,
    the key gate in front of it, and the servers started so far."""

    #: None for ``validator signer --network`` without a beacon node.
    client: BeaconNodeClient | None
    chain: ChainSpec
    record: SlashingProtectionRecord
    signer: Signer
    gate: KeyGate
    #: Where the Keymanager API's remote keys get their signers (None: no remote keys).
    remote_sources: RemoteKeySources | None
    #: The keys that have no entry in the record (refused at every slashable message).
    unregistered: list[bytes] = field(default_factory=list)
    metrics_server: MetricsServer | None = None
    keymanager_server: KeymanagerServer | None = None


@dataclass
class _RecordOpened:
    """Step 4's outcome: the record, and the remote keys it was opened for."""

    record: SlashingProtectionRecord
    remote_keys: dict[bytes, RemoteSigner]
    remote_sources: RemoteKeySources


def check_network(expected: Network, chain: ChainSpec, nodes: str) -> None:
    """StartupError, in one line naming both chains, unless ``chain`` is ``expected``'s."""
    served = network_of(chain.genesis_validators_root)
    same = (
        chain.genesis_validators_root == expected.genesis_validators_root
        and chain.genesis_time == expected.genesis_time
        and chain.genesis_fork_version == expected.genesis_fork_version
    )
    if not same:
        what = served if served is not None else "another chain"
        raise StartupError(
            f"--network {expected.name}: the beacon node {nodes} serves {what} (genesis "
            f"validators root 0x{chain.genesis_validators_root.hex()}, genesis time "
            f"{chain.genesis_time}), not {expected.name} (0x"
            f"{expected.genesis_validators_root.hex()}, genesis time {expected.genesis_time})"
        )


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


class Startup:
    """The start-up steps of one run, each one call (see the module docstring).

    ``parts`` stops what the steps start; ``record_lock`` is entered first by the caller
    so that it unwinds last: every signature made is on record before the record's lock
    is let go, after the servers and the client. ``on_doppelganger`` is called when the
    key gate finds a doppelganger.
    """

    def __init__(
        self,
        options: RunOptions,
        store: ValidatorStore,
        *,
        parts: contextlib.AsyncExitStack,
        record_lock: contextlib.ExitStack,
        stop: asyncio.Event,
        on_doppelganger: Callable[[], None],
        status: LiveParts | None = None,
    ) -> None:
        self.options = options
        self.store = store
        #: What the status page reads, filled in as the steps make each part.
        self.status = status if status is not None else LiveParts(options.validators_dir)
        self._parts = parts
        self._record_lock = record_lock
        self._stop = stop
        self._on_doppelganger = on_doppelganger

    async def start_signing(self) -> RunningParts | None:
        """Steps 1 to 6: everything a signature needs, None when a stop came first."""
        metrics_server = await self.start_metrics()
        status = self.status
        client: BeaconNodeClient | None = None
        if self.options.beacon_node_urls:
            client = status.client = await self.connect_beacon_node()
            if client is None:
                return None
            chain = await self.read_chain(client)
        else:  # validator signer --network: the built-in chain, no beacon node
            assert self.options.network is not None
            chain = network(self.options.network).chain_spec()
            log.info("chain of --network %s, without a beacon node", self.options.network)
        status.chain = chain
        opened = await self.open_record(chain)
        status.record = opened.record
        if self._stop.is_set():
            return None
        gate = status.gate = await self.open_key_gate(opened.record, chain, client)
        unregistered = await self.admit_keys(gate, opened)
        return RunningParts(
            client=client,
            chain=chain,
            record=opened.record,
            signer=gate.signer,
            gate=gate,
            remote_sources=opened.remote_sources if self.options.use_remote_keys else None,
            unregistered=unregistered,
            metrics_server=metrics_server,
        )

    # -- 1. metrics --------------------------------------------------------------------

    async def start_metrics(self) -> MetricsServer | None:
        """The metrics server (``--metrics``), so a stuck start-up can be watched."""
        options = self.options
        if not options.metrics and not options.status_page:
            return None
        page = None
        if options.status_page:
            view = StatusView(self.status)

            async def page() -> str:
                return render(await view.snapshot())

        metrics_server = MetricsServer(
            options.metrics_address, options.metrics_port, status_page=page
        )
        self._parts.push_async_callback(metrics_server.stop)
        try:
            await metrics_server.start()
        except OSError as error:
            raise StartupError(str(error)) from None
        return metrics_server

    # -- 2. the beacon node ------------------------------------------------------------

    async def connect_beacon_node(self) -> BeaconNodeClient | None:
        """The client, once a beacon node answers and is synced; None when a stop came
        first."""
        options = self.options
        client = BeaconNodeClient(
            options.beacon_node_urls,
            middlewares=list(options.middlewares),
            health_check_interval=options.health_check_interval,
        )
        self._parts.push_async_callback(client.close)
        await client.start()
        if not await self._wait_for_node(client):
            return None
        return client

    async def _wait_for_node(self, client: BeaconNodeClient) -> bool:
        waiting = asyncio.create_task(client.wait_for_synced_node())
        stopping = asyncio.create_task(self._stop.wait())
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

    # -- 3. the chain ------------------------------------------------------------------

    async def read_chain(self, client: BeaconNodeClient) -> ChainSpec:
        """The chain (genesis, spec, fork schedule); the client's timeouts sized to its slot."""
        chain = await read_chain(client)
        if self.options.network is not None:
            check_network(
                network(self.options.network), chain, ", ".join(n.name for n in client.nodes)
            )
        client.timeouts = RequestTimeouts.for_slot(
            max(chain.seconds_per_slot, MIN_TIMEOUT_SLOT_SECONDS)
        )
        return chain

    # -- 4. the record -----------------------------------------------------------------

    async def open_record(self, chain: ChainSpec) -> _RecordOpened:
        """The record for the chain, opened for the directory's keys and the remote
        signers' (registered with ``--init-slashing-protection``); the genesis time kept."""
        options = self.options
        try:
            local_pubkeys = await asyncio.to_thread(self.store.local_pubkeys)
        except StoreError as error:
            raise StartupError(f"cannot list the keystores: {error}") from None
        remote = RemoteKeySources(
            self.store, chain, self._remote_signer_token(), options.remote_signer_middlewares
        )
        self._parts.push_async_callback(remote.close)
        try:
            remote_keys = await remote.initial(options.remote_signer_urls, options.use_remote_keys)
        except StoreError as error:
            raise StartupError(f"cannot list the remote keys: {error}") from None
        if options.slashing_protection_db is not None:
            # The file record locks the directory itself; with the shared record the
            # directory still holds halts and the clean-shutdown marker, which `validator
            # resume` and a second client on it must not touch while this one runs.
            directory_lock = self._lock_directory()
            self._record_lock.callback(directory_lock.release)
        record = await asyncio.to_thread(self._open_record, chain, [*local_pubkeys, *remote_keys])
        self._record_lock.callback(
            log.info, "slashing-protection record closed and its lock released"
        )
        self._record_lock.callback(record.close)
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
        return _RecordOpened(record, remote_keys, remote)

    def _open_record(self, chain: ChainSpec, pubkeys: Sequence[bytes]) -> SlashingProtectionRecord:
        options = self.options
        register = list(pubkeys) if options.init_slashing_protection else []
        location = options.slashing_protection_db or options.validators_dir
        try:
            return open_record(
                location,
                chain.genesis_validators_root,
                register=register,
                create=options.init_slashing_protection,
                missing_hint="if these keys have never signed anywhere, start once with "
                "--init-slashing-protection",
            )
        except SlashingProtectionError as error:
            raise StartupError(str(error)) from None

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

    # -- 5. the clean-shutdown marker and the key gate ---------------------------------

    async def open_key_gate(
        self,
        record: SlashingProtectionRecord,
        chain: ChainSpec,
        client: BeaconNodeClient | None,
    ) -> KeyGate:
        """The key gate in front of a new signer, after consuming the clean-shutdown marker
        (every start does); with doppelganger protection, the liveness endpoint checked."""
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
        gate = KeyGate(
            signer=Signer(chain, record),
            record=record,
            halts=HaltStore(options.validators_dir),
            chain=chain,
            client=client,
            protection=options.doppelganger_protection,
            clean_shutdown=clean,
            on_doppelganger=self._on_doppelganger,
        )
        if options.doppelganger_protection:
            try:
                await gate.check_liveness_support()
            except LivenessUnsupportedError as error:
                raise StartupError(str(error)) from None
            except BeaconNodeError as error:
                # Not a refusal to serve it: the keys wait until the node answers.
                log.warning("doppelganger protection: the liveness endpoint failed: %s", error)
        return gate

    # -- 6. the keys -------------------------------------------------------------------

    async def admit_keys(self, gate: KeyGate, opened: _RecordOpened) -> list[bytes]:
        """Decrypt the keystores and hand them, and the remote keys, to the signer through
        the gate (halted keys refused, under doppelganger protection waiting ones held);
        the remote signers listed again from then on. The keys the record does not know."""
        options = self.options
        remote_keys = opened.remote_keys
        keys = await self._load_keys()
        both = [pubkey for pubkey in keys if pubkey in remote_keys]
        if both:
            log.info("%d key(s) with a keystore here sign through their remote signer", len(both))
            keys = {pubkey: secret for pubkey, secret in keys.items() if pubkey not in remote_keys}
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
        unregistered = _warn_unregistered(opened.record, [*keys, *remote_keys])
        opened.remote_sources.keep_listing(
            gate.admit, opened.record if options.init_slashing_protection else None
        )
        return unregistered

    async def _load_keys(self) -> dict[bytes, int]:
        try:
            return await asyncio.to_thread(
                self.store.load_all,
                processes=self.options.decrypt_processes,
                progress=self.options.progress,
            )
        except StoreError as error:
            raise StartupError(f"cannot load the keystores: {error}") from None

    # -- 7. the Keymanager API ---------------------------------------------------------

    async def start_keymanager(
        self, running: RunningParts, proposer_config: ProposerConfig = NO_PROPOSER_CONFIG
    ) -> KeymanagerServer | None:
        """The Keymanager API (``--keymanager``) over the running parts."""
        options = self.options
        if not options.keymanager:
            return None
        # What GET answers for a key without its own setting: the proposer config, then flags.
        layered = ProposerSettings(
            default_fee_recipient=options.suggested_fee_recipient, proposer_config=proposer_config
        )
        try:
            server = await start_keymanager(
                store=self.store,
                record=running.record,
                signer=running.signer,
                gate=running.gate,
                chain=running.chain,
                client=running.client,
                address=options.keymanager_address,
                port=options.keymanager_port,
                token_file=options.keymanager_token_file,
                default_fee_recipient=options.suggested_fee_recipient,
                default_graffiti=options.graffiti or "",
                remote=running.remote_sources,
                defaults_of=lambda pubkey: (
                    layered.fee_recipient(pubkey),
                    layered.gas_limit(pubkey),
                ),
            )
        except KeymanagerStartError as error:
            raise StartupError(str(error)) from None
        self._parts.push_async_callback(server.stop)
        running.keymanager_server = server
        return server


def _warn_unregistered(record: SlashingProtectionRecord, keys: Iterable[bytes]) -> list[bytes]:
    unregistered = [pk for pk in sorted(keys) if not record.contains(pk)]
    if unregistered:
        shown = ", ".join("0x" + pk.hex() for pk in unregistered[:3])
        more = len(unregistered) - 3
        log.warning(
            "%d key(s) have no slashing-protection record: %s%s; their blocks and "
            "attestations will be refused (import their history, or start once with "
            "--init-slashing-protection if they never signed)",
            len(unregistered),
            shown,
            f" and {more} more" if more > 0 else "",
        )
    return unregistered
