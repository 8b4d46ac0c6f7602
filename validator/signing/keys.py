"""The decrypted keys the signer holds, added and removed while it runs.

A removed key must sign nothing from the moment its removal returns (the
Keymanager API exports a deleted key's history right after, and that export
must cover every signature the key made). So signing takes a *hold* on the keys
it uses, under the same lock removal takes: membership is checked when the hold
is taken and again right before each signature, and removal, having taken the
key out, waits until no hold on it is left. A signature made with a key
therefore exists before that key's removal returns, or not at all.

A key removed while this process runs is remembered (until it is added again), so
that a duty already under way for it when it left is refused as ``key_removed``
rather than ``unknown_key``: one reason for a key this signer never had, another for
one an operator took away mid-duty.

Everything here runs on one event loop; the lock is an ``asyncio.Condition``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager

import crypto_backend
from validator.metrics import SIGNING_KEYS
from validator.signing.methods import LocalKey, RemoteKey, SigningMethod
from validator.signing.remote import RemoteSigner
from validator.signing.types import KEY_NOT_HELD, KEY_REMOVED, Refusal

PUBKEY_BYTES = 48


class KeyMismatchError(ValueError):
    """A secret key that does not give the public key it was added under."""


def _check_keys(keys: Mapping[bytes, int]) -> None:
    for pubkey, secret in keys.items():
        if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
            raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
        # The record is keyed by pubkey: a secret signing under another key's name
        # would sign messages that no record entry accounts for.
        if crypto_backend.sk_to_pk(secret) != pubkey:
            raise KeyMismatchError(
                f"the secret key added for 0x{pubkey.hex()} belongs to another public key"
            )


class KeyHold:
    """Keys one request uses; they cannot leave the ring until the hold is released."""

    def __init__(self, ring: SigningKeys, held: Counter[bytes]) -> None:
        self._ring = ring
        self._held = held

    def holds(self, pubkey: bytes) -> bool:
        return self._held[pubkey] > 0

    async def methods(self, pubkeys: Iterable[bytes]) -> dict[bytes, SigningMethod]:
        """The signing methods of the held keys still in the ring, checked under the ring's
        lock.

        Keys removed since the hold was taken are released at once (so their
        removal need not wait for the rest of this request) and left out.
        """
        return await self._ring._methods_for(self._held, pubkeys)


class SigningKeys:
    """pubkey -> its signing method (a local secret or a remote signer), with holds so that
    removal waits for signing in flight."""

    def __init__(self) -> None:
        self._methods: dict[bytes, SigningMethod] = {}
        self._in_flight: Counter[bytes] = Counter()
        self._changed = asyncio.Condition()
        #: Keys removed from the ring since this process started and not added back.
        self._removed: set[bytes] = set()

    def __contains__(self, pubkey: object) -> bool:
        return pubkey in self._methods

    def __len__(self) -> int:
        return len(self._methods)

    def pubkeys(self) -> list[bytes]:
        return list(self._methods)

    def absent(self, pubkey: bytes) -> Refusal:
        """Why a request for a key not in the ring signs nothing: removed while running, or
        never held."""
        return KEY_REMOVED if pubkey in self._removed else KEY_NOT_HELD

    async def add(self, keys: Mapping[bytes, int]) -> None:
        """Add (or replace) keys; KeyMismatchError, adding none, if a secret is not its key's."""
        keys = dict(keys)
        await asyncio.to_thread(_check_keys, keys)
        async with self._changed:
            self._methods.update((pubkey, LocalKey(secret)) for pubkey, secret in keys.items())
            self._removed.difference_update(keys)
            SIGNING_KEYS.set(len(self._methods))

    async def add_remote(self, keys: Mapping[bytes, RemoteSigner]) -> None:
        """Add keys a remote signer signs for (a local key of the same pubkey is replaced)."""
        for pubkey in keys:
            if type(pubkey) is not bytes or len(pubkey) != PUBKEY_BYTES:
                raise ValueError(f"a pubkey must be {PUBKEY_BYTES} bytes, got {pubkey!r:.60}")
        async with self._changed:
            self._methods.update((pubkey, RemoteKey(signer)) for pubkey, signer in keys.items())
            self._removed.difference_update(keys)
            SIGNING_KEYS.set(len(self._methods))

    def is_remote(self, pubkey: bytes) -> bool:
        method = self._methods.get(pubkey)
        return method is not None and method.is_remote

    async def remove(self, pubkeys: Iterable[bytes]) -> list[bytes]:
        """Remove keys and wait until no signing with them is in flight; the removed ones.

        When this returns, no signature with any of these keys will be made.
        """
        async with self._changed:
            removed = [pubkey for pubkey in dict.fromkeys(pubkeys) if pubkey in self._methods]
            for pubkey in removed:
                del self._methods[pubkey]
            self._removed.update(removed)
            SIGNING_KEYS.set(len(self._methods))
            await self._changed.wait_for(
                lambda: not any(self._in_flight[pubkey] for pubkey in removed)
            )
        return removed

    @asynccontextmanager
    async def hold(self, pubkeys: Iterable[bytes]) -> AsyncIterator[KeyHold]:
        """Hold those of ``pubkeys`` that are in the ring for the duration of the block."""
        held: Counter[bytes] = Counter()
        async with self._changed:
            for pubkey in pubkeys:
                if pubkey in self._methods:
                    held[pubkey] += 1
            self._in_flight.update(held)
        try:
            yield KeyHold(self, held)
        finally:
            async with self._changed:
                self._release(held, list(held))

    async def _methods_for(
        self, held: Counter[bytes], pubkeys: Iterable[bytes]
    ) -> dict[bytes, SigningMethod]:
        async with self._changed:
            found: dict[bytes, SigningMethod] = {}
            gone = []
            for pubkey in pubkeys:
                if held[pubkey] <= 0:
                    continue
                method = self._methods.get(pubkey)
                if method is None:
                    gone.append(pubkey)
                else:
                    found[pubkey] = method
            if gone:
                self._release(held, gone)
            return found

    def _release(self, held: Counter[bytes], pubkeys: list[bytes]) -> None:
        """Give back the hold on ``pubkeys`` (call under the lock)."""
        released = False
        for pubkey in dict.fromkeys(pubkeys):
            count = held.pop(pubkey, 0)
            if count > 0:
                self._in_flight[pubkey] -= count
                if self._in_flight[pubkey] <= 0:
                    del self._in_flight[pubkey]
                released = True
        if released:
            self._changed.notify_all()
