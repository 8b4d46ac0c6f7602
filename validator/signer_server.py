"""``validator signer``: the Web3Signer eth2 signing API over a validators directory.

Other validator clients (or ours, with remote keys) send their signing requests here;
this process holds the keys and the slashing-protection record, so one record protects
every client pointed at it. It starts exactly as ``validator run`` does (the chain read
from the beacon node, the record opened and its lock held, the keystores decrypted through
the key cache) and then, instead of doing duties, answers:

- ``POST /api/v1/eth2/sign/{identifier}``: the body (``validator.signing.web3signer``) is
  parsed; the root is recomputed from the body and its ``fork_info``, and must equal the
  ``signingRoot`` sent (when sent) and the root the chain's own forks give (a
  ``fork_info`` of another chain or fork is refused); then the project's signer signs,
  with its checks, and for blocks and attestations the record judges and durably records
  first. 400 malformed or mismatched, 404 unknown key, 412 refused by slashing
  protection (or another protection rule), 500 when the record cannot be written.
- ``GET /api/v1/eth2/publicKeys``, ``GET /upcheck``, ``GET /healthcheck``.

Loopback by default; a bearer token is required when ``--token-file`` is given or the
address is not a loopback one (then ``<validators-dir>/signer-api-token.txt`` by default).
TLS with ``--tls-cert`` and ``--tls-key``. Attestation requests that arrive together are
signed as one batch (one record write), as a slot's attestations for many keys arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web
from prometheus_client import Counter, Histogram

from keymanager.api import TokenFileError, bound_port
from keymanager.api.server_limits import LIMITS_KEY, ServerLimits, read_body, start_limited_site
from keymanager.api.token import load_or_create_token, token_matches
from keymanager.pubkeys import parse_pubkey
from validator.consensus import signing_roots
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec, UnsupportedForkError
from validator.consensus.ssz import gloas
from validator.consensus.ssz.codec import from_ssz, to_ssz
from validator.consensus.ssz.gloas import BUILDER_INDEX_SELF_BUILD
from validator.service import SigningProcess, check_can_start
from validator.signing.guards import wall_clock_epoch
from validator.signing.signer import Signer
from validator.signing.types import (
    AttestationRequest,
    PayloadAttestationRequest,
    RefusalReason,
    SigningKind,
    SigningRefusedError,
)
from validator.signing.web3signer import (
    HEALTHCHECK_PATH,
    PUBLIC_KEYS_PATH,
    SIGN_PATH,
    UPCHECK_PATH,
    BodyError,
    SigningRequest,
    SignType,
    parse_signing_request,
)
from validator.startup import RunningParts, RunOptions, StartupError, check_options

log = logging.getLogger("validator.signer_server")

DEFAULT_SIGNER_ADDRESS = "127.0.0.1"
DEFAULT_SIGNER_PORT = 9000
SIGNER_TOKEN_FILE = "signer-api-token.txt"
SIGNER_API = "signer API"
#: How long the first attestation request of a burst waits for the others of its slot.
ATTESTATION_BATCH_WINDOW = 0.001
#: Many validator clients keep one connection per key in flight; the Keymanager's 64 is few.
SIGNER_LIMITS = ServerLimits(max_connections=512)

SIGNER_REQUESTS = Counter(
    "validator_signer_requests_total",
    "Signing requests validator signer answered, by Web3Signer type and HTTP status.",
    ["type", "status"],
)
SIGNER_REQUEST_SECONDS = Histogram(
    "validator_signer_request_seconds",
    "Time validator signer took to answer one signing request (checks, record, signature).",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)

# A refusal's HTTP status: 412 is Web3Signer's answer for slashing protection.
_STATUS_OF_REFUSAL = {
    RefusalReason.UNKNOWN_KEY: 404,
    RefusalReason.KEY_REMOVED: 404,
    RefusalReason.UNSUPPORTED_FORK: 400,
    RefusalReason.WRONG_FORK: 400,
    RefusalReason.RECORD_WRITE_FAILED: 500,
    RefusalReason.RECORD_UNAVAILABLE: 500,
}


class SignerRequestError(Exception):
    """A request answered with an error status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


# ---------------------------------------------------------------------- the chain's root


