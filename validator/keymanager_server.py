"""``--keymanager``: the standard Keymanager API, served in the validator's process.

The API itself (routes, bearer token, keystore import and deletion with their
slashing-protection history, per-key settings, voluntary exits) is
``keymanager.api``'s. This module starts it on the running service: its key
store, record, signer and chain, the beacon node for validator indices, and the
process-wide defaults that GET answers for keys without their own settings.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from keymanager.api import (
    KeymanagerContext,
    TokenFileError,
    beacon_index_resolver,
    bound_port,
    start_keymanager_server,
)
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtection
from validator.beacon import BeaconNodeClient
from validator.consensus.spec import ChainSpec
from validator.signing.signer import Signer


class KeymanagerStartError(Exception):
    """The API cannot be served; the message is one line an operator can act on."""


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
    record: SlashingProtection,
    signer: Signer,
    chain: ChainSpec,
    client: BeaconNodeClient,
    address: str,
    port: int,
    token_file: Path | None,
    default_fee_recipient: bytes | None,
    default_graffiti: str,
) -> KeymanagerServer:
    """Serve the Keymanager API over these parts; KeymanagerStartError when it cannot."""
    context = KeymanagerContext(
        store=store,
        record=record,
        signer=signer,
        chain=chain,
        resolve_validator_index=beacon_index_resolver(client),
        default_fee_recipient=default_fee_recipient,
        default_graffiti=default_graffiti,
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
