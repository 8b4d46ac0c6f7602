"""The chain's configuration as a beacon node serves it, and the arithmetic built on it.

Three Beacon API replies describe a chain to a validator client:
``/eth/v1/beacon/genesis``, ``/eth/v1/config/spec`` and
``/eth/v1/config/fork_schedule``. They are parsed here into pydantic models
(integers arrive as decimal strings, versions and roots as hex) and combined
into one :class:`ChainSpec` with slot/epoch arithmetic, the wall-clock slot and
the fork in force at an epoch. Every missing, malformed or inconsistent value
raises :class:`ChainSpecError` naming it; nothing falls back to a default that
could make the client sign for the wrong chain or fork.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from validator.consensus.encoding import parse_hex, parse_uint
from validator.consensus.forks import FAR_FUTURE_EPOCH, FORK_ORDER, ForkName
from validator.consensus.ssz.preset import (
    MAINNET,
    PRESETS,
    SHAPE_VALUE_FORK,
    SHAPE_VALUE_NAMES,
    Preset,
)


class ChainSpecError(ValueError):
    """The node's description of the chain is missing, malformed or inconsistent."""


class BeforeGenesisError(ChainSpecError):
    """The chain has not started yet: there is no current slot."""


class UnsupportedForkError(ChainSpecError):
    """The epoch lies in a fork this client does not know how to sign for."""


def _uint64(value: object) -> int:
    return parse_uint(value, 64)


def _version(value: object) -> bytes:
    return parse_hex(value, 4)


def _root(value: object) -> bytes:
    return parse_hex(value, 32)


Uint64 = Annotated[int, BeforeValidator(_uint64)]
ForkVersion = Annotated[bytes, BeforeValidator(_version)]
DomainTypeHex = Annotated[bytes, BeforeValidator(_version)]
RootHex = Annotated[bytes, BeforeValidator(_root)]

# Domain types are constants of the consensus specs (phase0 and altair
# beacon-chain.md; DOMAIN_APPLICATION_BUILDER from builder-specs), not network
# configuration. A node serving other values is broken or lying, so they are
# checked rather than trusted.
PROTOCOL_DOMAIN_TYPES: dict[str, bytes] = {
    "DOMAIN_BEACON_PROPOSER": bytes.fromhex("00000000"),
    "DOMAIN_BEACON_ATTESTER": bytes.fromhex("01000000"),
    "DOMAIN_RANDAO": bytes.fromhex("02000000"),
    "DOMAIN_DEPOSIT": bytes.fromhex("03000000"),
    "DOMAIN_VOLUNTARY_EXIT": bytes.fromhex("04000000"),
    "DOMAIN_SELECTION_PROOF": bytes.fromhex("05000000"),
    "DOMAIN_AGGREGATE_AND_PROOF": bytes.fromhex("06000000"),
    "DOMAIN_SYNC_COMMITTEE": bytes.fromhex("07000000"),
    "DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF": bytes.fromhex("08000000"),
    "DOMAIN_CONTRIBUTION_AND_PROOF": bytes.fromhex("09000000"),
    "DOMAIN_APPLICATION_BUILDER": bytes.fromhex("00000001"),
    # gloas beacon-chain.md
    "DOMAIN_BEACON_BUILDER": bytes.fromhex("0b000000"),
    "DOMAIN_PTC_ATTESTER": bytes.fromhex("0c000000"),
    "DOMAIN_PROPOSER_PREFERENCES": bytes.fromhex("0d000000"),
}

# The fork each *_FORK_VERSION / *_FORK_EPOCH pair of /eth/v1/config/spec names.
_FORK_CONFIG_PREFIX: dict[ForkName, str] = {
    ForkName.ALTAIR: "ALTAIR",
    ForkName.BELLATRIX: "BELLATRIX",
    ForkName.CAPELLA: "CAPELLA",
    ForkName.DENEB: "DENEB",
    ForkName.ELECTRA: "ELECTRA",
    ForkName.FULU: "FULU",
    ForkName.GLOAS: "GLOAS",
}


@dataclass(frozen=True)
class GloasDeadlines:
    """The Gloas duty deadlines, in basis points of the slot (gloas validator.md); the
    defaults are the spec's, also what ``SpecConfig`` takes when a node serves none."""

    attestation_due_bps: int = 2500
    aggregate_due_bps: int = 5000
    sync_message_due_bps: int = 2500
    contribution_due_bps: int = 5000
    payload_due_bps: int = 5000
    payload_attestation_due_bps: int = 7500

    @classmethod
    def from_config(cls, config: SpecConfig) -> GloasDeadlines:
        return cls(**{field: getattr(config, name) for field, name in GLOAS_DUE_BPS_FIELDS.items()})