def _chain_root(chain: ChainSpec, request: SigningRequest, now: float) -> bytes:
    """The signing root the chain's own forks give the message (UnsupportedForkError)."""
    message = request.message
    match request.type:
        case SignType.ATTESTATION:
            return signing_roots.attestation_signing_root(chain, message)
        case SignType.BLOCK_V2:
            return signing_roots.block_signing_root(chain, message)
        case SignType.AGGREGATION_SLOT:
            return signing_roots.selection_proof_signing_root(chain, int(message.slot))
        case SignType.AGGREGATE_AND_PROOF_V2:
            return signing_roots.aggregate_and_proof_signing_root(chain, message)
        case SignType.RANDAO_REVEAL:
            return signing_roots.randao_reveal_signing_root(chain, int(message.epoch))
        case SignType.SYNC_COMMITTEE_MESSAGE:
            return signing_roots.sync_committee_message_signing_root(
                chain, int(message.slot), bytes(message.beacon_block_root)
            )
        case SignType.SYNC_COMMITTEE_SELECTION_PROOF:
            return signing_roots.sync_committee_selection_proof_signing_root(
                chain, int(message.slot), int(message.subcommittee_index)
            )
        case SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF:
            return signing_roots.contribution_and_proof_signing_root(chain, message)
        case SignType.VOLUNTARY_EXIT:
            current_epoch = max(0, wall_clock_epoch(chain, now))
            return signing_roots.voluntary_exit_signing_root(
                chain, message, current_epoch=current_epoch
            )
        case SignType.VALIDATOR_REGISTRATION:
            return signing_roots.validator_registration_signing_root(chain, message)
        case SignType.PAYLOAD_ATTESTATION_MESSAGE:
            return signing_roots.payload_attestation_signing_root(chain, message)
        case SignType.EXECUTION_PAYLOAD_ENVELOPE:
            return signing_roots.execution_payload_envelope_signing_root(
                chain, message, int(message.payload.slot_number)
            )
        case SignType.PROPOSER_PREFERENCES:
            return signing_roots.proposer_preferences_signing_root(chain, message)
    raise AssertionError(request.type)


def check_roots(chain: ChainSpec, request: SigningRequest, now: float) -> None:
    """The body's own root must be the one sent and the one the chain gives; else 400."""
    fork_info = request.fork_info
    if fork_info is not None and fork_info.genesis_validators_root != chain.genesis_validators_root:
        raise SignerRequestError(
            400,
            f"fork_info.genesis_validators_root 0x{fork_info.genesis_validators_root.hex()} is "
            f"not this signer's chain (0x{chain.genesis_validators_root.hex()})",
        )
    computed = request.computed_root(chain.slots_per_epoch, chain.genesis_fork_version)
    if request.signing_root is not None and request.signing_root != computed:
        raise SignerRequestError(
            400,
            f"signingRoot 0x{request.signing_root.hex()} is not the root of the body and its "
            f"fork_info (0x{computed.hex()})",
        )
    try:
        expected = _chain_root(chain, request, now)
    except UnsupportedForkError as error:
        raise SignerRequestError(400, str(error)) from None
    if computed != expected:
        epoch = request.epoch(chain.slots_per_epoch)
        raise SignerRequestError(
            400,
            f"fork_info does not give the chain's domain for this {request.type.value} at "
            f"epoch {epoch}: the chain signs it under version "
            f"0x{chain.fork_version_at(epoch).hex()}",
        )


# ---------------------------------------------------------------------- signing


class _AttestationBatcher:
    """Attestation requests arriving together, signed in one ``sign_attestations`` call."""

    def __init__(self, signer: Signer, window: float = ATTESTATION_BATCH_WINDOW) -> None:
        self._signer = signer
        self._window = window
        self._pending: list[tuple[AttestationRequest, asyncio.Future[Any]]] = []
        self._flush: asyncio.Task[None] | None = None

    async def sign(self, pubkey: bytes, data: Any) -> bytes:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.append((AttestationRequest(pubkey, data), future))
        if self._flush is None:
            self._flush = asyncio.create_task(self._sign_pending())
        # Shielded: a client that hangs up does not cancel the batch's record and signatures.
        result = await asyncio.shield(future)
        if result.refusal is not None:
            raise SigningRefusedError(SigningKind.ATTESTATION, pubkey, result.refusal)
        signature: bytes = result.signature
        return signature

    async def _sign_pending(self) -> None:
        await asyncio.sleep(self._window)
        batch, self._pending, self._flush = self._pending, [], None
        try:
            results = await self._signer.sign_attestations([request for request, _ in batch])
        except Exception as error:  # every waiting request answers it (nobody awaits this task)
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)


