"""keymanager.key_cache through the store's loader: real files, real scrypt (small n where
the test is about the logic, the standard n=2^18 once)."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from keymanager.key_cache import KEY_CACHE_FILE_NAME, CacheKdf
from keymanager.keystore import STANDARD_SCRYPT, ScryptCost, encrypt_keystore
from keymanager.pubkeys import format_pubkey
from keymanager.store import ValidatorStore
from tests.support.keystores import PASSWORD, pubkey_of

# Cheap but real scrypt: the keystores cost more than the cache key, so the store caches.
SMALL_KEYSTORE = ScryptCost(n=2**12)
SMALL_CACHE = CacheKdf(n=2**10)
SECRETS = [0xCAC4E + index for index in range(4)]


def _store(directory: Path, kdf: CacheKdf = SMALL_CACHE) -> ValidatorStore:
    return ValidatorStore(directory, key_cache_kdf=kdf)


def _import(
    store: ValidatorStore, secret: int, password: str = PASSWORD, kdf: ScryptCost = SMALL_KEYSTORE
) -> bytes:
    keystore = encrypt_keystore(secret, password, kdf=kdf, path=f"m/12381/3600/{secret % 97}/0/0")
    return store.import_keystore(keystore.to_json(), password)


def _cold_and_warm(directory: Path) -> ValidatorStore:
    store = _store(directory)
    for secret in SECRETS:
        _import(store, secret)
    assert not store.key_cache_path.exists()
    assert store.load_all(progress=False) == {pubkey_of(s): s for s in SECRETS}
    assert store.key_cache_path.exists()
    return store


def _messages(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "validators"


def test_cache_hit_loads_the_same_secrets_without_the_keystores(
    directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _cold_and_warm(directory)
    assert stat.S_IMODE(store.key_cache_path.stat().st_mode) == 0o600
    document = json.loads(store.key_cache_path.read_bytes())
    assert [entry["pubkey"] for entry in document["entries"]] == sorted(
        format_pubkey(pubkey_of(s)) for s in SECRETS
    )
    # No secret and no password appears in the clear.
    text = store.key_cache_path.read_text()
    assert PASSWORD not in text
    assert all(f"{s:064x}" not in text for s in SECRETS)
    caplog.set_level(logging.INFO, logger="keymanager.store")
    before = store.key_cache_path.read_bytes()
    assert _store(directory).load_all(progress=False) == {pubkey_of(s): s for s in SECRETS}
    assert "4 from the key cache, 0 decrypted" in _messages(caplog)
    assert store.key_cache_path.read_bytes() == before  # nothing changed: not rewritten


def test_added_keystore_is_decrypted_and_the_cache_rewritten(
    directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _cold_and_warm(directory)
    added = _import(store, 0xADD, password="another password")
    caplog.set_level(logging.INFO, logger="keymanager.store")
    loaded = _store(directory).load_all(progress=False)
    assert loaded == {**{pubkey_of(s): s for s in SECRETS}, added: 0xADD}
    assert "4 from the key cache, 1 decrypted" in _messages(caplog)
    caplog.clear()
    assert _store(directory).load_all(progress=False) == loaded
    assert "5 from the key cache, 0 decrypted" in _messages(caplog)


def test_removed_keystore_is_never_loaded_from_the_cache(
    directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _cold_and_warm(directory)
    gone = pubkey_of(SECRETS[1])
    # Removed behind the store's back (an operator's rm), password file kept or not.
    store.keystore_path(gone).unlink()
    caplog.set_level(logging.INFO, logger="keymanager.store")
    loaded = _store(directory).load_all(progress=False)
    assert gone not in loaded and len(loaded) == 3
    assert "1 stale entry dropped" in _messages(caplog)
    entries = json.loads(store.key_cache_path.read_bytes())["entries"]
    assert format_pubkey(gone) not in [entry["pubkey"] for entry in entries]


def test_changed_keystore_is_decrypted_from_the_new_file(
    directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _cold_and_warm(directory)
    changed = pubkey_of(SECRETS[2])
    # Same key, re-encrypted (new salt and IV): a different file with the same password.
    fresh = encrypt_keystore(SECRETS[2], PASSWORD, kdf=SMALL_KEYSTORE, path="m/12381/3600/9/0/0")
    store.keystore_path(changed).write_bytes(fresh.to_json())
    caplog.set_level(logging.INFO, logger="keymanager.store")
    assert _store(directory).load_all(progress=False)[changed] == SECRETS[2]
    assert "3 from the key cache, 1 decrypted" in _messages(caplog)


def test_changed_password_opens_no_cache_and_is_reported(
    directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _cold_and_warm(directory)
    target = pubkey_of(SECRETS[0])
    store.secret_path(target).write_text("not the password")
    caplog.set_level(logging.INFO, logger="keymanager.store")
    # The cache no longer opens, and the keystore itself refuses the wrong password:
    # the cache never hides a password that no longer opens its keystore.
    with pytest.raises(Exception, match="wrong password"):
        _store(directory).load_all(progress=False)
    assert "not used" in _messages(caplog)
    store.secret_path(target).write_text(PASSWORD)
    assert len(_store(directory).load_all(progress=False)) == 4


def test_password_and_keystore_changed_together(directory: Path) -> None:
    store = _cold_and_warm(directory)
    target = pubkey_of(SECRETS[3])
    fresh = encrypt_keystore(SECRETS[3], "new password", kdf=SMALL_KEYSTORE)
    store.secret_path(target).write_text("new password")
    store.keystore_path(target).write_bytes(fresh.to_json())
    assert _store(directory).load_all(progress=False)[target] == SECRETS[3]
    # The rewritten cache opens under the new password set.
    store.keystore_path(pubkey_of(SECRETS[0])).unlink()  # shared password: still derivable
    loaded = _store(directory).load_all(progress=False)
    assert loaded == {pubkey_of(s): s for s in SECRETS[1:]}


@pytest.mark.parametrize(
    "damage",
    [
        "truncate",
        "garbage",
        "flip ciphertext",
        "swap entries",
        "lower kdf",
        "empty",
    ],
)
def test_damaged_cache_falls_back_to_the_keystores_and_is_rewritten(
    directory: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    store = _cold_and_warm(directory)
    path = store.key_cache_path
    raw = path.read_bytes()
    document = json.loads(raw)
    if damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "flip ciphertext":
        ciphertext = bytearray(bytes.fromhex(document["ciphertext"]))
        ciphertext[5] ^= 1
        document["ciphertext"] = ciphertext.hex()
        path.write_text(json.dumps(document))
    elif damage == "swap entries":
        # Point the first entry's keystore hash at another file: the associated data fails.
        entries = document["entries"]
        entries[0]["keystore_sha256"] = entries[1]["keystore_sha256"]
        path.write_text(json.dumps(document))
    elif damage == "lower kdf":
        document["kdf"]["n"] = 2
        path.write_text(json.dumps(document))
    caplog.set_level(logging.INFO, logger="keymanager.store")
    assert _store(directory).load_all(progress=False) == {pubkey_of(s): s for s in SECRETS}
    assert "not used" in _messages(caplog)
    assert "0 from the key cache, 4 decrypted" in _messages(caplog)
    caplog.clear()
    assert _store(directory).load_all(progress=False) == {pubkey_of(s): s for s in SECRETS}
    assert "4 from the key cache, 0 decrypted" in _messages(caplog)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_cache_written_for_other_passwords_is_refused(
    directory: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache copied from a directory with the same keys under other passwords."""
    other = tmp_path / "other"
    other_store = _store(other)
    for secret in SECRETS:
        _import(other_store, secret, password="other password")
    other_store.load_all(progress=False)
    store = _store(directory)
    for secret in SECRETS:
        _import(store, secret)
    # Same keystore bytes too: only the passwords differ.
    for secret in SECRETS:
        pubkey = pubkey_of(secret)
        store.keystore_path(pubkey).write_bytes(other_store.keystore_path(pubkey).read_bytes())
        store.secret_path(pubkey).write_text("other password")
    (directory / KEY_CACHE_FILE_NAME).write_bytes(other_store.key_cache_path.read_bytes())
    store.secret_path(pubkey_of(SECRETS[0])).write_text("other password ")  # one differs
    caplog.set_level(logging.INFO, logger="keymanager.store")
    with pytest.raises(Exception, match="wrong password"):
        store.load_all(progress=False)
    assert "does not open with the current passwords" in _messages(caplog)


