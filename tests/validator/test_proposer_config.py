"""``--proposer-config``: Teku's JSON shape read strictly, and the order in which settings win."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import SlashingProtection
from validator.key_settings import DEFAULT_GAS_LIMIT, KeyOverrides, ProposerSettings
from validator.proposer_config import (
    ProposerConfigError,
    ProposerEntry,
    load_proposer_config,
    parse_proposer_config,
)

REPO = Path(__file__).resolve().parents[2]
KEY = "0x" + "a1" * 48
OTHER = "0x" + "b2" * 48
ADDRESS = "0x" + "50" * 20


def _config(document: Any) -> bytes:
    return json.dumps(document).encode()


def test_the_documented_shape_reads_back() -> None:
    config = parse_proposer_config(
        _config(
            {
                "proposer_config": {
                    KEY: {
                        "fee_recipient": "0x50155530FCE8a85ec7055A5F8b2bE214B3DaeFd3",
                        "builder": {
                            "enabled": True,
                            "gas_limit": "30000000",
                            "registration_overrides": {
                                "timestamp": "1700000000",
                                "public_key": KEY,
                            },
                        },
                    }
                },
                "default_config": {"fee_recipient": ADDRESS, "builder": {"enabled": False}},
            }
        )
    )
    assert config.entry(bytes.fromhex(KEY[2:])) == ProposerEntry(
        fee_recipient=bytes.fromhex("50155530FCE8a85ec7055A5F8b2bE214B3DaeFd3"),
        builder_enabled=True,
        gas_limit=30_000_000,
        registration_timestamp=1_700_000_000,
    )
    assert config.default == ProposerEntry(
        fee_recipient=bytes.fromhex("50" * 20), builder_enabled=False
    )


MALFORMED = [
    ("", "the file is empty"),
    ("{", "not valid JSON"),
    ("[]", "(top level): must be an object"),
    ('{"proposer_config": {}, "proposer_config": {}}', "duplicated key 'proposer_config'"),
    ('{"default": {}}', "(top level).default: unknown field"),
    ('{"proposer_config": []}', "proposer_config: must be an object"),
    ('{"proposer_config": {"0x12": {}}}', "proposer_config.0x12: a key must be 0x and 96 hex"),
    (
        json.dumps({"proposer_config": {KEY: {}, KEY.upper().replace("0X", "0x"): {}}}),
        "is listed twice",
    ),
    (
        json.dumps({"proposer_config": {KEY: {"fee_recipent": ADDRESS}}}),
        f"proposer_config.{KEY}.fee_recipent: unknown field",
    ),
    (
        json.dumps({"proposer_config": {KEY: {"fee_recipient": "0x1234"}}}),
        f"proposer_config.{KEY}.fee_recipient: must be 0x and 40 hex digits",
    ),
    (
        json.dumps({"default_config": {"fee_recipient": "0x" + "00" * 20}}),
        "default_config.fee_recipient: the zero address",
    ),
    (
        json.dumps({"default_config": {"builder": {"enabled": "yes"}}}),
        'default_config.builder.enabled: must be true or false, got "yes"',
    ),
    (
        json.dumps({"default_config": {"builder": {"gas_limit": "30M"}}}),
        "default_config.builder.gas_limit: must be a decimal uint64",
    ),
    (
        json.dumps({"default_config": {"builder": {"gas_limit": str(2**64)}}}),
        "default_config.builder.gas_limit: must be",
    ),
    (
        json.dumps({"default_config": {"builder": {"relays": []}}}),
        "default_config.builder.relays: unknown field",
    ),
    (
        json.dumps(
            {"proposer_config": {KEY: {"builder": {"registration_overrides": {"timestamp": -1}}}}}
        ),
        f"proposer_config.{KEY}.builder.registration_overrides.timestamp: must be a uint64",
    ),
    (
        json.dumps(
            {
                "proposer_config": {
                    KEY: {"builder": {"registration_overrides": {"public_key": OTHER}}}
                }
            }
        ),
        "registration_overrides.public_key: only the key itself can be registered",
    ),
    (
        json.dumps({"default_config": {"builder": {"registration_overrides": {"timestamp": "1"}}}}),
        "default_config.builder.registration_overrides: a timestamp is per key",
    ),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_each_malformed_field_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "proposer.json"
    path.write_text(text)
    with pytest.raises(ProposerConfigError) as raised:
        load_proposer_config(path)
    assert message in str(raised.value)
    assert str(raised.value).startswith(f"--proposer-config {path}: ")
    assert "\n" not in str(raised.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ProposerConfigError, match="cannot read it: No such file"):
        load_proposer_config(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MALFORMED[8][0], MALFORMED[8][1]),
        (MALFORMED[12][0], MALFORMED[12][1]),
        (MALFORMED[16][0], MALFORMED[16][1]),
    ],
)
def test_validator_run_stops_with_one_line_and_the_record_untouched(
    tmp_path: Path, text: str, message: str
) -> None:
    validators = tmp_path / "validators"
    validators.mkdir()
    with SlashingProtection.open(validators, bytes(32), register=[bytes.fromhex(KEY[2:])]):
        pass
    record = validators / "slashing_protection.json"
    before = record.read_bytes()
    config = tmp_path / "proposer.json"
    config.write_text(text)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "validator",
            "run",
            "--beacon-node-url",
            "http://127.0.0.1:9",
            "--validators-dir",
            str(validators),
            "--builder",
            "--proposer-config",
            str(config),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"error: --proposer-config {config}: ")
    assert message in lines[-1]
    assert "Traceback" not in result.stderr
    assert record.read_bytes() == before
    assert sorted(path.name for path in validators.iterdir()) == [
        "slashing_protection.json",
        "slashing_protection.lock",
    ]


def test_the_keymanager_api_wins_over_the_file_which_wins_over_the_flags() -> None:
    key, other, third = (bytes([n]) * 48 for n in (1, 2, 3))
    flag, file_default, file_key, own = (bytes([n]) * 20 for n in (10, 11, 12, 13))
    config = parse_proposer_config(
        _config(
            {
                "proposer_config": {
                    "0x" + key.hex(): {
                        "fee_recipient": "0x" + file_key.hex(),
                        "builder": {"enabled": False, "gas_limit": "31000000"},
                    },
                    "0x" + other.hex(): {"fee_recipient": "0x" + file_key.hex()},
                },
                "default_config": {
                    "fee_recipient": "0x" + file_default.hex(),
                    "builder": {"enabled": True, "gas_limit": "32000000"},
                },
            }
        )
    )
    overrides = {key: KeyOverrides(fee_recipient=own, gas_limit=33_000_000)}
    settings = ProposerSettings(
        default_fee_recipient=flag,
        builder=False,
        builder_boost_factor=250,
        proposer_config=config,
        overrides=lambda pubkey: overrides.get(pubkey, KeyOverrides()),
    )
    assert settings.fee_recipient(key) == own
    assert settings.fee_recipient(other) == file_key
    assert settings.fee_recipient(third) == file_default
    assert ProposerSettings(default_fee_recipient=flag).fee_recipient(third) == flag
    assert (settings.gas_limit(key), settings.gas_limit(other)) == (33_000_000, 32_000_000)
    assert ProposerSettings().gas_limit(third) == DEFAULT_GAS_LIMIT
    # builder.enabled: the key's entry, then default_config, then --builder.
    assert not settings.builder_enabled(key) and settings.builder_enabled(other)
    assert (settings.builder_boost_factor(key), settings.builder_boost_factor(other)) == (0, 250)
    assert ProposerSettings(builder=True).builder_enabled(third)
