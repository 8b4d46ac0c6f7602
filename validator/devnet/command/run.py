"""``validator devnet``: the client against a simulated beacon chain on this machine.

1. Make the deterministic interop keystores in the validators directory the
   first time (DEVNET ONLY: public keys, a cheap KDF).
2. Start the simulated chain (``python -m validator.devnet``) in a process of
   its own on 127.0.0.1; its state lives in ``<validators-dir>/devnet/``, so a
   second run continues the same chain (and its slasher remembers the first).
3. Run the same client code as ``validator run`` against it over HTTP,
   registering the keys in the slashing-protection record on the first run.
4. Show progress on a terminal; at the end stop the chain, print its summary
   with the client's refusals, write it as JSON with ``--summary``.

The exit status is 1 when the chain saw a slashable message or an invalid
signature (the client is broken), 0 otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import REGISTRY
from rich.console import Console
from rich.live import Live
from rich.table import Table

from slashing_protection import RECORD_FILE
from validator.consensus.ssz.preset import PRESETS
from validator.devnet import FAULTS, DevnetProcess, DevnetStateError, devnet_state_dir
from validator.devnet.command.interop_keystores import write_interop_keystores
from validator.duties.metrics import DutyKind, DutyResult
from validator.key_settings import DEFAULT_BUILDER_BOOST_FACTOR
from validator.logs import LogFormat, TextFormatter, configure_logging, install_handler
from validator.metrics_server import DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT
from validator.service import (
    DEFAULT_KEYMANAGER_ADDRESS,
    DEFAULT_KEYMANAGER_PORT,
    RunOptions,
    StartupError,
    ValidatorService,
)

log = logging.getLogger("validator.devnet_command")

#: A new chain starts this long after the chain process is up, so the client is ready for slot 0.
NEW_CHAIN_GENESIS_DELAY = 3.0
CHAIN_START_TIMEOUT = 60.0
CHAIN_STOP_TIMEOUT = 30.0
BLOCK_KINDS = ("local", "builder")
#: The fee recipient ``--builder`` registers the devnet's keys with when none is given.
DEVNET_FEE_RECIPIENT = bytes.fromhex("de7e" * 10)
#: The keys every summary has (the chain's counts and the client's refusals).
SUMMARY_KEYS = (
    "slots",
    "blocks_proposed",
    "attestations_received",
    "attestations_included",
    "aggregates_received",
    "sync_messages_received",
    "contributions_received",
    "invalid_signatures",
    "slashable_messages",
    "missed_duties",
    "client_refusals",
    "payload_attestations_expected",
    "payload_attestations_received",
    "late_payload_attestations",
    "missed_payload_attestations",
    "envelopes_expected",
    "envelopes_received",
    "missed_envelopes",
    "proposer_preferences_received",
)


@dataclass
class DevnetOptions:
    validators: int = 64
    slots: int = 32
    seconds_per_slot: float = 2.0
    slots_per_epoch: int = 8
    #: The chain's preset (``mainnet`` or ``minimal``); the client reads it from the chain.
    preset: str = "mainnet"
    #: Schedule Gloas (ePBS) at this epoch (``--gloas-fork-epoch``); None: Fulu throughout.
    gloas_fork_epoch: int | None = None
    validators_dir: Path = Path("devnet-validators")
    beacon_port: int = 0
    fault: str | None = None
    #: The simulated builder and relay, and the client's builder flow (``--builder``).
    builder: bool = False
    builder_boost_factor: int = DEFAULT_BUILDER_BOOST_FACTOR
    proposer_config: Path | None = None
    #: The client's ``--suggested-fee-recipient``; with ``--builder`` or Gloas,
    #: DEVNET_FEE_RECIPIENT when not given (registrations and preferences need one).
    suggested_fee_recipient: bytes | None = None
    summary: Path | None = None
    doppelganger_protection: bool = False
    #: The shared record (postgresql://...) instead of the directory's file record.
    slashing_protection_db: str | None = None
    #: Remote signers whose listed keys sign remotely (``--remote-signer-url``).
    remote_signer_urls: Sequence[str] = ()
    remote_signer_token_file: Path | None = None
    keymanager: bool = False
    keymanager_address: str = DEFAULT_KEYMANAGER_ADDRESS
    keymanager_port: int = DEFAULT_KEYMANAGER_PORT
    keymanager_token_file: Path | None = None
    metrics: bool = False
    metrics_address: str = DEFAULT_METRICS_ADDRESS
    metrics_port: int = DEFAULT_METRICS_PORT
    status_page: bool = False
    log_format: LogFormat = LogFormat.TEXT
    log_level: int = logging.WARNING
    #: Hold both sides to the Beacon API spec (tests; slow).
    strict: bool = False
    #: Show the live progress table (None: when stderr is a terminal and logs are text).
    progress: bool | None = None
    #: A new chain's genesis this long after the chain process is up.
    genesis_delay: float = NEW_CHAIN_GENESIS_DELAY


GLOAS_DUTY_KINDS = frozenset(
    {
        DutyKind.PAYLOAD_ATTESTATION.value,
        DutyKind.EXECUTION_PAYLOAD_ENVELOPE.value,
        DutyKind.PROPOSER_PREFERENCES.value,
    }
)

def _fee_recipient(options: DevnetOptions) -> bytes | None:
    """The given fee recipient; DEVNET_FEE_RECIPIENT for a builder or Gloas devnet without one."""
    if options.suggested_fee_recipient is not None:
        return options.suggested_fee_recipient
    if options.builder or options.gloas_fork_epoch is not None:
        return DEVNET_FEE_RECIPIENT
    return None


async def start_chain(options: DevnetOptions) -> DevnetProcess:
    """The chain of ``options.validators_dir`` in its own process and session: state in its
    devnet/, log in devnet/chain.log; it is stopped if this process dies in any way."""
    if options.preset not in PRESETS:
        raise StartupError(f"--preset {options.preset}: choose one of {', '.join(PRESETS)}")
    try:
        return await DevnetProcess.start(
            devnet_state_dir(options.validators_dir),
            options.validators,
            options.seconds_per_slot,
            options.slots_per_epoch,
            options.fault,
            options.strict,
            port=options.beacon_port,
            genesis_delay=options.genesis_delay,
            preset=options.preset,
            gloas_fork_epoch=options.gloas_fork_epoch,
            builder=options.builder,
            ready_timeout=CHAIN_START_TIMEOUT,
            own_session=True,
        )
    except DevnetStateError as exc:
        raise StartupError(f"the simulated chain did not start: {exc}") from None


async def stop_chain(chain: DevnetProcess) -> dict[str, Any] | None:
    """Stop the chain; its summary, or None when it gave none (the log says why)."""
    try:
        return await chain.stop(CHAIN_STOP_TIMEOUT)
    except DevnetStateError as exc:
        log.error("the simulated chain gave no summary: %s", exc)
        return None


def _metric_sum(name: str, **labels: str) -> float:
    """Sum of a counter's samples whose labels include ``labels``."""
    total = 0.0
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


