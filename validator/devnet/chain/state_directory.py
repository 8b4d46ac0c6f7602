"""The devnet's state directory (``<validators-dir>/devnet/``) and its lock.

- ``chain.json``: genesis time and validators root, validator count, slot timing, the
  recent canonical blocks, justification and finalization, exits, proposer pins, counters;
- ``validators.json``: the validators' public keys (a restart need not derive them again);
- ``slasher/``: the slasher's records, one file per epoch (see ``slasher``);
- ``devnet.lock``: held while a devnet runs on the directory.

Every file is replaced with ``slashing_protection.durable.write_durably``
(temp file, fsync, rename, directory fsync).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock, Timeout

from slashing_protection.durable import write_durably
from validator.consensus.encoding import parse_hex, to_hex

DEVNET_DIRECTORY = "devnet"
STATE_FILE = "chain.json"
PUBKEYS_FILE = "validators.json"
SLASHER_DIRECTORY = "slasher"
LOCK_FILE = "devnet.lock"
STATE_VERSION = 1


class DevnetStateError(RuntimeError):
    """The state directory cannot be used for this run; the message says why."""


def devnet_state_dir(validators_dir: Path) -> Path:
    """Where ``validator devnet`` keeps the chain for ``--validators-dir``."""
    return Path(validators_dir) / DEVNET_DIRECTORY


@dataclass(frozen=True)
class ChainIdentity:
    """What makes a devnet the same chain from one run to the next."""

    genesis_time: int
    genesis_validators_root: bytes
    validator_count: int
    slot_duration_ms: int
    slots_per_epoch: int
    epochs_per_sync_committee_period: int
    preset: str = "mainnet"
    """The preset's name (PRESET_BASE); state written before presets were chosen is mainnet."""
    gloas_fork_epoch: int | None = None
    """The first Gloas (ePBS) epoch; None: the chain stays in Fulu (the default)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["genesis_validators_root"] = to_hex(self.genesis_validators_root)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChainIdentity:
        return cls(
            genesis_time=int(data["genesis_time"]),
            genesis_validators_root=parse_hex(data["genesis_validators_root"], 32),
            validator_count=int(data["validator_count"]),
            slot_duration_ms=int(data["slot_duration_ms"]),
            slots_per_epoch=int(data["slots_per_epoch"]),
            epochs_per_sync_committee_period=int(data["epochs_per_sync_committee_period"]),
            preset=str(data.get("preset", "mainnet")),
            gloas_fork_epoch=(
                None if data.get("gloas_fork_epoch") is None else int(data["gloas_fork_epoch"])
            ),
        )

    def check_compatible(self, directory: Path, requested: dict[str, object]) -> None:
        """Refuse a run whose parameters would make it another chain."""
        names = {
            "validator_count": "validators",
            "slot_duration_ms": "slot duration (ms)",
            "slots_per_epoch": "slots per epoch",
            "epochs_per_sync_committee_period": "epochs per sync committee period",
            "preset": "preset",
            "gloas_fork_epoch": "Gloas fork epoch",
        }
        for field_name, label in names.items():
            stored = getattr(self, field_name)
            wanted = requested[field_name]
            if stored != wanted:
                raise DevnetStateError(
                    f"the devnet in {directory} was created with {label} = {stored}, this run asks "
                    f"for {wanted}; use the same value or another --validators-dir"
                )


class DevnetStore:
    """The state directory, locked for the life of one devnet."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._lock: FileLock | None = None

    @property
    def slasher_directory(self) -> Path:
        return self.directory / SLASHER_DIRECTORY

    def lock(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.directory / LOCK_FILE))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise DevnetStateError(
                f"another devnet is already running on {self.directory}"
            ) from None
        self._lock = lock

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def load_state(self) -> dict[str, Any] | None:
        """The saved chain, or None for a new directory."""
        path = self.directory / STATE_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            state = orjson.loads(raw)
            if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
                raise ValueError(f"not a version {STATE_VERSION} devnet state")
            return state
        except ValueError as failure:
            raise DevnetStateError(f"cannot read {path}: {failure}") from None

    def save_state(self, content: bytes) -> None:
        write_durably(self.directory / STATE_FILE, content, mode=0o644)

    def load_pubkeys(self, count: int) -> list[bytes] | None:
        path = self.directory / PUBKEYS_FILE
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            pubkeys = [parse_hex(item, 48) for item in orjson.loads(raw)]
        except (ValueError, TypeError) as failure:
            raise DevnetStateError(f"cannot read {path}: {failure}") from None
        if len(pubkeys) != count:
            raise DevnetStateError(f"{path} holds {len(pubkeys)} keys, the chain has {count}")
        return pubkeys

    def save_pubkeys(self, pubkeys: list[bytes]) -> None:
        write_durably(
            self.directory / PUBKEYS_FILE,
            orjson.dumps([to_hex(pubkey) for pubkey in pubkeys]),
            mode=0o644,
        )