def test_use_cache_false_neither_reads_nor_writes(directory: Path) -> None:
    store = _store(directory)
    _import(store, SECRETS[0])
    assert store.load_all(progress=False, use_cache=False) == {pubkey_of(SECRETS[0]): SECRETS[0]}
    assert not store.key_cache_path.exists()


def test_cheap_keystores_are_not_worth_a_cache(directory: Path) -> None:
    store = ValidatorStore(directory)  # the standard n=2^18 cache key
    _import(store, SECRETS[0])  # n=2^12 keystore: far cheaper than the cache key
    store.load_all(progress=False)
    assert not store.key_cache_path.exists()


def test_store_delete_removes_the_key_from_the_cache(directory: Path) -> None:
    store = _cold_and_warm(directory)
    deleted = pubkey_of(SECRETS[0])
    assert store.delete_keystore(deleted)
    entries = json.loads(store.key_cache_path.read_bytes())["entries"]
    assert format_pubkey(deleted) not in [entry["pubkey"] for entry in entries]
    assert len(entries) == 3


def test_standard_cost_cache_with_standard_keystores(directory: Path) -> None:
    """The real format end to end: n=2^18 keystores and the default n=2^18 cache key."""
    store = ValidatorStore(directory)
    secrets = SECRETS[:2]
    for secret in secrets:
        _import(store, secret, kdf=STANDARD_SCRYPT)
    assert store.load_all(progress=False, processes=1) == {pubkey_of(s): s for s in secrets}
    document = json.loads(store.key_cache_path.read_bytes())
    assert document["kdf"]["n"] == 2**18 and document["kdf"]["r"] == 8
    assert document["cipher"]["function"] == "aes-256-gcm"
    assert ValidatorStore(directory).load_all(progress=False) == {
        pubkey_of(s): s for s in secrets
    }