@dataclass(frozen=True)
class ClientCounts:
    """The client's refusals and duty outcomes, read from its metrics."""

    signer_refusals: int
    duty_loop_refusals: int
    duties: dict[str, dict[str, int]]
    #: Blocks published by who built the payload (``local``, ``builder``).
    blocks: dict[str, int]

    @classmethod
    def now(cls) -> ClientCounts:
        return cls(
            signer_refusals=int(_metric_sum("validator_signature_refusals_total")),
            duty_loop_refusals=int(_metric_sum("validator_duty_refusals_total")),
            duties={
                kind.value: {
                    result.value: int(
                        _metric_sum("validator_duties_total", kind=kind.value, result=result.value)
                    )
                    for result in DutyResult
                }
                for kind in DutyKind
            },
            blocks={
                kind: int(_metric_sum("validator_blocks_proposed_total", kind=kind))
                for kind in BLOCK_KINDS
            },
        )

    def since(self, start: ClientCounts) -> ClientCounts:
        """What happened after ``start`` (the process's metrics count from its start)."""
        return ClientCounts(
            signer_refusals=self.signer_refusals - start.signer_refusals,
            duty_loop_refusals=self.duty_loop_refusals - start.duty_loop_refusals,
            duties={
                kind: {
                    result: count - start.duties[kind][result] for result, count in results.items()
                }
                for kind, results in self.duties.items()
            },
            blocks={kind: count - start.blocks[kind] for kind, count in self.blocks.items()},
        )

    @property
    def refusals(self) -> int:
        return self.signer_refusals + self.duty_loop_refusals


