"""Helpers for the Keymanager API tests: keys, histories, and a client that speaks the API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

import orjson
from aiohttp.test_utils import TestClient

from keymanager.api import KeymanagerContext
from keymanager.pubkeys import format_pubkey
from tests.keymanager_api.conformance import ConformanceChecker
from tests.keystore_helpers import PASSWORD, cheap_keystore_json
from tests.sp_support import entry, interchange
from validator.consensus.interop import interop_secret_key

GVR = sha256(b"keymanager api tests").digest()
OTHER_GVR = sha256(b"another chain").digest()
GENESIS_TIME = 1_700_000_000
TOKEN = "9f" * 32


def secret(n: int) -> int:
    """A real BLS secret key per n (interop keys, far from the ones other tests use)."""
    return interop_secret_key(200 + n)


def pubkey(n: int) -> bytes:
    from crypto_backend import sk_to_pk

    return sk_to_pk(secret(n))


def hex_pubkey(n: int) -> str:
    return format_pubkey(pubkey(n))


def keystore(n: int, password: str = PASSWORD, path: str | None = None) -> str:
    """A cheap-KDF EIP-2335 keystore of key n, as the API carries it (JSON text)."""
    return cheap_keystore_json(secret(n), password, path or f"m/12381/3600/{n}/0/0").decode()


def history(marks: dict[int, tuple[int | None, tuple[int, int] | None]], root: bytes = GVR) -> str:
    """An EIP-3076 interchange: key n -> (block slot or None, (source, target) or None)."""
    entries = [
        entry(
            pubkey(n),
            slots=() if slot is None else (slot,),
            attestations=() if attestation is None else (attestation,),
        )
        for n, (slot, attestation) in marks.items()
    ]
    return interchange(entries, root).decode()


def import_body(
    keys: list[int], slashing_protection: str | None = None, password: str = PASSWORD
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "keystores": [keystore(n) for n in keys],
        "passwords": [password] * len(keys),
    }
    if slashing_protection is not None:
        body["slashing_protection"] = slashing_protection
    return body


@dataclass
class Answer:
    status: int
    body: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def statuses(self) -> list[str]:
        return [item["status"] for item in self.json["data"]]

    @property
    def message(self) -> str:
        message = self.json["message"]
        assert isinstance(message, str)
        return message


@dataclass
class Api:
    """The test client with the token, and the conformance checker that saw every answer."""

    client: TestClient[Any, Any]
    checker: ConformanceChecker
    context: KeymanagerContext
    token: str = TOKEN

    async def call(
        self,
        method: str,
        path: str,
        json: Any = None,
        *,
        data: bytes | None = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> Answer:
        sent = dict(headers or {})
        if token is not None or "Authorization" not in sent:
            sent.setdefault("Authorization", f"Bearer {token or self.token}")
        if json is not None:
            data = orjson.dumps(json)
            sent.setdefault("Content-Type", "application/json")
        async with self.client.request(
            method, path, data=data, headers=sent, params=params
        ) as response:
            return Answer(response.status, await response.read())

    async def get(self, path: str, **options: Any) -> Answer:
        return await self.call("GET", path, **options)

    async def post(self, path: str, json: Any = None, **options: Any) -> Answer:
        return await self.call("POST", path, json, **options)

    async def delete(self, path: str, json: Any = None, **options: Any) -> Answer:
        return await self.call("DELETE", path, json, **options)


ApiFactory = Callable[[KeymanagerContext], Awaitable[Api]]
"""The `api_for` fixture: serve another context (same directory, other defaults)."""
