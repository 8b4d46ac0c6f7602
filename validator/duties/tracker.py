"""Who does what, when: validator indices and the attester, proposer and sync duties.

The tracker asks the beacon node for the duties of the keys the signer holds,
per epoch, one epoch ahead, and keeps them valid:

- attester duties of epoch ``e`` depend on the block at the end of epoch
  ``e - 2`` and proposer duties of ``e`` on the block at the end of ``e - 1``
  (each answer's ``dependent_root``). A head event carries both roots
  (``previous_duty_dependent_root`` for the head's epoch's attesters,
  ``current_duty_dependent_root`` for its proposers and for the next epoch's
  attesters); when one differs from the duties held, the chain re-organised
  across it and those duties are fetched again;
- after the event stream reconnects (events may have been missed) and when
  the set of keys changes, everything held is fetched again;
- keys the beacon node does not know yet (not deposited) are looked up again
  every epoch.

Concurrent requests for the same duties share one fetch; callers wait for a
refetch in progress rather than act on duties known to be stale.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from validator.beacon import (
    AttesterDuties,
    AttesterDuty,
    BeaconNodeClient,
    BeaconNodeError,
    ChainReorgEvent,
    HeadEvent,
    ProposerDuties,
    ProposerDuty,
    SyncDuties,
    SyncDuty,
)
from validator.beacon.epbs import PtcDuties, PtcDuty
from validator.consensus.spec import ChainSpec
from validator.duties.metrics import (
    DUTY_FETCH_FAILURES,
    DUTY_FETCHES,
    VALIDATORS_ACTIVE,
    VALIDATORS_PENDING,
)

log = logging.getLogger("validator.duties")


class DutyListKind(StrEnum):
    ATTESTER = "attester"
    PROPOSER = "proposer"
    SYNC = "sync"
    PTC = "ptc"


class FetchReason(StrEnum):
    EPOCH = "epoch"
    DEPENDENT_ROOT = "dependent_root"
    RECONNECT = "reconnect"
    CHAIN_REORG = "chain_reorg"
    KEYS_CHANGED = "keys_changed"


DutyList = AttesterDuties | ProposerDuties | SyncDuties | PtcDuties


@dataclass(frozen=True)
class Refetch:
    """A duty list that was fetched again and changed."""

    kind: DutyListKind
    epoch: int
    reason: FetchReason
    #: For proposer duties: the slots whose proposer changed (a list whose dependent root
    #: alone changed names none).
    proposers_changed: frozenset[int] = frozenset()


def _proposers_changed(previous: DutyList, fetched: DutyList) -> frozenset[int]:
    if not isinstance(previous, ProposerDuties) or not isinstance(fetched, ProposerDuties):
        return frozenset()
    before = {duty.slot: duty.validator_index for duty in previous.duties}
    after = {duty.slot: duty.validator_index for duty in fetched.duties}
    return frozenset(
        slot for slot in before.keys() | after.keys() if before.get(slot) != after.get(slot)
    )


class DutyTracker:
    """Validator indices and duties of the keys ``pubkeys()`` returns (the signer's keys)."""

    def __init__(
        self,
        client: BeaconNodeClient,
        chain: ChainSpec,
        pubkeys: Callable[[], Collection[bytes]],
        *,
        on_refetch: Callable[[Refetch], None] | None = None,
    ) -> None:
        self._client = client
        self._chain = chain
        self._pubkeys = pubkeys
        self.on_refetch = on_refetch
        self.indices: dict[bytes, int] = {}
        self.pubkey_of: dict[int, bytes] = {}
        self._unresolved: set[bytes] = set()
        self._known_keys: frozenset[bytes] = frozenset()
        self._resolve_lock = asyncio.Lock()
        self._lists: dict[tuple[DutyListKind, int], DutyList] = {}
        # Lists dropped as stale and being fetched again, to tell whether they changed.
        self._replaced: dict[tuple[DutyListKind, int], DutyList] = {}
        self._inflight: dict[tuple[DutyListKind, int], asyncio.Task[DutyList | None]] = {}
        self._background: set[asyncio.Task[None]] = set()

    # -- validator indices -------------------------------------------------------

    @property
    def unresolved(self) -> frozenset[bytes]:
        """Keys the beacon node did not know at the last lookup."""
        return frozenset(self._unresolved)

    def keys_changed(self) -> bool:
        """True when the signer's keys differ from those indices were last resolved for."""
        return frozenset(self._pubkeys()) != self._known_keys

    async def resolve_indices(self) -> bool:
        """Look up the index of every key without one; True when the set of indices changed.

        Removed keys are forgotten. Lookup failures are logged and leave the
        keys unresolved until the next call.
        """
        async with self._resolve_lock:
            keys = frozenset(self._pubkeys())
            changed = False
            for pubkey in set(self.indices) - keys:
                del self.pubkey_of[self.indices.pop(pubkey)]
                changed = True
            missing = [pubkey for pubkey in sorted(keys) if pubkey not in self.indices]
            self._known_keys = keys
            if missing:
                try:
                    found = await self._client.get_validators(missing)
                except BeaconNodeError as error:
                    log.warning("cannot look up validator indices: %s", error)
                    found = []
                wanted = set(missing)
                for info in found:
                    if info.pubkey in wanted:
                        self.indices[info.pubkey] = info.index
                        self.pubkey_of[info.index] = info.pubkey
                        changed = True
            self._unresolved = set(keys) - set(self.indices)
            VALIDATORS_ACTIVE.set(len(self.indices))
            VALIDATORS_PENDING.set(len(self._unresolved))
            if missing and self._unresolved:
                log.info(
                    "%d key(s) have no validator index yet (not deposited?); "
                    "looking again next epoch",
                    len(self._unresolved),
                )
            return changed

    # -- fetching ----------------------------------------------------------------

    async def _fetch(self, kind: DutyListKind, epoch: int) -> DutyList:
        indices = sorted(self.indices.values())
        if kind is DutyListKind.ATTESTER:
            return await self._client.get_attester_duties(epoch, indices)
        if kind is DutyListKind.PROPOSER:
            return await self._client.get_proposer_duties(epoch)
        if kind is DutyListKind.PTC:
            return await self._client.get_ptc_duties(epoch, indices)
        return await self._client.get_sync_duties(epoch, indices)

    async def _fetch_and_keep(
        self, kind: DutyListKind, epoch: int, reason: FetchReason
    ) -> DutyList | None:
        DUTY_FETCHES.labels(kind.value, reason.value).inc()
        try:
            fetched = await self._fetch(kind, epoch)
        except BeaconNodeError as error:
            DUTY_FETCH_FAILURES.labels(kind.value).inc()
            log.warning("cannot fetch %s duties for epoch %d: %s", kind.value, epoch, error)
            return None
        previous = self._replaced.pop((kind, epoch), None) or self._lists.get((kind, epoch))
        self._lists[(kind, epoch)] = fetched
        if previous is not None and previous != fetched and self.on_refetch is not None:
            self.on_refetch(Refetch(kind, epoch, reason, _proposers_changed(previous, fetched)))
        return fetched

    async def get(
        self, kind: DutyListKind, epoch: int, reason: FetchReason = FetchReason.EPOCH
    ) -> DutyList | None:
        """The duties of ``kind`` for ``epoch``: held, being fetched, or fetched now.

        None when they cannot be had (every beacon node failed); the next call tries again.
        """
        if kind is not DutyListKind.PROPOSER and not self.indices:
            return None  # no validator known to the chain: nothing to ask for
        key = (kind, epoch)
        inflight = self._inflight.get(key)
        if inflight is not None:
            return await asyncio.shield(inflight)
        held = self._lists.get(key)
        if held is not None:
            return held
        # Shielded: a caller giving up (its duty's deadline) must not cancel a fetch others share.
        return await asyncio.shield(self._start_fetch(kind, epoch, reason))

    def _start_fetch(
        self, kind: DutyListKind, epoch: int, reason: FetchReason
    ) -> asyncio.Task[DutyList | None]:
        key = (kind, epoch)
        task = asyncio.create_task(
            self._fetch_and_keep(kind, epoch, reason), name=f"fetch-{kind.value}-{epoch}"
        )
        self._inflight[key] = task

        def forget(done: asyncio.Task[DutyList | None]) -> None:
            if self._inflight.get(key) is done:
                del self._inflight[key]

        task.add_done_callback(forget)
        return task

    async def refetch(self, kind: DutyListKind, epoch: int, reason: FetchReason) -> None:
        """Fetch again, even if held; waits for a fetch already in progress first."""
        inflight = self._inflight.get((kind, epoch))
        if inflight is not None:
            await asyncio.shield(inflight)
        await asyncio.shield(self._start_fetch(kind, epoch, reason))

    def _refetch_in_background(self, kind: DutyListKind, epoch: int, reason: FetchReason) -> None:
        # Forget the stale list at once, so that a duty starting now waits for the new one.
        stale = self._lists.pop((kind, epoch), None)
        if stale is not None:
            self._replaced[(kind, epoch)] = stale
        if (kind, epoch) not in self._inflight:
            self._start_fetch(kind, epoch, reason)
            return
        # A fetch that started before the change may carry the old answer: fetch once more after.
        task = asyncio.create_task(self.refetch(kind, epoch, reason), name="duty-refetch")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def prepare_epoch(self, epoch: int) -> None:
        """Fetch what ``epoch`` needs and one epoch of look-ahead; drop what is past."""
        for kind, epoch_of in list(self._lists) + list(self._inflight):
            if epoch_of < epoch - 1:
                self._lists.pop((kind, epoch_of), None)
                self._replaced.pop((kind, epoch_of), None)
        await asyncio.gather(
            self.get(DutyListKind.PROPOSER, epoch),
            self.get(DutyListKind.ATTESTER, epoch),
            self.get(DutyListKind.ATTESTER, epoch + 1),
            self.get(DutyListKind.SYNC, epoch),
            self.get(DutyListKind.SYNC, epoch + 1),
            *self._ptc_lists(epoch),
        )

    def _ptc_lists(self, epoch: int) -> list[Any]:
        """PTC duties exist from Gloas on; the first Gloas epoch's are fetched in the epoch
        before, like every next epoch's."""
        return [
            self.get(DutyListKind.PTC, duty_epoch)
            for duty_epoch in (epoch, epoch + 1)
            if self._chain.is_gloas_epoch(duty_epoch)
        ]

    def refetch_all(self, reason: FetchReason, *, from_epoch: int = 0) -> None:
        """Fetch every held list (of ``from_epoch`` on) again: after an event-stream
        reconnect, a chain_reorg event or a key change."""
        for kind, epoch in list(self._lists):
            if epoch >= from_epoch:
                self._refetch_in_background(kind, epoch, reason)

    def on_reorg(self, event: ChainReorgEvent) -> None:
        """A re-org the node announces: every duty from its epoch on may have moved.

        Head events carry the dependent roots too, but a re-org that leaves the
        head without a new block (or a node that sends no head event for it)
        would otherwise go unnoticed until the next block.
        """
        log.info(
            "the beacon node re-organised at slot %d (depth %d): fetching duties again",
            event.slot,
            event.depth,
        )
        self.refetch_all(FetchReason.CHAIN_REORG, from_epoch=event.epoch)

    def on_head(self, event: HeadEvent) -> list[tuple[DutyListKind, int]]:
        """Compare the head's dependent roots with the duties held; refetch what differs."""
        epoch = self._chain.epoch_at_slot(event.slot)
        expected = [
            (DutyListKind.ATTESTER, epoch, event.previous_duty_dependent_root),
            (DutyListKind.ATTESTER, epoch + 1, event.current_duty_dependent_root),
            (DutyListKind.PROPOSER, epoch, event.current_duty_dependent_root),
            # PTC seats are drawn from the epoch's committees: the attester duties' roots.
            (DutyListKind.PTC, epoch, event.previous_duty_dependent_root),
            (DutyListKind.PTC, epoch + 1, event.current_duty_dependent_root),
        ]
        stale = []
        for kind, duty_epoch, root in expected:
            held = self._lists.get((kind, duty_epoch))
            if (
                isinstance(held, (AttesterDuties, ProposerDuties, PtcDuties))
                and held.dependent_root != root
            ):
                log.info(
                    "%s duties of epoch %d depend on 0x%s, the head now on 0x%s: fetching again",
                    kind.value,
                    duty_epoch,
                    held.dependent_root.hex()[:16],
                    root.hex()[:16],
                )
                stale.append((kind, duty_epoch))
                self._refetch_in_background(kind, duty_epoch, FetchReason.DEPENDENT_ROOT)
        return stale

    async def close(self) -> None:
        tasks = list(self._background) + list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- lookups -----------------------------------------------------------------

    def _ours(self, pubkey: bytes) -> bool:
        return pubkey in self.indices

    async def attesters_at(self, slot: int) -> list[AttesterDuty]:
        duties = await self.get(DutyListKind.ATTESTER, self._chain.epoch_at_slot(slot))
        if not isinstance(duties, AttesterDuties):
            return []
        return [duty for duty in duties.duties if duty.slot == slot and self._ours(duty.pubkey)]

    async def attesters_of_epoch(self, epoch: int) -> list[AttesterDuty]:
        duties = await self.get(DutyListKind.ATTESTER, epoch)
        if not isinstance(duties, AttesterDuties):
            return []
        return [duty for duty in duties.duties if self._ours(duty.pubkey)]

    async def proposer_at(self, slot: int) -> ProposerDuty | None:
        duties = await self.get(DutyListKind.PROPOSER, self._chain.epoch_at_slot(slot))
        if not isinstance(duties, ProposerDuties):
            return None
        for duty in duties.duties:
            if duty.slot == slot and self.indices.get(duty.pubkey) == duty.validator_index:
                return duty
        return None

    async def sync_members_at(self, slot: int) -> list[SyncDuty]:
        """Sync committee members signing at ``slot``: the committee of ``slot + 1``'s epoch,
        which verifies the message in the next block."""
        return await self.sync_members_of_epoch(self._chain.epoch_at_slot(slot + 1))

    async def sync_members_of_epoch(self, epoch: int) -> list[SyncDuty]:
        duties = await self.get(DutyListKind.SYNC, epoch)
        if not isinstance(duties, SyncDuties):
            return []
        return [duty for duty in duties.duties if self._ours(duty.pubkey)]

    async def ptc_at(self, slot: int) -> list[PtcDuty]:
        """The PTC seats the node listed for ``slot`` (the caller checks that each is one
        of the keys', under its own index), one per validator: a validator with several
        seats sends one message, as gossip keeps the first per slot and validator."""
        if not self._chain.is_gloas_slot(slot):
            return []
        duties = await self.get(DutyListKind.PTC, self._chain.epoch_at_slot(slot))
        if not isinstance(duties, PtcDuties):
            return []
        seats: dict[tuple[bytes, int], PtcDuty] = {}
        for duty in duties.duties:
            if duty.slot == slot:
                seats.setdefault((duty.pubkey, duty.validator_index), duty)
        return list(seats.values())

    def held(self, kind: DutyListKind, epoch: int) -> DutyList | None:
        return self._lists.get((kind, epoch))
