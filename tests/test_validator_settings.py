"""Per-key settings and remote keys in validator_settings.json: validation, persistence,
fail-closed parsing, and the remote/local exclusivity."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from keymanager import settings_store as store_module
from keymanager.errors import (
    DuplicateKeyError,
    LocalRemoteConflictError,
    StoreCorruptionError,
    UnknownKeyError,
)
from keymanager.pubkeys import format_pubkey
from keymanager.settings import (
    SETTINGS_FILE_NAME,
    KeySettings,
    SettingsFileError,
    SettingsValueError,
    parse_uint64,
)
from keymanager.store import RemoteKey, ValidatorStore
from tests.keystore_helpers import PASSWORD, cheap_keystore_json, pubkey_of

ADDRESS = "0x" + "Ab" * 20
REMOTE_PUBKEY = pubkey_of(0xAB5E17)
SIGNER_URL = "https://signer.example:9000"


@pytest.fixture
def store(tmp_path: Path) -> ValidatorStore:
    return ValidatorStore(tmp_path / "validators")


@pytest.fixture
def local_pubkey(store: ValidatorStore) -> bytes:
    return store.import_keystore(cheap_keystore_json(0x10CA1), PASSWORD)


def _file(store: ValidatorStore) -> Any:
    return json.loads(store.settings_path.read_text(encoding="utf-8"))


# --- set, get, delete, persist ---------------------------------------------------------


def test_new_key_has_default_settings(store: ValidatorStore, local_pubkey: bytes) -> None:
    assert store.settings(local_pubkey) == KeySettings(
        fee_recipient=None, gas_limit=None, graffiti=None, enabled=True
    )
    assert not store.settings_path.exists()  # nothing to write for defaults


def test_settings_persist_in_one_versioned_file(store: ValidatorStore, local_pubkey: bytes) -> None:
    store.set_fee_recipient(local_pubkey, ADDRESS)
    store.set_gas_limit(local_pubkey, 36_000_000)
    store.set_graffiti(local_pubkey, "h\u00e9llo")
    store.set_enabled(local_pubkey, False)
    reopened = ValidatorStore(store.validators_dir)
    assert reopened.settings(local_pubkey) == KeySettings(
        fee_recipient=bytes.fromhex("ab" * 20),
        gas_limit=36_000_000,
        graffiti="h\u00e9llo",
        enabled=False,
    )
    assert store.settings_path.name == SETTINGS_FILE_NAME
    assert stat.S_IMODE(store.settings_path.stat().st_mode) == 0o600
    assert _file(store) == {
        "version": 1,
        "validators": {
            format_pubkey(local_pubkey): {
                "fee_recipient": "0x" + "ab" * 20,
                "gas_limit": "36000000",
                "graffiti": "h\u00e9llo",
                "enabled": False,
            }
        },
        "remote_keys": {},
    }


def test_settings_are_written_durably(
    store: ValidatorStore, local_pubkey: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[tuple[Path, int]] = []
    real_write = store_module.write_durably

    def recording_write(path: Path, data: bytes, *, mode: int = 0o600) -> None:
        writes.append((Path(path), mode))
        real_write(path, data, mode=mode)

    monkeypatch.setattr(store_module, "write_durably", recording_write)
    store.set_graffiti(local_pubkey, "x")
    store.add_remote_key(REMOTE_PUBKEY, SIGNER_URL)
    assert writes == [(store.settings_path, 0o600)] * 2


def test_deleting_a_setting_returns_to_the_default(
    store: ValidatorStore, local_pubkey: bytes
) -> None:
    store.set_fee_recipient(local_pubkey, ADDRESS)
    store.set_gas_limit(local_pubkey, 1)
    store.set_graffiti(local_pubkey, "g")
    store.delete_fee_recipient(local_pubkey)
    assert store.settings(local_pubkey).fee_recipient is None
    assert store.settings(local_pubkey).gas_limit == 1
    store.delete_gas_limit(local_pubkey)
    store.delete_graffiti(local_pubkey)
    assert store.settings(local_pubkey) == KeySettings()
    assert _file(store)["validators"] == {}  # default entries are not kept
    store.delete_graffiti(local_pubkey)  # deleting what is not set is fine


def test_setting_for_an_unknown_key_is_refused(store: ValidatorStore) -> None:
    unknown = pubkey_of(0xDEAD)
    with pytest.raises(UnknownKeyError):
        store.settings(unknown)
    with pytest.raises(UnknownKeyError):
        store.set_graffiti(unknown, "x")
    with pytest.raises(UnknownKeyError):
        store.delete_fee_recipient(unknown)
    assert not store.settings_path.exists()


@pytest.mark.parametrize(
    ("setter", "value", "message"),
    [
        ("set_fee_recipient", "0x" + "ab" * 19, "40 hex digits"),
        ("set_fee_recipient", "ab" * 20, "40 hex digits"),
        ("set_fee_recipient", "0x" + "zz" * 20, "40 hex digits"),
        ("set_fee_recipient", "0x" + "00" * 20, "zero address"),
        ("set_fee_recipient", b"\x01" * 19, "20 bytes"),
        ("set_gas_limit", -1, "uint64"),
        ("set_gas_limit", 2**64, "uint64"),
        ("set_gas_limit", True, "integer"),
        ("set_gas_limit", "30000000", "integer"),
        ("set_graffiti", "x" * 33, "at most 32 bytes"),
        ("set_graffiti", "\u00e9" * 17, "at most 32 bytes"),  # 17 characters, 34 bytes
        ("set_graffiti", "\ud800", "surrogate"),
        ("set_graffiti", 5, "text"),
    ],
)
def test_invalid_values_are_refused_and_nothing_changes(
    store: ValidatorStore, local_pubkey: bytes, setter: str, value: Any, message: str
) -> None:
    with pytest.raises(SettingsValueError, match=message):
        getattr(store, setter)(local_pubkey, value)
    assert store.settings(local_pubkey) == KeySettings()
    assert not store.settings_path.exists()


@pytest.mark.parametrize(
    ("setter", "value"),
    [
        ("set_gas_limit", 0),
        ("set_gas_limit", 2**64 - 1),
        ("set_graffiti", "x" * 32),
        ("set_graffiti", "\u00e9" * 16),
        ("set_graffiti", ""),
        ("set_fee_recipient", bytes.fromhex("01" * 20)),
    ],
)
def test_boundary_values_are_accepted_and_round_trip(
    store: ValidatorStore, local_pubkey: bytes, setter: str, value: Any
) -> None:
    getattr(store, setter)(local_pubkey, value)
    field = {"set_gas_limit": "gas_limit", "set_graffiti": "graffiti"}.get(setter, "fee_recipient")
    assert getattr(ValidatorStore(store.validators_dir).settings(local_pubkey), field) == value


def test_enabled_must_be_a_bool(store: ValidatorStore, local_pubkey: bytes) -> None:
    with pytest.raises(TypeError):
        store.set_enabled(local_pubkey, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"), [("0", 0), ("30000000", 30_000_000), (str(2**64 - 1), 2**64 - 1)]
)
def test_parse_uint64_accepts_api_numbers(text: str, expected: int) -> None:
    assert parse_uint64(text) == expected


@pytest.mark.parametrize("text", ["", "-1", "01", "1.5", " 1", "0x10", str(2**64), "1e3"])
def test_parse_uint64_refuses_other_text(text: str) -> None:
    with pytest.raises(SettingsValueError):
        parse_uint64(text)


# --- a corrupted settings file fails closed --------------------------------------------------

NAME = format_pubkey(REMOTE_PUBKEY)


def _with_entry(section: str, entry: dict[str, Any]) -> bytes:
    return json.dumps({"version": 1, section: {NAME: entry}}).encode()


CORRUPTIONS: list[tuple[str, bytes, str]] = [
    ("empty", b"", "empty"),
    ("whitespace", b"  \n", "empty"),
    ("truncated", b'{"version": 1, "validators": {', "not valid JSON"),
    ("not utf-8", b"\xff\xfe{}", "not valid JSON"),
    ("array", b"[]", "invalid settings"),
    ("no version", b'{"validators": {}}', "unsupported settings version None"),
    ("future version", b'{"version": 2}', "unsupported settings version 2"),
    ("version as text", b'{"version": "1"}', "unsupported settings version '1'"),
    ("unknown field", b'{"version": 1, "keys": {}}', "Extra inputs"),
    (
        "duplicated key",
        f'{{"version": 1, "validators": {{"{NAME}": {{}}, "{NAME}": {{}}}}}}'.encode(),
        "duplicated key",
    ),
    (
        "uppercase pubkey",
        json.dumps({"version": 1, "validators": {NAME.upper(): {}}}).encode(),
        "lowercase hex",
    ),
    ("short pubkey", b'{"version": 1, "validators": {"0xabcd": {}}}', "96 lowercase hex"),
    ("gas limit as number", _with_entry("validators", {"gas_limit": 30000000}), "uint64 string"),
    ("gas limit negative", _with_entry("validators", {"gas_limit": "-1"}), "uint64 string"),
    ("graffiti too long", _with_entry("validators", {"graffiti": "x" * 33}), "at most 32"),
    ("enabled as text", _with_entry("validators", {"enabled": "no"}), "valid boolean"),
    ("unknown setting", _with_entry("validators", {"colour": "red"}), "Extra inputs"),
    (
        "zero fee recipient",
        _with_entry("validators", {"fee_recipient": "0x" + "00" * 20}),
        "zero address",
    ),
    (
        "uppercase fee recipient",
        _with_entry("validators", {"fee_recipient": "0x" + "AB" * 20}),
        "lowercase hex",
    ),
    ("remote url not http", _with_entry("remote_keys", {"url": "file:///etc/passwd"}), "http"),
    ("remote without url", _with_entry("remote_keys", {}), "Field required"),
]


@pytest.mark.parametrize(
    ("content", "message"), [pytest.param(c, m, id=name) for name, c, m in CORRUPTIONS]
)
def test_corrupt_settings_file_fails_closed_and_is_left_alone(
    store: ValidatorStore, local_pubkey: bytes, content: bytes, message: str
) -> None:
    store.settings_path.write_bytes(content)
    actions = [
        lambda: store.settings(local_pubkey),
        lambda: store.set_graffiti(local_pubkey, "x"),
        lambda: store.remote_keys(),
        lambda: store.add_remote_key(REMOTE_PUBKEY, SIGNER_URL),
        lambda: store.load_all(),
        lambda: store.import_keystore(cheap_keystore_json(0x2222), PASSWORD),
    ]
    for action in actions:
        with pytest.raises(SettingsFileError, match=message) as caught:
            action()
        assert str(store.settings_path) in str(caught.value)
        assert isinstance(caught.value, StoreCorruptionError)
    assert store.settings_path.read_bytes() == content
    assert store.local_pubkeys() == [local_pubkey]


def test_settings_file_edited_by_hand_is_reread(store: ValidatorStore, local_pubkey: bytes) -> None:
    store.set_graffiti(local_pubkey, "before")
    document = _file(store)
    document["validators"][format_pubkey(local_pubkey)]["graffiti"] = "after, edited"
    store.settings_path.write_text(json.dumps(document))
    assert store.settings(local_pubkey).graffiti == "after, edited"


# --- remote keys ------------------------------------------------------------------------------


def test_remote_keys_add_list_delete_persist(store: ValidatorStore) -> None:
    other = pubkey_of(0xAB5E18)
    store.add_remote_key(REMOTE_PUBKEY, SIGNER_URL)
    store.add_remote_key(other, "http://127.0.0.1:9000/")
    expected = sorted(
        [RemoteKey(REMOTE_PUBKEY, SIGNER_URL), RemoteKey(other, "http://127.0.0.1:9000/")],
        key=lambda key: key.pubkey,
    )
    assert ValidatorStore(store.validators_dir).remote_keys() == expected
    assert all(not key.readonly for key in expected)
    assert store.is_known(REMOTE_PUBKEY)
    assert store.local_pubkeys() == []
    assert store.delete_remote_key(REMOTE_PUBKEY) is True
    assert store.delete_remote_key(REMOTE_PUBKEY) is False
    assert ValidatorStore(store.validators_dir).remote_keys() == [
        RemoteKey(other, "http://127.0.0.1:9000/")
    ]


def test_remote_key_settings_go_with_the_key(store: ValidatorStore) -> None:
    store.add_remote_key(REMOTE_PUBKEY, SIGNER_URL)
    store.set_fee_recipient(REMOTE_PUBKEY, ADDRESS)
    assert store.settings(REMOTE_PUBKEY).fee_recipient == bytes.fromhex("ab" * 20)
    store.delete_remote_key(REMOTE_PUBKEY)
    assert _file(store) == {"version": 1, "validators": {}, "remote_keys": {}}
    with pytest.raises(UnknownKeyError):
        store.settings(REMOTE_PUBKEY)


def test_duplicate_remote_key_is_refused(store: ValidatorStore) -> None:
    store.add_remote_key(REMOTE_PUBKEY, SIGNER_URL)
    with pytest.raises(DuplicateKeyError):
        store.add_remote_key(REMOTE_PUBKEY, "https://elsewhere.example")
    assert store.remote_keys() == [RemoteKey(REMOTE_PUBKEY, SIGNER_URL)]


def test_remote_key_for_a_local_keystore_is_refused(
    store: ValidatorStore, local_pubkey: bytes
) -> None:
    with pytest.raises(LocalRemoteConflictError):
        store.add_remote_key(local_pubkey, SIGNER_URL)
    assert store.remote_keys() == []
    assert not store.settings_path.exists()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://signer.example",
        "signer.example:9000",
        "https://",
        "https://signer example",
        "https://signer.example:99999",
        "https://signer.example/\n",
        "",
        "https://" + "a" * 2100,
    ],
)
def test_invalid_remote_url_is_refused(store: ValidatorStore, url: str) -> None:
    with pytest.raises(SettingsValueError):
        store.add_remote_key(REMOTE_PUBKEY, url)
    assert store.remote_keys() == []


def test_the_documented_example_is_a_valid_settings_file() -> None:
    from keymanager.settings import parse_settings
    from tests.official_vectors import REPO_ROOT

    doc = (REPO_ROOT / "docs" / "keymanager.md").read_text(encoding="utf-8")
    example = doc.split("```json\n")[1].split("```")[0]
    parsed = parse_settings(example.encode(), Path("docs/keymanager.md"))
    assert len(parsed.validators) == 1 and len(parsed.remote_keys) == 1
    assert next(iter(parsed.validators.values())).enabled is False
