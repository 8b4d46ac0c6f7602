"""Signing methods: what makes one key's signatures, a local secret or a remote signer.

The signer checks, records and holds keys the same way whatever signs for them; only the
last step differs, so that step is a `SigningMethod` with two implementations:
`LocalKey` (the secret, signed with ``crypto_backend``) and `RemoteKey` (a Web3Signer-API
signer, whose answer is verified before use). A method never raises a refusal: it answers
a `SigningResult` per key, a signature or the refusal.

A batch mixes keys of both methods: `sign_jobs` hands each method its own keys in one
call (`SigningMethod.sign_batch`, a classmethod), so local keys sign in one ``sign_many``
per signing root while the remote keys' requests run at the same time.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar

import crypto_backend
from slashing_protection.blocking import run_to_completion
from validator.signing.remote import RemoteSigner, verify_batch
from validator.signing.types import KEY_REMOVED, SigningResult
from validator.signing.web3signer import SigningRequest

RemoteRequest = Callable[[bytes], SigningRequest]
"""signing root -> the Web3Signer request for it (built only when a remote key signs)."""


M_co = TypeVar("M_co", covariant=True)


@dataclass(frozen=True)
class SigningJob(Generic[M_co]):
    """One signature to make: ``pubkey`` over ``signing_root``, by the key's ``method``."""

    pubkey: bytes
    signing_root: bytes
    method: M_co


class SigningMethod(Protocol):
    """How one key's signatures are made."""

    @property
    def is_remote(self) -> bool:
        """Whether the signature is asked of another process (its duties run apart)."""
        ...

    async def sign(
        self, pubkey: bytes, signing_root: bytes, request: RemoteRequest
    ) -> SigningResult:
        """One signature over ``signing_root``, or the refusal."""
        ...

    @classmethod
    async def sign_batch(
        cls, jobs: Sequence[SigningJob[Self]], request: RemoteRequest
    ) -> list[SigningResult]:
        """One result per job, in order, for keys that all use this method."""
        ...


@dataclass(frozen=True, eq=False)
class LocalKey:
    """A decrypted secret held in this process."""

    secret: int

    def __repr__(self) -> str:
        return "LocalKey(<secret>)"  # never print a secret

    @property
    def is_remote(self) -> bool:
        return False

    async def sign(
        self, pubkey: bytes, signing_root: bytes, request: RemoteRequest
    ) -> SigningResult:
        signature = await run_to_completion(crypto_backend.sign, self.secret, signing_root)
        return SigningResult(pubkey, signature=signature)

    @classmethod
    async def sign_batch(
        cls, jobs: Sequence[SigningJob[LocalKey]], request: RemoteRequest
    ) -> list[SigningResult]:
        """One ``sign_many`` per distinct signing root (its message hashed to G2 once)."""
        groups: dict[bytes, list[int]] = defaultdict(list)
        for index, job in enumerate(jobs):
            groups[job.signing_root].append(index)
        secrets = {
            root: [jobs[index].method.secret for index in indices]
            for root, indices in groups.items()
        }
        signatures = await run_to_completion(_sign_grouped, secrets)
        results: list[SigningResult] = [KEY_REMOVED.result(job.pubkey) for job in jobs]
        for root, indices in groups.items():
            for index, signature in zip(indices, signatures[root], strict=True):
                results[index] = SigningResult(jobs[index].pubkey, signature=signature)
        return results


def _sign_grouped(groups: Mapping[bytes, Sequence[int]]) -> dict[bytes, list[bytes]]:
    # A root only one key signs (each builder registration is its key's own) goes to
    # ``sign``: ``sign_many`` would fill an 8-lane kernel's spare lanes, five times the work.
    return {
        root: [crypto_backend.sign(sks[0], root)]
        if len(sks) == 1
        else crypto_backend.sign_many(list(sks), root)
        for root, sks in groups.items()
    }


@dataclass(frozen=True, eq=False)
class RemoteKey:
    """A key that ``signer`` holds; this process asks it and verifies the answer."""

    signer: RemoteSigner

    @property
    def is_remote(self) -> bool:
        return True

    async def sign(
        self, pubkey: bytes, signing_root: bytes, request: RemoteRequest
    ) -> SigningResult:
        return await self.signer.sign(pubkey, request(signing_root))

    @classmethod
    async def sign_batch(
        cls, jobs: Sequence[SigningJob[RemoteKey]], request: RemoteRequest
    ) -> list[SigningResult]:
        """Every request at once (each signer caps its own in flight), then every answer
        checked against its key and root in one batch check."""
        bodies: dict[bytes, SigningRequest] = {}
        for job in jobs:
            if job.signing_root not in bodies:
                bodies[job.signing_root] = request(job.signing_root)
        results = list(
            await asyncio.gather(
                *(
                    job.method.signer.sign(job.pubkey, bodies[job.signing_root], verify=False)
                    for job in jobs
                )
            )
        )
        answered = {
            index: result.signature
            for index, result in enumerate(results)
            if result.signature is not None
        }
        valid = await run_to_completion(
            verify_batch,
            [
                (jobs[index].pubkey, jobs[index].signing_root, signature)
                for index, signature in answered.items()
            ],
        )
        for index, ok in zip(answered, valid, strict=True):
            signer = jobs[index].method.signer
            if ok:
                signer.accepted()
            else:
                results[index] = signer.rejected().result(jobs[index].pubkey)
        return results


async def sign_jobs(
    jobs: Sequence[SigningJob[SigningMethod]], request: RemoteRequest
) -> list[SigningResult]:
    """One result per job, in order: each method's keys signed in one batch of its own,
    the methods' batches at the same time."""
    by_method: dict[type[SigningMethod], list[int]] = defaultdict(list)
    for index, job in enumerate(jobs):
        by_method[type(job.method)].append(index)
    batches = await asyncio.gather(
        *(
            method.sign_batch([jobs[index] for index in indices], request)
            for method, indices in by_method.items()
        )
    )
    results: list[SigningResult] = [KEY_REMOVED.result(job.pubkey) for job in jobs]
    for indices, batch in zip(by_method.values(), batches, strict=True):
        for index, result in zip(indices, batch, strict=True):
            results[index] = result
    return results
