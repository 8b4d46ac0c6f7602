"""Block proposal from Gloas on: a block that commits to a bid, and the self-built envelope.

1. The signer's cheap pre-check, then the RANDAO reveal, as before Gloas.
2. ``GET /eth/v4/validator/blocks/{slot}`` with ``include_payload=true``: the node answers
   a BeaconBlock, or BlockContents with the self-built payload's envelope.
3. Refuse a block of another fork (``wrong_version``), slot or proposer, one that does not
   read (``unreadable``) or an SSZ answer without its headers (``missing_header``).
4. The signer records the slot, signs the block; ``POST /eth/v2/beacon/blocks``.
5. A self-built block's envelope (checked: self-build, this block's root, this slot) is
   signed under DOMAIN_BEACON_BUILDER with the proposer's key and published to
   ``POST /eth/v1/beacon/execution_payload_envelopes`` with its blobs
   (``Eth-Blob-Data-Included: true``). A block on an external builder's bid has no
   envelope of ours: the builder reveals the payload.
"""

from __future__ import annotations

from collections.abc import Callable

from validator.beacon import BeaconNodeError, MalformedResponseError, ProposerDuty
from validator.consensus.forks import ForkName
from validator.consensus.ssz import to_json
from validator.consensus.ssz.blocks import SszInputError, UnsupportedForkError
from validator.consensus.ssz.gloas import BUILDER_INDEX_SELF_BUILD
from validator.consensus.ssz.gloas_blocks import (
    ProducedGloasBlock,
    parse_produced_block_v4,
    parse_produced_block_v4_ssz,
)
from validator.duties.context import (
    DutyContext,
    observe_publish_delay,
    publish_in_time,
    refuse,
    report,
)
from validator.duties.metrics import BLOCKS_PROPOSED, DutyKind, DutyResult
from validator.signing.types import RefusalReason, SigningRefusedError

BLOCK = DutyKind.BLOCK
ENVELOPE = DutyKind.EXECUTION_PAYLOAD_ENVELOPE


