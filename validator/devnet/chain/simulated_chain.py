"""The simulated chain itself: time, head, blocks, duties, finality, pools and counters together.

``DevnetChain`` owns every component and the few operations that touch
several of them (importing a block, re-orging, starting a slot, serving
attestation data). Everything runs on one asyncio event loop; CPU-heavy pure
work (signature checks, SSZ hashing of blocks) goes to worker threads and its
results are applied back on the loop, so no component needs a lock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from remerkleable.core import View

from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.encoding import to_hex
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import altair, fulu, gloas
from validator.consensus.ssz.phase0 import AttestationData
from validator.consensus.ssz.phase0 import Checkpoint as SszCheckpoint
from validator.consensus.ssz.preset import PRESETS, Preset
from validator.devnet.chain.blocktree import BlockRecord, BlockTree, Reorg
from validator.devnet.chain.duties import DutySchedule
from validator.devnet.chain.events import EventBus
from validator.devnet.chain.fault_modes import FaultHooks
from validator.devnet.chain.finality import FinalityTracker
from validator.devnet.chain.ledger import Ledger
from validator.devnet.chain.pools import (
    AttestationPool,
    PayloadAttestationPool,
    SyncMessagePool,
)
from validator.devnet.chain.registry import ValidatorLifecycle, ValidatorRegistry
from validator.devnet.chain.relay import SimulatedRelay
from validator.devnet.chain.state_directory import ChainIdentity
from validator.devnet.judge.root_cache import RootCache
from validator.devnet.judge.slasher import Slasher, SlashingFinding, SlashingKind

log = logging.getLogger("validator.devnet")

FORK = ForkName.FULU
"""The fork of every block, attestation and aggregate before the Gloas fork epoch (if any)."""
GENESIS_STATE_TAG = b"devnet-genesis-state"
ZERO_ADDRESS = bytes(20)
DEFAULT_GAS_LIMIT = 36_000_000
_KEPT_FINDINGS = 50


def genesis_block_record(genesis_validators_root: bytes, preset: Preset) -> BlockRecord:
    """The devnet's genesis block: an empty Fulu block at slot 0 (its state root is made up)."""
    state_root = sha256(GENESIS_STATE_TAG + genesis_validators_root).digest()
    block = fulu.containers(preset).BeaconBlock(
        slot=0, proposer_index=0, parent_root=bytes(32), state_root=state_root
    )
    return BlockRecord(
        slot=0,
        root=bytes(block.hash_tree_root()),
        parent_root=bytes(32),
        state_root=state_root,
        proposer_index=None,
        origin="genesis",
    )


@dataclass(frozen=True)
class OfferedBlock:
    """A block this chain built for a proposer (kept to recognise it when it comes back)."""

    slot: int
    proposer_index: int
    root: bytes
    block: View
    included_attestations: tuple[tuple[int, bytes], ...] = ()
    """(slot, AttestationData root) of the pooled attestations the block carries."""


#: Epochs back from the current one that the liveness endpoint can answer for.
LIVENESS_EPOCHS_KEPT = 16


