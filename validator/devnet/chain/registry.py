"""The devnet's validators: interop keys 0..N-1, their registry root, exits and slashings.

Every validator is active from genesis with 32 ETH and BLS withdrawal
credentials. ``genesis_validators_root`` is what the consensus specs define it
to be, ``hash_tree_root(state.validators)`` of the genesis state, computed
over this registry, so signatures made for this devnet are worthless on any
other chain (and the other way round).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any

import crypto_backend
from validator.consensus.forks import FAR_FUTURE_EPOCH
from validator.consensus.interop import interop_secret_key
from validator.devnet.chain.state_containers import Validator, ValidatorList

MAX_EFFECTIVE_BALANCE_GWEI = 32 * 10**9
# Exits take effect this many epochs after they are accepted (1 + MAX_SEED_LOOKAHEAD in the specs).
EXIT_DELAY_EPOCHS = 5
# MIN_VALIDATOR_WITHDRAWABILITY_DELAY of the mainnet configuration.
WITHDRAWABILITY_DELAY_EPOCHS = 256


def bls_withdrawal_credentials(pubkey: bytes) -> bytes:
    """BLS_WITHDRAWAL_PREFIX followed by sha256(pubkey)[1:]."""
    return b"\x00" + sha256(pubkey).digest()[1:]


class ValidatorRegistry:
    """The public keys of validators 0..N-1 and the lookups the API needs."""

    def __init__(self, pubkeys: Sequence[bytes]) -> None:
        if not pubkeys:
            raise ValueError("a devnet needs at least one validator")
        self.pubkeys: tuple[bytes, ...] = tuple(pubkeys)
        self._index_by_pubkey = {pubkey: index for index, pubkey in enumerate(self.pubkeys)}
        if len(self._index_by_pubkey) != len(self.pubkeys):
            raise ValueError("duplicate public keys in the validator registry")

    @classmethod
    def interop(cls, count: int) -> ValidatorRegistry:
        """Validators 0..count-1 with the deterministic interop keys."""
        if count <= 0:
            raise ValueError(f"validator count must be positive, got {count}")
        return cls([crypto_backend.sk_to_pk(interop_secret_key(i)) for i in range(count)])

    def __len__(self) -> int:
        return len(self.pubkeys)

    def index_of(self, pubkey: bytes) -> int | None:
        return self._index_by_pubkey.get(pubkey)

    def pubkey(self, index: int) -> bytes:
        return self.pubkeys[index]

    def genesis_validators_root(self) -> bytes:
        """hash_tree_root of the genesis registry (every validator active at epoch 0)."""
        validators = ValidatorList(
            *(
                Validator(
                    pubkey=pubkey,
                    withdrawal_credentials=bls_withdrawal_credentials(pubkey),
                    effective_balance=MAX_EFFECTIVE_BALANCE_GWEI,
                    slashed=False,
                    activation_eligibility_epoch=0,
                    activation_epoch=0,
                    exit_epoch=FAR_FUTURE_EPOCH,
                    withdrawable_epoch=FAR_FUTURE_EPOCH,
                )
                for pubkey in self.pubkeys
            )
        )
        return bytes(validators.hash_tree_root())


@dataclass
class ValidatorLifecycle:
    """What has happened to validators since genesis: voluntary exits and slashings."""

    exit_epochs: dict[int, int] = field(default_factory=dict)
    slashed: set[int] = field(default_factory=set)

    def exit_epoch(self, index: int) -> int:
        return self.exit_epochs.get(index, FAR_FUTURE_EPOCH)

    def is_active(self, index: int, epoch: int) -> bool:
        return epoch < self.exit_epoch(index)

    def active_indices(self, validator_count: int, epoch: int) -> list[int]:
        if not self.exit_epochs:
            return list(range(validator_count))
        return [i for i in range(validator_count) if self.is_active(i, epoch)]

    def initiate_exit(self, index: int, current_epoch: int) -> int:
        """Schedule ``index``'s exit (no churn limit on the devnet); returns the exit epoch."""
        if index not in self.exit_epochs:
            self.exit_epochs[index] = current_epoch + EXIT_DELAY_EPOCHS
        return self.exit_epochs[index]

    def status(self, index: int, epoch: int) -> str:
        """The Beacon API's validator status at ``epoch``."""
        exit_epoch = self.exit_epoch(index)
        slashed = index in self.slashed
        if epoch < exit_epoch:
            if slashed:
                return "active_slashed"
            return "active_exiting" if exit_epoch != FAR_FUTURE_EPOCH else "active_ongoing"
        if epoch < exit_epoch + WITHDRAWABILITY_DELAY_EPOCHS:
            return "exited_slashed" if slashed else "exited_unslashed"
        return "withdrawal_possible"

    def validator_json(self, index: int, pubkey: bytes) -> dict[str, Any]:
        """The ``validator`` member of a ValidatorResponse."""
        exit_epoch = self.exit_epoch(index)
        withdrawable = (
            FAR_FUTURE_EPOCH
            if exit_epoch == FAR_FUTURE_EPOCH
            else exit_epoch + WITHDRAWABILITY_DELAY_EPOCHS
        )
        return {
            "pubkey": "0x" + pubkey.hex(),
            "withdrawal_credentials": "0x" + bls_withdrawal_credentials(pubkey).hex(),
            "effective_balance": str(MAX_EFFECTIVE_BALANCE_GWEI),
            "slashed": index in self.slashed,
            "activation_eligibility_epoch": "0",
            "activation_epoch": "0",
            "exit_epoch": str(exit_epoch),
            "withdrawable_epoch": str(withdrawable),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_epochs": {str(index): epoch for index, epoch in sorted(self.exit_epochs.items())},
            "slashed": sorted(self.slashed),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ValidatorLifecycle:
        exits: Mapping[str, Any] = data.get("exit_epochs", {})
        slashed: Iterable[Any] = data.get("slashed", [])
        return cls(
            exit_epochs={int(index): int(epoch) for index, epoch in exits.items()},
            slashed={int(index) for index in slashed},
        )