class GloasProposer:
    def __init__(self, context: DutyContext, remember_signed: Callable[[int, bytes], None]) -> None:
        self._ctx = context
        # The block proposer's memory of slots signed: a key never proposes a slot twice.
        self._remember_signed = remember_signed

    async def propose(self, slot: int, duty: ProposerDuty) -> tuple[DutyResult, str]:
        """The block's outcome; the envelope's is reported on its own (its own kind)."""
        ctx = self._ctx
        pubkey = duty.pubkey
        refusal = await ctx.signer.precheck_block(pubkey, slot)
        if refusal is not None:
            return DutyResult.REFUSED, str(refusal)
        try:
            randao_reveal = await ctx.signer.sign_randao_reveal(
                pubkey, ctx.chain.epoch_at_slot(slot)
            )
        except SigningRefusedError as error:
            return DutyResult.REFUSED, f"randao reveal: {error.refusal}"
        try:
            answer = await ctx.client.produce_block_v4(
                slot,
                randao_reveal,
                graffiti=ctx.settings.graffiti(pubkey),
                include_payload=True,
                builder_boost_factor=ctx.settings.builder_boost_factor(pubkey),
            )
        except MalformedResponseError as error:
            refuse(BLOCK, "missing_header" if "header" in str(error) else "unreadable")
            return DutyResult.REFUSED, f"the produced block cannot be read: {error}"
        except BeaconNodeError as error:
            return DutyResult.FAILED, f"no block produced: {error}"
        if answer.version != ForkName.GLOAS.value:
            refuse(BLOCK, "wrong_version")
            return DutyResult.REFUSED, f"produceBlockV4 answered a {answer.version!r} block"
        try:
            if answer.ssz is not None:
                produced = parse_produced_block_v4_ssz(
                    answer.version, answer.payload_included, answer.ssz, ctx.chain.preset
                )
            else:
                produced = parse_produced_block_v4(
                    answer.version, answer.payload_included, answer.data, ctx.chain.preset
                )
        except (SszInputError, UnsupportedForkError, ValueError) as error:
            refuse(BLOCK, "unreadable")
            return DutyResult.REFUSED, f"the produced block cannot be read: {error}"
        mismatch = _mismatch(produced, slot, duty)
        if mismatch is not None:
            refuse(BLOCK, mismatch[0])
            return DutyResult.REFUSED, mismatch[1]
        try:
            signed = await ctx.signer.sign_block(pubkey, produced)
        except SigningRefusedError as error:
            if error.refusal.reason is RefusalReason.SLASHABLE:
                self._remember_signed(slot, pubkey)
            return DutyResult.REFUSED, str(error.refusal)
        self._remember_signed(slot, pubkey)
        publication = await publish_in_time(
            ctx.clock,
            BLOCK,
            slot,
            lambda: ctx.client.publish_block(
                to_json(signed.signed), consensus_version=ForkName.GLOAS.value
            ),
            1,
        )
        result, detail = publication.results[0], publication.detail
        if result is DutyResult.PUBLISHED:
            BLOCKS_PROPOSED.labels("local" if produced.self_built else "builder").inc()
            observe_publish_delay(BLOCK, ctx.clock, slot)
            described = f"gloas block 0x{signed.signing_root.hex()[:16]}"
            detail = f"{described}; {detail}" if detail else described
            if produced.self_built:
                await self._reveal(slot, duty, produced)
        return result, detail

    async def _reveal(self, slot: int, duty: ProposerDuty, produced: ProducedGloasBlock) -> None:
        """Sign and publish the self-built payload's envelope; one ENVELOPE outcome."""
        ctx = self._ctx
        envelope = produced.envelope
        result, detail = DutyResult.FAILED, ""
        if envelope is None:
            detail = "the node kept the envelope of the self-built block (no include_payload)"
        elif int(envelope.builder_index) != BUILDER_INDEX_SELF_BUILD:
            refuse(ENVELOPE, "wrong_builder")
            result, detail = DutyResult.REFUSED, "the envelope is not a self-built payload's"
        elif int(envelope.payload.slot_number) != slot:
            refuse(ENVELOPE, "wrong_slot")
            result = DutyResult.REFUSED
            detail = f"the envelope's payload is for slot {envelope.payload.slot_number}"
        else:
            try:
                signed = await ctx.signer.sign_execution_payload_envelope(
                    duty.pubkey, envelope, slot
                )
            except SigningRefusedError as error:
                result, detail = DutyResult.REFUSED, str(error.refusal)
            else:
                publication = await publish_in_time(
                    ctx.clock,
                    ENVELOPE,
                    slot,
                    lambda: ctx.client.publish_execution_payload_envelope(
                        to_json(produced.envelope_contents(signed)),
                        blob_data_included=True,
                        consensus_version=ForkName.GLOAS.value,
                    ),
                    1,
                )
                result, detail = publication.results[0], publication.detail
                if result is DutyResult.PUBLISHED:
                    observe_publish_delay(ENVELOPE, ctx.clock, slot)
        report(slot, ENVELOPE, [(duty.validator_index, result)], {result: detail})


def _mismatch(
    produced: ProducedGloasBlock, slot: int, duty: ProposerDuty
) -> tuple[str, str] | None:
    block_slot = int(produced.block.slot)
    if block_slot != slot:
        return "wrong_slot", f"asked for a block at slot {slot}, got one at slot {block_slot}"
    proposer = int(produced.block.proposer_index)
    if proposer != duty.validator_index:
        return (
            "wrong_proposer",
            f"asked for validator {duty.validator_index}'s block, got proposer {proposer}'s",
        )
    bid = produced.block.body.signed_execution_payload_bid.message
    if int(bid.slot) != slot:
        return "wrong_slot", f"the block's bid is for slot {bid.slot}, not {slot}"
    return None