Signing = Callable[[Signer, "_AttestationBatcher", bytes, SigningRequest], Awaitable[bytes]]


async def _sign_attestation(
    signer: Signer, batcher: _AttestationBatcher, pubkey: bytes, request: SigningRequest
) -> bytes:
    return await batcher.sign(pubkey, request.message)


async def _sign_block(
    signer: Signer, batcher: _AttestationBatcher, pubkey: bytes, request: SigningRequest
) -> bytes:
    assert request.version is not None
    return await signer.sign_block_header(pubkey, request.message, request.version)


async def _sign_other(
    signer: Signer, batcher: _AttestationBatcher, pubkey: bytes, request: SigningRequest
) -> bytes:
    message = request.message
    match request.type:
        case SignType.AGGREGATION_SLOT:
            return await signer.sign_selection_proof(pubkey, int(message.slot))
        case SignType.AGGREGATE_AND_PROOF_V2:
            chain = signer.chain
            fork = chain.fork_name_at(chain.epoch_at_slot(int(message.aggregate.data.slot)))
            if request.version is not fork or not fork.at_least(ForkName.ELECTRA):
                raise SignerRequestError(
                    400,
                    f"aggregate_and_proof.version {request.version}: the chain is in "
                    f"{fork.value} at the aggregate's slot, and this signer signs aggregates "
                    "from Electra on",
                )
            signed = await signer.sign_aggregate_and_proof(pubkey, message)
            return bytes(signed.signature)
        case SignType.RANDAO_REVEAL:
            return await signer.sign_randao_reveal(pubkey, int(message.epoch))
        case SignType.SYNC_COMMITTEE_MESSAGE:
            return await signer.sign_sync_committee_message(
                pubkey, int(message.slot), bytes(message.beacon_block_root)
            )
        case SignType.SYNC_COMMITTEE_SELECTION_PROOF:
            return await signer.sign_sync_committee_selection_proof(
                pubkey, int(message.slot), int(message.subcommittee_index)
            )
        case SignType.SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF:
            return bytes((await signer.sign_contribution_and_proof(pubkey, message)).signature)
        case SignType.VOLUNTARY_EXIT:
            return bytes((await signer.sign_voluntary_exit(pubkey, message)).signature)
        case SignType.VALIDATOR_REGISTRATION:
            if bytes(message.pubkey) != pubkey:
                raise SignerRequestError(
                    400, "validator_registration.pubkey is not the key in the request's path"
                )
            return bytes((await signer.sign_validator_registration(pubkey, message)).signature)
        case (
            SignType.PAYLOAD_ATTESTATION_MESSAGE
            | SignType.EXECUTION_PAYLOAD_ENVELOPE
            | SignType.PROPOSER_PREFERENCES
        ):
            return await _sign_gloas(signer, pubkey, request)
    raise AssertionError(request.type)


async def _sign_gloas(signer: Signer, pubkey: bytes, request: SigningRequest) -> bytes:
    """The Gloas kinds: the body's ``version`` must be the chain's fork at the message's slot."""
    chain, message = signer.chain, request.message
    epoch = request.epoch(chain.slots_per_epoch)
    fork = chain.fork_name_at(epoch)
    if request.version is not fork:
        raise SignerRequestError(
            400,
            f"{request.type.value}: version {request.version}, but the chain is in "
            f"{fork.value} at epoch {epoch}",
        )
    match request.type:
        case SignType.PAYLOAD_ATTESTATION_MESSAGE:
            # The message's validator index is not signed; the key in the path is the voter.
            results = await signer.sign_payload_attestations(
                [PayloadAttestationRequest(pubkey, 0, message)]
            )
            result = results[0]
            if result.refusal is not None:
                raise SigningRefusedError(SigningKind.PAYLOAD_ATTESTATION, pubkey, result.refusal)
            assert result.signature is not None
            return result.signature
        case SignType.EXECUTION_PAYLOAD_ENVELOPE:
            if int(message.builder_index) != BUILDER_INDEX_SELF_BUILD:
                raise SignerRequestError(
                    400,
                    "execution_payload_envelope.builder_index: a validator key signs only its "
                    "own (self-built) payload's envelope",
                )
            slot = int(message.payload.slot_number)
            # Read as the chain's preset's container (the body was parsed as mainnet's).
            envelope = from_ssz(
                gloas.containers(chain.preset).ExecutionPayloadEnvelope, to_ssz(message)
            )
            signed = await signer.sign_execution_payload_envelope(pubkey, envelope, slot)
            return bytes(signed.signature)
        case _:
            return bytes((await signer.sign_proposer_preferences(pubkey, message)).signature)


