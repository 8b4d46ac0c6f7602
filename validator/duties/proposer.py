"""Block proposal: at the start of the slot, for the key the proposer duties name.

1. Ask the signer whether a block at this slot would be refused (cheap, records
   nothing), so a known-slashable proposal never costs a block production.
2. Sign the RANDAO reveal for the slot's epoch.
3. ``GET /eth/v3/validator/blocks/{slot}`` with the key's graffiti and builder
   boost factor (0 for a key whose builder flow is off); the node answers with
   a full block or, when an external builder's bid won, a blinded one.
4. Refuse a block that is not the one asked for (another slot or proposer). A
   blinded block paying another fee recipient than the key's is counted and
   logged but kept: the relay decides payments.
5. The signer records the slot durably, then signs.
6. Publish to every node, blinded (``/eth/v2/beacon/blinded_blocks``) or not as
   produced, with ``Eth-Consensus-Version``.

A key never proposes a slot twice: once its block for the slot is signed, the
duty loop does not run that proposal again (``signed_for``), whatever the
beacon node's duties say after.

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
from validator.duties.metrics import (
    BLOCKS_PROPOSED,
    BUILDER_FEE_RECIPIENT_MISMATCHES,
    DutyKind,
    DutyResult,
)
from validator.signing.types import RefusalReason, SigningRefusedError

log = logging.getLogger("validator.proposer")

KIND = DutyKind.BLOCK
#: Slots of history kept of the blocks signed (a re-org of duties reaches one epoch back).
SIGNED_MEMORY_SLOTS = 64


class BlockProposer:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context
        self._gloas = GloasProposer(context, self._remember_signed)
        self._signed: set[tuple[int, bytes]] = set()

    def signed_for(self, slot: int, pubkey: bytes) -> bool:
        """Whether this process signed ``pubkey``'s block for ``slot`` (or was refused one
        because it already had)."""
        return (slot, pubkey) in self._signed

    def _remember_signed(self, slot: int, pubkey: bytes) -> None:
        self._signed.add((slot, pubkey))
        floor = slot - SIGNED_MEMORY_SLOTS
        if len(self._signed) > 4 * SIGNED_MEMORY_SLOTS:
            self._signed = {entry for entry in self._signed if entry[0] >= floor}

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
                slot,
                randao_reveal,
                graffiti=ctx.settings.graffiti(pubkey),
                builder_boost_factor=ctx.settings.builder_boost_factor(pubkey),
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
        if produced.blinded:
            self._check_fee_recipient(produced, slot, pubkey)
        try:
            signed = await ctx.signer.sign_block(pubkey, produced)
        except SigningRefusedError as error:
            if error.refusal.reason is RefusalReason.SLASHABLE:
                self._remember_signed(slot, pubkey)
            return DutyResult.REFUSED, str(error.refusal)
        self._remember_signed(slot, pubkey)
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
            BLOCKS_PROPOSED.labels("builder" if produced.blinded else "local").inc()
            observe_publish_delay(KIND, ctx.clock, slot)
            blinded = " blinded" if produced.blinded else ""
            described = f"{produced.fork.value}{blinded} block 0x{signed.signing_root.hex()[:16]}"
            detail = f"{described}; {detail}" if detail else described
        return result, detail

    def _check_fee_recipient(self, produced: ProducedBlock, slot: int, pubkey: bytes) -> None:
        expected = self._ctx.settings.fee_recipient(pubkey)
        header = produced.block.body.execution_payload_header
        paid = bytes(header.fee_recipient)
        if expected is not None and paid != expected:
            BUILDER_FEE_RECIPIENT_MISMATCHES.inc()
            log.warning(
                "slot %d: the builder's block pays fee recipient 0x%s, not the key's 0x%s; "
                "publishing it all the same (the relay decides payments)",
                slot,
                paid.hex(),
                expected.hex(),
            )

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
