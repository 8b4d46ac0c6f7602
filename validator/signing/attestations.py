"""Attestations: a slot's batch checked, recorded in one write, and only then signed.

Every item is checked (the key held, source not above target, the far-future guard, a
fork this client knows), the allowed ones are judged and recorded in one
``record_attestations`` call (one durable write), and only the recorded ones are signed,
with one ``sign_many`` per distinct AttestationData. A slot's keys mostly attest to one
AttestationData, so each distinct one is judged and its signing root computed once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from remerkleable.core import View

from slashing_protection import SlashingProtectionError, SlashingProtectionRecord
from slashing_protection.blocking import run_to_completion
from validator.consensus.signing_roots import attestation_signing_root
from validator.consensus.spec import ChainSpec, UnsupportedForkError
from validator.metrics import ATTESTATION_BATCH_SECONDS
from validator.signing.guards import check_attestation_epochs
from validator.signing.held_signing import HeldKeySigning
from validator.signing.refusals import (
    record_unavailable,
    refused_by_record,
    report_batch_refusals,
    unsupported_fork,
)
from validator.signing.types import (
    AttestationRequest,
    Refusal,
    SigningKind,
    SigningResult,
)
from validator.signing.web3signer import SignType, request_for


@dataclass(frozen=True)
class _JudgedData:
    """One AttestationData's checks and signing root, shared by every key attesting to it."""

    data: View
    slot: int
    source: int
    target: int
    signing_root: bytes
    refusal: Refusal | None


@dataclass(frozen=True)
class _Candidate:
    """A request that passed every check before the record."""

    index: int
    pubkey: bytes
    judged: _JudgedData


class AttestationSigning:
    """The attestation path of the signer (``Signer.sign_attestations``)."""

    def __init__(
        self,
        chain: ChainSpec,
        record: SlashingProtectionRecord,
        signing: HeldKeySigning,
        *,
        far_future_margin_epochs: int,
        clock: Callable[[], float],
    ) -> None:
        self._chain = chain
        self._record = record
        self._signing = signing
        self._margin = far_future_margin_epochs
        self._clock = clock

    async def sign(self, requests: Sequence[AttestationRequest]) -> list[SigningResult]:
        kind = SigningKind.ATTESTATION
        started = time.perf_counter()
        now = self._clock()
        results: list[SigningResult | None] = [None] * len(requests)
        judged: dict[bytes, _JudgedData] = {}
        async with self._signing.keys.hold(request.pubkey for request in requests) as hold:
            candidates: list[_Candidate] = []
            for index, request in enumerate(requests):
                data_root = bytes(request.data.hash_tree_root())
                data = judged.get(data_root)
                if data is None:
                    data = judged[data_root] = self._judge_data(request.data, now)
                refusal = (
                    data.refusal
                    if hold.holds(request.pubkey)
                    else self._signing.keys.absent(request.pubkey)
                )
                if refusal is None:
                    candidates.append(_Candidate(index, request.pubkey, data))
                else:
                    results[index] = refusal.result(request.pubkey)
            recorded = await self._record_candidates(candidates, results)
            data_of = {
                candidate.judged.signing_root: candidate.judged.data for candidate in recorded
            }
            signed = await self._signing.sign_held_batch(
                kind,
                hold,
                [(candidate.pubkey, candidate.judged.signing_root) for candidate in recorded],
                lambda root: request_for(SignType.ATTESTATION, self._chain, data_of[root], root),
            )
            for candidate, result in zip(recorded, signed, strict=True):
                results[candidate.index] = result
        final = [result for result in results if result is not None]
        assert len(final) == len(requests)
        slots = sorted({data.slot for data in judged.values()})
        report_batch_refusals(kind, final, "slot " + ", ".join(map(str, slots)))
        ATTESTATION_BATCH_SECONDS.observe(time.perf_counter() - started)
        return final

    def _judge_data(self, data: View, now: float) -> _JudgedData:
        """The checks that depend on the AttestationData alone, and its signing root."""
        slot, source, target = int(data.slot), int(data.source.epoch), int(data.target.epoch)
        refusal = check_attestation_epochs(self._chain, source, target, now, self._margin)
        signing_root = b""
        if refusal is None:
            try:
                signing_root = attestation_signing_root(self._chain, data)
            except UnsupportedForkError as error:
                refusal = unsupported_fork(error)
        return _JudgedData(data, slot, source, target, signing_root, refusal)

    async def _record_candidates(
        self, candidates: list[_Candidate], results: list[SigningResult | None]
    ) -> list[_Candidate]:
        """Record the candidates in one call; fill refusals into ``results``; the recorded."""
        if not candidates:
            return []
        items = [
            (candidate.pubkey, candidate.judged.source, candidate.judged.target)
            for candidate in candidates
        ]
        try:
            verdicts = await run_to_completion(self._record.record_attestations, items)
        except SlashingProtectionError as error:
            unavailable = record_unavailable(error)
            for candidate in candidates:
                results[candidate.index] = unavailable.result(candidate.pubkey)
            return []
        recorded = []
        for candidate, verdict in zip(candidates, verdicts, strict=True):
            refusal = refused_by_record(verdict)
            if refusal is None:
                recorded.append(candidate)
            else:
                results[candidate.index] = refusal.result(candidate.pubkey)
        return recorded
