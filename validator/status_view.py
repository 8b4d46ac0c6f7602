"""What the status page shows, read from a running ``validator run`` (``StatusView``).

Each page load takes a fresh ``StatusSnapshot``: the keys with their state (from the
key gate and the halt markers), their last published attestation and block (the duty
journal), the record's watermarks; the beacon nodes and their health; the chain's fork
and finality (asked of the beacon node, briefly); and the duties of the last epochs.
Before the client has its beacon node, chain and keys, the snapshot says it is starting.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from slashing_protection.protocol import SlashingProtectionRecord
from validator.beacon import BeaconNodeClient, BeaconNodeError
from validator.consensus.spec import BeforeGenesisError, ChainSpec, UnsupportedForkError
from validator.duties.doppelganger import KeyGate, KeyState
from validator.duties.journal import JOURNAL, DutyJournal
from validator.duties.metrics import DutyKind, DutyResult
from validator.duties.scheduler import DutyScheduler
from validator.duties.tracker import DutyTracker
from validator.halts import HaltError, HaltStore, resume_command

#: Epochs of duties the page charts.
CHART_EPOCHS = 16
#: How long a page load waits for the beacon node's finality checkpoints.
FINALITY_TIMEOUT = 2.0


@dataclass
class LiveParts:
    """What the view reads of a running ``validator run``: each part None until start-up
    (``validator.startup``) or the duty loop has made it."""

    validators_dir: Path
    chain: ChainSpec | None = None
    gate: KeyGate | None = None
    record: SlashingProtectionRecord | None = None
    client: BeaconNodeClient | None = None
    scheduler: DutyScheduler | None = None
    tracker: DutyTracker | None = None


@dataclass(frozen=True)
class KeyRow:
    pubkey: str
    index: int | None
    #: signing, waiting, halted or live_elsewhere (the key gate's states).
    state: str
    remote: bool
    halt: str | None = None
    resume: str | None = None
    last_attested_epoch: int | None = None
    last_proposal_slot: int | None = None
    watermark_block_slot: int | None = None
    watermark_source: int | None = None
    watermark_target: int | None = None


@dataclass(frozen=True)
class NodeRow:
    name: str
    health: str
    last_error: str | None


@dataclass(frozen=True)
class EpochDuties:
    epoch: int
    published: int
    #: missed, failed or refused (skipped duties are not work left undone).
    undone: int


@dataclass(frozen=True)
class StatusSnapshot:
    phase: str
    taken_at: float
    genesis_validators_root: str | None = None
    fork: str | None = None
    current_epoch: int | None = None
    head_slot: int | None = None
    finalized_epoch: int | None = None
    justified_epoch: int | None = None
    finality_problem: str | None = None
    keys: list[KeyRow] = field(default_factory=list)
    nodes: list[NodeRow] = field(default_factory=list)
    epochs: list[EpochDuties] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class StatusView:
    """Snapshots of one service, on demand (``await snapshot()``)."""

    def __init__(self, service: LiveParts, journal: DutyJournal = JOURNAL) -> None:
        self._service = service
        self._journal = journal

    async def snapshot(self) -> StatusSnapshot:
        service = self._service
        now = time.time()
        client = service.client
        nodes = [
            NodeRow(node.name, node.health.value, node.last_error)
            for node in (client.nodes if client is not None else ())
        ]
        chain, gate = service.chain, service.gate
        if chain is None or gate is None or service.record is None:
            return StatusSnapshot(phase="starting", taken_at=now, nodes=nodes)
        try:
            epoch: int | None = chain.current_epoch(now)
        except BeforeGenesisError:
            epoch = None
        try:
            fork = chain.fork_name_at(max(epoch or 0, 0)).value
        except UnsupportedForkError as error:
            fork = f"unknown ({error})"
        problems: list[str] = []
        keys = await self._keys(service, problems)
        finalized = justified = None
        finality_problem = None
        if client is not None:
            try:
                checkpoints = await asyncio.wait_for(
                    client.get_finality_checkpoints(), FINALITY_TIMEOUT
                )
                finalized = checkpoints.finalized.epoch
                justified = checkpoints.current_justified.epoch
            except (BeaconNodeError, TimeoutError) as error:
                finality_problem = str(error) or "no answer in time"
        head = service.scheduler.head_slot if service.scheduler is not None else None
        return StatusSnapshot(
            phase="running",
            taken_at=now,
            genesis_validators_root="0x" + chain.genesis_validators_root.hex(),
            fork=fork,
            current_epoch=epoch,
            head_slot=head,
            finalized_epoch=finalized,
            justified_epoch=justified,
            finality_problem=finality_problem,
            keys=keys,
            nodes=nodes,
            epochs=self._epochs(chain.slots_per_epoch, epoch),
            problems=problems,
        )

    async def _keys(self, service: LiveParts, problems: list[str]) -> list[KeyRow]:
        gate, record = service.gate, service.record
        assert gate is not None and record is not None
        states = dict(gate.states)
        directory = service.validators_dir
        try:
            halts = await asyncio.to_thread(HaltStore(directory).halts)
        except HaltError as error:
            halts = {}
            problems.append(str(error))
        pubkeys = sorted(states)
        try:
            watermarks = await asyncio.to_thread(record.watermarks, pubkeys)
        except Exception as error:  # the record closed under a stopping run, a lost database
            watermarks = {}
            problems.append(f"the record's watermarks cannot be read: {error}")
        indices = dict(gate.indices)
        if service.tracker is not None:
            indices.update(service.tracker.indices)
        spe = service.chain.slots_per_epoch if service.chain is not None else 1
        rows = []
        for pubkey in pubkeys:
            state = states[pubkey]
            index = indices.get(pubkey)
            halt = halts.get(pubkey)
            stopped = state in (KeyState.HALTED, KeyState.LIVE_ELSEWHERE)
            attested = published = None
            if index is not None:
                attested = self._journal.last_published(index, DutyKind.ATTESTATION)
                published = self._journal.last_published(index, DutyKind.BLOCK)
            watermark = watermarks.get(pubkey)
            rows.append(
                KeyRow(
                    pubkey="0x" + pubkey.hex(),
                    index=index,
                    state=state.value,
                    remote=gate.signer.is_remote(pubkey),
                    halt=halt.describe() if halt is not None and stopped else None,
                    resume=resume_command(directory, pubkey) if stopped else None,
                    last_attested_epoch=None if attested is None else attested // spe,
                    last_proposal_slot=published,
                    watermark_block_slot=None if watermark is None else watermark.slot,
                    watermark_source=None if watermark is None else watermark.source,
                    watermark_target=None if watermark is None else watermark.target,
                )
            )
        # Keys that need an operator first, then the waiting ones, then by index.
        order = {"halted": 0, "live_elsewhere": 0, "waiting": 1}
        rows.sort(key=lambda row: (order.get(row.state, 2), row.index is None, row.index or 0))
        return rows

    def _epochs(self, slots_per_epoch: int, current: int | None) -> list[EpochDuties]:
        by_epoch: dict[int, Counter[DutyResult]] = {}
        for slot, counts in self._journal.outcomes_by_slot().items():
            by_epoch.setdefault(slot // slots_per_epoch, Counter()).update(counts)
        if current is None:
            return []
        undone = (DutyResult.MISSED, DutyResult.FAILED, DutyResult.REFUSED)
        return [
            EpochDuties(
                epoch,
                by_epoch.get(epoch, Counter())[DutyResult.PUBLISHED],
                sum(by_epoch.get(epoch, Counter())[result] for result in undone),
            )
            for epoch in range(max(0, current - CHART_EPOCHS + 1), current + 1)
        ]
