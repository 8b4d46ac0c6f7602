"""keymanager.store: layout, modes, import/delete ordering, loading, fail-closed reads."""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from keymanager import local_keystores as store_module
from keymanager.errors import (
    DuplicateKeyError,
    KeystoreLoadError,
    LocalRemoteConflictError,
    MalformedKeystoreError,
    PubkeyMismatchError,
    StoreCorruptionError,
    UnknownKeyError,
    UnsupportedKeystoreError,
    WrongPasswordError,
)
from keymanager.pubkeys import format_pubkey
from keymanager.store import KeystoreInfo, ValidatorStore
from slashing_protection.durable import temp_path_for
from tests.keystore_helpers import PASSWORD, cheap_keystore_json, pubkey_of
from tests.official_vectors import official_vectors

SECRETS = [0x5EC2E7 + index for index in range(4)]


@pytest.fixture
def validators_dir(tmp_path: Path) -> Path:
    return tmp_path / "validators"


@pytest.fixture
def store(validators_dir: Path) -> ValidatorStore:
    return ValidatorStore(validators_dir)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _import(store: ValidatorStore, secret: int, password: str = PASSWORD) -> bytes:
    return store.import_keystore(cheap_keystore_json(secret, password), password)


# --- layout and modes ----------------------------------------------------------------


def test_import_writes_the_designed_layout_with_private_modes(
    store: ValidatorStore, validators_dir: Path
) -> None:
    keystore_json = cheap_keystore_json(SECRETS[0])
    pubkey = store.import_keystore(keystore_json.decode(), PASSWORD)
    assert pubkey == pubkey_of(SECRETS[0])
    name = format_pubkey(pubkey)
    keystore_path = validators_dir / "keystores" / f"{name}.json"
    secret_path = validators_dir / "secrets" / name
    assert keystore_path.read_bytes() == keystore_json  # stored byte for byte
    assert secret_path.read_bytes() == PASSWORD.encode()
    assert _mode(keystore_path) == 0o600
    assert _mode(secret_path) == 0o600
    for directory in (validators_dir, validators_dir / "keystores", validators_dir / "secrets"):
        assert _mode(directory) == 0o700
    assert sorted(os.listdir(validators_dir / "keystores")) == [f"{name}.json"]
    assert sorted(os.listdir(validators_dir / "secrets")) == [name]


def test_directories_are_0700_even_under_a_permissive_umask(store: ValidatorStore) -> None:
    previous = os.umask(0)
    try:
        _import(store, SECRETS[0])
    finally:
        os.umask(previous)
    assert _mode(store.keystores_dir) == 0o700
    assert _mode(store.secrets_dir) == 0o700
    assert _mode(store.keystore_path(pubkey_of(SECRETS[0]))) == 0o600


def test_reading_an_empty_directory_creates_nothing(
    store: ValidatorStore, validators_dir: Path
) -> None:
    assert store.list_keystores() == []
    assert store.local_pubkeys() == []
    assert store.remote_keys() == []
    assert store.load_all() == {}
    assert not validators_dir.exists()


def test_listing_shows_pubkey_derivation_path_and_readonly(store: ValidatorStore) -> None:
    for index, secret in enumerate(SECRETS[:3]):
        keystore_json = cheap_keystore_json(secret, path=f"m/12381/3600/{index}/0/0")
        store.import_keystore(keystore_json, PASSWORD)
    expected = sorted(
        (
            KeystoreInfo(pubkey_of(secret), f"m/12381/3600/{index}/0/0", readonly=False)
            for index, secret in enumerate(SECRETS[:3])
        ),
        key=lambda info: info.pubkey,
    )
    assert store.list_keystores() == expected
    assert store.local_pubkeys() == [info.pubkey for info in expected]
    assert store.keystore_info(pubkey_of(SECRETS[1])) == next(
        info for info in expected if info.pubkey == pubkey_of(SECRETS[1])
    )
    assert store.keystore_info(pubkey_of(SECRETS[3])) is None
    assert store.read_keystore(pubkey_of(SECRETS[2])).path == "m/12381/3600/2/0/0"
    with pytest.raises(UnknownKeyError):
        store.read_keystore(pubkey_of(SECRETS[3]))
    with pytest.raises(UnknownKeyError):
        store.load_keystore(pubkey_of(SECRETS[3]))


