"""``--keymanager``: the standard Keymanager API, served in the validator's process.

The API itself (routes, bearer token, keystore import and deletion with their
slashing-protection history, per-key settings, voluntary exits) is
``keymanager.api``'s. This module starts it on the running service: its key
store, record, signer and chain, the beacon node for validator indices, and the
process-wide defaults that GET answers for keys without their own settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from keymanager.api import (
    KeymanagerContext,
    TokenFileError,
    beacon_index_resolver,
    bound_port,
    start_keymanager_server,
)

if TYPE_CHECKING:
    from validator.service import ValidatorService


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
        signer=service.signer,
        chain=service.chain,
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