class ConsoleLogHandler(logging.Handler):
    """Log lines printed through rich, above the live progress display."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console
        self.setFormatter(TextFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.print(self.format(record), markup=False, highlight=False, soft_wrap=True)
        except Exception:
            self.handleError(record)


class SlotSpan:
    """The first and last slot whose duties the client took up in this run."""

    def __init__(self) -> None:
        self.first: int | None = None
        self.last: int | None = None

    def on_slot(self, slot: int) -> None:
        if self.first is None:
            self.first = slot
        self.last = slot

    @property
    def count(self) -> int:
        return 0 if self.first is None or self.last is None else self.last - self.first + 1


class Progress:
    """The live table: slot, head, duties done by kind (a terminal only)."""

    def __init__(self, console: Console, options: DevnetOptions) -> None:
        self.console = console
        self.options = options
        self.slot: int | None = None
        self.first_slot: int | None = None
        self.service: ValidatorService | None = None
        self.baseline = ClientCounts.now()
        self._live: Live | None = None

    def on_slot(self, slot: int) -> None:
        if self.first_slot is None:
            self.first_slot = slot
        self.slot = slot
        if self._live is not None:
            self._live.update(self.render())

    def render(self) -> Table:
        options = self.options
        table = Table(title="validator devnet", title_justify="left", expand=False)
        table.add_column("duty")
        for result in DutyResult:
            table.add_column(result.value, justify="right")
        counts = ClientCounts.now().since(self.baseline)
        for kind, results in counts.duties.items():
            table.add_row(kind, *(str(results[result.value]) for result in DutyResult))
        done = 0 if self.slot is None or self.first_slot is None else self.slot - self.first_slot
        of = f"/{options.slots}" if options.slots else ""
        head = None
        if self.service is not None and self.service.scheduler is not None:
            head = self.service.scheduler.head_slot
        slot = "-" if self.slot is None else str(self.slot)
        counted = 0 if self.slot is None else done + 1
        table.caption = (
            f"slot {slot} ({counted}{of})"
            f"  head {head if head is not None else '-'}"
            f"  refusals {counts.refusals}" + (f"  fault {options.fault}" if options.fault else "")
        )
        return table

    @contextlib.contextmanager
    def shown(self) -> Iterator[None]:
        with Live(self.render(), console=self.console, refresh_per_second=4) as live:
            self._live = live
            try:
                yield
            finally:
                live.update(self.render())
                self._live = None


def summary_table(summary: dict[str, Any]) -> Table:
    table = Table(title="devnet summary", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for key in SUMMARY_KEYS:
        value = summary.get(key)
        if key == "client_refusals" and isinstance(value, dict):
            value = value.get("total")
        style = ""
        if key in ("invalid_signatures", "slashable_messages") and value:
            style = "bold red"
        table.add_row(key, str(value), style=style)
    if summary.get("builder"):
        for key in ("registrations_received", "blinded_blocks_received"):
            table.add_row(key, str(summary.get(key)))
        table.add_row("client_blocks", str(summary.get("client_blocks")))
    for key in ("head_slot", "finalized_epoch", "fault"):
        if key in summary:
            table.add_row(key, str(summary[key]))
    return table


def build_summary(
    chain_summary: dict[str, Any] | None, slots_run: int, client: ClientCounts
) -> dict[str, Any]:
    """The chain's summary with the client's side added (``client_refusals`` and details).

    ``slots`` is the client's count, so that ``--slots N`` reports N; the chain's own
    count (every slot that started while it was up, one more when it is stopped just
    after the client's last slot) stays as ``chain_slots``.
    """
    summary: dict[str, Any] = dict(chain_summary or {})
    if chain_summary is None:
        summary["chain_summary_missing"] = True
    if "slots" in summary:
        summary["chain_slots"] = summary["slots"]
    summary["slots"] = slots_run
    summary["client_refusals"] = client.refusals
    summary["client_refusals_detail"] = {
        "signer": client.signer_refusals,
        "duty_loop": client.duty_loop_refusals,
    }
    # Gloas duties exist only on a chain that schedules Gloas: left out where none ran.
    summary["client_duties"] = {
        kind: counts
        for kind, counts in client.duties.items()
        if kind not in GLOAS_DUTY_KINDS or any(counts.values())
    }
    summary["client_blocks"] = client.blocks
    return summary


def exit_code(summary: dict[str, Any]) -> int:
    broken = summary.get("slashable_messages", 0) or summary.get("invalid_signatures", 0)
    return 1 if broken or summary.get("chain_summary_missing") else 0


async def _run(options: DevnetOptions, console: Console, progress: Progress | None) -> int:
    validators_dir = options.validators_dir
    if options.slashing_protection_db is None:
        first_run = not (validators_dir / RECORD_FILE).exists()
    else:
        # The shared record may hold other directories' keys: register only on the chain's
        # first run, so a database that lost this chain's history is refused, not refilled.
        first_run = not devnet_state_dir(validators_dir).exists()
    baseline = ClientCounts.now()
    chain = await start_chain(options)
    ready = chain.ready
    message = f"simulated beacon node on {ready['url']} (port {ready['port']})"
    if options.log_format is LogFormat.JSON:
        log.warning(message)
    else:
        console.print(message, markup=False, highlight=False)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stop.set)
    service: ValidatorService | None = None
    span = SlotSpan()

    def on_slot(slot: int) -> None:
        span.on_slot(slot)
        if progress is not None:
            progress.on_slot(slot)

    try:
        # Counted from the first slot the client takes up: a slow start (many keys, a
        # loaded host) must not eat into the slots asked for.
        slot_count = options.slots or None
        service = ValidatorService(
            RunOptions(
                beacon_node_urls=[str(ready["url"])],
                validators_dir=validators_dir,
                init_slashing_protection=first_run,
                doppelganger_protection=options.doppelganger_protection,
                slashing_protection_db=options.slashing_protection_db,
                remote_signer_urls=options.remote_signer_urls,
                remote_signer_token_file=options.remote_signer_token_file,
                remote_signer_middlewares=_strict_web3signer_middlewares()
                if options.strict and options.remote_signer_urls
                else (),
                keymanager=options.keymanager,
                keymanager_address=options.keymanager_address,
                keymanager_port=options.keymanager_port,
                keymanager_token_file=options.keymanager_token_file,
                metrics=options.metrics,
                metrics_address=options.metrics_address,
                metrics_port=options.metrics_port,
                status_page=options.status_page,
                builder=options.builder,
                builder_boost_factor=options.builder_boost_factor,
                proposer_config=options.proposer_config,
                middlewares=_strict_middlewares() if options.strict else (),
                progress=False,
                health_check_interval=max(1.0, options.seconds_per_slot),
                suggested_fee_recipient=_fee_recipient(options),
            )
        )
        if progress is not None:
            progress.service = service
            with progress.shown():
                await service.run(stop, slot_count=slot_count, on_slot=on_slot)
        else:
            await service.run(stop, slot_count=slot_count, on_slot=on_slot)
    finally:
        chain_summary = await stop_chain(chain)
    summary = build_summary(chain_summary, span.count, ClientCounts.now().since(baseline))
    if options.summary is not None:
        options.summary.write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    if options.log_format is LogFormat.JSON:
        log.warning("devnet summary", extra={"summary": summary})
    else:
        console.print(summary_table(summary))
        if chain_summary is None:
            console.print(f"the chain gave no summary; see {chain.log_path}", markup=False)
    if service is not None and service.exit_status:
        return service.exit_status
    return exit_code(summary)


def _strict_middlewares() -> list[Any]:
    from validator.devnet.strict_mode.checkers import StrictClientChecker
    from validator.devnet.strict_mode.openapi_spec import load_beacon_api_spec

    return [StrictClientChecker(load_beacon_api_spec())]


def _strict_web3signer_middlewares() -> list[Any]:
    from validator.devnet.strict_mode.checkers import StrictClientChecker
    from validator.devnet.strict_mode.openapi_spec import load_web3signer_spec

    return [StrictClientChecker(load_web3signer_spec())]


def run_devnet(options: DevnetOptions) -> int:
    """Run the devnet as ``validator devnet`` does; returns the exit status."""
    if options.fault is not None and options.fault not in FAULTS:
        raise ValueError(f"unknown --fault {options.fault!r}; choose one of {', '.join(FAULTS)}")
    console = Console(stderr=True)
    show = options.progress
    if show is None:
        show = console.is_terminal and options.log_format is LogFormat.TEXT
    progress = Progress(console, options) if show else None
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    if progress is not None:
        install_handler(ConsoleLogHandler(console), options.log_level)
    else:
        configure_logging(options.log_format, level=options.log_level)
    try:
        validators_dir = options.validators_dir
        validators_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        make_keystores(validators_dir, options.validators, console if show else None)
        return asyncio.run(_run(options, console, progress))
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


def make_keystores(validators_dir: Path, count: int, console: Console | None) -> None:
    """The interop keystores 0 .. count-1, made where missing (with a bar on a terminal)."""
    if console is None:
        write_interop_keystores(validators_dir, range(count))
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn
    from rich.progress import Progress as Bar

    with Bar(
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("devnet keystores (insecure KDF, devnet only)", total=count)
        write_interop_keystores(
            validators_dir, range(count), on_checked=lambda index: bar.advance(task)
        )
