"""Canonical blocks, dependent roots and re-orgs."""

from __future__ import annotations

import pytest

from validator.devnet.chain.blocktree import BlockRecord, BlockTree, HistoryPrunedError

SLOTS_PER_EPOCH = 4


def record(slot: int, parent: BlockRecord) -> BlockRecord:
    return BlockRecord(slot, bytes([slot + 1]) * 32, parent.root, bytes(32), slot % 3, "client")


def chain_with(slots: list[int]) -> BlockTree:
    genesis = BlockRecord(0, b"\x01" * 32, bytes(32), bytes(32), None, "genesis")
    tree = BlockTree(genesis, SLOTS_PER_EPOCH)
    for slot in slots:
        tree.extend(record(slot, tree.head))
    return tree


def test_block_roots_at_empty_slots_repeat_the_last_block() -> None:
    tree = chain_with([1, 2, 5, 9])
    assert tree.block_root_at_slot(4) == tree.block_root_at_slot(2)
    assert tree.block_root_at_slot(8) == tree.canonical_at(5).root  # type: ignore[union-attr]
    assert tree.canonical_at(3) is None
    assert tree.epoch_boundary_root(2) == tree.canonical_at(5).root  # type: ignore[union-attr]


def test_dependent_roots_follow_the_api_definition() -> None:
    tree = chain_with([1, 2, 3, 5, 7, 9])
    genesis = tree.genesis.root
    assert tree.proposer_dependent_root(0) == genesis
    assert tree.attester_dependent_root(0) == genesis
    assert tree.attester_dependent_root(1) == genesis
    assert tree.proposer_dependent_root(1) == tree.block_root_at_slot(3)
    assert tree.attester_dependent_root(2) == tree.block_root_at_slot(3)
    assert tree.proposer_dependent_root(2) == tree.block_root_at_slot(7)


def test_extend_refuses_a_block_that_does_not_build_on_the_head() -> None:
    tree = chain_with([1, 2])
    with pytest.raises(ValueError):
        tree.extend(record(3, tree.canonical_at(1)))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        tree.extend(record(2, tree.head))


def test_fork_replaces_blocks_from_a_slot_and_can_drop_the_latest() -> None:
    tree = chain_with([1, 2, 3, 5, 6])
    old = {slot: tree.block_root_at_slot(slot) for slot in range(8)}
    reorg = tree.fork_from(3, drop_from_slot=6)
    assert reorg.common_ancestor.slot == 2
    assert reorg.depth == 4
    assert reorg.new_head.slot == 5 and reorg.new_head.origin == "fork"
    assert tree.block_root_at_slot(2) == old[2]
    for slot in (3, 4, 5):
        assert tree.block_root_at_slot(slot) != old[slot]
    assert tree.canonical_at(6) is None
    assert tree.get(old[6]) is not None and not tree.is_canonical(old[6])
    # An empty slot can be forked too: it gets a block.
    tree.fork_from(4)
    assert tree.canonical_at(4) is not None
    with pytest.raises(ValueError):
        tree.fork_from(0)


def test_prune_keeps_what_covers_the_floor_and_round_trips() -> None:
    tree = chain_with([1, 2, 5, 9, 10])
    tree.prune(7)
    assert tree.block_root_at_slot(7) == tree.canonical_at(5).root  # type: ignore[union-attr]
    with pytest.raises(HistoryPrunedError):
        tree.block_root_at_slot(3)
    restored = BlockTree.from_json(tree.genesis, SLOTS_PER_EPOCH, tree.to_json())
    assert restored.canonical_blocks() == tree.canonical_blocks()
