"""Remote keys: signatures asked of a remote signer over the Web3Signer eth2 API.

The signer (``validator.signing.signer``) treats a remote key like a local one up to the
last step: the same checks, and for blocks and attestations the local record judges and
durably records the message first, so a remote key is never less protected than a local
one. Only the signature itself comes from here: one ``POST /api/v1/eth2/sign/{pubkey}``
per key and message (the body of ``validator.signing.web3signer``), its answer checked
against the key and the signing root before anything uses it. A wrong or malformed
signature is a refusal, counted and logged, never published.

Per request: a timeout, and retries of attempts that did not reach the signer or that it
answered 5xx. A signer that is down makes its keys' duties fail fast (counted in
``validator_remote_signer_requests_total`` and ``validator_remote_signer_up``), while the
local keys sign on; the session keeps connections alive and caps how many requests run at
once, so a slot's duties for 1,000 remote keys are not 1,000 sequential requests nor
1,000 connections.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
from prometheus_client import Counter, Gauge, Histogram

import crypto_backend
from keymanager.pubkeys import parse_pubkey
from validator.signing.types import Refusal, RefusalReason, SigningResult
from validator.signing.web3signer import (
    PUBLIC_KEYS_PATH,
    SIGN_PATH,
    BodyError,
    SigningRequest,
    parse_signature_response,
)

log = logging.getLogger("validator.remote_signer")

REMOTE_REQUESTS = Counter(
    "validator_remote_signer_requests_total",
    "Signing requests sent to remote signers, by outcome (ok, refused, invalid_signature, "
    "unavailable, error).",
    ["outcome"],
)
REMOTE_REQUEST_SECONDS = Histogram(
    "validator_remote_signer_request_seconds",
    "Time a remote signer took to answer one signing request (all attempts), and the "
    "signature's check.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
REMOTE_SIGNER_UP = Gauge(
    "validator_remote_signer_up",
    "1 when the last request to this remote signer reached it, else 0.",
    ["url"],
)


@dataclass(frozen=True)
class RemoteSignerSettings:
    """How requests to one remote signer are made."""

    timeout: float = 2.0
    """Seconds per attempt (connect and answer)."""
    attempts: int = 2
    """Attempts per request; only those that did not reach the signer or got 5xx repeat."""
    retry_delay: float = 0.05
    max_connections: int = 64
    """Requests in flight at once (each on a kept-alive connection)."""
    token: str | None = None
    """The signer's bearer token, when it asks for one."""


