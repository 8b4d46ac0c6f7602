"""Block proposal: at the start of the slot, for the key the proposer duties name.

1. Ask the signer whether a block at this slot would be refused (cheap, records
   nothing), so a known-slashable proposal never costs a block production.
2. Sign the RANDAO reveal for the slot's epoch.
3. ``GET /eth/v3/validator/blocks/{slot}`` with the key's graffiti; the node
   answers with a full or a blinded block of the slot's fork.
4. Refuse a block that is not the one asked for (another slot or proposer).
5. The signer records the slot durably, then signs.
6. Publish to every node, blinded or not as produced, with ``Eth-Consensus-Version``.

From Gloas on the proposal goes through ``validator.duties.gloas_proposal`` (produceBlockV4,
the block and its self-built envelope).
"""

from __future__ import annotations

import logging

from validator.beacon import BeaconNodeError, ProposerDuty
from validator.consensus.ssz import to_json
from validator.consensus.ssz.blocks import (
    ProducedBlock,
    SszInputError,
    UnsupportedForkError,
    parse_produced_block,
    parse_produced_block_ssz,
)
from validator.duties.context import (
    DutyContext,
    observe_publish_delay,
    publish_in_time,
    refuse,
    report,
)
from validator.duties.gloas_proposal import GloasProposer
from validator.duties.metrics import DutyKind, DutyResult
from validator.signing.types import SigningRefusedError

log = logging.getLogger("validator.proposer")

KIND = DutyKind.BLOCK


class BlockProposer:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context
        self._gloas = GloasProposer(context)

    async def propose(self, slot: int, duty: ProposerDuty) -> DutyResult:
        if self._ctx.chain.is_gloas_slot(slot):
            result, detail = await self._gloas.propose(slot, duty)
        else:
            result, detail = await self._propose(slot, duty)
        report(slot, KIND, [(duty.validator_index, result)], {result: detail})
        return result

    async def _propose(self, slot: int, duty: ProposerDuty) -> tuple[DutyResult, str]:
        ctx = self._ctx
        pubkey = duty.pubkey
        refusal = await ctx.signer.precheck_block(pubkey, slot)
        if refusal is not None:
            return DutyResult.REFUSED, str(refusal)
        epoch = ctx.chain.epoch_at_slot(slot)
        try:
            randao_reveal = await ctx.signer.sign_randao_reveal(pubkey, epoch)
        except SigningRefusedError as error:
            return DutyResult.REFUSED, f"randao reveal: {error.refusal}"
        try:
            answer = await ctx.client.produce_block(
                slot, randao_reveal, graffiti=ctx.settings.graffiti(pubkey)
            )
        except BeaconNodeError as error:
            return DutyResult.FAILED, f"no block produced: {error}"
        try:
            if answer.ssz is not None:
                produced = parse_produced_block_ssz(
                    answer.version, answer.blinded, answer.ssz, ctx.chain.preset
                )
            else:
                produced = parse_produced_block(
                    answer.version, answer.blinded, answer.data, ctx.chain.preset
                )
        except (SszInputError, UnsupportedForkError, ValueError) as error:
            refuse(KIND, "unreadable")
            return DutyResult.REFUSED, f"the produced block cannot be read: {error}"
        mismatch = self._mismatch(produced, slot, duty)
        if mismatch is not None:
            reason, detail = mismatch
            refuse(KIND, reason)
            return DutyResult.REFUSED, detail
        try:
            signed = await ctx.signer.sign_block(pubkey, produced)
        except SigningRefusedError as error:
            return DutyResult.REFUSED, str(error.refusal)
        publication = await publish_in_time(
            ctx.clock,
            KIND,
            slot,
            lambda: ctx.client.publish_block(
                to_json(signed.signed),
                consensus_version=produced.fork.value,
                blinded=produced.blinded,
            ),
            1,
        )
        result, detail = publication.results[0], publication.detail
        if result is DutyResult.PUBLISHED:
            observe_publish_delay(KIND, ctx.clock, slot)
            blinded = " blinded" if produced.blinded else ""
            described = f"{produced.fork.value}{blinded} block 0x{signed.signing_root.hex()[:16]}"
            detail = f"{described}; {detail}" if detail else described
        return result, detail

    @staticmethod
    def _mismatch(produced: ProducedBlock, slot: int, duty: ProposerDuty) -> tuple[str, str] | None:
        block_slot = int(produced.block.slot)
        if block_slot != slot:
            return "wrong_slot", f"asked for a block at slot {slot}, got one at slot {block_slot}"
        proposer = int(produced.block.proposer_index)
        if proposer != duty.validator_index:
            return (
                "wrong_proposer",
                f"asked for validator {duty.validator_index}'s block, got proposer {proposer}'s",
            )
        return None