def test_a_second_store_on_the_same_directory_sees_the_keys(
    store: ValidatorStore, validators_dir: Path
) -> None:
    _import(store, SECRETS[0])
    reopened = ValidatorStore(validators_dir)
    assert reopened.local_pubkeys() == [pubkey_of(SECRETS[0])]
    assert reopened.load_all() == {pubkey_of(SECRETS[0]): SECRETS[0]}


# --- deposit-cli keystores import unchanged ----------------------------------------------


@pytest.mark.parametrize("file_name", ["test0.json", "test1.json"])
def test_deposit_cli_keystore_imports_unchanged(store: ValidatorStore, file_name: str) -> None:
    folder = official_vectors("eip2335", "deposit-cli-keystore_test_vectors")
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    original = (folder / file_name).read_bytes()
    pubkey = store.import_keystore(original, expected["password"])
    assert store.keystore_path(pubkey).read_bytes() == original
    info = store.keystore_info(pubkey)
    assert info is not None and info.derivation_path == json.loads(original)["path"]
    assert store.load_all(processes=1) == {pubkey: int(expected["secret"], 16)}


# --- import refusals: nothing is written ------------------------------------------------


def _nothing_written(validators_dir: Path) -> bool:
    for sub in ("keystores", "secrets"):
        folder = validators_dir / sub
        if folder.exists() and os.listdir(folder):
            return False
    return True


def test_bad_password_is_refused_and_nothing_is_written(
    store: ValidatorStore, validators_dir: Path
) -> None:
    with pytest.raises(WrongPasswordError):
        store.import_keystore(cheap_keystore_json(SECRETS[0]), "wrong")
    assert _nothing_written(validators_dir)
    assert store.list_keystores() == []


def test_mismatched_pubkey_is_refused_and_nothing_is_written(
    store: ValidatorStore, validators_dir: Path
) -> None:
    document = json.loads(cheap_keystore_json(SECRETS[0]))
    document["pubkey"] = pubkey_of(SECRETS[1]).hex()
    with pytest.raises(PubkeyMismatchError):
        store.import_keystore(json.dumps(document), PASSWORD)
    assert _nothing_written(validators_dir)


@pytest.mark.parametrize(
    ("keystore_json", "error"),
    [
        ("not json", MalformedKeystoreError),
        ('{"version": 4}', MalformedKeystoreError),
        ("\ud800", MalformedKeystoreError),
        (b"\xff\xfe", MalformedKeystoreError),
        (
            cheap_keystore_json(SECRETS[0]).replace(b'"pbkdf2"', b'"argon2id"'),
            UnsupportedKeystoreError,
        ),
    ],
)
def test_malformed_or_unsupported_keystore_is_refused(
    store: ValidatorStore, validators_dir: Path, keystore_json: str | bytes, error: type
) -> None:
    with pytest.raises(error):
        store.import_keystore(keystore_json, PASSWORD)
    assert _nothing_written(validators_dir)


def test_keystore_without_pubkey_is_refused(store: ValidatorStore, validators_dir: Path) -> None:
    document = json.loads(cheap_keystore_json(SECRETS[0]))
    del document["pubkey"]
    with pytest.raises(MalformedKeystoreError, match="no pubkey"):
        store.import_keystore(json.dumps(document), PASSWORD)
    assert _nothing_written(validators_dir)


