"""The devnet's blocks: the canonical chain, orphaned blocks, re-orgs and dependent roots.

The chain keeps block headers only (slot, root, parent, state root,
proposer): the simulation has no beacon state to transition, so a block's
``state_root`` is whatever its producer wrote. Blocks enter the canonical
chain by extending the head; a re-org (fault modes only) replaces the
canonical blocks from some slot on with *fork blocks*, blocks another
(imaginary) part of the network built, whose roots differ from every block the
client has seen.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from validator.consensus.encoding import parse_hex, to_hex


class HistoryPrunedError(LookupError):
    """The slot lies before the part of the chain the devnet still keeps."""


@dataclass(frozen=True)
class BlockRecord:
    slot: int
    root: bytes
    parent_root: bytes
    state_root: bytes
    proposer_index: int | None
    origin: str
    """"genesis", "client" (published through the API) or "fork" (made up by a re-org)."""

    def to_json(self) -> list[Any]:
        proposer = -1 if self.proposer_index is None else self.proposer_index
        return [
            self.slot,
            to_hex(self.root),
            to_hex(self.parent_root),
            to_hex(self.state_root),
            proposer,
            self.origin,
        ]

    @classmethod
    def from_json(cls, data: Sequence[Any]) -> BlockRecord:
        slot, root, parent, state, proposer, origin = data
        return cls(
            slot=int(slot),
            root=parse_hex(root, 32),
            parent_root=parse_hex(parent, 32),
            state_root=parse_hex(state, 32),
            proposer_index=None if int(proposer) < 0 else int(proposer),
            origin=str(origin),
        )


@dataclass(frozen=True)
class Reorg:
    old_head: BlockRecord
    new_head: BlockRecord
    common_ancestor: BlockRecord

    @property
    def depth(self) -> int:
        return self.old_head.slot - self.common_ancestor.slot


class BlockTree:
    def __init__(
        self,
        genesis: BlockRecord,
        slots_per_epoch: int,
        canonical: Iterable[BlockRecord] = (),
    ) -> None:
        self.genesis = genesis
        self.slots_per_epoch = slots_per_epoch
        self._canonical: list[BlockRecord] = list(canonical) or [genesis]
        self._slots: list[int] = [block.slot for block in self._canonical]
        self._known: dict[bytes, BlockRecord] = {block.root: block for block in self._canonical}
        self._known[genesis.root] = genesis
        self._fork_generation = 0

    # --- reading -----------------------------------------------------------

    @property
    def head(self) -> BlockRecord:
        return self._canonical[-1]

    def get(self, root: bytes) -> BlockRecord | None:
        return self._known.get(root)

    def ancestor_root_at_slot(self, root: bytes, slot: int) -> bytes | None:
        """get_block_root_at_slot on the chain ending in ``root`` (None when not known)."""
        block = self._known.get(root)
        while block is not None and block.slot > slot:
            if block == self.genesis:
                return block.root
            block = self._known.get(block.parent_root)
        return None if block is None else block.root

    def by_state_root(self, state_root: bytes) -> BlockRecord | None:
        for block in self._known.values():
            if block.state_root == state_root:
                return block
        return None

    def is_canonical(self, root: bytes) -> bool:
        block = self._known.get(root)
        return block is not None and self.canonical_at(block.slot) == block

    def canonical_at(self, slot: int) -> BlockRecord | None:
        """The canonical block proposed at exactly ``slot`` (None for an empty slot)."""
        position = bisect.bisect_left(self._slots, slot)
        if position < len(self._slots) and self._slots[position] == slot:
            return self._canonical[position]
        return None

    def latest_at_or_before(self, slot: int) -> BlockRecord:
        """The canonical block whose root ``get_block_root_at_slot(slot)`` returns."""
        position = bisect.bisect_right(self._slots, slot)
        if position == 0:
            raise HistoryPrunedError(f"slot {slot} is before the kept history")
        return self._canonical[position - 1]

    def block_root_at_slot(self, slot: int) -> bytes:
        return self.latest_at_or_before(slot).root

    def epoch_boundary_root(self, epoch: int) -> bytes:
        """The target root of ``epoch``: the block root at its first slot."""
        return self.block_root_at_slot(epoch * self.slots_per_epoch)

    def attester_dependent_root(self, epoch: int) -> bytes:
        """get_block_root_at_slot(start_slot(epoch - 1) - 1), genesis on underflow."""
        slot = (epoch - 1) * self.slots_per_epoch - 1
        return self.genesis.root if slot < 0 else self.block_root_at_slot(slot)

    def proposer_dependent_root(self, epoch: int) -> bytes:
        """get_block_root_at_slot(start_slot(epoch) - 1), genesis on underflow."""
        slot = epoch * self.slots_per_epoch - 1
        return self.genesis.root if slot < 0 else self.block_root_at_slot(slot)

    def canonical_blocks(self) -> list[BlockRecord]:
        return list(self._canonical)

    # --- writing -----------------------------------------------------------

    def extend(self, block: BlockRecord) -> None:
        """Append ``block`` to the canonical chain; it must build on the head."""
        if block.parent_root != self.head.root or block.slot <= self.head.slot:
            raise ValueError("a block must build on the head at a later slot")
        self._canonical.append(block)
        self._slots.append(block.slot)
        self._known[block.root] = block

    def remember(self, block: BlockRecord) -> None:
        """Know ``block`` (e.g. an orphan) without making it canonical."""
        self._known.setdefault(block.root, block)

    def preview_fork_root(self, slot: int, salt: bytes = b"") -> bytes:
        """The root ``fork_from(slot, salt=salt)`` would give the fork's block at ``slot``."""
        keep = bisect.bisect_left(self._slots, slot)
        if keep == 0:
            raise HistoryPrunedError(f"slot {slot} is before the kept history")
        parent = self._canonical[keep - 1]
        return self._fork_root(self._fork_generation + 1, slot, parent.root, salt)

    @staticmethod
    def _fork_root(generation: int, slot: int, parent_root: bytes, salt: bytes) -> bytes:
        seed = (
            b"devnet-fork"
            + generation.to_bytes(8, "little")
            + slot.to_bytes(8, "little")
            + parent_root
            + salt
        )
        return sha256(seed + b"block").digest()

    def fork_from(
        self, slot: int, *, drop_from_slot: int | None = None, salt: bytes = b""
    ) -> Reorg:
        """Re-org: replace the canonical chain from ``slot`` on with fork blocks.

        The fork has a block at ``slot`` (replacing the one there, or filling an
        empty slot) and copies of the later canonical blocks under new roots, up
        to ``drop_from_slot`` (exclusive), so ``block_root_at_slot`` changes for
        every slot from ``slot`` to the head.
        """
        if slot <= self.genesis.slot:
            raise ValueError("the genesis block cannot be re-orged")
        self._fork_generation += 1
        old_head = self.head
        keep = bisect.bisect_left(self._slots, slot)
        if keep == 0:
            raise HistoryPrunedError(f"slot {slot} is before the kept history")
        kept = self._canonical[:keep]
        replaced = self._canonical[keep:]
        common_ancestor = kept[-1]
        slots_to_copy = [slot] + [block.slot for block in replaced if block.slot > slot]
        if drop_from_slot is not None:
            slots_to_copy = [s for s in slots_to_copy if s < drop_from_slot]
        parent = common_ancestor
        fork: list[BlockRecord] = []
        for fork_slot in slots_to_copy:
            original = next((b for b in replaced if b.slot == fork_slot), None)
            root = self._fork_root(self._fork_generation, fork_slot, parent.root, salt)
            block = BlockRecord(
                slot=fork_slot,
                root=root,
                parent_root=parent.root,
                state_root=sha256(b"devnet-fork-state" + root).digest(),
                proposer_index=None if original is None else original.proposer_index,
                origin="fork",
            )
            fork.append(block)
            parent = block
        self._canonical = kept + fork
        self._slots = [block.slot for block in self._canonical]
        for block in fork:
            self._known[block.root] = block
        return Reorg(old_head=old_head, new_head=self.head, common_ancestor=common_ancestor)

    def prune(self, keep_from_slot: int) -> None:
        """Forget blocks before ``keep_from_slot``, keeping the one that still covers it."""
        position = bisect.bisect_right(self._slots, keep_from_slot) - 1
        if position <= 0:
            return
        self._canonical = self._canonical[position:]
        self._slots = self._slots[position:]
        floor = self._canonical[0].slot
        self._known = {
            root: block
            for root, block in self._known.items()
            if block.slot >= floor or block == self.genesis
        }

    # --- persistence -------------------------------------------------------

    def to_json(self) -> list[list[Any]]:
        return [block.to_json() for block in self._canonical]

    @classmethod
    def from_json(
        cls, genesis: BlockRecord, slots_per_epoch: int, data: Sequence[Any]
    ) -> BlockTree:
        blocks = [BlockRecord.from_json(item) for item in data]
        return cls(genesis, slots_per_epoch, blocks)
