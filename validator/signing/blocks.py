"""Blocks: checked, recorded in the slashing-protection record, and only then signed.

The order is fixed: the signer holds the key (else ``unknown_key``, or ``key_removed``
for one removed while this process runs); the checks that need
no record (the far-future guard, a fork this client knows, the block built for the
chain's fork at its slot); the record judges and durably records the slot; the key is
checked again under the key lock and signs. A refusal at any step signs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from remerkleable.core import View

from slashing_protection import SlashingProtectionError, SlashingProtectionRecord
from slashing_protection.blocking import run_to_completion
from validator.consensus.forks import ForkName
from validator.consensus.signing_roots import block_signing_root
from validator.consensus.spec import ChainSpec, UnsupportedForkError
from validator.consensus.ssz.blocks import block_header
from validator.metrics import BLOCK_SIGNING_SECONDS
from validator.signing.guards import check_block_slot
from validator.signing.held_signing import HeldKeySigning
from validator.signing.keys import KeyHold
from validator.signing.refusals import (
    record_unavailable,
    refused_by_record,
    report_refusal,
    unsupported_fork,
)
from validator.signing.types import Refusal, RefusalReason, SigningKind, SigningResult
from validator.signing.web3signer import SignType, request_for


class BlockSigning:
    """The block path of the signer (``Signer.precheck_block``, ``sign_block``...)."""

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

    async def check(self, pubkey: bytes, slot: int) -> Refusal | None:
        """Would a block at ``slot`` be refused? Records nothing; a refusal is reported
        like a refused signature."""
        refusal = self._checks_before_record(pubkey, slot, None)
        if refusal is None:
            try:
                verdict = await run_to_completion(self._record.check_block, pubkey, slot)
                refusal = refused_by_record(verdict)
            except SlashingProtectionError as error:
                refusal = record_unavailable(error)
        if refusal is not None:
            report_refusal(SigningKind.BLOCK, [pubkey], refusal, f"slot {slot}")
        return refusal

    async def sign(
        self, kind: SigningKind, pubkey: bytes, block: View, fork: ForkName
    ) -> tuple[SigningResult, bytes]:
        """Check, record, sign; the result and the block's signing root."""
        started = time.perf_counter()
        slot = int(block.slot)
        what = f"slot {slot}"
        async with self._signing.keys.hold([pubkey]) as hold:
            root = b""
            refusal = self._checks_before_record(pubkey, slot, hold)
            if refusal is None:
                refusal = self._fork_check(fork, slot)
            if refusal is None:
                root = block_signing_root(self._chain, block)
                refusal = await self._record_block(pubkey, slot)
            if refusal is not None:
                report_refusal(kind, [pubkey], refusal, what)
                return refusal.result(pubkey), root
            result = await self._signing.sign_held(
                kind,
                hold,
                pubkey,
                root,
                lambda root: request_for(
                    SignType.BLOCK_V2, self._chain, block_header(block), root, version=fork
                ),
                what,
            )
        if result.signed:
            BLOCK_SIGNING_SECONDS.observe(time.perf_counter() - started)
        return result, root

    def _checks_before_record(
        self, pubkey: bytes, slot: int, hold: KeyHold | None
    ) -> Refusal | None:
        known = hold.holds(pubkey) if hold is not None else pubkey in self._signing.keys
        if not known:
            return self._signing.keys.absent(pubkey)
        refusal = check_block_slot(self._chain, slot, self._clock(), self._margin)
        if refusal is not None:
            return refusal
        try:
            self._chain.fork_at(self._chain.epoch_at_slot(slot))
        except UnsupportedForkError as error:
            return unsupported_fork(error)
        return None

    def _fork_check(self, fork: ForkName, slot: int) -> Refusal | None:
        expected = self._chain.fork_name_at(self._chain.epoch_at_slot(slot))
        if fork is not expected:
            return Refusal(
                RefusalReason.WRONG_FORK,
                f"a {fork.value} block for slot {slot}, where the chain is in {expected.value}",
            )
        return None

    async def _record_block(self, pubkey: bytes, slot: int) -> Refusal | None:
        try:
            verdict = await run_to_completion(self._record.record_block, pubkey, slot)
        except SlashingProtectionError as error:
            return record_unavailable(error)
        return refused_by_record(verdict)