class RemoteSigningError(Exception):
    """The remote signer could not be used; ``refusal`` says why. Raised only by the key
    listing and inside one request's attempts: ``sign`` answers refusals as values."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


class RemoteSigner:
    """One remote signer (its URL), shared by all its keys; ``await close()`` at the end."""

    def __init__(
        self,
        url: str,
        settings: RemoteSignerSettings | None = None,
        *,
        middlewares: Sequence[Any] = (),
    ) -> None:
        self.url = url.rstrip("/")
        self.settings = settings or RemoteSignerSettings()
        self._middlewares = tuple(middlewares)
        self._session: aiohttp.ClientSession | None = None
        REMOTE_SIGNER_UP.labels(self.url).set(1)

    def __repr__(self) -> str:
        return f"RemoteSigner({self.url!r})"

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Accept": "application/json"}
            if self.settings.token is not None:
                headers["Authorization"] = f"Bearer {self.settings.token}"
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self.settings.max_connections, keepalive_timeout=30.0
                ),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.settings.timeout),
                middlewares=self._middlewares,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def public_keys(self) -> list[bytes]:
        """``GET /api/v1/eth2/publicKeys``; RemoteSigningError when it cannot be read."""
        try:
            async with self._open().get(self.url + PUBLIC_KEYS_PATH) as response:
                body = await response.read()
                if response.status != 200:
                    raise _unavailable(f"{self.url} answered {response.status} to publicKeys")
            listed = orjson.loads(body)
            if not isinstance(listed, list):
                raise ValueError("not a JSON array")
            return [parse_pubkey(text) for text in listed]
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise _unavailable(f"{self.url} cannot be reached: {_describe(error)}") from None
        except (ValueError, orjson.JSONDecodeError) as error:
            raise _unavailable(f"{self.url} listed its keys malformed: {error}") from None

    async def sign(
        self, pubkey: bytes, request: SigningRequest, *, verify: bool = True
    ) -> SigningResult:
        """The signer's signature of ``request`` by ``pubkey``, verified against the key and
        ``request.signing_root``; otherwise the refusal (counted, not logged: the caller logs
        refusals once per batch).

        ``verify=False`` leaves the check to the caller, who must then call ``accepted`` or
        ``rejected`` for it (a batch checks all its answers at once: ``verify_batch``).
        """
        assert request.signing_root is not None
        started = time.perf_counter()
        try:
            signature = await self._ask(pubkey, request)
            if verify and not await asyncio.to_thread(
                _verifies, pubkey, request.signing_root, signature
            ):
                return self.rejected().result(pubkey)
        except RemoteSigningError as error:
            if error.refusal.reason is not RefusalReason.REMOTE_SIGNATURE_INVALID:
                REMOTE_REQUESTS.labels(_OUTCOMES[error.refusal.reason]).inc()
            return error.refusal.result(pubkey)
        finally:
            REMOTE_REQUEST_SECONDS.observe(time.perf_counter() - started)
        if verify:
            self.accepted()
        return SigningResult(pubkey, signature=signature)

    def accepted(self) -> None:
        """Count an answer whose signature verified."""
        REMOTE_REQUESTS.labels("ok").inc()

    def rejected(self) -> Refusal:
        """Count an answer whose signature does not verify; the refusal to report."""
        REMOTE_REQUESTS.labels("invalid_signature").inc()
        return Refusal(
            RefusalReason.REMOTE_SIGNATURE_INVALID,
            f"{self.url} answered a signature that does not verify for this key and signing root",
        )

    async def _ask(self, pubkey: bytes, request: SigningRequest) -> bytes:
        url = self.url + SIGN_PATH.format(identifier="0x" + pubkey.hex())
        body = orjson.dumps(request.to_json())
        problem = ""
        for attempt in range(max(1, self.settings.attempts)):
            if attempt:
                await asyncio.sleep(self.settings.retry_delay)
            try:
                async with self._open().post(
                    url, data=body, headers={"Content-Type": "application/json"}
                ) as response:
                    answer = await response.read()
                    status, content_type = response.status, response.content_type
            except (aiohttp.ClientError, TimeoutError, OSError) as error:
                problem = f"{self.url} cannot be reached: {_describe(error)}"
                REMOTE_SIGNER_UP.labels(self.url).set(0)
                continue
            REMOTE_SIGNER_UP.labels(self.url).set(1)
            if status == 200:
                try:
                    return parse_signature_response(content_type, answer)
                except BodyError:
                    raise RemoteSigningError(self.rejected()) from None
            message = _message_of(answer)
            if status >= 500:
                problem = f"{self.url} answered {status}: {message}"
                continue
            raise RemoteSigningError(
                Refusal(
                    RefusalReason.REMOTE_SIGNER_REFUSED, f"{self.url} answered {status}: {message}"
                )
            )
        raise _unavailable(problem)


_OUTCOMES = {
    RefusalReason.REMOTE_SIGNER_REFUSED: "refused",
    RefusalReason.REMOTE_SIGNATURE_INVALID: "invalid_signature",
    RefusalReason.REMOTE_SIGNER_UNAVAILABLE: "unavailable",
}


def verify_batch(items: Sequence[tuple[bytes, bytes, bytes]]) -> list[bool]:
    """Whether each (pubkey, signing root, signature) verifies: one batch check, and only
    when it fails one check per item (to find the bad ones). Blocking: run in a thread."""
    if not items:
        return []
    try:
        if crypto_backend.verify_signature_sets([([pk], root, sig) for pk, root, sig in items]):
            return [True] * len(items)
    except crypto_backend.BlsError:
        pass  # a malformed one among them: the single checks say which
    return [_verifies(pubkey, root, signature) for pubkey, root, signature in items]


def _verifies(pubkey: bytes, root: bytes, signature: bytes) -> bool:
    try:
        return crypto_backend.verify(pubkey, root, signature)
    except crypto_backend.BlsError:
        return False


def _unavailable(detail: str) -> RemoteSigningError:
    return RemoteSigningError(Refusal(RefusalReason.REMOTE_SIGNER_UNAVAILABLE, detail))


def _message_of(answer: bytes) -> str:
    try:
        parsed = orjson.loads(answer)
        if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
            return str(parsed["message"])[:300]
    except orjson.JSONDecodeError:
        pass
    return answer[:300].decode("utf-8", "replace").strip() or "(no message)"


def _describe(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "timed out"
    return str(error) or type(error).__name__
