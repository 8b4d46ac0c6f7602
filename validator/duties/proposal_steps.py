"""The proposal steps every fork takes alike: the signer's cheap pre-check and the RANDAO
reveal before any block is asked for, the produced block read (refused when it does not
read) and its slot and proposer checked against the duty, and the block signed with its
slot remembered (also when the record refuses it as slashable: the key already signed
there)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from validator.beacon import ProposerDuty
from validator.consensus.ssz.blocks import ProducedBlock, SszInputError, UnsupportedForkError
from validator.duties.context import DutyContext, refuse
from validator.duties.metrics import DutyKind
from validator.signing.types import RefusalReason, SignedBlock, SigningRefusedError


async def randao_reveal_or_refusal(ctx: DutyContext, slot: int, pubkey: bytes) -> bytes | str:
    """The RANDAO reveal for ``slot``'s epoch, or why the proposal is refused."""
    refusal = await ctx.signer.precheck_block(pubkey, slot)
    if refusal is not None:
        return str(refusal)
    try:
        return await ctx.signer.sign_randao_reveal(pubkey, ctx.chain.epoch_at_slot(slot))
    except SigningRefusedError as error:
        return f"randao reveal: {error.refusal}"


Produced = TypeVar("Produced", bound=ProducedBlock)


def produced_or_refusal(read: Callable[[], Produced]) -> Produced | str:
    """The block ``read`` makes of the node's answer, or (counted as an ``unreadable``
    refusal) why it cannot be read."""
    try:
        return read()
    except (SszInputError, UnsupportedForkError, ValueError) as error:
        refuse(DutyKind.BLOCK, "unreadable")
        return f"the produced block cannot be read: {error}"


def slot_or_proposer_mismatch(
    produced: ProducedBlock, slot: int, duty: ProposerDuty
) -> tuple[str, str] | None:
    """(refusal label, detail) when the block is not for the duty's slot and validator."""
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


async def sign_block_remembered(
    ctx: DutyContext,
    slot: int,
    pubkey: bytes,
    produced: ProducedBlock,
    remember_signed: Callable[[int, bytes], None],
) -> SignedBlock | str:
    """The signed block, or the refusal's text."""
    try:
        signed = await ctx.signer.sign_block(pubkey, produced)
    except SigningRefusedError as error:
        if error.refusal.reason is RefusalReason.SLASHABLE:
            remember_signed(slot, pubkey)
        return str(error.refusal)
    remember_signed(slot, pubkey)
    return signed
