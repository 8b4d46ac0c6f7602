"""A key deleted through DELETE /eth/v1/keystores never comes back from the key cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keymanager.key_cache import CacheKdf
from keymanager.keystore import ScryptCost, encrypt_keystore
from keymanager.pubkeys import format_pubkey
from keymanager.store import ValidatorStore
from tests.keymanager.api.support import PASSWORD, Api, hex_pubkey, pubkey, secret

KEYSTORES = "/eth/v1/keystores"
SMALL_CACHE = CacheKdf(n=2**10)


@pytest.fixture
def store(validators_dir: Path) -> ValidatorStore:
    return ValidatorStore(validators_dir, key_cache_kdf=SMALL_CACHE)


def _scrypt_keystore(n: int) -> str:
    return encrypt_keystore(secret(n), PASSWORD, kdf=ScryptCost(n=2**12)).to_json().decode()


async def test_deleted_key_is_not_loaded_from_the_cache_on_the_next_start(
    api: Api, store: ValidatorStore, validators_dir: Path
) -> None:
    answer = await api.post(
        KEYSTORES,
        {"keystores": [_scrypt_keystore(n) for n in (1, 2, 3)], "passwords": [PASSWORD] * 3},
    )
    assert answer.statuses == ["imported"] * 3
    # A start: decrypts the keystores and writes the cache.
    assert store.load_all(progress=False) == {pubkey(n): secret(n) for n in (1, 2, 3)}
    assert store.key_cache_path.exists()
    deleted = await api.delete(KEYSTORES, {"pubkeys": [hex_pubkey(2)]})
    assert deleted.statuses == ["deleted"]
    entries = json.loads(store.key_cache_path.read_bytes())["entries"]
    assert [entry["pubkey"] for entry in entries] == sorted(
        format_pubkey(pubkey(n)) for n in (1, 3)
    )
    # The next start, from the cache alone.
    restarted = ValidatorStore(validators_dir, key_cache_kdf=SMALL_CACHE)
    assert restarted.load_all(progress=False) == {pubkey(n): secret(n) for n in (1, 3)}
