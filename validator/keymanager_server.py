"""``--keymanager``: the standard Keymanager API, served in the validator's process.

The API itself (routes, bearer token, keystore import and deletion with their
slashing-protection history, per-key settings, voluntary exits) is
``keymanager.api``'s. This module starts it on the running service: its key
store, record, signer and chain, the beacon node for validator indices, and the
process-wide defaults that GET answers for keys without their own settings.
``KeymanagerSigning`` is the validator's side of ``keymanager.api``'s
``KeymanagerSigner`` protocol: keymanager imports nothing of the validator, so
the exit's SSZ type, the chain's clock and the signer's refusals are turned
into what it asks for here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from aiohttp import web

from keymanager.api import (
    KeymanagerContext,
    TokenFileError,
    beacon_index_resolver,
    bound_port,
    start_keymanager_server,
)
from keymanager.errors import ExitRefusedError, NoCurrentEpochError
from validator.signer import Signer
from validator.signing_types import RefusalReason, SigningRefusedError
from validator.spec import ChainSpecError
from validator.ssz import VoluntaryExit

if TYPE_CHECKING:
    from validator.service import ValidatorService


class KeymanagerSigning:
    """``keymanager.api.KeymanagerSigner`` over the validator's signer (and its chain)."""

    def __init__(self, signer: Signer) -> None:
        self._signer = signer

    async def add_keys(self, keys: Mapping[bytes, int]) -> None:
        await self._signer.add_keys(keys)

    async def remove_keys(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        return await self._signer.remove_keys(pubkeys)

    def has_key(self, pubkey: bytes) -> bool:
        return self._signer.has_key(pubkey)

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


async def start_keymanager(service: ValidatorService) -> KeymanagerServer:
    """Serve the Keymanager API for ``service``; StartupError when it cannot."""
    from validator.service import StartupError

    options = service.options
    assert service.record is not None and service.signer is not None
    assert service.chain is not None and service.client is not None
    context = KeymanagerContext(
        store=service.store,
        record=service.record,
        signer=KeymanagerSigning(service.signer),
        genesis_validators_root=service.chain.genesis_validators_root,
        resolve_validator_index=beacon_index_resolver(service.client),
        default_fee_recipient=options.suggested_fee_recipient,
        default_graffiti=options.graffiti or "",
    )
    try:
        runner = await start_keymanager_server(
            context,
            options.keymanager_address,
            options.keymanager_port,
            options.keymanager_token_file,
        )
    except TokenFileError as error:
        raise StartupError(f"--keymanager: {error}") from None
    except OSError as error:
        raise StartupError(
            f"cannot serve the Keymanager API on {options.keymanager_address}:"
            f"{options.keymanager_port}: {error.strerror or error}"
        ) from None
    return KeymanagerServer(runner)
