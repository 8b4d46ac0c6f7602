"""The configuration of the project's simulated chain, as Beacon API JSON.

The simulated beacon node serves these replies and the client reads them with
the same parser it uses for a real node, so the devnet exercises the real
path. It runs the mainnet or the minimal preset (``preset``) and serves every
value of it that shapes a container; on mainnet only time parameters differ
from a real chain (short slots, few slots per epoch, every fork from genesis),
while a minimal chain serves the minimal preset's own SLOTS_PER_EPOCH (8) and
EPOCHS_PER_SYNC_COMMITTEE_PERIOD (8) by default.

Fork versions follow one fixed scheme, ``<fork index> 00 de 7e``: phase0 is
0x0000de7e, Electra 0x0500de7e, Fulu 0x0600de7e, Gloas 0x0700de7e. No public network uses them,
and the genesis validators root differs per devnet anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.consensus.encoding import to_hex
from validator.consensus.forks import FAR_FUTURE_EPOCH, FORK_ORDER, ForkName
from validator.consensus.spec import PROTOCOL_DOMAIN_TYPES, ChainSpec
from validator.consensus.ssz.preset import MAINNET, Preset

SIMULATED_CONFIG_NAME = "unslashable-devnet"
TARGET_AGGREGATORS_PER_COMMITTEE = 16
TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE = 16


def simulated_fork_version(fork: ForkName) -> bytes:
    return bytes([fork.order, 0x00, 0xDE, 0x7E])


OPT_IN_FORKS: frozenset[ForkName] = frozenset({ForkName.GLOAS})
"""Forks a simulated chain schedules only when told an epoch (``--gloas-fork-epoch``)."""


def _all_forks_at_genesis() -> dict[ForkName, int]:
    return {fork: 0 for fork in FORK_ORDER if fork not in OPT_IN_FORKS}


@dataclass(frozen=True)
class SimulatedChainConfig:
    """One simulated chain's configuration; serve its ``*_response()`` replies."""

    genesis_time: int
    genesis_validators_root: bytes
    slot_duration_ms: int = 2000
    slots_per_epoch: int = 8
    fork_epochs: Mapping[ForkName, int] = field(default_factory=_all_forks_at_genesis)
    """First epoch of each fork (FAR_FUTURE_EPOCH: never); one left out starts with the fork
    before it, so ``{ForkName.ELECTRA: 2}`` runs Deneb in epochs 0-1, Electra and Fulu from 2;
    Gloas (opt-in) runs only from the epoch given for it."""
    epochs_per_sync_committee_period: int = 8
    preset: Preset = MAINNET

    def __post_init__(self) -> None:
        if len(self.genesis_validators_root) != 32:
            raise ValueError("genesis_validators_root must be 32 bytes")
        if self.slot_duration_ms <= 0 or self.slots_per_epoch <= 0:
            raise ValueError("slot duration and slots per epoch must be positive")
        if self.epochs_per_sync_committee_period <= 0:
            raise ValueError("epochs_per_sync_committee_period must be positive")
        if self.fork_epochs.get(ForkName.PHASE0, 0) != 0:
            raise ValueError("phase0 starts at epoch 0")

    def fork_epoch(self, fork: ForkName) -> int:
        if fork in OPT_IN_FORKS and fork not in self.fork_epochs:
            return FAR_FUTURE_EPOCH
        epoch = 0
        for known in FORK_ORDER[: fork.order + 1]:
            epoch = self.fork_epochs.get(known, epoch)
        return epoch

    def genesis_response(self) -> dict[str, Any]:
        """``GET /eth/v1/beacon/genesis``."""
        return {
            "data": {
                "genesis_time": str(self.genesis_time),
                "genesis_validators_root": to_hex(self.genesis_validators_root),
                "genesis_fork_version": to_hex(simulated_fork_version(ForkName.PHASE0)),
            }
        }

    def spec_response(self) -> dict[str, Any]:
        """``GET /eth/v1/config/spec``."""
        data: dict[str, Any] = {
            "PRESET_BASE": self.preset.name,
            "CONFIG_NAME": SIMULATED_CONFIG_NAME,
        }
        if self.slot_duration_ms % 1000 == 0:
            # Sub-second slots cannot be written as SECONDS_PER_SLOT; newer nodes omit it too.
            data["SECONDS_PER_SLOT"] = str(self.slot_duration_ms // 1000)
        data["SLOT_DURATION_MS"] = str(self.slot_duration_ms)
        data["SLOTS_PER_EPOCH"] = str(self.slots_per_epoch)
        data["GENESIS_FORK_VERSION"] = to_hex(simulated_fork_version(ForkName.PHASE0))
        for fork in FORK_ORDER[1:]:
            data[f"{fork.value.upper()}_FORK_VERSION"] = to_hex(simulated_fork_version(fork))
            data[f"{fork.value.upper()}_FORK_EPOCH"] = str(self.fork_epoch(fork))
        for name, domain_type in PROTOCOL_DOMAIN_TYPES.items():
            data[name] = to_hex(domain_type)
        data["EPOCHS_PER_SYNC_COMMITTEE_PERIOD"] = str(self.epochs_per_sync_committee_period)
        data["TARGET_AGGREGATORS_PER_COMMITTEE"] = str(TARGET_AGGREGATORS_PER_COMMITTEE)
        data["TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE"] = str(
            TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE
        )
        data["TARGET_COMMITTEE_SIZE"] = str(self.preset.TARGET_COMMITTEE_SIZE)
        for name, value in self.preset.shape_values().items():
            data[name] = str(value)
        return {"data": data}

    def fork_schedule_response(self) -> dict[str, Any]:
        """``GET /eth/v1/config/fork_schedule``: every known fork, scheduled or not."""
        entries = []
        previous = simulated_fork_version(ForkName.PHASE0)
        for fork in FORK_ORDER:
            current = simulated_fork_version(fork)
            entries.append(
                {
                    "previous_version": to_hex(previous),
                    "current_version": to_hex(current),
                    "epoch": str(self.fork_epoch(fork)),
                }
            )
            previous = current
        return {"data": entries}

    def chain_spec(self) -> ChainSpec:
        """The ChainSpec a client builds from these replies (parsed, not constructed)."""
        return ChainSpec.from_responses(
            self.genesis_response(), self.spec_response(), self.fork_schedule_response()
        )


__all__ = [
    "FAR_FUTURE_EPOCH",
    "SIMULATED_CONFIG_NAME",
    "SimulatedChainConfig",
    "simulated_fork_version",
]
