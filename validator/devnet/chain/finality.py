"""A simplified Casper FFG over epochs: justification and finalization from attestations.

A vote is an accepted attestation's (source, target). A vote counts for its
target epoch when its source is the checkpoint that was justified when that
epoch began (what ``attestation_data`` serves) and its target root is the
epoch's boundary block on the canonical chain when the epoch is judged.
An epoch is justified when at least two thirds of the validators active in it
cast such a vote; the judging happens as each epoch starts, for the two epochs
before it (so votes that arrive one epoch late still count). Justifying epoch
``t`` from source ``s`` finalizes ``s`` when ``t - s <= 2`` and every epoch
between them is justified (the specs' two-epoch rule). The genesis checkpoint
(epoch 0, zero root) starts out justified and finalized.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.consensus.encoding import parse_hex, to_hex

ZERO_ROOT = bytes(32)


@dataclass(frozen=True)
class Checkpoint:
    epoch: int
    root: bytes

    def to_json(self) -> dict[str, str]:
        return {"epoch": str(self.epoch), "root": to_hex(self.root)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Checkpoint:
        return cls(epoch=int(data["epoch"]), root=parse_hex(data["root"], 32))


GENESIS_CHECKPOINT = Checkpoint(0, ZERO_ROOT)


@dataclass
class FinalityTracker:
    previous_justified: Checkpoint = GENESIS_CHECKPOINT
    current_justified: Checkpoint = GENESIS_CHECKPOINT
    finalized: Checkpoint = GENESIS_CHECKPOINT
    justified_epochs: set[int] = field(default_factory=lambda: {0})
    source_for_epoch: dict[int, Checkpoint] = field(default_factory=dict)
    votes: dict[int, dict[bytes, set[int]]] = field(default_factory=dict)

    def source_for(self, target_epoch: int) -> Checkpoint:
        """The source a vote for ``target_epoch`` must carry to count."""
        return self.source_for_epoch.get(target_epoch, self.current_justified)

    def record_vote(self, validator_index: int, source: Checkpoint, target: Checkpoint) -> bool:
        """Count the vote if its source is right; True when counted."""
        if target.epoch in self.justified_epochs or source != self.source_for(target.epoch):
            return False
        self.votes.setdefault(target.epoch, {}).setdefault(target.root, set()).add(validator_index)
        return True

    def process_epoch_start(
        self,
        epoch: int,
        boundary_root: Callable[[int], bytes],
        active_count: Callable[[int], int],
    ) -> bool:
        """Judge the two epochs before ``epoch``; True when the finalized checkpoint moved."""
        finalized_before = self.finalized
        for judged in (epoch - 2, epoch - 1):
            if judged < 1 or judged in self.justified_epochs:
                continue
            root = boundary_root(judged)
            voters = self.votes.get(judged, {}).get(root, set())
            if 3 * len(voters) >= 2 * active_count(judged):
                self._justify(Checkpoint(judged, root), self.source_for(judged))
        self.source_for_epoch.setdefault(epoch, self.current_justified)
        for old in [e for e in self.votes if e < epoch - 2]:
            del self.votes[old]
        for old in [e for e in self.source_for_epoch if e < epoch - 2]:
            del self.source_for_epoch[old]
        for old in [e for e in self.justified_epochs if e < self.finalized.epoch - 2 and e != 0]:
            self.justified_epochs.discard(old)
        return self.finalized != finalized_before

    def _justify(self, target: Checkpoint, source: Checkpoint) -> None:
        self.justified_epochs.add(target.epoch)
        if target.epoch > self.current_justified.epoch:
            self.previous_justified = self.current_justified
            self.current_justified = target
        between = range(source.epoch + 1, target.epoch)
        if (
            target.epoch - source.epoch <= 2
            and all(epoch in self.justified_epochs for epoch in between)
            and source.epoch > self.finalized.epoch
        ):
            self.finalized = source

    # --- persistence -------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "previous_justified": self.previous_justified.to_json(),
            "current_justified": self.current_justified.to_json(),
            "finalized": self.finalized.to_json(),
            "justified_epochs": sorted(self.justified_epochs),
            "source_for_epoch": {
                str(epoch): checkpoint.to_json()
                for epoch, checkpoint in sorted(self.source_for_epoch.items())
            },
            "votes": {
                str(epoch): {to_hex(root): sorted(voters) for root, voters in by_root.items()}
                for epoch, by_root in sorted(self.votes.items())
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FinalityTracker:
        return cls(
            previous_justified=Checkpoint.from_json(data["previous_justified"]),
            current_justified=Checkpoint.from_json(data["current_justified"]),
            finalized=Checkpoint.from_json(data["finalized"]),
            justified_epochs={int(epoch) for epoch in data["justified_epochs"]},
            source_for_epoch={
                int(epoch): Checkpoint.from_json(checkpoint)
                for epoch, checkpoint in data["source_for_epoch"].items()
            },
            votes={
                int(epoch): {
                    parse_hex(root, 32): {int(v) for v in voters}
                    for root, voters in by_root.items()
                }
                for epoch, by_root in data["votes"].items()
            },
        )
