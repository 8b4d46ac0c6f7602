"""The ``validator`` command: ``run``, ``devnet``, ``signer``, ``resume``, ``slashing-protection``.

Errors that stop the process print one line starting with ``error:`` on stderr
and exit with status 1; SIGINT and SIGTERM stop ``run`` cleanly with status 0; a
doppelganger found by ``--doppelganger-protection`` stops it with status 3.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import Annotated, Protocol

import typer

from slashing_protection import SlashingProtectionError
from slashing_protection.cli import app as slashing_protection_app
from validator.consensus.encoding import parse_hex
from validator.key_settings import DEFAULT_BUILDER_BOOST_FACTOR, parse_fee_recipient
from validator.logs import LogFormat, configure_logging
from validator.metrics_server import DEFAULT_METRICS_ADDRESS, DEFAULT_METRICS_PORT
from validator.service import (
    DEFAULT_KEYMANAGER_ADDRESS,
    DEFAULT_KEYMANAGER_PORT,
    RunOptions,
    StartupError,
    ValidatorService,
)
from validator.signer_server import (
    DEFAULT_SIGNER_ADDRESS,
    DEFAULT_SIGNER_PORT,
    SignerOptions,
    SignerService,
)

log = logging.getLogger("validator.cli")

DEFAULT_DEVNET_DIR = Path("devnet-validators")

app = typer.Typer(
    name="validator",
    help="An Ethereum validator client that cannot be slashed: every block and attestation "
    "is durably recorded (EIP-3076) before it is signed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(slashing_protection_app, name="slashing-protection")

# -- options shared by run and devnet ------------------------------------------------

ValidatorsDir = Annotated[
    Path,
    typer.Option(
        "--validators-dir",
        help="Directory with keystores/, secrets/ and the slashing-protection record.",
        show_default=False,
    ),
]
InitSlashingProtection = Annotated[
    bool,
    typer.Option(
        "--init-slashing-protection",
        help="Register keys that have no slashing-protection record as never having "
        "signed (creating the record if needed). Only for keys that have never signed "
        "anywhere; an existing record is never lowered.",
    ),
]
KeymanagerFlag = Annotated[
    bool,
    typer.Option(
        "--keymanager",
        help="Serve the standard Keymanager API in this process (bearer token from "
        "<validators-dir>/api-token.txt or --keymanager-token-file).",
    ),
]
KeymanagerAddress = Annotated[
    str, typer.Option("--keymanager-address", help="Address the Keymanager API listens on.")
]
KeymanagerPort = Annotated[
    int, typer.Option("--keymanager-port", help="Port of the Keymanager API.", min=0, max=65535)
]
KeymanagerTokenFile = Annotated[
    Path | None,
    typer.Option(
        "--keymanager-token-file",
        help="File holding the Keymanager API bearer token (created with mode 0600 when absent). "
        "Default: <validators-dir>/api-token.txt.",
        show_default=False,
    ),
]
MetricsFlag = Annotated[
    bool, typer.Option("--metrics", help="Serve Prometheus metrics on /metrics in this process.")
]
MetricsAddress = Annotated[
    str, typer.Option("--metrics-address", help="Address the metrics server listens on.")
]
MetricsPort = Annotated[
    int, typer.Option("--metrics-port", help="Port of the metrics server.", min=0, max=65535)
]
NetworkOption = Annotated[
    str | None,
    typer.Option(
        "--network",
        help="The public network these keys sign for: mainnet, sepolia or hoodi (its genesis, "
        "fork schedule and preset are built in). A beacon node serving another chain is "
        "refused at start.",
        show_default=False,
    ),
]
StatusPageFlag = Annotated[
    bool,
    typer.Option(
        "--status-page",
        help="Serve a status page (keys, beacon nodes, chain, duties) at / of the metrics "
        "server, on --metrics-address and --metrics-port (started even without --metrics).",
    ),
]
SlashingProtectionDb = Annotated[
    str | None,
    typer.Option(
        "--slashing-protection-db",
        help="Keep the slashing-protection record in this PostgreSQL database "
        "(postgresql://...), shared by every client using it, instead of "
        "slashing_protection.json in the validators directory (see "
        "'slashing-protection db-init').",
        show_default=False,
    ),
]
RemoteSignerUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--remote-signer-url",
        help="A remote signer (Web3Signer eth2 API, e.g. validator signer): every key its "
        "publicKeys lists signs through it, after this client's own slashing-protection "
        "record has judged and recorded the message. Repeatable.",
        show_default=False,
    ),
]
RemoteSignerTokenFile = Annotated[
    Path | None,
    typer.Option(
        "--remote-signer-token-file",
        help="Send the bearer token in this file to every remote signer (validator signer "
        "asks for one when it listens on a non-loopback address).",
        show_default=False,
    ),
]
DoppelgangerFlag = Annotated[
    bool,
    typer.Option(
        "--doppelganger-protection",
        help="Before a key signs anything, watch the chain for it for 2 epochs (the beacon "
        "node's liveness endpoint); a key seen live elsewhere is halted and the process exits "
        "with status 3. Skipped, key by key, right after a clean stop of this directory. "
        "See docs/running.md.",
    ),
]
BuilderFlag = Annotated[
    bool,
    typer.Option(
        "--builder",
        help="Take blocks from external builders (MEV-boost through the beacon node): register "
        "every key with them each epoch and sign the blinded blocks they win. Per key, "
        "--proposer-config's builder.enabled decides instead.",
    ),
]
BuilderBoostFactor = Annotated[
    int,
    typer.Option(
        "--builder-boost-factor",
        help="Percentage the builder's bid is weighed at against the local block in "
        "produceBlockV3: 100 compares them as they are, 0 takes local blocks only, "
        "18446744073709551615 always the builder's.",
        min=0,
        max=2**64 - 1,
    ),
]
ProposerConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--proposer-config",
        help="Per-key fee recipient, gas limit and builder settings in Teku's JSON shape "
        "(proposer_config by public key, default_config); the Keymanager API's settings win "
        "over it, it wins over the flags. See docs/running.md.",
        show_default=False,
    ),
]
LogFormatOption = Annotated[
    LogFormat,
    typer.Option(
        "--log-format", help="text for people, json for machines (one JSON object per line)."
    ),
]
LogLevelOption = Annotated[str, typer.Option("--log-level", help="debug, info, warning or error.")]


def _fail(message: str) -> typer.Exit:
    typer.echo("error: " + " ".join(message.split()), err=True)
    return typer.Exit(1)


def _log_level(text: str) -> int:
    level = logging.getLevelName(text.upper())
    if not isinstance(level, int):
        raise _fail(f"unknown --log-level {text!r}; use debug, info, warning or error")
    return level


class RunningService(Protocol):
    """``validator run``'s or ``validator signer``'s service."""

    exit_status: int

    async def run(self, stop: asyncio.Event) -> None: ...


def run_until_signalled(service: RunningService) -> None:
    """Run the service on a new event loop; SIGINT/SIGTERM ask it to stop.

    Exits 0 after a stop asked by a signal, 1 with one line on stderr when the
    service could not start.
    """

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def on_signal(number: signal.Signals) -> None:
            if not stop.is_set():
                log.info("%s received: stopping", number.name)
            stop.set()

        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, on_signal, number)
        await service.run(stop)

    try:
        asyncio.run(main())
    except (StartupError, SlashingProtectionError) as error:
        raise _fail(str(error)) from None
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise _fail(f"{error.strerror or error}{where}") from None
    if service.exit_status:
        raise typer.Exit(service.exit_status)


@app.command("run")
def run_command(
    beacon_node_url: Annotated[
        list[str],
        typer.Option(
            "--beacon-node-url",
            help="Beacon node REST API URL; repeat for fallbacks, in order of preference. "
            "Requests fail over; signed messages go to every reachable node.",
            show_default=False,
        ),
    ],
    validators_dir: ValidatorsDir,
    network: NetworkOption = None,
    init_slashing_protection: InitSlashingProtection = False,
    doppelganger_protection: DoppelgangerFlag = False,
    slashing_protection_db: SlashingProtectionDb = None,
    remote_signer_url: RemoteSignerUrl = None,
    remote_signer_token_file: RemoteSignerTokenFile = None,
    keymanager: KeymanagerFlag = False,
    keymanager_address: KeymanagerAddress = DEFAULT_KEYMANAGER_ADDRESS,
    keymanager_port: KeymanagerPort = DEFAULT_KEYMANAGER_PORT,
    keymanager_token_file: KeymanagerTokenFile = None,
    metrics: MetricsFlag = False,
    metrics_address: MetricsAddress = DEFAULT_METRICS_ADDRESS,
    metrics_port: MetricsPort = DEFAULT_METRICS_PORT,
    status_page: StatusPageFlag = False,
    suggested_fee_recipient: Annotated[
        str | None,
        typer.Option(
            "--suggested-fee-recipient",
            help="Execution address (0x + 40 hex) for keys without their own fee recipient.",
            show_default=False,
        ),
    ] = None,
    graffiti: Annotated[
        str | None,
        typer.Option(
            "--graffiti",
            help="Graffiti (at most 32 bytes of UTF-8) for keys without their own.",
            show_default=False,
        ),
    ] = None,
    builder: BuilderFlag = False,
    builder_boost_factor: BuilderBoostFactor = DEFAULT_BUILDER_BOOST_FACTOR,
    proposer_config: ProposerConfigFile = None,
    log_format: LogFormatOption = LogFormat.TEXT,
    log_level: LogLevelOption = "info",
) -> None:
    """Run validators against beacon node(s) over the standard Beacon API."""
    configure_logging(log_format, level=_log_level(log_level))
    options = RunOptions(
        beacon_node_urls=beacon_node_url,
        validators_dir=validators_dir,
        network=_network(network),
        init_slashing_protection=init_slashing_protection,
        doppelganger_protection=doppelganger_protection,
        slashing_protection_db=slashing_protection_db,
        keymanager=keymanager,
        keymanager_address=keymanager_address,
        keymanager_port=keymanager_port,
        keymanager_token_file=keymanager_token_file,
        metrics=metrics,
        metrics_address=metrics_address,
        metrics_port=metrics_port,
        status_page=status_page,
        progress=_progress(log_format),
        suggested_fee_recipient=_fee_recipient(suggested_fee_recipient),
        graffiti=_graffiti(graffiti),
        remote_signer_urls=_remote_signer_urls(remote_signer_url),
        remote_signer_token_file=remote_signer_token_file,
        builder=builder,
        builder_boost_factor=builder_boost_factor,
        proposer_config=proposer_config,
    )
    try:
        service = ValidatorService(options)
    except StartupError as error:
        raise _fail(str(error)) from None
    run_until_signalled(service)


@app.command("signer")
def signer_command(
    validators_dir: ValidatorsDir,
    beacon_node_url: Annotated[
        list[str] | None,
        typer.Option(
            "--beacon-node-url",
            help="Beacon node REST API URL the chain's genesis, spec and fork schedule are "
            "read from at start (every request's fork_info is checked against them); repeat "
            "for fallbacks. Not needed with --network.",
            show_default=False,
        ),
    ] = None,
    network: Annotated[
        str | None,
        typer.Option(
            "--network",
            help="Sign for this public network (mainnet, sepolia or hoodi) with its built-in "
            "genesis, fork schedule and preset; no beacon node is needed. With "
            "--beacon-node-url too, a node serving another chain is refused at start.",
            show_default=False,
        ),
    ] = None,
    init_slashing_protection: InitSlashingProtection = False,
    slashing_protection_db: SlashingProtectionDb = None,
    address: Annotated[
        str,
        typer.Option(
            "--address",
            help="Address the signer API listens on; a non-loopback one requires the token.",
        ),
    ] = DEFAULT_SIGNER_ADDRESS,
    port: Annotated[
        int, typer.Option("--port", help="Port of the signer API.", min=0, max=65535)
    ] = DEFAULT_SIGNER_PORT,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="Require this bearer token (a file holding 64+ hex digits). Without it, a "
            "non-loopback --address uses <validators-dir>/signer-api-token.txt (created with "
            "mode 0600 when absent); on loopback no token is asked.",
            show_default=False,
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None,
        typer.Option(
            "--tls-cert", help="Serve HTTPS with this PEM certificate (chain).", show_default=False
        ),
    ] = None,
    tls_key: Annotated[
        Path | None,
        typer.Option("--tls-key", help="The PEM private key of --tls-cert.", show_default=False),
    ] = None,
    keymanager: KeymanagerFlag = False,
    keymanager_address: KeymanagerAddress = DEFAULT_KEYMANAGER_ADDRESS,
    keymanager_port: KeymanagerPort = DEFAULT_KEYMANAGER_PORT,
    keymanager_token_file: KeymanagerTokenFile = None,
    metrics: MetricsFlag = False,
    metrics_address: MetricsAddress = DEFAULT_METRICS_ADDRESS,
    metrics_port: MetricsPort = DEFAULT_METRICS_PORT,
    log_format: LogFormatOption = LogFormat.TEXT,
    log_level: LogLevelOption = "info",
) -> None:
    """Serve the Web3Signer eth2 signing API over this directory's keystores and record."""

    configure_logging(log_format, level=_log_level(log_level))
    if not beacon_node_url and network is None:
        typer.echo("error: give --beacon-node-url URL (one or more) or --network NAME", err=True)
        raise typer.Exit(2)
    options = RunOptions(
        beacon_node_urls=beacon_node_url or [],
        validators_dir=validators_dir,
        network=_network(network),
        progress=_progress(log_format),
        init_slashing_protection=init_slashing_protection,
        slashing_protection_db=slashing_protection_db,
        keymanager=keymanager,
        keymanager_address=keymanager_address,
        keymanager_port=keymanager_port,
        keymanager_token_file=keymanager_token_file,
        metrics=metrics,
        metrics_address=metrics_address,
        metrics_port=metrics_port,
    )
    signer_options = SignerOptions(
        address=address, port=port, token_file=token_file, tls_cert=tls_cert, tls_key=tls_key
    )
    try:
        service = SignerService(options, signer_options)
    except StartupError as error:
        raise _fail(str(error)) from None
    run_until_signalled(service)


