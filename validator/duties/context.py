"""What every duty needs (node, signer, chain, clock, duties, settings) and how it reports.

A duty ends with one outcome per validator (``DutyResult``); :func:`report`
turns them into the duty metrics and one log line per (slot, kind, result).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from validator.beacon import BeaconApiError, BeaconNodeClient, BeaconNodeError, PublishResult
from validator.consensus.spec import ChainSpec
from validator.duties.journal import JOURNAL
from validator.duties.metrics import DUTIES, DUTY_REFUSALS, PUBLISH_DELAY, DutyKind, DutyResult
from validator.duties.slot_clock import SlotClock
from validator.duties.tracker import DutyTracker
from validator.key_settings import ProposerSettings
from validator.logs import log_duty
from validator.signing.signer import Signer


@dataclass
class DutyContext:
    client: BeaconNodeClient
    signer: Signer
    chain: ChainSpec
    clock: SlotClock
    tracker: DutyTracker
    settings: ProposerSettings


@dataclass(frozen=True)
class Publication:
    """How publishing a batch went: one outcome per item, and a detail for the log."""

    results: list[DutyResult]
    detail: str

    def add_to(
        self,
        indices: Sequence[int],
        outcomes: list[tuple[int, DutyResult]],
        details: dict[DutyResult, str],
    ) -> bool:
        """Append each item's (validator index, outcome); True when any was published."""
        outcomes.extend(zip(indices, self.results, strict=True))
        if self.detail:
            if DutyResult.MISSED in self.results:
                details[DutyResult.MISSED] = self.detail
            else:
                failed = DutyResult.FAILED in self.results
                details[DutyResult.FAILED if failed else DutyResult.PUBLISHED] = self.detail
        return DutyResult.PUBLISHED in self.results


def send_deadline(clock: SlotClock, kind: DutyKind, slot: int) -> float:
    """The last moment a message of ``kind`` for ``slot`` is worth sending.

    Blocks, sync committee messages and contributions are for their slot only (nodes
    reject sync messages of another slot); attestations and aggregates are still
    included from the next slot's blocks, so they may go out until it ends. Gloas PTC
    votes are due ``PAYLOAD_ATTESTATION_DUE_BPS`` into their slot, preferences before
    their proposal slot begins.
    """
    if kind in (DutyKind.ATTESTATION, DutyKind.AGGREGATE):
        return clock.slot_start(slot + 2)
    if kind is DutyKind.PAYLOAD_ATTESTATION:
        # PAYLOAD_ATTESTATION_DUE_BPS: the proposer of the next slot aggregates them by then.
        bps = clock.chain.gloas_deadlines.payload_attestation_due_bps
        return clock.slot_start(slot) + clock.chain.ms_into_slot(bps) / 1000
    if kind is DutyKind.PROPOSER_PREFERENCES:
        return clock.slot_start(slot)  # ``slot``: the proposal's; builders bid before it
    return clock.slot_start(slot + 1)


def deadline_passed(clock: SlotClock, kind: DutyKind, slot: int) -> bool:
    return clock.now() >= send_deadline(clock, kind, slot)


def missed(clock: SlotClock, kind: DutyKind, slot: int, count: int) -> Publication:
    """``count`` messages dropped because their deadline passed (counted by ``report``)."""
    late = clock.now() - send_deadline(clock, kind, slot)
    return Publication(
        [DutyResult.MISSED] * count,
        f"its deadline passed {late:.2f} s ago; dropped, not sent late",
    )


async def publish_in_time(
    clock: SlotClock,
    kind: DutyKind,
    slot: int,
    call: Callable[[], Awaitable[PublishResult]],
    count: int,
) -> Publication:
    """Publish ``count`` items through ``call`` unless their deadline has passed."""
    if deadline_passed(clock, kind, slot):
        return missed(clock, kind, slot, count)
    return await publish(call(), count)


async def publish(call: Awaitable[PublishResult], count: int) -> Publication:
    """Await a publication of ``count`` items.

    A pool endpoint answering 400 with ``failures`` took the other items, so only
    the listed ones failed; any other error means no node took anything.
    """
    try:
        result = await call
    except BeaconApiError as error:
        if error.failures:
            failed = {failure.index for failure in error.failures}
            return Publication(
                [
                    DutyResult.FAILED if position in failed else DutyResult.PUBLISHED
                    for position in range(count)
                ],
                str(error),
            )
        return Publication([DutyResult.FAILED] * count, str(error))
    except BeaconNodeError as error:
        return Publication([DutyResult.FAILED] * count, str(error))
    detail = ""
    if result.errors:
        detail = "not taken by " + "; ".join(str(error) for error in result.errors)
    return Publication([DutyResult.PUBLISHED] * count, detail)


def refuse(kind: DutyKind, reason: str) -> None:
    """Count a message the duty loop refused before the signer saw it."""
    DUTY_REFUSALS.labels(kind.value, reason).inc()


def observe_publish_delay(kind: DutyKind, clock: SlotClock, slot: int) -> None:
    PUBLISH_DELAY.labels(kind.value).observe(max(0.0, clock.seconds_into_slot(slot)))


def report(
    slot: int,
    kind: DutyKind,
    outcomes: Iterable[tuple[int, DutyResult]],
    details: Mapping[DutyResult, str] | None = None,
    *,
    skipped_quietly: bool = True,
) -> None:
    """Count every validator's outcome and log one line per result.

    ``skipped_quietly`` logs "skipped" (not an aggregator ...) at debug level only.
    """
    by_result: dict[DutyResult, list[int]] = defaultdict(list)
    outcomes = list(outcomes)
    for index, result in outcomes:
        by_result[result].append(index)
        DUTIES.labels(kind.value, result.value).inc()
    JOURNAL.note(slot, kind, outcomes)
    for result, indices in by_result.items():
        level = {
            DutyResult.PUBLISHED: logging.INFO,
            DutyResult.SKIPPED: logging.DEBUG if skipped_quietly else logging.INFO,
            DutyResult.REFUSED: logging.WARNING,
            DutyResult.FAILED: logging.ERROR,
            DutyResult.MISSED: logging.WARNING,
        }[result]
        log_duty(
            slot,
            kind.value,
            indices,
            result.value,
            level=level,
            detail=(details or {}).get(result, ""),
        )


def outcomes_of(
    indices: Sequence[int], results: Sequence[DutyResult]
) -> list[tuple[int, DutyResult]]:
    return list(zip(indices, results, strict=True))