class DevnetChain:
    def __init__(
        self,
        identity: ChainIdentity,
        registry: ValidatorRegistry,
        tree: BlockTree,
        finality: FinalityTracker,
        lifecycle: ValidatorLifecycle,
        slasher: Slasher,
        ledger: Ledger,
    ) -> None:
        self.identity = identity
        self.registry = registry
        self.preset = PRESETS[identity.preset]
        self.blocks = fulu.containers(self.preset)
        """The preset's Fulu containers: blocks, attestations, aggregates (Electra's)."""
        self.sync_containers = altair.containers(self.preset)
        self.gloas_blocks = gloas.containers(self.preset)
        """The preset's Gloas containers (progressive blocks, attestations, envelopes)."""
        fork_epochs = {ForkName.PHASE0: 0}
        if identity.gloas_fork_epoch is not None:
            fork_epochs[ForkName.GLOAS] = identity.gloas_fork_epoch
        self.config = SimulatedChainConfig(
            fork_epochs=fork_epochs,
            genesis_time=identity.genesis_time,
            genesis_validators_root=identity.genesis_validators_root,
            slot_duration_ms=identity.slot_duration_ms,
            slots_per_epoch=identity.slots_per_epoch,
            epochs_per_sync_committee_period=identity.epochs_per_sync_committee_period,
            preset=self.preset,
        )
        self.spec: ChainSpec = self.config.chain_spec()
        self.tree = tree
        self.finality = finality
        self.lifecycle = lifecycle
        self.slasher = slasher
        self.ledger = ledger
        self.events = EventBus()
        self.duties = DutySchedule(
            identity.genesis_validators_root,
            identity.validator_count,
            identity.slots_per_epoch,
            identity.epochs_per_sync_committee_period,
            lifecycle,
            tree,
            self.preset,
        )
        self.roots = RootCache(self.config)
        self.attestation_pool = AttestationPool()
        self.sync_pool = SyncMessagePool()
        self.fee_recipients: dict[int, bytes] = {}
        # Gloas (ePBS): PTC votes, signed proposer preferences, self-built envelopes.
        self.payload_attestation_pool = PayloadAttestationPool()
        self.preferences: dict[int, tuple[int, bytes, int]] = {}
        """proposal slot -> (validator, fee recipient, gas limit) of verified preferences."""
        self.envelopes_due: dict[bytes, tuple[int, int, Any]] = {}
        """block root -> (slot, proposer, envelope) of self-built blocks this chain produced."""
        self.block_arrivals: dict[bytes, float] = {}
        """Gloas block root -> when it was accepted (whether the PTC could have seen it)."""
        self.envelopes_owed: dict[int, bytes] = {}
        """slot -> the accepted self-built block whose envelope its proposer owes."""
        self.envelopes_seen: dict[bytes, float] = {}
        """block root -> when its signed envelope arrived (payload timeliness)."""
        self.registrations: dict[int, tuple[bytes, int]] = {}
        self.produced: dict[bytes, OfferedBlock] = {}
        self.aggregate_cache: dict[tuple[object, ...], tuple[int, asyncio.Future[bytes]]] = {}
        """Pool key -> (signatures aggregated, aggregate); see ``production._cached_aggregate``."""
        self.served_proposers: dict[int, set[int]] = {}
        """slot -> every validator the proposer duties have named for it."""
        self.client_blocks: dict[int, set[int]] = {}
        self.requested_block_slots: set[int] = set()
        """Slots a block was asked for (``repeated_block_requests`` counts a second ask)."""
        """slot -> proposers whose block at that slot this chain accepted."""
        self.faults: FaultHooks | None = None
        self.relay: SimulatedRelay | None = None
        """The simulated builder and relay (``--builder``); None: local blocks only."""
        self.dependent_root_labels: dict[bytes, bytes] = {}
        """A dependent root -> the root served in its place (``--fault duties-reorg``: the
        same duties announced under another dependent root, as Lodestar's dev chain does)."""
        self.findings: list[SlashingFinding] = []
        self.slots_seen = 0
        self.block_headers: dict[tuple[int, int], dict[str, Any]] = {}
        """(proposer, slot) -> the first validly signed SignedBeaconBlockHeader (JSON) seen,
        for the ``proposer_slashing`` event of a second, different block."""
        self.liveness: dict[int, set[int]] = {}
        """epoch -> validators seen attesting (by target epoch) or proposing in it, for
        ``POST /eth/v1/validator/liveness/{epoch}`` (doppelganger protection)."""

    # --- time --------------------------------------------------------------

    @property
    def seconds_per_slot(self) -> float:
        return self.identity.slot_duration_ms / 1000

    @property
    def slots_per_epoch(self) -> int:
        return self.identity.slots_per_epoch

    @property
    def clock_disparity(self) -> float:
        """How early a message for a slot may arrive (MAXIMUM_GOSSIP_CLOCK_DISPARITY, scaled)."""
        return min(0.5, self.seconds_per_slot / 8)

    def slot_at(self, now: float) -> int:
        """The wall-clock slot at ``now`` (negative before genesis)."""
        return math.floor(
            (now - self.identity.genesis_time) * 1000 / self.identity.slot_duration_ms
        )

    def current_slot(self, now: float | None = None) -> int:
        return max(0, self.slot_at(time.time() if now is None else now))

    def current_epoch(self, now: float | None = None) -> int:
        return self.current_slot(now) // self.slots_per_epoch

    def latest_allowed_slot(self, now: float | None = None) -> int:
        """The latest slot a message may be for, given the clock disparity."""
        return self.slot_at((time.time() if now is None else now) + self.clock_disparity)

    def slot_start(self, slot: int) -> float:
        return self.identity.genesis_time + slot * self.identity.slot_duration_ms / 1000

    def epoch_of(self, slot: int) -> int:
        return slot // self.slots_per_epoch

    # --- forks -----------------------------------------------------------------

    def is_gloas_slot(self, slot: int) -> bool:
        return self.spec.is_gloas_slot(slot)

    def fork_of_slot(self, slot: int) -> ForkName:
        return ForkName.GLOAS if self.is_gloas_slot(slot) else FORK

    def containers_of_slot(self, slot: int) -> Any:
        """The block and attestation containers of ``slot``'s fork."""
        return self.gloas_blocks if self.is_gloas_slot(slot) else self.blocks

    # --- head and blocks -----------------------------------------------------

    def head_event(self, epoch_transition: bool) -> dict[str, Any]:
        head = self.tree.head
        epoch = self.epoch_of(head.slot)
        return {
            "slot": str(head.slot),
            "block": to_hex(head.root),
            "state": to_hex(head.state_root),
            "epoch_transition": epoch_transition,
            "previous_duty_dependent_root": to_hex(
                self.served_dependent_root(self.tree.attester_dependent_root(epoch))
            ),
            "current_duty_dependent_root": to_hex(
                self.served_dependent_root(self.tree.proposer_dependent_root(epoch))
            ),
            "execution_optimistic": False,
        }

    def import_block(self, record: BlockRecord) -> bool:
        """Add a client block; True when it became the head (False: kept as an orphan)."""
        if record.parent_root != self.tree.head.root or record.slot <= self.tree.head.slot:
            self.tree.remember(record)
            return False
        old_head = self.tree.head
        self.tree.extend(record)
        self.events.publish(
            "block",
            {"slot": str(record.slot), "block": to_hex(record.root), "execution_optimistic": False},
        )
        self.events.publish(
            "head", self.head_event(self.epoch_of(record.slot) > self.epoch_of(old_head.slot))
        )
        return True

    def reorg(
        self, from_slot: int, *, drop_from_slot: int | None = None, salt: bytes = b""
    ) -> Reorg:
        """Switch to a fork from ``from_slot`` on and tell subscribers (fault modes only)."""
        reorg = self.tree.fork_from(from_slot, drop_from_slot=drop_from_slot, salt=salt)
        new_head = reorg.new_head
        self.events.publish(
            "chain_reorg",
            {
                "slot": str(new_head.slot),
                "depth": str(reorg.depth),
                "old_head_block": to_hex(reorg.old_head.root),
                "new_head_block": to_hex(new_head.root),
                "old_head_state": to_hex(reorg.old_head.state_root),
                "new_head_state": to_hex(new_head.state_root),
                "epoch": str(self.epoch_of(new_head.slot)),
                "execution_optimistic": False,
            },
        )
        self.events.publish("head", self.head_event(False))
        log.info(
            "re-org from slot %d: head %s -> %s (depth %d)",
            from_slot,
            reorg.old_head.root.hex()[:8],
            new_head.root.hex()[:8],
            reorg.depth,
        )
        return reorg

    def served_dependent_root(self, root: bytes) -> bytes:
        """The dependent root duties and head events name for ``root``."""
        return self.dependent_root_labels.get(root, root)

    def expected_proposer(self, slot: int) -> int | None:
        return self.duties.proposer(slot)

    def fee_recipient(self, validator_index: int) -> bytes:
        if validator_index in self.fee_recipients:
            return self.fee_recipients[validator_index]
        registered = self.registrations.get(validator_index)
        return registered[0] if registered else ZERO_ADDRESS

    def gas_limit(self, validator_index: int) -> int:
        registered = self.registrations.get(validator_index)
        return registered[1] if registered else DEFAULT_GAS_LIMIT

    def _block_in_time_for_ptc(self, root: bytes, slot: int) -> bool:
        """A block that came after PAYLOAD_DUE_BPS finds the PTC already asked (204: no
        block seen), so its seats owe no vote."""
        arrived = self.block_arrivals.get(root)
        due = self.slot_start(slot) + self.spec.ms_into_slot(
            self.spec.gloas_deadlines.payload_due_bps
        ) / 1000
        return arrived is not None and arrived <= due

    def slot_counted(self, slot: int) -> bool:
        """Whether duties of ``slot`` are judged (the ledger counts from a start slot on)."""
        start = self.ledger.count_from_slot
        return start is not None and slot >= start

    def proposal_terms(self, slot: int, proposer_index: int) -> tuple[bytes, int]:
        """(fee recipient, gas limit) of a Gloas proposal: the proposer's signed preferences
        for the slot when held, else what it prepared or registered."""
        held = self.preferences.get(slot)
        if held is not None and held[0] == proposer_index:
            return held[1], held[2]
        return self.fee_recipient(proposer_index), self.gas_limit(proposer_index)

    def payload_timely(self, block_root: bytes, slot: int) -> bool:
        """Whether the block's envelope came before PAYLOAD_DUE_BPS into its slot."""
        seen = self.envelopes_seen.get(block_root)
        due = (
            self.slot_start(slot)
            + self.spec.ms_into_slot(self.spec.gloas_deadlines.payload_due_bps) / 1000
        )
        return seen is not None and seen <= due + self.clock_disparity

    def remember_produced(self, produced: OfferedBlock) -> None:
        self.produced[produced.root] = produced
        floor = produced.slot - 2 * self.slots_per_epoch
        for root in [r for r, p in self.produced.items() if p.slot < floor]:
            del self.produced[root]

    # --- attestation data ----------------------------------------------------

    def honest_attestation_data(self, slot: int) -> AttestationData:
        """What an honest node serves for ``slot``: its head, justified source, epoch target."""
        epoch = self.epoch_of(slot)
        source = self.finality.source_for(epoch)
        return AttestationData(
            slot=slot,
            index=self.payload_status_vote(slot),
            beacon_block_root=self.tree.block_root_at_slot(slot),
            source=SszCheckpoint(epoch=source.epoch, root=source.root),
            target=SszCheckpoint(epoch=epoch, root=self.tree.epoch_boundary_root(epoch)),
        )

    def payload_status_vote(self, slot: int) -> int:
        """``data.index`` an honest node fills: 0 before Gloas and for a block of the slot
        itself; else 1 (FULL) when the voted block's payload envelope arrived, 0 (EMPTY)."""
        if not self.is_gloas_slot(slot):
            return 0
        head = self.tree.latest_at_or_before(slot)
        if head.slot == slot:
            return 0
        return 1 if head.root in self.envelopes_seen else 0

    def attestation_data(self, slot: int) -> AttestationData:
        data = self.honest_attestation_data(slot)
        if self.faults is not None:
            data = self.faults.attestation_data(slot, data)
        return data

    # --- judging -------------------------------------------------------------

    def judge_attestation(
        self, validator_index: int, source: int, target: int, data_root: bytes
    ) -> list[SlashingFinding]:
        findings = self.slasher.observe_attestation(validator_index, source, target, data_root)
        self._count_findings(findings)
        self.liveness.setdefault(target, set()).add(validator_index)
        return findings

    def judge_block(
        self,
        proposer_index: int,
        slot: int,
        root: bytes,
        signed_header: dict[str, Any] | None = None,
    ) -> list[SlashingFinding]:
        """The slasher's findings; a double proposal is announced as a ``proposer_slashing``
        event when both signed headers are known (``signed_header`` is this block's)."""
        findings = self.slasher.observe_block(proposer_index, slot, root)
        self._count_findings(findings)
        self.liveness.setdefault(self.epoch_of(slot), set()).add(proposer_index)
        if signed_header is not None:
            first = self.block_headers.setdefault((proposer_index, slot), signed_header)
            if first is not signed_header and any(
                finding.kind is SlashingKind.DOUBLE_PROPOSAL for finding in findings
            ):
                self.events.publish(
                    "proposer_slashing",
                    {"signed_header_1": first, "signed_header_2": signed_header},
                )
        return findings

    def _count_findings(self, findings: Iterable[SlashingFinding]) -> None:
        findings = list(findings)
        if not findings:
            return
        self.ledger.count("slashable_messages")
        for finding in findings:
            kind = {
                SlashingKind.DOUBLE_VOTE: "slashable_double_votes",
                SlashingKind.SURROUND_VOTE: "slashable_surround_votes",
                SlashingKind.DOUBLE_PROPOSAL: "slashable_double_proposals",
            }[finding.kind]
            self.ledger.count(kind)
            self.lifecycle.slashed.add(finding.validator_index)
            log.warning("SLASHABLE: %s", finding.description)
            if len(self.findings) < _KEPT_FINDINGS:
                self.findings.append(finding)

    # --- slots and epochs ----------------------------------------------------

    def on_slot_start(self, slot: int) -> None:
        """Everything that happens when ``slot`` begins."""
        self.slots_seen += 1
        self.ledger.judge_until(
            slot - 1,
            self.seconds_per_slot,
            lambda epoch: self.duties.attester_committees(epoch)[1],
            self._sync_members_expected,
        )
        if slot % self.slots_per_epoch == 0:
            epoch = slot // self.slots_per_epoch
            moved = self.finality.process_epoch_start(
                epoch,
                self.tree.epoch_boundary_root,
                lambda judged: len(self.duties.active_indices(judged)),
            )
            if moved:
                finalized = self.finality.finalized
                block = self.tree.get(finalized.root)
                self.events.publish(
                    "finalized_checkpoint",
                    {
                        "block": to_hex(finalized.root),
                        "state": to_hex(block.state_root if block else bytes(32)),
                        "epoch": str(finalized.epoch),
                        "execution_optimistic": False,
                    },
                )
        proposer = self.duties.proposer(slot)
        if proposer is not None:
            self.duties.pin_proposer(slot, proposer)
        keep_from = slot - 4 * self.slots_per_epoch
        self.tree.prune(keep_from)
        self.attestation_pool.prune(slot - self.slots_per_epoch - 1)
        self.sync_pool.prune(slot - 2)
        self.payload_attestation_pool.prune(slot - 2)
        previous = slot - 1
        if previous >= 0 and self.is_gloas_slot(previous) and self.slot_counted(previous):
            block = self.tree.canonical_at(previous)
            if block is not None and self._block_in_time_for_ptc(block.root, previous):
                # Every PTC member of a slot with a block owes one vote (one per validator),
                # due PAYLOAD_ATTESTATION_DUE_BPS into it: all are in when the next slot starts.
                owed = set(self.duties.ptc(previous))
                voted = {
                    voter
                    for _, voters in self.payload_attestation_pool.votes.get(previous, {}).values()
                    for voter in voters
                }
                self.ledger.count("payload_attestations_expected", len(owed))
                self.ledger.count("missed_payload_attestations", len(owed - voted))
        for owed_slot, root in list(self.envelopes_owed.items()):
            if owed_slot < slot:
                del self.envelopes_owed[owed_slot]
                if root not in self.envelopes_seen:
                    self.ledger.count("missed_envelopes")
        for old_slot in [s for s in self.preferences if s < slot - self.slots_per_epoch]:
            del self.preferences[old_slot]
        for root in [r for r, due in self.envelopes_due.items() if due[0] < keep_from]:
            del self.envelopes_due[root]
        for root in [r for r in self.envelopes_seen if r not in self.envelopes_due]:
            del self.envelopes_seen[root]
        for root in [r for r in self.block_arrivals if r not in self.envelopes_due]:
            del self.block_arrivals[root]
        self.aggregate_cache = {
            key: value
            for key, value in self.aggregate_cache.items()
            if isinstance(key[1], int) and key[1] >= slot - self.slots_per_epoch - 1
        }
        for old in [s for s in self.client_blocks if s < keep_from]:
            del self.client_blocks[old]
        self.requested_block_slots = {s for s in self.requested_block_slots if s >= keep_from}
        for old in [s for s in self.served_proposers if s < keep_from]:
            del self.served_proposers[old]
        for old_key in [key for key in self.block_headers if key[1] < keep_from]:
            del self.block_headers[old_key]
        for old in [e for e in self.liveness if e < self.epoch_of(slot) - LIVENESS_EPOCHS_KEPT]:
            del self.liveness[old]

    def _sync_members_expected(self, slot: int) -> set[int]:
        epoch = self.epoch_of(slot)
        return {
            member
            for member in self.duties.sync_committee_for_message_slot(slot)
            if self.lifecycle.is_active(member, epoch)
        }