_SIGNING: dict[SignType, Signing] = {
    SignType.ATTESTATION: _sign_attestation,
    SignType.BLOCK_V2: _sign_block,
}


# ---------------------------------------------------------------------- the HTTP API


@dataclass
class SignerApi:
    """The routes over a running signer and its chain (``app()`` builds the aiohttp app)."""

    signer: Signer
    chain: ChainSpec
    token: str | None = None
    middlewares: Sequence[Any] = ()
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        self._batcher = _AttestationBatcher(self.signer)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[*self.middlewares, self._auth], client_max_size=2**20)
        app[LIMITS_KEY] = SIGNER_LIMITS
        app.router.add_post(SIGN_PATH, self._sign)
        app.router.add_get(PUBLIC_KEYS_PATH, self._public_keys, allow_head=False)
        app.router.add_get(UPCHECK_PATH, self._upcheck, allow_head=False)
        app.router.add_get(HEALTHCHECK_PATH, self._healthcheck, allow_head=False)
        return app

    @web.middleware
    async def _auth(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if self.token is not None and request.path.startswith("/api/"):
            given = request.headers.get("Authorization", "")
            scheme, _, value = given.partition(" ")
            if scheme.lower() != "bearer" or not token_matches(value.strip(), self.token):
                return _error(401, "a bearer token is required (Authorization: Bearer ...)")
        return await handler(request)

    async def _sign(self, request: web.Request) -> web.Response:
        started = asyncio.get_running_loop().time()
        sign_type = "unknown"
        try:
            try:
                pubkey = parse_pubkey(request.match_info["identifier"])
            except ValueError as error:
                raise SignerRequestError(400, f"identifier: {error}") from None
            raw = await read_body(request)
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError as error:
                raise SignerRequestError(400, f"the body is not JSON: {error}") from None
            try:
                parsed = parse_signing_request(body, self.chain.preset)
            except BodyError as error:
                raise SignerRequestError(400, str(error)) from None
            sign_type = parsed.type.value
            if not self.signer.has_key(pubkey):
                raise SignerRequestError(404, f"the signer holds no key 0x{pubkey.hex()}")
            check_roots(self.chain, parsed, self.clock())
            sign = _SIGNING.get(parsed.type, _sign_other)
            try:
                signature = await sign(self.signer, self._batcher, pubkey, parsed)
            except SigningRefusedError as refused:
                raise SignerRequestError(
                    _STATUS_OF_REFUSAL.get(refused.reason, 412), str(refused.refusal)
                ) from None
        except SignerRequestError as error:
            SIGNER_REQUESTS.labels(sign_type, str(error.status)).inc()
            if error.status >= 412:
                log.warning("refused a %s request: %s", sign_type, error.message)
            return _error(error.status, error.message)
        SIGNER_REQUESTS.labels(sign_type, "200").inc()
        SIGNER_REQUEST_SECONDS.observe(asyncio.get_running_loop().time() - started)
        hex_signature = "0x" + signature.hex()
        if "application/json" in request.headers.get("Accept", ""):
            return web.json_response({"signature": hex_signature})
        return web.Response(text=hex_signature, content_type="text/plain", charset="utf-8")

    async def _public_keys(self, request: web.Request) -> web.Response:
        return web.json_response(["0x" + pubkey.hex() for pubkey in sorted(self.signer.pubkeys())])

    async def _upcheck(self, request: web.Request) -> web.Response:
        return web.Response(text="OK", content_type="text/plain", charset="utf-8")

    async def _healthcheck(self, request: web.Request) -> web.Response:
        keys = len(self.signer.pubkeys())
        status = "UP" if keys else "DOWN"
        body = {
            "status": status,
            "checks": [{"id": "keys-check", "status": status}],
            "outcome": status,
        }
        return web.json_response(body, status=200 if keys else 503)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"code": status, "message": message}, status=status)


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server TLS context; StartupError naming the file when it cannot be used."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as error:
        raise StartupError(
            f"cannot use --tls-cert {cert} with --tls-key {key}: {error.strerror or error}"
            if isinstance(error, OSError)
            else f"cannot use --tls-cert {cert} with --tls-key {key}: {error}"
        ) from None
    return context


