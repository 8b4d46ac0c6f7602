"""``--keymanager``: the standard Keymanager API, served in the validator's process.

The API itself (routes, bearer token, keystore import and deletion with their
slashing-protection history) is ``keymanager``'s; this module starts it on the
running service's signer, record and key store.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from validator.service import ValidatorService


class RunningServer(Protocol):
    async def stop(self) -> None: ...


async def start_keymanager(service: ValidatorService) -> RunningServer:
    """Serve the Keymanager API for ``service``; StartupError when it cannot."""
    from validator.service import StartupError

    try:
        importlib.import_module("keymanager.api")
    except ImportError:
        raise StartupError(
            "--keymanager: this build has no Keymanager API (keymanager.api) yet; "
            "start without --keymanager"
        ) from None
    raise StartupError("--keymanager: the Keymanager API is not wired to the validator yet")
