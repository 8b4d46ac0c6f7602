"""``--keymanager``: the standard Keymanager API, served in the validator's process.

The API itself (routes, bearer token, keystore import and deletion with their
slashing-protection history, per-key settings, voluntary exits) is
``keymanager.api``'s. This module starts it on the running service: its key
store, record, signer and chain, the beacon node for validator indices, and the
process-wide defaults that GET answers for keys without their own settings.
``KeymanagerSigning`` is the validator's side of ``keymanager.api``'s
``KeymanagerSigner`` protocol: keymanager imports nothing of the validator, so
the exit's SSZ type, the chain's clock and the signer's refusals are turned
into what it asks for here. Imported keys reach the signer through the key gate
(``validator.duties.doppelganger``): a halted key stays out, and with doppelganger
protection a new key waits before its first signature.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from aiohttp import web

from keymanager.api import (
    KeyDefaults,
    KeymanagerContext,
    TokenFileError,
    beacon_index_resolver,
    bound_port,
    start_keymanager_server,
)
from keymanager.errors import ExitRefusedError, NoCurrentEpochError, RemoteKeyRefusedError
from keymanager.store import ValidatorStore
from slashing_protection.protocol import SlashingProtectionRecord
from validator.beacon import BeaconNodeClient
from validator.consensus.spec import ChainSpec, ChainSpecError
from validator.consensus.ssz import VoluntaryExit
from validator.duties.doppelganger import KeyGate
from validator.signing.remote_keys import RemoteKeySources
from validator.signing.signer import Signer
from validator.signing.types import RefusalReason, SigningRefusedError


class KeymanagerStartError(Exception):
    """The API cannot be served; the message is one line an operator can act on."""


class KeymanagerSigning:
    """``keymanager.api.KeymanagerSigner`` over the validator's signer (and its chain)."""

    def __init__(
        self,
        signer: Signer,
        remote: RemoteKeySources | None = None,
        gate: KeyGate | None = None,
    ) -> None:
        self._signer = signer
        self._remote = remote
        self._gate = gate

    async def add_keys(self, keys: Mapping[bytes, int]) -> None:
        if self._gate is None:
            await self._signer.add_keys(keys)
        else:
            await self._gate.admit(keys, imported=True)

    async def remove_keys(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        if self._gate is None:
            return await self._signer.remove_keys(pubkeys)
        return await self._gate.remove(pubkeys)

    def has_key(self, pubkey: bytes) -> bool:
        if self._gate is None:
            return self._signer.has_key(pubkey)
        return self._gate.holds(pubkey)

    async def add_remote_key(self, pubkey: bytes, url: str) -> None:
        if self._remote is None:
            raise RemoteKeyRefusedError("validator signer signs with its own keystores only")
        remote = {pubkey: self._remote.signer_for(url)}
        if self._gate is None:
            await self._signer.add_remote_keys(remote)
        else:  # a key added while running waits under doppelganger protection
            await self._gate.admit(remote, imported=True)

    def current_epoch(self) -> int:
        try:
            return self._signer.chain.current_epoch()
        except ChainSpecError as error:
            raise NoCurrentEpochError(str(error)) from None

    async def sign_voluntary_exit(self, pubkey: bytes, epoch: int, validator_index: int) -> bytes:
        voluntary_exit = VoluntaryExit(epoch=epoch, validator_index=validator_index)
        try:
            signed = await self._signer.sign_voluntary_exit(pubkey, voluntary_exit)
        except SigningRefusedError as refused:
            unknown = refused.reason in (RefusalReason.UNKNOWN_KEY, RefusalReason.KEY_REMOVED)
            raise ExitRefusedError(str(refused.refusal), key_unknown=unknown) from None
        return bytes(signed.signature)


class KeymanagerServer:
    """The running API; ``await stop()`` ends it."""

    def __init__(self, runner: web.AppRunner) -> None:
        self._runner = runner
        self.port = bound_port(runner)

    async def stop(self) -> None:
        await self._runner.cleanup()


async def start_keymanager(
    *,
    store: ValidatorStore,
    record: SlashingProtectionRecord,
    signer: Signer,
    chain: ChainSpec,
    client: BeaconNodeClient | None,
    address: str,
    port: int,
    token_file: Path | None,
    default_fee_recipient: bytes | None,
    default_graffiti: str,
    remote: RemoteKeySources | None = None,
    gate: KeyGate | None = None,
    defaults_of: KeyDefaults | None = None,
) -> KeymanagerServer:
    """Serve the Keymanager API over these parts; KeymanagerStartError when it cannot."""
    context = KeymanagerContext(
        store=store,
        record=record,
        signer=KeymanagerSigning(signer, remote, gate),
        genesis_validators_root=chain.genesis_validators_root,
        resolve_validator_index=beacon_index_resolver(client)
        if client is not None
        else _no_beacon_node,
        default_fee_recipient=default_fee_recipient,
        default_graffiti=default_graffiti,
        defaults_of=defaults_of,
    )
    try:
        runner = await start_keymanager_server(context, address, port, token_file)
    except TokenFileError as error:
        raise KeymanagerStartError(f"--keymanager: {error}") from None
    except OSError as error:
        raise KeymanagerStartError(
            f"cannot serve the Keymanager API on {address}:{port}: {error.strerror or error}"
        ) from None
    return KeymanagerServer(runner)


async def _no_beacon_node(pubkey: bytes) -> int | None:
    """``validator signer --network`` without a beacon node cannot look an index up."""
    raise RuntimeError("no beacon node is configured (give --beacon-node-url)")