async def start_signer_api(
    api: SignerApi, address: str, port: int, ssl_context: ssl.SSLContext | None = None
) -> web.AppRunner:
    """Serve ``api`` on ``address:port`` until ``await runner.cleanup()`` (OSError: cannot bind)."""
    runner = web.AppRunner(api.app(), access_log=None, **SIGNER_LIMITS.runner_options())
    await runner.setup()
    try:
        await start_limited_site(runner, address, port, SIGNER_LIMITS, ssl_context)
    except BaseException:
        await runner.cleanup()
        raise
    return runner


# ---------------------------------------------------------------------- the process


@dataclass
class SignerOptions:
    """What ``validator signer`` takes beyond ``validator run``'s start-up options."""

    address: str = DEFAULT_SIGNER_ADDRESS
    port: int = DEFAULT_SIGNER_PORT
    token_file: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: Server middlewares (the strict Web3Signer API checks of the tests).
    middlewares: Sequence[Any] = ()


class SignerService(SigningProcess):
    """One run of ``validator signer``: ``validator run``'s start-up (steps 1 to 6 of
    ``validator.service``, as ``validator.startup.Startup.start_signing``), the signer
    API, the Keymanager API, then serving until a stop."""

    def __init__(self, options: RunOptions, signer_options: SignerOptions) -> None:
        # With --network the chain is built in: no beacon node is needed.
        check_options(options, needs_beacon_node=False)
        if (signer_options.tls_cert is None) != (signer_options.tls_key is None):
            raise StartupError("give --tls-cert and --tls-key together")
        # The signer serves its keystores; it is nobody's client of another signer.
        super().__init__(replace(options, remote_signer_urls=(), use_remote_keys=False))
        self.signer_options = signer_options
        self.port: int | None = None

    @property
    def signer(self) -> Signer | None:
        return None if self.running is None else self.running.signer

    def _token(self) -> str | None:
        options = self.signer_options
        if options.token_file is None and is_loopback(options.address):
            return None
        try:
            return load_or_create_token(
                self.options.validators_dir,
                options.token_file,
                default_name=SIGNER_TOKEN_FILE,
                api=SIGNER_API,
            )
        except TokenFileError as error:
            raise StartupError(str(error)) from None

    async def run(self, stop: asyncio.Event) -> None:
        """Start as ``validator run`` does, serve until ``stop`` is set, then stop cleanly."""
        served = self.signer_options
        check_can_start(self.options)
        ssl_context = None
        if served.tls_cert is not None and served.tls_key is not None:
            ssl_context = tls_context(served.tls_cert, served.tls_key)
        token = self._token()
        async with contextlib.AsyncExitStack() as parts:
            startup = self._startup(parts, stop)
            running = self.running = await startup.start_signing()
            if running is None:
                return
            await self._serve_signer_api(running, parts, token, ssl_context)
            await startup.start_keymanager(running)
            await stop.wait()
            log.info("stopping: the signer API closes")

    async def _serve_signer_api(
        self,
        running: RunningParts,
        parts: contextlib.AsyncExitStack,
        token: str | None,
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        served = self.signer_options
        api = SignerApi(running.signer, running.chain, token=token, middlewares=served.middlewares)
        try:
            runner = await start_signer_api(api, served.address, served.port, ssl_context)
        except OSError as error:
            raise StartupError(
                f"cannot serve the signer API on {served.address}:{served.port}: "
                f"{error.strerror or error}"
            ) from None
        parts.push_async_callback(runner.cleanup)
        self.port = bound_port(runner)
        scheme = "https" if ssl_context is not None else "http"
        log.info(
            "signer API (Web3Signer eth2) listening on %s://%s:%s%s",
            scheme,
            served.address,
            self.port,
            " (bearer token required)" if token else "",
        )


__all__ = [
    "DEFAULT_SIGNER_ADDRESS",
    "DEFAULT_SIGNER_PORT",
    "SignerApi",
    "SignerOptions",
    "SignerService",
    "check_roots",
    "is_loopback",
    "start_signer_api",
]
