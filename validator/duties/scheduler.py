"""The duty loop: one set of independent tasks per slot, driven by the clock and head events.

Each slot starts three flows, each its own task so none can delay another:

- proposal, at the slot start, when one of the keys proposes;
- attestation, at the slot's head event or one third into the slot, whichever
  comes first, then aggregation two thirds into the slot;
- sync committee, the message at the head event or one third, contributions at
  two thirds.

From Gloas on the times are the spec's basis points of the slot (attestations and sync
messages at 25%, aggregates and contributions at 50%), a fourth flow casts the payload
timeliness committee's votes (at ``PAYLOAD_DUE_BPS``, due by ``PAYLOAD_ATTESTATION_DUE_BPS``),
and each epoch's work signs proposer preferences (from one epoch before the fork) instead of
``prepare_beacon_proposer``.

Every flow has a deadline (the end of the next slot), after which it is
cancelled: a message that late is worthless, and a stuck beacon node must not
pile up tasks. Within it, each message kind has its own send deadline
(``context.send_deadline``); past that it is dropped and counted missed.
Each epoch (and when the keys change) a separate task looks up validator
indices, fetches the duties of the epoch and the next, and sends the
subscriptions and proposer preparations, and (with the builder flow) sends the
builder registrations. The head/block event stream runs alongside; when it is
down, the timers alone drive the flows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from validator.beacon import (
    AttesterDuty,
    BeaconCommitteeSubscription,
    BeaconEvent,
    BeaconNodeError,
    BlockEvent,
    ChainReorgEvent,
    EventStream,
    HeadEvent,
    ProposerPreparation,
    RawEvent,
    SyncCommitteeSubscription,
    SyncDuty,
)
from validator.consensus.forks import FAR_FUTURE_EPOCH
from validator.consensus.spec import BeforeGenesisError
from validator.duties.attester import Attester, SlotAttestations
from validator.duties.context import DutyContext
from validator.duties.metrics import CURRENT_SLOT, HEAD_SLOT
from validator.duties.preferences import ProposerPreferencesDuty
from validator.duties.proposer import BlockProposer
from validator.duties.ptc import PayloadTimelinessDuties
from validator.duties.registrations import BuilderRegistrations
from validator.duties.sync_committee import SyncCommitteeDuties
from validator.duties.tracker import DutyListKind, FetchReason, Refetch

log = logging.getLogger("validator.scheduler")

EVENT_TOPICS = ("head", "block", "chain_reorg")
PAYLOAD_AVAILABLE_TOPIC = "execution_payload_available"
"""Asked for only when the chain schedules Gloas (older nodes refuse unknown topics)."""

DutyT = TypeVar("DutyT", AttesterDuty, SyncDuty)


class DutyScheduler:
    """Runs the duty loop for ``context`` until ``run``'s stop event is set."""

    def __init__(
        self,
        context: DutyContext,
        *,
        use_events: bool = True,
        on_slot: Callable[[int], None] | None = None,
        extra_topics: Sequence[str] = (),
        on_event: Callable[[BeaconEvent], None] | None = None,
        registrations: BuilderRegistrations | None = None,
    ) -> None:
        self._ctx = context
        self._registrations = registrations
        self._use_events = use_events
        self._on_slot = on_slot
        #: More topics on the same stream, each of their events handed to ``on_event``
        #: (the key gate's slashing reports).
        gloas_topics = (
            (PAYLOAD_AVAILABLE_TOPIC,)
            if context.chain.gloas_fork_epoch != FAR_FUTURE_EPOCH
            else ()
        )
        self._topics = tuple(dict.fromkeys([*EVENT_TOPICS, *gloas_topics, *extra_topics]))
        # slot -> set once the node announces the slot's payload (the PTC may vote early).
        self._payloads: dict[int, asyncio.Event] = {}
        self._on_other_event = on_event
        self.proposer = BlockProposer(context)
        self.attester = Attester(context)
        self.sync = SyncCommitteeDuties(context)
        self.ptc = PayloadTimelinessDuties(context)
        self.preferences = ProposerPreferencesDuty(context)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._heads: dict[int, asyncio.Event] = {}
        self._head_roots: dict[int, bytes] = {}
        self._stream: EventStream | None = None
        self._stream_connections = 0
        self._prepared_epochs: set[int] = set()
        self._subscribed: set[int] = set()
        self._proposing: set[tuple[int, int]] = set()
        self.head_slot: int | None = None
        context.tracker.on_refetch = self._on_refetch
        # A key added or removed at any moment (the Keymanager API) gets its duties at once,
        # not at the next slot's start: by then that slot's flows have read the old lists.
        context.signer.on_keys_changed(self._on_keys_changed)

    # -- tasks -------------------------------------------------------------------

    def _spawn(
        self, coroutine: Coroutine[Any, Any, Any], name: str, deadline: float | None = None
    ) -> asyncio.Task[Any]:
        task = asyncio.create_task(self._guarded(coroutine, name, deadline), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guarded(
        self, coroutine: Coroutine[Any, Any, Any], name: str, deadline: float | None
    ) -> None:
        try:
            if deadline is None:
                await coroutine
                return
            async with asyncio.timeout(max(0.0, self._ctx.clock.seconds_until(deadline))):
                await coroutine
        except TimeoutError:
            log.warning("%s did not finish before its deadline and was abandoned", name)
        except asyncio.CancelledError:
            raise
        except Exception:
            # A bug in one duty must not end the loop; it is loud so it gets fixed.
            log.exception("%s failed unexpectedly", name)

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    # -- events ------------------------------------------------------------------

    def _head_event(self, slot: int) -> asyncio.Event:
        event = self._heads.get(slot)
        if event is None:
            event = self._heads[slot] = asyncio.Event()
        return event

    def _on_head(self, event: HeadEvent) -> None:
        self.head_slot = event.slot
        HEAD_SLOT.set(event.slot)
        self._head_roots[event.slot] = event.block
        self._head_event(event.slot).set()
        self._ctx.tracker.on_head(event)

    async def _consume_events(self) -> None:
        """Follow head, block and chain_reorg events for as long as the loop runs.

        The stream reconnects by itself; should it end with an error anyway, a new
        one is opened a slot later (the timers drive the duties meanwhile).
        """
        chain = self._ctx.chain
        idle = max(6.0, 3 * chain.seconds_per_slot)
        while True:
            stream = self._ctx.client.events(self._topics, idle_timeout=idle)
            self._stream = stream
            self._stream_connections = 0
            try:
                async with stream:
                    async for event in stream:
                        self._on_event(event)
                return  # closed: the loop is stopping
            except (BeaconNodeError, RuntimeError) as error:
                if isinstance(error, RuntimeError) and "closed" in str(error):
                    return  # the client was closed under it
                log.warning("event stream ended (%s); opening a new one next slot", error)
            await asyncio.sleep(chain.seconds_per_slot)
            self._ctx.tracker.refetch_all(FetchReason.RECONNECT)  # events were missed

    def _on_event(self, event: BeaconEvent) -> None:
        self._check_reconnect()
        if isinstance(event, HeadEvent):
            self._on_head(event)
        elif isinstance(event, ChainReorgEvent):
            self._ctx.tracker.on_reorg(event)
        elif isinstance(event, BlockEvent):
            log.debug("block 0x%s at slot %d", event.block.hex()[:16], event.slot)
        elif isinstance(event, RawEvent) and event.topic == PAYLOAD_AVAILABLE_TOPIC:
            slot = event.data.get("slot") if isinstance(event.data, dict) else None
            if isinstance(slot, str) and slot.isdigit():
                self._payload_event(int(slot)).set()
        if self._on_other_event is not None:
            self._on_other_event(event)

    def _check_reconnect(self) -> None:
        """After the event stream reconnected, events may have been missed: refetch duties."""
        stream = self._stream
        if stream is None:
            return
        connections = stream.connections
        if connections > self._stream_connections:
            if self._stream_connections > 0:
                log.info("event stream reconnected; fetching duties again")
                self._ctx.tracker.refetch_all(FetchReason.RECONNECT)
            self._stream_connections = connections

    async def _wait_for_head(self, slot: int, until: float) -> bytes | None:
        """Wait for the slot's head event, at most until ``until``; its block root if it came."""
        event = self._head_event(slot)
        remaining = self._ctx.clock.seconds_until(until)
        if not event.is_set() and remaining > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await event.wait()
        return self._head_roots.get(slot)

    # -- the loop ----------------------------------------------------------------

    async def run(
        self,
        stop: asyncio.Event,
        *,
        last_slot: int | None = None,
        slot_count: int | None = None,
    ) -> None:
        """Perform duties slot after slot until ``stop`` is set (or ``last_slot`` is done).

        ``slot_count`` ends the run after that many slots counted from the first one this
        loop takes up, however long start-up took (a driver's ``--slots N``).
        """
        clock = self._ctx.clock
        events_task = None
        if self._use_events:
            events_task = asyncio.create_task(self._consume_events(), name="events")
        try:
            slot = await self._first_slot(stop)
            if slot is None:
                return
            if slot_count is not None:
                counted_last = slot + slot_count - 1
                last_slot = counted_last if last_slot is None else min(last_slot, counted_last)
            while not stop.is_set():
                self._start_slot(slot)
                if last_slot is not None and slot >= last_slot:
                    # Let the last slot's flows finish (aggregation runs to two thirds).
                    await self._wait_or_stop(stop, clock.slot_start(slot + 1))
                    break
                await self._wait_or_stop(stop, clock.slot_start(slot + 1))
                if stop.is_set():
                    break
                current = clock.current_slot()
                if current > slot + 1:
                    log.warning(
                        "the loop fell %d slot(s) behind the clock (suspended or overloaded); "
                        "going on from slot %d",
                        current - slot - 1,
                        current,
                    )
                slot = max(slot + 1, current)
        finally:
            if events_task is not None:
                if self._stream is not None:
                    await self._stream.close()
                events_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, BeaconNodeError):
                    await events_task

    async def _first_slot(self, stop: asyncio.Event) -> int | None:
        clock = self._ctx.clock
        try:
            return clock.current_slot()
        except BeforeGenesisError as waiting:
            log.info("waiting for genesis: %s", waiting)
        genesis = clock.slot_start(0)
        # Fetch epoch 0's duties a little ahead so the first slot is not late.
        await self._wait_or_stop(stop, genesis - min(2.0, clock.seconds_per_slot))
        if stop.is_set():
            return None
        self._spawn(self._epoch_work(0), "epoch-0")
        await self._wait_or_stop(stop, genesis)
        return None if stop.is_set() else 0

    async def _wait_or_stop(self, stop: asyncio.Event, until: float) -> None:
        remaining = self._ctx.clock.seconds_until(until)
        if remaining > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await stop.wait()

    def _start_slot(self, slot: int) -> None:
        chain = self._ctx.chain
        clock = self._ctx.clock
        CURRENT_SLOT.set(slot)
        if self._on_slot is not None:
            self._on_slot(slot)
        self._check_reconnect()
        epoch = chain.epoch_at_slot(slot)
        if epoch not in self._prepared_epochs:
            self._spawn(self._epoch_work(epoch), f"epoch-{epoch}")
        elif self._ctx.tracker.keys_changed():
            self._spawn(self._keys_changed(epoch), f"keys-changed-{slot}")
        deadline = clock.slot_start(slot + 2)
        # A block is worth nothing once its slot is over; other duties get the next slot too.
        self._spawn(self._proposal_flow(slot), f"proposal-{slot}", clock.slot_start(slot + 1))
        self._spawn(self._attestation_flow(slot), f"attestation-{slot}", deadline)
        self._spawn(self._sync_flow(slot), f"sync-{slot}", deadline)
        if chain.is_gloas_slot(slot):
            self._spawn(self._ptc_flow(slot), f"ptc-{slot}", clock.slot_start(slot + 1))
        for old in [key for key in self._heads if key < slot - 2]:
            self._heads.pop(old, None)
            self._head_roots.pop(old, None)
        self.attester.forget_before(slot - 1)

    # -- flows -------------------------------------------------------------------

    def _first_due(self, slot: int) -> float:
        """When attestations and sync messages go out: one third into the slot, or
        ``ATTESTATION_DUE_BPS_GLOAS`` (and ``SYNC_MESSAGE_DUE_BPS_GLOAS``) from Gloas on."""
        clock, chain = self._ctx.clock, self._ctx.chain
        if chain.is_gloas_slot(slot):
            deadlines = chain.gloas_deadlines
            return clock.slot_bps(
                slot, min(deadlines.attestation_due_bps, deadlines.sync_message_due_bps)
            )
        return clock.slot_fraction(slot, 1, 3)

    def _second_due(self, slot: int) -> float:
        """When aggregates and contributions go out: two thirds, or the Gloas BPS."""
        clock, chain = self._ctx.clock, self._ctx.chain
        if chain.is_gloas_slot(slot):
            deadlines = chain.gloas_deadlines
            return clock.slot_bps(
                slot, min(deadlines.aggregate_due_bps, deadlines.contribution_due_bps)
            )
        return clock.slot_fraction(slot, 2, 3)

    async def _ptc_flow(self, slot: int) -> None:
        """The keys' PTC votes for ``slot``, asked once the node has judged the payload."""
        clock = self._ctx.clock
        seats = await self._ctx.tracker.ptc_at(slot)
        if not seats:
            return
        # At PAYLOAD_DUE_BPS, or as soon as the node announces the slot's payload.
        due = clock.slot_bps(slot, self._ctx.chain.gloas_deadlines.payload_due_bps)
        remaining = clock.seconds_until(due)
        if remaining > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._payload_event(slot).wait()
        await self.ptc.attest(slot, seats)

    def _payload_event(self, slot: int) -> asyncio.Event:
        event = self._payloads.get(slot)
        if event is None:
            event = self._payloads[slot] = asyncio.Event()
            for old in [key for key in self._payloads if key < slot - 2]:
                del self._payloads[old]
        return event

    async def _proposal_flow(self, slot: int) -> None:
        duty = await self._ctx.tracker.proposer_at(slot)
        if duty is None:
            return
        attempt = (slot, duty.validator_index)
        if attempt in self._proposing:
            return  # a re-org named the same proposer again while its proposal is under way
        if self.proposer.signed_for(slot, duty.pubkey):
            # Published (or signed) already: a second block request could only be refused
            # by the record, and operators alarm on those refusals.
            log.info(
                "slot %d: validator %d already signed its block; not proposing again",
                slot,
                duty.validator_index,
            )
            return
        self._proposing.add(attempt)
        try:
            await self.proposer.propose(slot, duty)
        finally:
            self._proposing.discard(attempt)

    async def _attestation_flow(self, slot: int) -> None:
        clock = self._ctx.clock
        duties = await self._ctx.tracker.attesters_at(slot)
        if not duties:
            return
        await self._wait_for_head(slot, self._first_due(slot))
        made: SlotAttestations = await self.attester.attest(slot, duties)
        await clock.sleep_until(self._second_due(slot))
        # A re-org since may have re-shuffled the committees: aggregate only for the
        # duties that still hold, as they now are.
        still = set(await self._ctx.tracker.attesters_at(slot))
        # Local and remote keys apart: a slow remote signer holds back no local aggregator.
        await asyncio.gather(
            *(
                self.attester.aggregate(slot, group, made)
                for group in self._by_signer([duty for duty in duties if duty in still])
            )
        )

    async def _sync_flow(self, slot: int) -> None:
        clock = self._ctx.clock
        members = await self._ctx.tracker.sync_members_at(slot)
        if not members:
            return
        head_root = await self._wait_for_head(slot, self._first_due(slot))

        async def members_flow(group: list[SyncDuty]) -> None:
            root = await self.sync.send_messages(slot, group, head_root)
            await clock.sleep_until(self._second_due(slot))
            await self.sync.send_contributions(slot, group, root)

        # Local and remote keys apart: a slow remote signer holds back no local member.
        await asyncio.gather(*(members_flow(group) for group in self._by_signer(members)))

    def _by_signer(self, duties: Sequence[DutyT]) -> list[list[DutyT]]:
        """``duties`` as the local keys' and the remote keys' (empty groups left out)."""
        signer = self._ctx.signer
        local = [duty for duty in duties if not signer.is_remote(duty.pubkey)]
        remote = [duty for duty in duties if signer.is_remote(duty.pubkey)]
        return [group for group in (local, remote) if group]

    # -- per epoch ---------------------------------------------------------------

    async def _epoch_work(self, epoch: int) -> None:
        self._prepared_epochs.add(epoch)
        self._prepared_epochs = {e for e in self._prepared_epochs if e >= epoch - 1}
        if self._registrations is not None:
            # Its own task: a slow relay or a first round of many signatures holds up no duty.
            self._spawn(self._registrations.round(epoch), f"registrations-{epoch}")
        tracker = self._ctx.tracker
        if tracker.keys_changed() or tracker.unresolved or not tracker.indices:
            changed = await tracker.resolve_indices()
            if changed and tracker.held(DutyListKind.ATTESTER, epoch) is not None:
                tracker.refetch_all(FetchReason.KEYS_CHANGED, from_epoch=epoch)
        if not tracker.indices:
            return
        await tracker.prepare_epoch(epoch)
        await asyncio.gather(
            self._subscribe(epoch),
            self._subscribe(epoch + 1),
            self._subscribe_sync(epoch),
            self._prepare_proposers(epoch),
            self.preferences.announce(epoch),
        )

    def _on_keys_changed(self) -> None:
        slot = self._ctx.clock.wall_slot()
        if slot < 0 or not self._prepared_epochs:
            return  # not running yet: the first epoch's work resolves every key
        epoch = self._ctx.chain.epoch_at_slot(slot)
        self._spawn(self._keys_changed(epoch), f"keys-changed-at-{slot}")

    async def _keys_changed(self, epoch: int) -> None:
        """The current and next epoch's duties for the keys now held; nothing of the past."""
        tracker = self._ctx.tracker
        if await tracker.resolve_indices():
            log.info("keys changed: fetching duties again")
            tracker.refetch_all(FetchReason.KEYS_CHANGED, from_epoch=epoch)
            self._subscribed.discard(epoch)
            self._subscribed.discard(epoch + 1)
            await asyncio.gather(
                tracker.prepare_epoch(epoch), self._subscribe(epoch), self._subscribe(epoch + 1)
            )
            await self._prepare_proposers(epoch)
            await self.preferences.announce(epoch)

    def _on_refetch(self, refetch: Refetch) -> None:
        if refetch.kind is DutyListKind.ATTESTER:
            self._subscribed.discard(refetch.epoch)
            self._spawn(self._subscribe(refetch.epoch), f"subscribe-{refetch.epoch}")
        elif refetch.kind is DutyListKind.PROPOSER:
            # A re-org may name one of the keys as the proposer of the slot under way: propose
            # then. A list that names the same proposer for the slot changes nothing, and a
            # key never proposes a slot twice (``_proposal_flow``).
            slot = self._ctx.clock.wall_slot()
            if (
                slot >= 0
                and self._ctx.chain.epoch_at_slot(slot) == refetch.epoch
                and slot in refetch.proposers_changed
            ):
                deadline = self._ctx.clock.slot_start(slot + 1)
                self._spawn(self._proposal_flow(slot), f"proposal-{slot}-again", deadline)

    async def _subscribe(self, epoch: int) -> None:
        """Beacon committee subscriptions for ``epoch``, aggregators marked (once per list)."""
        if epoch in self._subscribed:
            return
        self._subscribed.add(epoch)
        self._subscribed = {e for e in self._subscribed if e >= epoch - 2}
        duties = await self._ctx.tracker.attesters_of_epoch(epoch)
        current = self._ctx.clock.wall_slot()
        duties = [duty for duty in duties if duty.slot >= current]
        if not duties:
            return
        by_slot: dict[int, list[Any]] = {}
        for duty in duties:
            by_slot.setdefault(duty.slot, []).append(duty)
        subscriptions = []
        for slot, slot_duties in sorted(by_slot.items()):
            aggregators = await self.attester.aggregators(slot, slot_duties)
            subscriptions += [
                BeaconCommitteeSubscription(
                    validator_index=duty.validator_index,
                    committee_index=duty.committee_index,
                    committees_at_slot=duty.committees_at_slot,
                    slot=duty.slot,
                    is_aggregator=duty.pubkey in aggregators,
                )
                for duty in slot_duties
            ]
        try:
            await self._ctx.client.subscribe_to_beacon_committees(subscriptions)
        except BeaconNodeError as error:
            self._subscribed.discard(epoch)
            log.warning("beacon committee subscriptions for epoch %d failed: %s", epoch, error)

    async def _subscribe_sync(self, epoch: int) -> None:
        chain = self._ctx.chain
        members = await self._ctx.tracker.sync_members_of_epoch(epoch)
        if not members:
            return
        period = chain.sync_committee_period(epoch)
        until_epoch = (period + 1) * chain.epochs_per_sync_committee_period
        subscriptions = [
            SyncCommitteeSubscription(
                validator_index=duty.validator_index,
                sync_committee_indices=duty.validator_sync_committee_indices,
                until_epoch=until_epoch,
            )
            for duty in members
        ]
        try:
            await self._ctx.client.subscribe_to_sync_committees(subscriptions)
        except BeaconNodeError as error:
            log.warning("sync committee subscriptions for epoch %d failed: %s", epoch, error)

    async def _prepare_proposers(self, epoch: int) -> None:
        if self._ctx.chain.is_gloas_epoch(epoch):
            return  # proposer preferences carry the fee recipient from Gloas on
        settings = self._ctx.settings
        preparations = []
        for pubkey, index in sorted(self._ctx.tracker.indices.items(), key=lambda item: item[1]):
            fee_recipient = settings.fee_recipient(pubkey)
            if fee_recipient is not None:
                preparations.append(ProposerPreparation(index, fee_recipient))
        if not preparations:
            return
        try:
            await self._ctx.client.prepare_beacon_proposer(preparations)
        except BeaconNodeError as error:
            log.warning("prepare_beacon_proposer failed: %s", error)

    # -- stopping ----------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Let running duties finish for up to ``grace`` seconds, then cancel the rest.

        Cancelling never interrupts a record write or a signature in progress
        (the signer waits for its thread), so nothing signed goes unrecorded.
        """
        tasks = list(self._tasks)
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._ctx.tracker.close()
