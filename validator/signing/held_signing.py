"""The last step of every signature: a held key signs, by its signing method.

The caller takes a hold on the keys first (``validator.signing.keys``) and makes every
check that needs one; this asks the hold again for each key's method right before
signing (a key removed meanwhile is refused), signs, and counts what was made. Refusals
come back as values, in `SigningResult`s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from validator.consensus.spec import UnsupportedForkError
from validator.metrics import SIGNATURES
from validator.signing.keys import KeyHold, SigningKeys
from validator.signing.methods import RemoteRequest, SigningJob, SigningMethod, sign_jobs
from validator.signing.refusals import (
    report_batch_refusals,
    report_refusal,
    unsupported_fork,
)
from validator.signing.types import (
    KEY_REMOVED,
    Refusal,
    SigningKind,
    SigningResult,
)

SigningRootOf = Callable[[], bytes]
"""Computes a message's signing root (raises UnsupportedForkError for a fork not known)."""


class HeldKeySigning:
    """Signs with the keys of one ring (``keys``); the signer's last step for every kind."""

    def __init__(self, keys: SigningKeys) -> None:
        self.keys = keys

    async def sign_one(
        self,
        kind: SigningKind,
        pubkey: bytes,
        signing_root: SigningRootOf,
        request: RemoteRequest,
    ) -> SigningResult:
        """A message that needs no record, signed by one key."""
        async with self.keys.hold([pubkey]) as hold:
            refusal: Refusal | None = None
            root = b""
            if not hold.holds(pubkey):
                refusal = self.keys.absent(pubkey)
            else:
                try:
                    root = signing_root()
                except UnsupportedForkError as error:
                    refusal = unsupported_fork(error)
            if refusal is not None:
                report_refusal(kind, [pubkey], refusal)
                return refusal.result(pubkey)
            return await self.sign_held(kind, hold, pubkey, root, request)

    async def sign_held(
        self,
        kind: SigningKind,
        hold: KeyHold,
        pubkey: bytes,
        root: bytes,
        request: RemoteRequest,
        what: str = "",
    ) -> SigningResult:
        """Sign ``root`` with one held key, if it is still in the ring; a refusal is
        reported here (``what`` names the message in the log)."""
        method = (await hold.methods([pubkey])).get(pubkey)
        result = (
            KEY_REMOVED.result(pubkey)
            if method is None
            else (await method.sign(pubkey, root, request))
        )
        if result.refusal is not None:
            report_refusal(kind, [pubkey], result.refusal, what)
        else:
            SIGNATURES.labels(kind.value).inc()
        return result

    async def sign_batch(
        self, kind: SigningKind, jobs: Sequence[tuple[bytes, bytes]], request: RemoteRequest
    ) -> list[SigningResult]:
        """Sign (pubkey, signing root) jobs that need no record; one result per job, every
        refusal reported."""
        async with self.keys.hold(pubkey for pubkey, _ in jobs) as hold:
            held = [index for index, (pubkey, _) in enumerate(jobs) if hold.holds(pubkey)]
            results = [self.keys.absent(pubkey).result(pubkey) for pubkey, _ in jobs]
            signed = await self.sign_held_batch(
                kind, hold, [jobs[index] for index in held], request
            )
            for index, result in zip(held, signed, strict=True):
                results[index] = result
        report_batch_refusals(kind, results)
        return results

    async def sign_held_batch(
        self,
        kind: SigningKind,
        hold: KeyHold,
        jobs: Sequence[tuple[bytes, bytes]],
        request: RemoteRequest,
    ) -> list[SigningResult]:
        """Sign held (pubkey, root) jobs; keys removed meanwhile are refused. Refusals are
        left to the caller to report (once for its whole batch)."""
        if not jobs:
            return []
        methods = await hold.methods(pubkey for pubkey, _ in jobs)
        results = [KEY_REMOVED.result(pubkey) for pubkey, _ in jobs]
        still_held = [index for index, (pubkey, _) in enumerate(jobs) if pubkey in methods]
        to_sign: list[SigningJob[SigningMethod]] = [
            SigningJob(jobs[index][0], jobs[index][1], methods[jobs[index][0]])
            for index in still_held
        ]
        for index, result in zip(still_held, await sign_jobs(to_sign, request), strict=True):
            results[index] = result
        made = sum(1 for result in results if result.signed)
        if made:
            SIGNATURES.labels(kind.value).inc(made)
        return results
