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
from validator.duties.proposal_steps import (
    produced_or_refusal,
    randao_reveal_or_refusal,
    sign_block_remembered,
    slot_or_proposer_mismatch,
)
from validator.signing.types import SigningRefusedError

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
        randao_reveal = await randao_reveal_or_refusal(ctx, slot, pubkey)
        if isinstance(randao_reveal, str):
            return DutyResult.REFUSED, randao_reveal
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
        produced = produced_or_refusal(
            lambda: (
                parse_produced_block_v4_ssz(
                    answer.version, answer.payload_included, answer.ssz, ctx.chain.preset
                )
                if answer.ssz is not None
                else parse_produced_block_v4(
                    answer.version, answer.payload_included, answer.data, ctx.chain.preset
                )
            )
        )
        if isinstance(produced, str):
            return DutyResult.REFUSED, produced
        mismatch = _mismatch(produced, slot, duty)
        if mismatch is not None:
            refuse(BLOCK, mismatch[0])
            return DutyResult.REFUSED, mismatch[1]
        signed = await sign_block_remembered(ctx, slot, pubkey, produced, self._remember_signed)
        if isinstance(signed, str):
            return DutyResult.REFUSED, signed
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
    mismatch = slot_or_proposer_mismatch(produced, slot, duty)
    if mismatch is not None:
        return mismatch
    bid = produced.block.body.signed_execution_payload_bid.message
    if int(bid.slot) != slot:
        return "wrong_slot", f"the block's bid is for slot {bid.slot}, not {slot}"
    return None
