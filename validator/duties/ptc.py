"""The payload timeliness committee (Gloas): each seat votes whether its slot's payload came.

1. The tracker lists the keys' seats (``POST /eth/v1/validator/duties/ptc/{epoch}``); a
   seat that names a key under another index, or a key this client does not hold, is
   refused and counted (``wrong_validator``).
2. At ``PAYLOAD_DUE_BPS`` into the slot (the node has judged the payload's timeliness by
   then) ask ``GET /eth/v1/validator/payload_attestation_data``; 204 means the node saw
   no block: no vote (skipped).
3. Refuse data of another fork (``wrong_version``) or slot (``wrong_slot``), or data that
   does not read (``unreadable``): never signed.
4. Sign every seat's vote at once (one signature pass per distinct data) and publish the
   ``PayloadAttestationMessage``s before ``PAYLOAD_ATTESTATION_DUE_BPS``.
"""

from __future__ import annotations

from collections.abc import Sequence

from validator.beacon import BeaconNodeError
from validator.beacon.epbs import PtcDuty
from validator.consensus.ssz import SszInputError, from_json, gloas, to_json
from validator.duties.context import DutyContext, observe_publish_delay, publish_in_time, refuse
from validator.duties.context import report as report_outcomes
from validator.duties.metrics import DutyKind, DutyResult
from validator.signing.types import PayloadAttestationRequest

KIND = DutyKind.PAYLOAD_ATTESTATION


class PayloadTimelinessDuties:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context

    def _ours(self, duty: PtcDuty) -> bool:
        return self._ctx.tracker.indices.get(duty.pubkey) == duty.validator_index

    async def attest(self, slot: int, duties: Sequence[PtcDuty]) -> None:
        """Vote for every seat of ``slot`` among ``duties``; one outcome per validator."""
        outcomes: list[tuple[int, DutyResult]] = []
        details: dict[DutyResult, str] = {}
        seats = []
        for duty in duties:
            if self._ours(duty):
                seats.append(duty)
            else:
                refuse(KIND, "wrong_validator")
                outcomes.append((duty.validator_index, DutyResult.REFUSED))
                details[DutyResult.REFUSED] = (
                    f"a PTC seat for validator {duty.validator_index} with key "
                    f"0x{duty.pubkey.hex()[:12]}, which is not one of this client's validators"
                )
        if seats:
            await self._vote(slot, seats, outcomes, details)
        report_outcomes(slot, KIND, outcomes, details)

    async def _vote(
        self,
        slot: int,
        seats: list[PtcDuty],
        outcomes: list[tuple[int, DutyResult]],
        details: dict[DutyResult, str],
    ) -> None:
        ctx = self._ctx
        indices = [duty.validator_index for duty in seats]

        def all_end(result: DutyResult, detail: str) -> None:
            outcomes.extend((index, result) for index in indices)
            details[result] = detail

        try:
            answer = await ctx.client.get_payload_attestation_data(slot)
        except BeaconNodeError as error:
            all_end(DutyResult.FAILED, f"no payload attestation data: {error}")
            return
        if answer is None:
            all_end(DutyResult.SKIPPED, "the node saw no block for the slot (204): no vote")
            return
        version, raw = answer
        expected = ctx.chain.fork_name_at(ctx.chain.epoch_at_slot(slot)).value
        if version != expected:
            refuse(KIND, "wrong_version")
            all_end(
                DutyResult.REFUSED,
                f"payload attestation data of {version!r}; slot {slot} is {expected}",
            )
            return
        try:
            data = from_json(gloas.PayloadAttestationData, raw)
        except SszInputError as error:
            refuse(KIND, "unreadable")
            all_end(DutyResult.REFUSED, f"unreadable payload attestation data: {error}")
            return
        if int(data.slot) != slot:
            refuse(KIND, "wrong_slot")
            all_end(
                DutyResult.REFUSED,
                f"asked for slot {slot}'s payload attestation data, got slot {data.slot}'s",
            )
            return
        results = await ctx.signer.sign_payload_attestations(
            [PayloadAttestationRequest(duty.pubkey, duty.validator_index, data) for duty in seats]
        )
        messages, published = [], []
        for duty, result in zip(seats, results, strict=True):
            if result.signature is None:
                outcomes.append((duty.validator_index, DutyResult.REFUSED))
                details[DutyResult.REFUSED] = str(result.refusal)
                continue
            message = gloas.PayloadAttestationMessage(
                validator_index=duty.validator_index, data=data, signature=result.signature
            )
            messages.append(to_json(message))
            published.append(duty.validator_index)
        if not messages:
            return
        publication = await publish_in_time(
            ctx.clock,
            KIND,
            slot,
            lambda: ctx.client.publish_payload_attestations(messages, consensus_version=version),
            len(messages),
        )
        if publication.add_to(published, outcomes, details):
            observe_publish_delay(KIND, ctx.clock, slot)
