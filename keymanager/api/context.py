"""What the Keymanager API needs from the running validator, in one object.

`KeymanagerContext` names the parts: the key store, the open
slashing-protection record, the signer, the chain's genesis_validators_root and
a way to find a validator's index. The record and the signer are described by
protocols defined here, so the API depends only on the calls it makes and never
imports the validator: `KeymanagerRecord` is slashing_protection's record
protocol (the file record and the shared PostgreSQL record satisfy it), and
`validator.keymanager_server.KeymanagerSigning` (over the validator's signer and
chain) satisfies `KeymanagerSigner`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtectionRecord

# The execution gas limit proposed when neither the key's setting nor the
# command line names one (the value most of mainnet signals today).
DEFAULT_GAS_LIMIT = 36_000_000


KeymanagerRecord = SlashingProtectionRecord
"""The slashing-protection record the API imports into, exports from and registers keys in
(blocking calls: run in threads): the file record or the shared PostgreSQL one, behind
slashing_protection's one protocol."""


class KeymanagerSigner(Protocol):
    """What the API needs of the validator's signing (coroutines on the server's event loop)."""

    async def add_keys(self, keys: Mapping[bytes, int]) -> None: ...

    async def remove_keys(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """Returns once no signature with these keys can appear any more."""
        ...

    def has_key(self, pubkey: bytes) -> bool: ...

    async def add_remote_key(self, pubkey: bytes, url: str) -> None:
        """Sign with ``pubkey`` through the remote signer at ``url`` from now on (its blocks
        and attestations judged by the record first); `RemoteKeyRefusedError` when this
        process signs with no remote key."""
        ...

    def current_epoch(self) -> int:
        """The chain's epoch by the wall clock; `NoCurrentEpochError` before genesis."""
        ...

    async def sign_voluntary_exit(self, pubkey: bytes, epoch: int, validator_index: int) -> bytes:
        """The key's signature of `VoluntaryExit(epoch, validator_index)`, under the domain
        the chain's rules give it; `ExitRefusedError` when it is not signed."""
        ...


KeyDefaults = Callable[[bytes], tuple[bytes | None, int]]
"""pubkey -> (fee recipient, gas limit) a key without its own setting uses."""

ValidatorIndexResolver = Callable[[bytes], Awaitable[int | None]]
"""pubkey -> the validator's index on the chain, or None when the chain does not know it."""


@dataclass(frozen=True)
class KeymanagerContext:
    """Everything the Keymanager API serves from (see the module docstring).

    The defaults are what GET answers for a key without its own setting:
    `default_fee_recipient` (20 bytes; None: the validator has no
    `--suggested-fee-recipient`, and GET feerecipient answers 404 for such a key),
    `default_gas_limit`, `default_graffiti`. `defaults_of`, when given, answers a
    key's default fee recipient and gas limit instead (the validator's proposer
    config names them per key). `genesis_validators_root` names the chain whose
    slashing-protection history a keystore import may bring.
    """

    store: ValidatorStore
    record: KeymanagerRecord
    signer: KeymanagerSigner
    genesis_validators_root: bytes
    resolve_validator_index: ValidatorIndexResolver
    default_fee_recipient: bytes | None = None
    default_gas_limit: int = DEFAULT_GAS_LIMIT
    default_graffiti: str = ""
    defaults_of: KeyDefaults | None = None

    def fee_recipient_default(self, pubkey: bytes) -> bytes | None:
        if self.defaults_of is None:
            return self.default_fee_recipient
        return self.defaults_of(pubkey)[0]

    def gas_limit_default(self, pubkey: bytes) -> int:
        if self.defaults_of is None:
            return self.default_gas_limit
        return self.defaults_of(pubkey)[1]


def beacon_index_resolver(client: Any) -> ValidatorIndexResolver:
    """A resolver asking a `validator.beacon.BeaconNodeClient` (`get_validators` at head)."""

    async def resolve(pubkey: bytes) -> int | None:
        found = await client.get_validators([pubkey])
        for validator in found:
            if validator.pubkey == pubkey:
                return int(validator.index)
        return None

    return resolve