def test_duplicate_is_refused_and_the_stored_key_is_untouched(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    stored = store.keystore_path(pubkey).read_bytes()
    with pytest.raises(DuplicateKeyError):
        store.import_keystore(cheap_keystore_json(SECRETS[0], "other password"), "other password")
    assert store.keystore_path(pubkey).read_bytes() == stored
    assert store.secret_path(pubkey).read_bytes() == PASSWORD.encode()


def test_local_keystore_for_a_remote_key_is_refused(store: ValidatorStore) -> None:
    pubkey = pubkey_of(SECRETS[0])
    store.add_remote_key(pubkey, "https://signer.example:9000")
    with pytest.raises(LocalRemoteConflictError):
        _import(store, SECRETS[0])
    assert not store.has_keystore(pubkey)
    assert not store.secret_path(pubkey).exists()


def test_prepare_then_save_splits_the_slow_part_from_the_write(
    store: ValidatorStore, validators_dir: Path
) -> None:
    prepared = store.prepare_import(cheap_keystore_json(SECRETS[0]), PASSWORD)
    assert prepared.secret == SECRETS[0]
    assert prepared.pubkey == pubkey_of(SECRETS[0])
    assert PASSWORD not in repr(prepared)
    assert not validators_dir.exists()  # preparing touches nothing
    assert store.save_import(prepared) == prepared.pubkey
    assert store.load_all() == {prepared.pubkey: SECRETS[0]}


# --- durability ordering ------------------------------------------------------------------


def test_password_is_written_before_the_keystore(
    store: ValidatorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[tuple[Path, int]] = []
    real_write = store_module.write_durably

    def recording_write(path: Path, data: bytes, *, mode: int = 0o600) -> None:
        writes.append((Path(path), mode))
        real_write(path, data, mode=mode)

    monkeypatch.setattr(store_module, "write_durably", recording_write)
    pubkey = _import(store, SECRETS[0])
    assert writes == [(store.secret_path(pubkey), 0o600), (store.keystore_path(pubkey), 0o600)]


def test_crash_before_the_keystore_write_leaves_no_key_and_allows_a_retry(
    store: ValidatorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = store_module.write_durably

    def failing_keystore_write(path: Path, data: bytes, *, mode: int = 0o600) -> None:
        if Path(path).parent == store.keystores_dir:
            raise OSError(28, "No space left on device")
        real_write(path, data, mode=mode)

    monkeypatch.setattr(store_module, "write_durably", failing_keystore_write)
    with pytest.raises(OSError, match="No space"):
        _import(store, SECRETS[0])
    assert store.list_keystores() == []
    assert store.load_all() == {}
    monkeypatch.undo()
    pubkey = _import(store, SECRETS[0])
    assert store.load_all() == {pubkey: SECRETS[0]}


def test_delete_removes_the_keystore_before_the_password(
    store: ValidatorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pubkey = _import(store, SECRETS[0])
    removed: list[Path] = []
    real_remove = store_module.remove_durably

    def recording_remove(path: Path) -> bool:
        removed.append(Path(path))
        return real_remove(path)

    monkeypatch.setattr(store_module, "remove_durably", recording_remove)
    assert store.delete_keystore(pubkey) is True
    assert removed == [store.keystore_path(pubkey), store.secret_path(pubkey)]


# --- delete ---------------------------------------------------------------------------------


def test_delete_removes_files_settings_and_listing(store: ValidatorStore) -> None:
    kept, deleted = _import(store, SECRETS[0]), _import(store, SECRETS[1])
    store.set_graffiti(deleted, "bye")
    store.set_graffiti(kept, "stay")
    assert store.delete_keystore(deleted) is True
    assert not store.keystore_path(deleted).exists()
    assert not store.secret_path(deleted).exists()
    assert store.local_pubkeys() == [kept]
    assert [info.pubkey for info in store.list_keystores()] == [kept]
    assert store.settings(kept).graffiti == "stay"
    with pytest.raises(UnknownKeyError):
        store.settings(deleted)
    assert store.delete_keystore(deleted) is False
    # Re-importing starts from default settings, not the deleted key's.
    _import(store, SECRETS[1])
    assert store.settings(deleted).graffiti is None


def test_delete_with_a_corrupt_settings_file_changes_nothing(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    store.settings_path.write_text("{")
    with pytest.raises(StoreCorruptionError, match="validator_settings.json"):
        store.delete_keystore(pubkey)
    assert store.keystore_path(pubkey).exists()
    assert store.secret_path(pubkey).exists()


# --- load_all -------------------------------------------------------------------------------


def test_load_all_returns_every_enabled_key(store: ValidatorStore) -> None:
    pubkeys = [_import(store, secret) for secret in SECRETS]
    assert store.load_all() == dict(zip(pubkeys, SECRETS, strict=True))
    store.set_enabled(pubkeys[2], False)
    loaded = store.load_all()
    assert pubkeys[2] not in loaded and len(loaded) == 3
    assert store.load_all(include_disabled=True) == dict(zip(pubkeys, SECRETS, strict=True))
    store.set_enabled(pubkeys[2], True)
    assert len(store.load_all()) == 4


def test_load_all_through_the_process_pool(store: ValidatorStore) -> None:
    pubkeys = [_import(store, secret) for secret in SECRETS]
    loaded = store.load_all(processes=2, progress=False)
    assert loaded == dict(zip(pubkeys, SECRETS, strict=True))
    assert store.load_keystore(pubkeys[1]) == SECRETS[1]


def test_passwords_with_a_trailing_newline_still_open(store: ValidatorStore) -> None:
    # `echo password > secrets/0x...` adds a newline; it is a control code and is ignored.
    pubkey = _import(store, SECRETS[0])
    store.secret_path(pubkey).write_bytes(PASSWORD.encode() + b"\n")
    assert store.load_all() == {pubkey: SECRETS[0]}


# --- fail closed on what is on disk ---------------------------------------------------------


def test_keystore_under_another_pubkeys_name_fails_closed(store: ValidatorStore) -> None:
    first, second = _import(store, SECRETS[0]), _import(store, SECRETS[1])
    shutil.copyfile(store.keystore_path(first), store.keystore_path(second))
    for action in (store.load_all, store.list_keystores):
        with pytest.raises(StoreCorruptionError, match="file name says") as caught:
            action()
        assert str(store.keystore_path(second)) in str(caught.value)
    with pytest.raises(StoreCorruptionError, match="file name says"):
        store.load_keystore(second)


def test_unexpected_file_in_keystores_fails_closed(store: ValidatorStore) -> None:
    _import(store, SECRETS[0])
    stray = store.keystores_dir / "keystore-m_12381_3600_0_0_0-1700000000.json"
    stray.write_bytes(cheap_keystore_json(SECRETS[1]))
    with pytest.raises(StoreCorruptionError, match="unexpected file") as caught:
        store.load_all()
    assert str(stray) in str(caught.value)
    with pytest.raises(StoreCorruptionError, match="unexpected file"):
        store.local_pubkeys()


def test_uppercase_keystore_name_is_unexpected(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    path = store.keystore_path(pubkey)
    path.rename(path.with_name("0x" + pubkey.hex().upper() + ".json"))
    with pytest.raises(StoreCorruptionError, match="unexpected file"):
        store.load_all()


def test_leftover_temp_file_of_an_interrupted_write_is_ignored(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    temp_path_for(store.keystore_path(pubkey_of(SECRETS[1]))).write_bytes(b"half a keysto")
    assert store.load_all() == {pubkey: SECRETS[0]}


def test_missing_password_fails_closed(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    store.secret_path(pubkey).unlink()
    with pytest.raises(StoreCorruptionError, match="missing") as caught:
        store.load_all()
    assert str(store.secret_path(pubkey)) in str(caught.value)


def test_unreadable_password_fails_closed(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    store.secret_path(pubkey).unlink()
    store.secret_path(pubkey).mkdir()  # reading a directory fails even as root
    with pytest.raises(StoreCorruptionError, match="cannot read password"):
        store.load_all()


def test_password_that_is_not_utf8_fails_closed(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    store.secret_path(pubkey).write_bytes(b"\xff\xfe")
    with pytest.raises(StoreCorruptionError, match="not valid UTF-8"):
        store.load_all()


def test_wrong_stored_password_fails_closed_naming_the_keystore(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    _import(store, SECRETS[1])
    store.secret_path(pubkey).write_text("changed")
    with pytest.raises(KeystoreLoadError, match="wrong password") as caught:
        store.load_all()
    assert str(store.keystore_path(pubkey)) in str(caught.value)


@pytest.mark.parametrize("content", [b"", b"{", b"[]", b'{"version": 4}'])
def test_corrupt_keystore_file_fails_closed(store: ValidatorStore, content: bytes) -> None:
    pubkey = _import(store, SECRETS[0])
    store.keystore_path(pubkey).write_bytes(content)
    with pytest.raises(StoreCorruptionError, match="malformed keystore") as caught:
        store.load_all()
    assert str(store.keystore_path(pubkey)) in str(caught.value)


def test_remote_and_local_for_one_key_in_the_files_fails_closed(store: ValidatorStore) -> None:
    pubkey = _import(store, SECRETS[0])
    name = format_pubkey(pubkey)
    store.settings_path.write_text(
        json.dumps({"version": 1, "remote_keys": {name: {"url": "https://signer.example"}}})
    )
    with pytest.raises(StoreCorruptionError, match="both a remote key and a local keystore"):
        store.load_all()


# --- the listing cache follows the directory -----------------------------------------------


def test_listing_notices_files_changed_by_another_store(
    store: ValidatorStore, validators_dir: Path
) -> None:
    first = _import(store, SECRETS[0])
    assert store.local_pubkeys() == [first]
    assert len(store.list_keystores()) == 1
    other = ValidatorStore(validators_dir)
    second = _import(other, SECRETS[1])
    assert {info.pubkey for info in store.list_keystores()} == {first, second}
    other.delete_keystore(first)
    assert [info.pubkey for info in store.list_keystores()] == [second]


# --- concurrency ----------------------------------------------------------------------------


def test_concurrent_imports_and_settings_do_not_lose_updates(store: ValidatorStore) -> None:
    secrets = [0xC0FFEE + index for index in range(8)]
    prepared = [store.prepare_import(cheap_keystore_json(s), PASSWORD) for s in secrets]
    errors: list[BaseException] = []
    start = threading.Barrier(len(prepared))

    def import_and_configure(index: int) -> None:
        try:
            start.wait()
            pubkey = store.save_import(prepared[index])
            store.set_graffiti(pubkey, f"validator {index}")
            store.set_gas_limit(pubkey, 30_000_000 + index)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=import_and_configure, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    reopened = ValidatorStore(store.validators_dir)
    for index, item in enumerate(prepared):
        settings = reopened.settings(item.pubkey)
        assert settings.graffiti == f"validator {index}"
        assert settings.gas_limit == 30_000_000 + index
    assert len(reopened.list_keystores()) == 8


def test_listing_version_changes_with_the_listing(tmp_path: Path) -> None:
    store = ValidatorStore(tmp_path)
    empty = store.listing_version()
    assert store.listing_version() == empty
    pubkey = store.import_keystore(cheap_keystore_json(0x5151), PASSWORD)
    one = store.listing_version()
    assert one != empty
    version, infos = store.list_keystores_versioned()
    assert version == one and [info.pubkey for info in infos] == [pubkey]
    ValidatorStore(tmp_path).import_keystore(cheap_keystore_json(0x5152), PASSWORD)
    assert store.listing_version() != one  # changed on disk by someone else
    two = store.listing_version()
    store.delete_keystore(pubkey)
    assert store.listing_version() != two