#: Each deadline's field, and its name in the chain config.
GLOAS_DUE_BPS_FIELDS = {
    "attestation_due_bps": "ATTESTATION_DUE_BPS_GLOAS",
    "aggregate_due_bps": "AGGREGATE_DUE_BPS_GLOAS",
    "sync_message_due_bps": "SYNC_MESSAGE_DUE_BPS_GLOAS",
    "contribution_due_bps": "CONTRIBUTION_DUE_BPS_GLOAS",
    "payload_due_bps": "PAYLOAD_DUE_BPS",
    "payload_attestation_due_bps": "PAYLOAD_ATTESTATION_DUE_BPS",
}
GLOAS_DUE_BPS_NAMES = tuple(GLOAS_DUE_BPS_FIELDS.values())


class _ApiModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Genesis(_ApiModel):
    """``data`` of ``GET /eth/v1/beacon/genesis``."""

    genesis_time: Uint64
    genesis_validators_root: RootHex
    genesis_fork_version: ForkVersion


class ApiFork(_ApiModel):
    """One entry of ``GET /eth/v1/config/fork_schedule`` (the spec's ``Fork``)."""

    previous_version: ForkVersion
    current_version: ForkVersion
    epoch: Uint64


class SpecConfig(_ApiModel):
    """The values of ``GET /eth/v1/config/spec`` a validator client needs.

    The reply carries hundreds of keys; the rest are ignored. Time per slot may
    come as ``SECONDS_PER_SLOT``, as ``SLOT_DURATION_MS`` (consensus-specs
    v1.6 serves both, later versions only the latter) or both, which must agree.
    """

    SECONDS_PER_SLOT: Uint64 | None = None
    SLOT_DURATION_MS: Uint64 | None = None
    SLOTS_PER_EPOCH: Uint64
    # Names the preset, and so the containers; a node that leaves it out gets the known
    # preset whose values all match what it serves.
    PRESET_BASE: str | None = None

    GENESIS_FORK_VERSION: ForkVersion
    # A fork whose pair a node does not serve is one that node's chain does not schedule
    # (a node older than the fork knows nothing of it): as if its epoch were FAR_FUTURE_EPOCH.
    ALTAIR_FORK_VERSION: ForkVersion | None = None
    ALTAIR_FORK_EPOCH: Uint64 | None = None
    BELLATRIX_FORK_VERSION: ForkVersion | None = None
    BELLATRIX_FORK_EPOCH: Uint64 | None = None
    CAPELLA_FORK_VERSION: ForkVersion | None = None
    CAPELLA_FORK_EPOCH: Uint64 | None = None
    DENEB_FORK_VERSION: ForkVersion | None = None
    DENEB_FORK_EPOCH: Uint64 | None = None
    ELECTRA_FORK_VERSION: ForkVersion | None = None
    ELECTRA_FORK_EPOCH: Uint64 | None = None
    FULU_FORK_VERSION: ForkVersion | None = None
    FULU_FORK_EPOCH: Uint64 | None = None
    GLOAS_FORK_VERSION: ForkVersion | None = None
    GLOAS_FORK_EPOCH: Uint64 | None = None

    DOMAIN_BEACON_PROPOSER: DomainTypeHex
    DOMAIN_BEACON_ATTESTER: DomainTypeHex
    DOMAIN_RANDAO: DomainTypeHex
    DOMAIN_VOLUNTARY_EXIT: DomainTypeHex
    DOMAIN_SELECTION_PROOF: DomainTypeHex
    DOMAIN_AGGREGATE_AND_PROOF: DomainTypeHex
    DOMAIN_SYNC_COMMITTEE: DomainTypeHex
    DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF: DomainTypeHex
    DOMAIN_CONTRIBUTION_AND_PROOF: DomainTypeHex
    # Served by few nodes (it is a builder-specs constant); checked when present.
    DOMAIN_APPLICATION_BUILDER: DomainTypeHex | None = None
    DOMAIN_DEPOSIT: DomainTypeHex | None = None
    # Gloas domains: served by nodes that know Gloas; checked when present.
    DOMAIN_BEACON_BUILDER: DomainTypeHex | None = None
    DOMAIN_PTC_ATTESTER: DomainTypeHex | None = None
    DOMAIN_PROPOSER_PREFERENCES: DomainTypeHex | None = None

    # Gloas deadlines in basis points of the slot (gloas validator.md); a node that does not
    # serve them gets the spec's values.
    ATTESTATION_DUE_BPS_GLOAS: Uint64 = GloasDeadlines.attestation_due_bps
    AGGREGATE_DUE_BPS_GLOAS: Uint64 = GloasDeadlines.aggregate_due_bps
    SYNC_MESSAGE_DUE_BPS_GLOAS: Uint64 = GloasDeadlines.sync_message_due_bps
    CONTRIBUTION_DUE_BPS_GLOAS: Uint64 = GloasDeadlines.contribution_due_bps
    PAYLOAD_DUE_BPS: Uint64 = GloasDeadlines.payload_due_bps
    PAYLOAD_ATTESTATION_DUE_BPS: Uint64 = GloasDeadlines.payload_attestation_due_bps

    EPOCHS_PER_SYNC_COMMITTEE_PERIOD: Uint64
    SYNC_COMMITTEE_SIZE: Uint64
    SYNC_COMMITTEE_SUBNET_COUNT: Uint64
    TARGET_AGGREGATORS_PER_COMMITTEE: Uint64
    TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE: Uint64
    MAX_COMMITTEES_PER_SLOT: Uint64

    # Every other preset value that fixes an SSZ container's shape, when served.
    preset_values: dict[str, int] = {}
    _preset: Preset = PrivateAttr(default=MAINNET)

    @model_validator(mode="before")
    @classmethod
    def _collect_preset_values(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        served = {}
        for name in SHAPE_VALUE_NAMES:
            if name in data and name not in cls.model_fields:
                try:
                    served[name] = parse_uint(data[name], 64)
                except ValueError as failure:
                    raise ValueError(f"{name}: {failure}") from None
        return {**data, "preset_values": served}

    @model_validator(mode="after")
    def _check_consistency(self) -> SpecConfig:
        if self.SECONDS_PER_SLOT is None and self.SLOT_DURATION_MS is None:
            raise ValueError("missing SECONDS_PER_SLOT (and SLOT_DURATION_MS)")
        if (
            self.SECONDS_PER_SLOT is not None
            and self.SLOT_DURATION_MS is not None
            and self.SECONDS_PER_SLOT * 1000 != self.SLOT_DURATION_MS
        ):
            raise ValueError(
                f"SECONDS_PER_SLOT={self.SECONDS_PER_SLOT} and "
                f"SLOT_DURATION_MS={self.SLOT_DURATION_MS} disagree"
            )
        if self.slot_duration_ms == 0:
            raise ValueError("the slot duration is 0")
        if self.SLOTS_PER_EPOCH == 0:
            raise ValueError("SLOTS_PER_EPOCH is 0")
        if self.EPOCHS_PER_SYNC_COMMITTEE_PERIOD == 0:
            raise ValueError("EPOCHS_PER_SYNC_COMMITTEE_PERIOD is 0")
        for prefix in _FORK_CONFIG_PREFIX.values():
            version = getattr(self, f"{prefix}_FORK_VERSION")
            epoch = getattr(self, f"{prefix}_FORK_EPOCH")
            if (version is None) != (epoch is None):
                present, absent = ("VERSION", "EPOCH") if epoch is None else ("EPOCH", "VERSION")
                raise ValueError(
                    f"{prefix}_FORK_{present} is served without {prefix}_FORK_{absent}"
                )
        for name, expected in PROTOCOL_DOMAIN_TYPES.items():
            served = getattr(self, name, None)
            if served is not None and served != expected:
                raise ValueError(
                    f"{name} is 0x{served.hex()}, but the consensus specs define 0x{expected.hex()}"
                )
        for name in GLOAS_DUE_BPS_NAMES:
            if not 0 < getattr(self, name) <= 10_000:
                served = getattr(self, name)
                raise ValueError(f"{name} is {served}, not within 1..10000 basis points")
        self._preset = self._checked_preset()
        return self

    def _checked_preset(self) -> Preset:
        """The preset the node runs, every served shape value of a scheduled fork checked."""
        served = {
            "MAX_COMMITTEES_PER_SLOT": self.MAX_COMMITTEES_PER_SLOT,
            "SYNC_COMMITTEE_SIZE": self.SYNC_COMMITTEE_SIZE,
            "SYNC_COMMITTEE_SUBNET_COUNT": self.SYNC_COMMITTEE_SUBNET_COUNT,
            **self.preset_values,
        }
        # No container of an unscheduled fork is ever built on this chain.
        checked = {
            name: value
            for name, value in served.items()
            if self.fork_epoch(SHAPE_VALUE_FORK[name]) != FAR_FUTURE_EPOCH
        }
        if self.PRESET_BASE is not None:
            preset = PRESETS.get(self.PRESET_BASE)
            if preset is None:
                known = " and ".join(PRESETS)
                raise ValueError(
                    f"PRESET_BASE is {self.PRESET_BASE!r}, but this client has SSZ containers "
                    f"for the {known} presets only"
                )
        else:
            matching = [
                known
                for known in PRESETS.values()
                if all(known.shape_values()[name] == value for name, value in checked.items())
            ]
            preset = matching[0] if matching else MAINNET
        expected = preset.shape_values()
        for name, value in checked.items():
            if value != expected[name]:
                raise ValueError(
                    f"{name} is {value}, but this client's SSZ containers for the "
                    f"{preset.name} preset have {name}={expected[name]}"
                )
        return preset

    @property
    def preset(self) -> Preset:
        """The preset whose containers this chain's objects have."""
        return self._preset

    @property
    def slot_duration_ms(self) -> int:
        if self.SLOT_DURATION_MS is not None:
            return self.SLOT_DURATION_MS
        assert self.SECONDS_PER_SLOT is not None  # the validator above requires one of them
        return self.SECONDS_PER_SLOT * 1000

    def fork_version(self, fork: ForkName) -> bytes | None:
        """The fork's version; None when the node does not serve it (not scheduled)."""
        if fork is ForkName.PHASE0:
            return self.GENESIS_FORK_VERSION
        version: bytes | None = getattr(self, f"{_FORK_CONFIG_PREFIX[fork]}_FORK_VERSION")
        return version

    def fork_epoch(self, fork: ForkName) -> int:
        """The fork's first epoch; FAR_FUTURE_EPOCH when the node does not serve it."""
        if fork is ForkName.PHASE0:
            return 0
        epoch: int | None = getattr(self, f"{_FORK_CONFIG_PREFIX[fork]}_FORK_EPOCH")
        return FAR_FUTURE_EPOCH if epoch is None else epoch


def parse_genesis_response(body: object) -> Genesis:
    """``GET /eth/v1/beacon/genesis``'s JSON body (``{"data": {...}}``)."""
    return _parse("/eth/v1/beacon/genesis", Genesis, _data(body, "/eth/v1/beacon/genesis", dict))


def parse_spec_response(body: object) -> SpecConfig:
    """``GET /eth/v1/config/spec``'s JSON body (``{"data": {...}}``)."""
    return parse_spec_data(_data(body, "/eth/v1/config/spec", dict))


def parse_spec_data(data: object) -> SpecConfig:
    """The ``data`` member of ``GET /eth/v1/config/spec`` (its values as the API gives them)."""
    return _parse("/eth/v1/config/spec", SpecConfig, data)


def parse_state_fork_response(body: object) -> ApiFork:
    """``GET /eth/v1/beacon/states/{state_id}/fork``'s JSON body (the same ``Fork`` object)."""
    source = "/eth/v1/beacon/states/{state_id}/fork"
    return _parse(source, ApiFork, _data(body, source, dict))


def parse_fork_schedule_response(body: object) -> list[ApiFork]:
    """``GET /eth/v1/config/fork_schedule``'s JSON body (``{"data": [...]}``)."""
    source = "/eth/v1/config/fork_schedule"
    entries = _data(body, source, list)
    return [
        _parse(f"{source} data[{index}]", ApiFork, entry) for index, entry in enumerate(entries)
    ]


def _data(body: object, source: str, kind: type) -> Any:
    if not isinstance(body, Mapping) or "data" not in body:
        raise ChainSpecError(f"{source}: expected a JSON object with a 'data' member")
    data = body["data"]
    if not isinstance(data, kind):
        expected = "an object" if kind is dict else "an array"
        raise ChainSpecError(f"{source}: 'data' must be {expected}")
    return data


def _parse(source: str, model: type[_ApiModel], data: object) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as failure:
        raise ChainSpecError(f"{source}: {_describe(failure)}") from None


def _describe(failure: ValidationError) -> str:
    problems = []
    for error in failure.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "missing":
            problems.append(f"missing field {where}")
        elif where:
            problems.append(f"{where}: {message}")
        else:
            problems.append(message)
    return "; ".join(problems)


UNSERVED_VERSION = b""
"""The version of a fork the node does not serve: no domain can be computed from it."""


@dataclass(frozen=True)
class ScheduledFork:
    """A fork with its version and first epoch (FAR_FUTURE_EPOCH when not scheduled)."""

    name: ForkName
    version: bytes
    epoch: int

    @property
    def scheduled(self) -> bool:
        return self.epoch != FAR_FUTURE_EPOCH


@dataclass(frozen=True)
class ChainSpec:
    """Everything about the chain that domains, roots and timing depend on."""

    genesis_time: int
    genesis_validators_root: bytes
    genesis_fork_version: bytes
    slot_duration_ms: int
    slots_per_epoch: int
    forks: tuple[ScheduledFork, ...]
    """All known forks, phase0 first, in activation order."""
    epochs_per_sync_committee_period: int
    sync_committee_size: int
    sync_committee_subnet_count: int
    target_aggregators_per_committee: int
    target_aggregators_per_sync_subcommittee: int
    max_committees_per_slot: int
    unknown_fork_epoch: int = FAR_FUTURE_EPOCH
    """First epoch of a fork the node schedules that this client does not know."""
    preset: Preset = MAINNET
    """The preset the node runs: the one whose containers its objects have."""
    gloas_deadlines: GloasDeadlines = GloasDeadlines()
    """The deadlines of duties in Gloas slots, as the node serves them."""

    @classmethod
    def from_responses(
        cls, genesis: object, spec: object, fork_schedule: object | None = None
    ) -> ChainSpec:
        """Build from the three replies' JSON bodies (the fork schedule is optional)."""
        schedule = None if fork_schedule is None else parse_fork_schedule_response(fork_schedule)
        return cls.from_models(parse_genesis_response(genesis), parse_spec_response(spec), schedule)

    @classmethod
    def from_models(
        cls, genesis: Genesis, config: SpecConfig, fork_schedule: Sequence[ApiFork] | None = None
    ) -> ChainSpec:
        if genesis.genesis_fork_version != config.GENESIS_FORK_VERSION:
            raise ChainSpecError(
                f"genesis_fork_version 0x{genesis.genesis_fork_version.hex()} of "
                f"/eth/v1/beacon/genesis differs from GENESIS_FORK_VERSION "
                f"0x{config.GENESIS_FORK_VERSION.hex()} of /eth/v1/config/spec"
            )
        forks = tuple(
            ScheduledFork(
                fork, config.fork_version(fork) or UNSERVED_VERSION, config.fork_epoch(fork)
            )
            for fork in FORK_ORDER
        )
        for earlier, later in zip(forks, forks[1:], strict=False):
            if later.epoch < earlier.epoch:
                raise ChainSpecError(
                    f"/eth/v1/config/spec: {later.name.value} is scheduled at epoch {later.epoch}, "
                    f"before {earlier.name.value} at epoch {earlier.epoch}"
                )
        unknown_fork_epoch = FAR_FUTURE_EPOCH
        if fork_schedule is not None:
            unknown_fork_epoch = _check_fork_schedule(forks, fork_schedule)
        return cls(
            genesis_time=genesis.genesis_time,
            genesis_validators_root=genesis.genesis_validators_root,
            genesis_fork_version=genesis.genesis_fork_version,
            slot_duration_ms=config.slot_duration_ms,
            slots_per_epoch=config.SLOTS_PER_EPOCH,
            forks=forks,
            epochs_per_sync_committee_period=config.EPOCHS_PER_SYNC_COMMITTEE_PERIOD,
            sync_committee_size=config.SYNC_COMMITTEE_SIZE,
            sync_committee_subnet_count=config.SYNC_COMMITTEE_SUBNET_COUNT,
            target_aggregators_per_committee=config.TARGET_AGGREGATORS_PER_COMMITTEE,
            target_aggregators_per_sync_subcommittee=config.TARGET_AGGREGATORS_PER_SYNC_SUBCOMMITTEE,
            max_committees_per_slot=config.MAX_COMMITTEES_PER_SLOT,
            unknown_fork_epoch=unknown_fork_epoch,
            preset=config.preset,
            gloas_deadlines=GloasDeadlines.from_config(config),
        )

    # --- slots and epochs -------------------------------------------------

    @property
    def seconds_per_slot(self) -> float:
        return self.slot_duration_ms / 1000

    def epoch_at_slot(self, slot: int) -> int:
        """compute_epoch_at_slot."""
        return slot // self.slots_per_epoch

    def start_slot_of_epoch(self, epoch: int) -> int:
        """compute_start_slot_at_epoch."""
        return epoch * self.slots_per_epoch

    def slot_start_time(self, slot: int) -> float:
        """Unix time (seconds) at which ``slot`` begins."""
        return self.genesis_time + slot * self.slot_duration_ms / 1000

    def current_slot(self, now: float | None = None) -> int:
        """The slot the wall clock (or ``now``, Unix seconds) is in; BeforeGenesisError before."""
        now = time.time() if now is None else now
        elapsed_ms = int(now * 1000) - self.genesis_time * 1000
        if elapsed_ms < 0:
            raise BeforeGenesisError(
                f"the chain starts at {self.genesis_time}, {-elapsed_ms / 1000:.3f} s from now"
            )
        return elapsed_ms // self.slot_duration_ms

    def current_epoch(self, now: float | None = None) -> int:
        return self.epoch_at_slot(self.current_slot(now))

    def sync_committee_period(self, epoch: int) -> int:
        return epoch // self.epochs_per_sync_committee_period

    @property
    def sync_subcommittee_size(self) -> int:
        return self.sync_committee_size // self.sync_committee_subnet_count

    # --- forks ------------------------------------------------------------

    def fork_at(self, epoch: int) -> ScheduledFork:
        """The fork in force at ``epoch``; UnsupportedForkError past a fork this client lacks."""
        if epoch >= self.unknown_fork_epoch:
            raise UnsupportedForkError(
                f"epoch {epoch} is past epoch {self.unknown_fork_epoch}, where the node schedules "
                f"a fork this client does not know"
            )
        current = self.forks[0]
        for fork in self.forks[1:]:
            if fork.epoch <= epoch:
                current = fork
        return current

    def fork_version_at(self, epoch: int) -> bytes:
        """compute_fork_version: the version of the fork in force at ``epoch``."""
        return self.fork_at(epoch).version

    def fork_name_at(self, epoch: int) -> ForkName:
        return self.fork_at(epoch).name

    def fork(self, name: ForkName) -> ScheduledFork:
        return self.forks[name.order]

    def fork_version(self, name: ForkName) -> bytes:
        return self.forks[name.order].version

    @property
    def gloas_fork_epoch(self) -> int:
        """The first Gloas epoch (FAR_FUTURE_EPOCH when not scheduled): from it on there are
        no builder registrations or blinded blocks, and proposers sign preferences instead."""
        return self.forks[ForkName.GLOAS.order].epoch

    def is_gloas_epoch(self, epoch: int) -> bool:
        """Whether Gloas (ePBS) is in force at ``epoch``."""
        return epoch >= self.gloas_fork_epoch

    def is_gloas_slot(self, slot: int) -> bool:
        return self.is_gloas_epoch(self.epoch_at_slot(slot))

    def ms_into_slot(self, bps: int) -> int:
        """``get_slot_component_duration_ms``: ``bps`` basis points of the slot, in ms."""
        return bps * self.slot_duration_ms // 10_000


def _check_fork_schedule(forks: Sequence[ScheduledFork], schedule: Sequence[ApiFork]) -> int:
    """Cross-check the fork schedule against the spec; return the first unknown fork's epoch.

    Both endpoints describe the same schedule; a fork one of them schedules and the other
    does not (or at another epoch) means one is wrong, and the fork guard would treat that
    fork's epochs as the previous fork's. Neither is trusted over the other.
    """
    by_version = {fork.version: fork for fork in forks if fork.scheduled}
    listed = {entry.current_version for entry in schedule}
    for fork in by_version.values():
        if fork.version not in listed:
            raise ChainSpecError(
                f"/eth/v1/config/spec schedules {fork.name.value} (0x{fork.version.hex()}) at "
                f"epoch {fork.epoch}, but /eth/v1/config/fork_schedule does not list it"
            )
    by_version = {fork.version: fork for fork in forks}
    unknown_fork_epoch = FAR_FUTURE_EPOCH
    for entry in schedule:
        known = by_version.get(entry.current_version)
        if known is None:
            if entry.epoch != FAR_FUTURE_EPOCH:
                unknown_fork_epoch = min(unknown_fork_epoch, entry.epoch)
            continue
        if known.epoch != entry.epoch:
            raise ChainSpecError(
                f"/eth/v1/config/fork_schedule has {known.name.value} "
                f"(0x{entry.current_version.hex()}) at epoch {entry.epoch}, "
                f"but /eth/v1/config/spec has it at epoch {known.epoch}"
            )
    return unknown_fork_epoch
