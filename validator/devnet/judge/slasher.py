"""The devnet's slasher: every attestation and block it was offered, and the conflicts among them.

Records are kept per validator: for attestations the (source epoch, target
epoch, AttestationData root) of every validly signed attestation the chain
received (single, aggregated or inside a block), for blocks the (proposer,
slot, block root) of every validly signed block. A new record is slashable
when it conflicts with an earlier one of the same validator:

- double vote: same target epoch, different data root;
- surround vote: source and target strictly inside, or strictly around, an earlier pair;
- double proposal: same proposer and slot, different block root.

Receiving the very same message again (same root) adds nothing and is not
slashable. Records persist in one file per epoch under ``slasher/``, each
replaced durably, so a later run on the same directory judges new messages
against everything earlier runs saw.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from slashing_protection.durable import write_durably
from validator.consensus.encoding import parse_hex, to_hex

_SEGMENT = re.compile(r"(attestations|blocks)-([0-9]+)\.json\Z")


class SlasherStateError(ValueError):
    """A slasher file that cannot be read: the devnet refuses to start rather than forget."""


class SlashingKind(StrEnum):
    DOUBLE_VOTE = "double_vote"
    SURROUND_VOTE = "surround_vote"
    DOUBLE_PROPOSAL = "double_proposal"


@dataclass(frozen=True)
class SlashingFinding:
    kind: SlashingKind
    validator_index: int
    description: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "validator_index": self.validator_index,
            "description": self.description,
        }


class _ValidatorVotes:
    __slots__ = ("by_target", "targets")

    def __init__(self) -> None:
        self.by_target: dict[int, list[tuple[int, bytes]]] = {}
        self.targets: list[int] = []

    def add(self, source: int, target: int, root: bytes) -> None:
        if target not in self.by_target:
            self.by_target[target] = []
            bisect.insort(self.targets, target)
        self.by_target[target].append((source, root))

    def targets_between(self, low: int, high: int) -> list[int]:
        """Recorded targets t with low < t < high."""
        start = bisect.bisect_right(self.targets, low)
        end = bisect.bisect_left(self.targets, high)
        return self.targets[start:end]

    def targets_above(self, low: int) -> list[int]:
        return self.targets[bisect.bisect_right(self.targets, low) :]


class Slasher:
    def __init__(self, directory: Path, slots_per_epoch: int) -> None:
        self.directory = Path(directory)
        self.slots_per_epoch = slots_per_epoch
        self._votes: dict[int, _ValidatorVotes] = {}
        self._voters_by_target: dict[int, set[int]] = {}
        self._blocks_by_epoch: dict[int, dict[tuple[int, int], list[bytes]]] = {}
        self._dirty_attestation_epochs: set[int] = set()
        self._dirty_block_epochs: set[int] = set()
        self.attestation_records = 0
        self.block_records = 0

    @classmethod
    def open(cls, directory: Path, slots_per_epoch: int) -> Slasher:
        """Load every record earlier runs wrote under ``directory`` (created when missing)."""
        slasher = cls(directory, slots_per_epoch)
        slasher.directory.mkdir(parents=True, exist_ok=True)
        for path in sorted(slasher.directory.iterdir()):
            match = _SEGMENT.match(path.name)
            if match is None:
                continue
            try:
                content = orjson.loads(path.read_bytes())
                if match.group(1) == "attestations":
                    slasher._load_attestations(int(match.group(2)), content)
                else:
                    slasher._load_blocks(content)
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as failure:
                raise SlasherStateError(f"cannot read slasher file {path}: {failure}") from None
        return slasher

    # --- judging ---------------------------------------------------------------

    def observe_attestation(
        self, validator_index: int, source: int, target: int, data_root: bytes
    ) -> list[SlashingFinding]:
        """Record one signed vote; return the conflicts it creates (empty when none)."""
        votes = self._votes.get(validator_index)
        if votes is None:
            votes = self._votes[validator_index] = _ValidatorVotes()
        same_target = votes.by_target.get(target, [])
        if any(root == data_root for _, root in same_target):
            return []
        findings: list[SlashingFinding] = []
        if same_target:
            findings.append(
                SlashingFinding(
                    SlashingKind.DOUBLE_VOTE,
                    validator_index,
                    f"validator {validator_index} voted twice for target epoch {target}: "
                    f"{to_hex(same_target[0][1])} and {to_hex(data_root)}",
                )
            )
        surround = self._surround(votes, validator_index, source, target)
        if surround is not None:
            findings.append(surround)
        self._add_vote(votes, validator_index, source, target, data_root)
        self._dirty_attestation_epochs.add(target)
        return findings

    def _add_vote(
        self, votes: _ValidatorVotes, validator_index: int, source: int, target: int, root: bytes
    ) -> None:
        votes.add(source, target, root)
        self._voters_by_target.setdefault(target, set()).add(validator_index)
        self.attestation_records += 1

    def _surround(
        self, votes: _ValidatorVotes, validator_index: int, source: int, target: int
    ) -> SlashingFinding | None:
        for old_target in votes.targets_between(source, target):
            for old_source, _ in votes.by_target[old_target]:
                if old_source > source:
                    return self._surround_finding(
                        validator_index, (source, target), (old_source, old_target), "surrounds"
                    )
        for old_target in votes.targets_above(target):
            for old_source, _ in votes.by_target[old_target]:
                if old_source < source:
                    return self._surround_finding(
                        validator_index,
                        (source, target),
                        (old_source, old_target),
                        "is surrounded by",
                    )
        return None

    @staticmethod
    def _surround_finding(
        validator_index: int, new: tuple[int, int], old: tuple[int, int], relation: str
    ) -> SlashingFinding:
        return SlashingFinding(
            SlashingKind.SURROUND_VOTE,
            validator_index,
            f"validator {validator_index}'s vote {new[0]}->{new[1]} {relation} "
            f"its earlier vote {old[0]}->{old[1]}",
        )

    def observe_block(self, proposer_index: int, slot: int, root: bytes) -> list[SlashingFinding]:
        """Record one signed block; return the double proposal it creates, if any."""
        epoch_blocks = self._blocks_by_epoch.setdefault(slot // self.slots_per_epoch, {})
        roots = epoch_blocks.setdefault((proposer_index, slot), [])
        if root in roots:
            return []
        findings = []
        if roots:
            findings.append(
                SlashingFinding(
                    SlashingKind.DOUBLE_PROPOSAL,
                    proposer_index,
                    f"validator {proposer_index} proposed two blocks at slot {slot}: "
                    f"{to_hex(roots[0])} and {to_hex(root)}",
                )
            )
        roots.append(root)
        self.block_records += 1
        self._dirty_block_epochs.add(slot // self.slots_per_epoch)
        return findings

    # --- persistence -------------------------------------------------------------

    def take_dirty_segments(self) -> list[tuple[Path, bytes]]:
        """Serialize the files changed since the last call (on the event loop, cheap)."""
        segments: list[tuple[Path, bytes]] = []
        for epoch in sorted(self._dirty_attestation_epochs):
            content = {
                str(validator): [
                    [source, to_hex(root)]
                    for source, root in self._votes[validator].by_target[epoch]
                ]
                for validator in sorted(self._voters_by_target.get(epoch, ()))
            }
            segments.append((self.directory / f"attestations-{epoch}.json", orjson.dumps(content)))
        for epoch in sorted(self._dirty_block_epochs):
            by_slot: dict[str, dict[str, list[str]]] = {}
            for (proposer, slot), roots in self._blocks_by_epoch.get(epoch, {}).items():
                by_slot.setdefault(str(slot), {})[str(proposer)] = [to_hex(r) for r in roots]
            segments.append((self.directory / f"blocks-{epoch}.json", orjson.dumps(by_slot)))
        self._dirty_attestation_epochs.clear()
        self._dirty_block_epochs.clear()
        return segments

    @staticmethod
    def write_segments(segments: list[tuple[Path, bytes]]) -> None:
        """Write what ``take_dirty_segments`` returned, durably (blocking: run in a thread)."""
        for path, content in segments:
            write_durably(path, content, mode=0o644)

    def _load_attestations(self, target: int, content: dict[str, Any]) -> None:
        for validator, records in content.items():
            votes = self._votes.get(int(validator))
            if votes is None:
                votes = self._votes[int(validator)] = _ValidatorVotes()
            for source, root in records:
                self._add_vote(votes, int(validator), int(source), target, parse_hex(root, 32))

    def _load_blocks(self, content: dict[str, Any]) -> None:
        for slot, by_proposer in content.items():
            for proposer, roots in by_proposer.items():
                epoch_blocks = self._blocks_by_epoch.setdefault(
                    int(slot) // self.slots_per_epoch, {}
                )
                epoch_blocks[(int(proposer), int(slot))] = [parse_hex(r, 32) for r in roots]
                self.block_records += len(roots)
