"""Where a client's remote keys come from: the directory's remote keys and ``--remote-signer-url``.

A remote key (``keymanager.remote_keys``, set through ``/eth/v1/remotekeys``) names its
signer's URL; ``--remote-signer-url URL`` adds every key that signer's
``GET /api/v1/eth2/publicKeys`` lists; such a key signs through the signer even when the
directory also has its keystore (the operator named the signer for it), and either way the
local record judges and records it first.
One ``RemoteSigner`` (one kept-alive session) serves all the keys of one URL.

A signer that cannot be listed at start does not stop the client: its keys are unknown
until it answers, so it is asked again every ``RELIST_SECONDS`` in the background and its
keys join (registered in the record first under ``--init-slashing-protection``) when it
does; meanwhile the local keys do their duties.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtectionError
from slashing_protection.blocking import run_to_completion
from slashing_protection.protocol import SlashingProtectionRecord
from validator.consensus.spec import ChainSpec
from validator.signing.remote import RemoteSigner, RemoteSignerSettings, RemoteSigningError

log = logging.getLogger("validator.remote_signer")

# Where keys found late go: (pubkey -> its remote signer) -> done.
AddRemoteKeys = Callable[[Mapping[bytes, RemoteSigner]], Awaitable[None]]

RELIST_SECONDS = 5.0
MIN_TIMEOUT_SECONDS = 1.0
MAX_TIMEOUT_SECONDS = 4.0


def settings_for(chain: ChainSpec) -> RemoteSignerSettings:
    """Per-attempt timeout: a third of a slot, within 1 to 4 seconds (two attempts)."""
    timeout = min(MAX_TIMEOUT_SECONDS, max(MIN_TIMEOUT_SECONDS, chain.seconds_per_slot / 3))
    return RemoteSignerSettings(timeout=timeout)


class RemoteKeySources:
    """The remote signers of one client run; ``await close()`` ends their sessions."""

    def __init__(
        self,
        store: ValidatorStore,
        chain: ChainSpec,
        token: str | None = None,
        middlewares: Sequence[Any] = (),
    ) -> None:
        self._store = store
        self._settings = replace(settings_for(chain), token=token)
        self._middlewares = tuple(middlewares)
        self._signers: dict[str, RemoteSigner] = {}
        self._unlisted: list[str] = []
        self._relisting: asyncio.Task[None] | None = None

    def signer_for(self, url: str) -> RemoteSigner:
        key = url.rstrip("/")
        if key not in self._signers:
            self._signers[key] = RemoteSigner(key, self._settings, middlewares=self._middlewares)
        return self._signers[key]

    async def initial(self, urls: Sequence[str], enabled: bool) -> dict[bytes, RemoteSigner]:
        """The remote keys known at start (pubkey -> its signer); StoreError when the
        directory's keys cannot be listed."""
        stored = await asyncio.to_thread(self._store.remote_keys)
        if not enabled:
            if stored:
                log.warning(
                    "%d remote key(s) in %s are not served: validator signer signs with its "
                    "keystores only",
                    len(stored),
                    self._store.validators_dir,
                )
            return {}
        keys = {key.pubkey: self.signer_for(key.url) for key in stored}
        for url in urls:
            listed = await self._list(url)
            if listed is None:
                self._unlisted.append(url)
            else:
                keys.update(listed)
        return keys

    async def _list(self, url: str) -> dict[bytes, RemoteSigner] | None:
        signer = self.signer_for(url)
        try:
            pubkeys = await signer.public_keys()
        except RemoteSigningError as error:
            log.warning(
                "remote signer %s: its keys are not known yet (%s); asking again every %.0f s",
                signer.url,
                error.refusal.detail,
                RELIST_SECONDS,
            )
            return None
        found = dict.fromkeys(pubkeys, signer)
        log.info("remote signer %s: %d key(s)", signer.url, len(found))
        return found

    def keep_listing(self, add: AddRemoteKeys, record: SlashingProtectionRecord | None) -> None:
        """Ask the signers not listed at start again, in the background, until they answer;
        ``add`` takes the keys found (the service's key gate, so they are checked for halts
        and wait under doppelganger protection like every other key).

        ``record`` (given under ``--init-slashing-protection``) registers their keys first.
        """
        if self._unlisted and self._relisting is None:
            self._relisting = asyncio.create_task(self._relist(add, record))

    async def _relist(self, add: AddRemoteKeys, record: SlashingProtectionRecord | None) -> None:
        while self._unlisted:
            await asyncio.sleep(RELIST_SECONDS)
            for url in list(self._unlisted):
                listed = await self._list(url)
                if listed is None:
                    continue
                self._unlisted.remove(url)
                if record is not None:
                    try:
                        await run_to_completion(record.register, list(listed))
                    except SlashingProtectionError as error:
                        log.error("cannot register the keys of %s: %s", url, error)
                await add(listed)

    async def close(self) -> None:
        if self._relisting is not None:
            self._relisting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._relisting
        for remote in self._signers.values():
            await remote.close()