def _progress(log_format: LogFormat) -> bool | None:
    """Progress bars on a terminal only, and never among JSON log lines."""
    return False if log_format is LogFormat.JSON else None


def _network(name: str | None) -> str | None:
    from validator.consensus.networks import NETWORKS

    if name is not None and name not in NETWORKS:
        typer.echo(
            f"error: --network {name!r:.40}: built in are {', '.join(NETWORKS)}", err=True
        )
        raise typer.Exit(2)
    return name


def _fee_recipient(text: str | None) -> bytes | None:
    if text is None:
        return None
    try:
        return parse_fee_recipient(text)
    except ValueError as error:
        raise _fail(f"--suggested-fee-recipient: {error}") from None


def _remote_signer_urls(urls: list[str] | None) -> list[str]:
    from keymanager.api.remote_checks import url_problem

    for url in urls or []:
        problem = url_problem(url)
        if problem is not None:
            raise _fail(f"--remote-signer-url {url!r}: {problem.removeprefix('url: ')}")
    return list(urls or [])


def _graffiti(text: str | None) -> str | None:
    if text is not None and len(text.encode("utf-8")) > 32:
        raise _fail(f"--graffiti is {len(text.encode('utf-8'))} bytes in UTF-8; at most 32 fit")
    return text


@app.command("devnet")
def devnet_command(
    validators: Annotated[
        int, typer.Option("--validators", help="Validators on the chain.", min=1)
    ] = 64,
    slots: Annotated[
        int, typer.Option("--slots", help="Slots to run; 0 runs until interrupted.", min=0)
    ] = 32,
    seconds_per_slot: Annotated[
        float, typer.Option("--seconds-per-slot", help="Slot duration (may be below 1).", min=0.05)
    ] = 2.0,
    slots_per_epoch: Annotated[
        int, typer.Option("--slots-per-epoch", help="Slots per epoch of a new chain.", min=1)
    ] = 8,
    preset: Annotated[
        str,
        typer.Option(
            "--preset",
            help="Preset of a new chain (mainnet or minimal); the client follows the node's.",
        ),
    ] = "mainnet",
    gloas_fork_epoch: Annotated[
        int | None,
        typer.Option(
            "--gloas-fork-epoch",
            min=1,
            help="Schedule Gloas (ePBS) at this epoch of a new chain (default: not scheduled).",
        ),
    ] = None,
    validators_dir: Annotated[
        Path,
        typer.Option(
            "--validators-dir",
            help="Validators directory (keystores, record), by default devnet-validators in "
            "the current directory; the chain's state lives in its devnet/ subdirectory, so a "
            "second run continues the same chain.",
        ),
    ] = DEFAULT_DEVNET_DIR,
    beacon_port: Annotated[
        int,
        typer.Option(
            "--beacon-port", help="Port of the simulated beacon node (0: a free one).", min=0
        ),
    ] = 0,
    fault: Annotated[
        str | None,
        typer.Option(
            "--fault",
            help="Make the chain misbehave: double-vote, surround-vote, far-future, "
            "conflicting-block, unavailable, reorg, builder-offline, duties-reorg.",
            show_default=False,
        ),
    ] = None,
    summary: Annotated[
        Path | None,
        typer.Option(
            "--summary", help="Also write the summary as JSON to this file.", show_default=False
        ),
    ] = None,
    builder: Annotated[
        bool,
        typer.Option(
            "--builder",
            help="Run a simulated builder and relay in the chain and the client's builder "
            "flow (validator run --builder); the keys register with fee recipient "
            "0xde7e...de7e unless --suggested-fee-recipient names one.",
        ),
    ] = False,
    builder_boost_factor: BuilderBoostFactor = DEFAULT_BUILDER_BOOST_FACTOR,
    proposer_config: ProposerConfigFile = None,
    suggested_fee_recipient: Annotated[
        str | None,
        typer.Option(
            "--suggested-fee-recipient",
            help="As for validator run.",
            show_default=False,
        ),
    ] = None,
    doppelganger_protection: DoppelgangerFlag = False,
    slashing_protection_db: SlashingProtectionDb = None,
    remote_signer_url: RemoteSignerUrl = None,
    remote_signer_token_file: RemoteSignerTokenFile = None,
    keymanager: KeymanagerFlag = False,
    keymanager_address: KeymanagerAddress = DEFAULT_KEYMANAGER_ADDRESS,
    keymanager_port: KeymanagerPort = DEFAULT_KEYMANAGER_PORT,
    keymanager_token_file: KeymanagerTokenFile = None,
    metrics: MetricsFlag = False,
    metrics_address: MetricsAddress = DEFAULT_METRICS_ADDRESS,
    metrics_port: MetricsPort = DEFAULT_METRICS_PORT,
    status_page: StatusPageFlag = False,
    log_format: LogFormatOption = LogFormat.TEXT,
    log_level: LogLevelOption = "warning",
) -> None:
    """Run the client against a local simulated beacon chain (keys are public: devnet only)."""
    from validator.devnet.command.run import DevnetOptions, run_devnet

    options = DevnetOptions(
        validators=validators,
        slots=slots,
        seconds_per_slot=seconds_per_slot,
        slots_per_epoch=slots_per_epoch,
        preset=preset,
        gloas_fork_epoch=gloas_fork_epoch,
        validators_dir=validators_dir,
        beacon_port=beacon_port,
        fault=fault,
        summary=summary,
        builder=builder,
        builder_boost_factor=builder_boost_factor,
        proposer_config=proposer_config,
        suggested_fee_recipient=_fee_recipient(suggested_fee_recipient),
        doppelganger_protection=doppelganger_protection,
        slashing_protection_db=slashing_protection_db,
        remote_signer_urls=_remote_signer_urls(remote_signer_url),
        remote_signer_token_file=remote_signer_token_file,
        keymanager=keymanager,
        keymanager_address=keymanager_address,
        keymanager_port=keymanager_port,
        keymanager_token_file=keymanager_token_file,
        metrics=metrics,
        metrics_address=metrics_address,
        metrics_port=metrics_port,
        status_page=status_page,
        log_format=log_format,
        log_level=_log_level(log_level),
    )
    try:
        code = run_devnet(options)
    except (StartupError, SlashingProtectionError, ValueError) as error:
        raise _fail(str(error)) from None
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise _fail(f"{error.strerror or error}{where}") from None
    raise typer.Exit(code)


