"""Fault modes: the devnet misbehaving on purpose, so a client's refusals can be seen.

Every mode follows a fixed schedule (epoch ``e``, slot ``i`` of the epoch,
``S`` slots per epoch, ``d`` the slot duration); docs/devnet.md describes what
a correct client must do in each. Counters of what each mode did are in
``summary()["fault_events"]``.

- ``double-vote``: in every epoch ``e >= 2``, halfway through slot ``S // 2``,
  a deep re-org replaces the block that epoch ``e``'s attester duties depend
  on, so the rest of the epoch is re-shuffled: validators that already
  attested in ``e`` get a second duty later in ``e``, and the attestation data
  served there has another head and target root for the same target epoch.
- ``surround-vote``: in every odd epoch ``e >= 3``, attestation data carries
  the genesis checkpoint (epoch 0) as its source instead of the justified one,
  so the vote would surround the validator's earlier votes (whose source is at
  least 1 by then).
- ``far-future``: in every epoch ``e >= 1``, attestation data for slot 1 of
  the epoch has a target epoch 100,000 epochs ahead; for slot 2 of the epoch
  both its slot and target are that far ahead; the first block produced in the
  epoch has a slot 100,000 epochs ahead.
- ``conflicting-block``: in every epoch ``e >= 1``, shortly (``d / 10``) after
  the chain accepts the epoch's first block (slot ``s``), a re-org replaces the
  blocks from the last slot of ``e - 1`` and drops the block at ``s``: the
  proposer duties of ``e`` get a new dependent root and again name the same
  validator for ``s``, and ``produceBlockV3`` for ``s`` now returns a different
  block.
- ``unavailable``: in every epoch ``e >= 1``, during slot 2 of the epoch every
  request is answered at once with 503 (500 where the endpoint declares no
  503) and event streams are closed; during slot 3 every request is held for
  two slot durations before that answer.
- ``reorg``: in every epoch ``e >= 1``, halfway through its last slot, a re-org
  replaces the blocks from the last slot of ``e - 1`` on: the proposer duties
  of ``e + 1`` and the attester duties of ``e + 1`` (already fetched one epoch
  ahead) change with their dependent roots. ``chain_reorg`` and ``head``
  events announce it.
- ``builder-offline``: with ``--builder``, the relay fails every bid request,
  so every block the chain produces is a local one.
- ``duties-reorg``: in every epoch ``e >= 1``, right after the chain accepts
  the epoch's first block from the client, the proposer duties of ``e`` (and
  the attester duties of ``e + 1``, which depend on the same block) are
  announced under another dependent root, with the same proposers and
  committees, and a ``head`` event carries it: the client fetches the duties
  again and must not propose the slot it just published a second time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from hashlib import sha256

from validator.consensus.ssz.phase0 import AttestationData, Checkpoint
from validator.devnet.chain.fault_modes import Availability, Fault
from validator.devnet.chain.finality import GENESIS_CHECKPOINT
from validator.devnet.chain.simulated_chain import DevnetChain

__all__ = ["Availability", "Fault", "FaultInjector"]

log = logging.getLogger("validator.devnet")

FAR_FUTURE_EPOCHS = 100_000
_TRAP_ATTEMPTS = 64
"""How far ahead the ``far-future`` mode puts slots and target epochs."""


Scheduler = Callable[[float, Callable[[], None]], None]
"""Run the callable on the event loop at the given Unix time."""


class FaultInjector:
    """One fault mode on one chain; satisfies
    :class:`~validator.devnet.chain.fault_modes.FaultHooks`."""

    def __init__(self, fault: Fault, chain: DevnetChain, schedule: Scheduler) -> None:
        self.fault = fault
        self.chain = chain
        self.schedule = schedule
        self._conflict_epochs: set[int] = set()
        self._relabelled_epochs: set[int] = set()
        self._far_block_epochs: set[int] = set()

    @property
    def events(self) -> dict[str, int]:
        return dict(self.chain.ledger.fault_events)

    def _count(self, name: str, amount: int = 1) -> None:
        self.chain.ledger.fault_events[name] += amount

    # --- clock-driven faults ---------------------------------------------------

    def on_slot_start(self, slot: int) -> None:
        chain = self.chain
        spe = chain.slots_per_epoch
        epoch, index = divmod(slot, spe)
        halfway = chain.slot_start(slot) + chain.seconds_per_slot / 2
        if self.fault is Fault.REORG and epoch >= 1 and index == spe - 1:
            self.schedule(halfway, lambda: self._reorg_action(epoch * spe - 1))
        elif self.fault is Fault.DOUBLE_VOTE and epoch >= 2 and index == spe // 2:
            self.schedule(halfway, lambda: self._reshuffle_attesters(epoch))
        elif self.fault is Fault.UNAVAILABLE and epoch >= 1 and index == self._refuse_index:
            chain.events.disconnect_all()
            self._count("event_streams_closed")

    def _reorg_action(self, slot: int) -> None:
        self._reorg_from(slot, "reorgs")

    def _reorg_from(
        self, slot: int, counter: str, drop_from_slot: int | None = None, salt: bytes = b""
    ) -> bool:
        if slot < 1:
            return False
        try:
            self.chain.reorg(slot, drop_from_slot=drop_from_slot, salt=salt)
        except LookupError as failure:
            log.warning("fault %s: no re-org from slot %d: %s", self.fault, slot, failure)
            return False
        self._count(counter)
        return True

    def _reshuffle_attesters(self, epoch: int) -> None:
        """Re-org the block epoch ``epoch``'s attester duties depend on, choosing among a few
        possible fork blocks one whose shuffle gives validators that already attested in
        ``epoch`` a second duty later in it (with 8 or more validators one nearly always does)."""
        chain = self.chain
        dependent_slot = (epoch - 1) * chain.slots_per_epoch - 1
        now_slot = chain.current_slot()
        voted = chain.ledger.attested_in(epoch)
        best: tuple[int, bytes] = (0, b"")
        try:
            for attempt in range(_TRAP_ATTEMPTS):
                salt = attempt.to_bytes(2, "little")
                root = chain.tree.preview_fork_root(dependent_slot, salt)
                committees = chain.duties.attester_committees_for(epoch, root)
                traps = sum(
                    1
                    for assignment in committees.assignments()
                    if assignment.slot > now_slot and assignment.validator_index in voted
                )
                if traps > best[0]:
                    best = (traps, salt)
                    break
        except LookupError as failure:
            log.warning("fault %s: no re-org at epoch %d: %s", self.fault, epoch, failure)
            return
        if self._reorg_from(dependent_slot, "reorgs", salt=best[1]):
            self._count("double_vote_traps", best[0])

    @property
    def _refuse_index(self) -> int:
        return min(2, self.chain.slots_per_epoch - 1)

    @property
    def _hang_index(self) -> int | None:
        index = min(3, self.chain.slots_per_epoch - 1)
        return None if index == self._refuse_index else index

    def availability(self, now: float) -> Availability:
        if self.fault is not Fault.UNAVAILABLE:
            return Availability.UP
        slot = self.chain.slot_at(now)
        epoch, index = divmod(max(slot, 0), self.chain.slots_per_epoch)
        if epoch < 1:
            return Availability.UP
        if index == self._refuse_index:
            return Availability.REFUSE
        if index == self._hang_index:
            return Availability.HANG
        return Availability.UP

    # --- request-driven faults -------------------------------------------------

    def attestation_data(self, slot: int, data: AttestationData) -> AttestationData:
        chain = self.chain
        epoch, index = divmod(slot, chain.slots_per_epoch)
        if self.fault is Fault.SURROUND_VOTE and epoch >= 3 and epoch % 2 == 1:
            if int(data.source.epoch) > GENESIS_CHECKPOINT.epoch:
                self._count("surround_offers")
                return AttestationData(
                    slot=data.slot,
                    index=data.index,
                    beacon_block_root=data.beacon_block_root,
                    source=Checkpoint(epoch=GENESIS_CHECKPOINT.epoch, root=GENESIS_CHECKPOINT.root),
                    target=data.target,
                )
        if self.fault is Fault.FAR_FUTURE and epoch >= 1 and index in (1, 2):
            self._count("far_future_offers")
            far_epoch = epoch + FAR_FUTURE_EPOCHS
            far_slot = slot + FAR_FUTURE_EPOCHS * chain.slots_per_epoch if index == 2 else slot
            return AttestationData(
                slot=far_slot,
                index=data.index,
                beacon_block_root=data.beacon_block_root,
                source=data.source,
                target=Checkpoint(epoch=far_epoch, root=data.beacon_block_root),
            )
        return data

    def block_slot(self, slot: int, proposer_index: int) -> int:
        """The slot to write into the block produced for ``slot``."""
        epoch = slot // self.chain.slots_per_epoch
        if slot in self.chain.client_blocks and proposer_index in self.chain.client_blocks[slot]:
            self._count("conflicting_block_requests")
        if self.fault is Fault.FAR_FUTURE and epoch >= 1 and epoch not in self._far_block_epochs:
            self._far_block_epochs.add(epoch)
            self._count("far_future_offers")
            return slot + FAR_FUTURE_EPOCHS * self.chain.slots_per_epoch
        return slot

    def relay_online(self) -> bool:
        if self.fault is Fault.BUILDER_OFFLINE:
            self._count("relay_failures")
            return False
        return True

    def _relabel_duties(self, epoch: int) -> None:
        """Announce epoch ``epoch``'s proposer duties under another dependent root."""
        chain = self.chain
        if epoch in self._relabelled_epochs:
            return
        self._relabelled_epochs.add(epoch)
        root = chain.tree.proposer_dependent_root(epoch)
        chain.dependent_root_labels[root] = sha256(b"devnet duties-reorg" + root).digest()
        chain.events.publish("head", chain.head_event(False))
        self._count("duties_reorgs")

    def on_client_block(self, slot: int, proposer_index: int) -> None:
        chain = self.chain
        epoch = slot // chain.slots_per_epoch
        if self.fault is Fault.DUTIES_REORG and epoch >= 1:
            self._relabel_duties(epoch)
            return
        if self.fault is not Fault.CONFLICTING_BLOCK or epoch < 1 or epoch in self._conflict_epochs:
            return
        self._conflict_epochs.add(epoch)
        when = time.time() + chain.seconds_per_slot / 10

        def reannounce() -> None:
            if chain.current_slot() != slot:
                return
            chain.duties.pin_proposer(slot, proposer_index)
            if self._reorg_from(epoch * chain.slots_per_epoch - 1, "reorgs", drop_from_slot=slot):
                self._count("proposals_reannounced")

        self.schedule(when, reannounce)
