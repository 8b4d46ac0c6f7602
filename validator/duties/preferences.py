"""Proposer preferences (Gloas): each proposal slot ahead announces fee recipient and gas limit.

From one epoch before the Gloas fork on, each epoch's work signs a ``ProposerPreferences``
for every proposal of the keys in the current and the next epoch that has not begun, and
submits them (``POST /eth/v1/validator/proposer_preferences``). The preferences name the
proposer duties' ``dependent_root`` and are signed under the fork of the proposal's
epoch. They replace ``prepare_beacon_proposer`` and builder registrations from the fork.
A key without a fee recipient has no preferences to announce (skipped).
"""

from __future__ import annotations

from validator.beacon import BeaconNodeError, ProposerDuties
from validator.consensus.ssz import gloas, to_json
from validator.duties.context import DutyContext, publish_in_time, report
from validator.duties.metrics import DutyKind, DutyResult
from validator.duties.tracker import DutyListKind
from validator.signing.types import SigningRefusedError

KIND = DutyKind.PROPOSER_PREFERENCES

DEFAULT_TARGET_GAS_LIMIT = 60_000_000
"""The gas limit a key asks for when its settings name none (mainnet's, late 2025)."""


class ProposerPreferencesDuty:
    def __init__(self, context: DutyContext) -> None:
        self._ctx = context
        # (proposal slot, validator index, dependent root) already sent: once each.
        self._sent: set[tuple[int, int, bytes]] = set()

    def _target_gas_limit(self, pubkey: bytes) -> int:
        own = getattr(self._ctx.settings, "gas_limit", None)
        value = own(pubkey) if callable(own) else None
        return int(value) if value is not None else DEFAULT_TARGET_GAS_LIMIT

    async def announce(self, epoch: int) -> None:
        """Preferences for the keys' Gloas proposals of ``epoch`` and ``epoch + 1``."""
        ctx = self._ctx
        now_slot = ctx.clock.wall_slot()
        for proposal_epoch in (epoch, epoch + 1):
            if not ctx.chain.is_gloas_epoch(proposal_epoch):
                continue
            duties = await self._proposers(proposal_epoch, proposal_epoch > epoch)
            if duties is None:
                continue
            for duty in duties.duties:
                key = (duty.slot, duty.validator_index, duties.dependent_root)
                if (
                    duty.slot <= now_slot
                    or key in self._sent
                    or ctx.tracker.indices.get(duty.pubkey) != duty.validator_index
                ):
                    continue
                self._sent.add(key)
                await self._announce_one(duty.slot, duty.validator_index, duty.pubkey, duties)
        self._sent = {key for key in self._sent if key[0] > now_slot}

    async def _proposers(self, epoch: int, ahead: bool) -> ProposerDuties | None:
        """The epoch's proposer duties. The next epoch's are asked directly and not kept:
        they may still change with the dependent root before the epoch begins, and the
        proposal flow must then read the epoch's own fetch, not this early one."""
        if not ahead:
            held = await self._ctx.tracker.get(DutyListKind.PROPOSER, epoch)
            return held if isinstance(held, ProposerDuties) else None
        try:
            return await self._ctx.client.get_proposer_duties(epoch)
        except BeaconNodeError:
            return None

    async def _announce_one(
        self, slot: int, index: int, pubkey: bytes, duties: ProposerDuties
    ) -> None:
        ctx = self._ctx
        fee_recipient = ctx.settings.fee_recipient(pubkey)
        if fee_recipient is None:
            report(
                slot, KIND, [(index, DutyResult.SKIPPED)], {DutyResult.SKIPPED: "no fee recipient"}
            )
            return
        preferences = gloas.ProposerPreferences(
            dependent_root=duties.dependent_root,
            proposal_slot=slot,
            validator_index=index,
            fee_recipient=fee_recipient,
            target_gas_limit=self._target_gas_limit(pubkey),
        )
        try:
            signed = await ctx.signer.sign_proposer_preferences(pubkey, preferences)
        except SigningRefusedError as error:
            report(slot, KIND, [(index, DutyResult.REFUSED)], {DutyResult.REFUSED: str(error)})
            return
        # The active fork's version (Fulu's in the epoch before Gloas), not the proposal's.
        now_epoch = ctx.chain.epoch_at_slot(max(0, ctx.clock.wall_slot()))
        version = ctx.chain.fork_name_at(now_epoch).value
        publication = await publish_in_time(
            ctx.clock,
            KIND,
            slot,
            lambda: ctx.client.submit_proposer_preferences(
                [to_json(signed)], consensus_version=version
            ),
            1,
        )
        result = publication.results[0]
        report(slot, KIND, [(index, result)], {result: publication.detail})