@app.command("resume")
def resume_command(
    validators_dir: Annotated[
        Path,
        typer.Option(
            "--validators-dir",
            help="The validators directory of the halted keys.",
            show_default=False,
        ),
    ],
    pubkey: Annotated[
        list[str] | None,
        typer.Option(
            "--pubkey",
            help="A halted key to clear (0x + 96 hex); repeat for more.",
            show_default=False,
        ),
    ] = None,
    all_keys: Annotated[
        bool, typer.Option("--all", help="Clear every halt in the directory.")
    ] = False,
) -> None:
    """Clear halts (a doppelganger found, a key slashed): the only way a halted key signs again.

    Takes the directory's lock, so it refuses while a validator runs there, and appends
    who cleared which halt, and when, to halts/cleared.jsonl.
    """
    from validator.halts import HaltError, resume

    if bool(pubkey) == all_keys:
        typer.echo("error: give --pubkey PK (one or more) or --all", err=True)
        raise typer.Exit(2)
    wanted = None if all_keys else [_pubkey(text) for text in pubkey or []]
    try:
        cleared = resume(validators_dir, wanted)
    except HaltError as error:
        raise _fail(str(error)) from None
    if not cleared:
        typer.echo(f"no halted keys in {validators_dir}")
    for halt in cleared:
        typer.echo(f"resumed 0x{halt.pubkey.hex()} (was halted: {halt.describe()})")


def _pubkey(text: str) -> bytes:
    try:
        return parse_hex(text, 48)
    except ValueError as error:
        typer.echo(
            f"error: --pubkey {text!r:.120}: {error} (a public key is 0x + 96 hex)", err=True
        )
        raise typer.Exit(2) from None


def main() -> None:
    app()
