"""Per-key fee recipient, gas limit and graffiti: defaults, set, delete, refusals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from keymanager.store import ValidatorStore
from tests.keymanager.api.support import Api, ApiFactory, hex_pubkey, import_body, pubkey

ADDRESS = "0xAbcF8e0d4e9587369b2301D0790347320302cc09"
DEFAULT_ADDRESS = "0x" + "ab" * 20


def route(n: int, setting: str) -> str:
    return f"/eth/v1/validator/{hex_pubkey(n)}/{setting}"


@pytest.fixture
async def key(api: Api) -> int:
    assert (await api.post("/eth/v1/keystores", import_body([1]))).statuses == ["imported"]
    return 1


async def test_fee_recipient(api: Api, key: int, validators_dir: Path) -> None:
    path = route(key, "feerecipient")
    assert (await api.get(path)).json == {
        "data": {"pubkey": hex_pubkey(key), "ethaddress": DEFAULT_ADDRESS}
    }
    answer = await api.post(path, {"ethaddress": ADDRESS})
    assert answer.status == 202 and answer.body == b""
    assert (await api.get(path)).json["data"]["ethaddress"] == ADDRESS.lower()
    # Durable: a fresh store reads it back.
    assert ValidatorStore(validators_dir).settings(pubkey(key)).fee_recipient == bytes.fromhex(
        ADDRESS[2:]
    )
    answer = await api.delete(path)
    assert answer.status == 204 and answer.body == b""
    assert (await api.get(path)).json["data"]["ethaddress"] == DEFAULT_ADDRESS
    assert (await api.delete(path)).status == 204  # nothing to remove is fine


async def test_fee_recipient_refusals(api: Api, key: int) -> None:
    path = route(key, "feerecipient")
    for body in (
        {"ethaddress": "0x" + "00" * 20},
        {"ethaddress": "0x12"},
        {"ethaddress": 5},
        {},
        [ADDRESS],
    ):
        answer = await api.post(path, body)
        assert answer.status == 400, body
    assert "zero address" in (await api.post(path, {"ethaddress": "0x" + "00" * 20})).message
    assert (await api.get(path)).json["data"]["ethaddress"] == DEFAULT_ADDRESS


async def test_no_default_fee_recipient_is_404(api_for: ApiFactory, api: Api, key: int) -> None:
    without_default = await api_for(replace(api.context, default_fee_recipient=None))
    answer = await without_default.get(route(key, "feerecipient"))
    assert answer.status == 404 and "--suggested-fee-recipient" in answer.message


async def test_gas_limit(api: Api, key: int) -> None:
    path = route(key, "gas_limit")
    assert (await api.get(path)).json == {
        "data": {"pubkey": hex_pubkey(key), "gas_limit": "36000000"}
    }
    assert (await api.post(path, {"gas_limit": "30000000"})).status == 202
    assert (await api.get(path)).json["data"]["gas_limit"] == "30000000"
    assert (await api.post(path, {"gas_limit": "18446744073709551615"})).status == 202
    for bad in (30000000, "030000000", "-1", "18446744073709551616", "1e6", ""):
        answer = await api.post(path, {"gas_limit": bad})
        assert answer.status == 400, bad
    assert (await api.get(path)).json["data"]["gas_limit"] == "18446744073709551615"
    assert (await api.delete(path)).status == 204
    assert (await api.get(path)).json["data"]["gas_limit"] == "36000000"


async def test_graffiti(api: Api, key: int) -> None:
    path = route(key, "graffiti")
    assert (await api.get(path)).json == {
        "data": {"pubkey": hex_pubkey(key), "graffiti": "default graffiti"}
    }
    assert (await api.post(path, {"graffiti": "ünslashable ✓"})).status == 202
    assert (await api.get(path)).json["data"]["graffiti"] == "ünslashable ✓"
    assert (await api.post(path, {"graffiti": "x" * 32})).status == 202
    answer = await api.post(path, {"graffiti": "x" * 31 + "é"})
    assert answer.status == 400 and "32 bytes" in answer.message
    assert (await api.post(path, {"graffiti": 1})).status == 400
    assert (await api.get(path)).json["data"]["graffiti"] == "x" * 32
    assert (await api.delete(path)).status == 204
    assert (await api.get(path)).json["data"]["graffiti"] == "default graffiti"


@pytest.mark.parametrize("setting", ["feerecipient", "gas_limit", "graffiti"])
async def test_unknown_key_is_404_and_bad_pubkey_400(api: Api, setting: str) -> None:
    body = {
        "feerecipient": {"ethaddress": ADDRESS},
        "gas_limit": {"gas_limit": "1"},
        "graffiti": {"graffiti": "g"},
    }[setting]
    path = route(9, setting)
    assert (await api.get(path)).status == 404
    assert (await api.post(path, body)).status == 404
    assert (await api.delete(path)).status == 404
    for bad in ("0x12", hex_pubkey(9)[2:], hex_pubkey(9) + "0", "0x" + "zz" * 48):
        bad_path = f"/eth/v1/validator/{bad}/{setting}"
        assert (await api.get(bad_path)).status == 400
        assert (await api.post(bad_path, body)).status == 400
        assert (await api.delete(bad_path)).status == 400


async def test_settings_of_a_remote_key(api: Api) -> None:
    remote = {"remote_keys": [{"pubkey": hex_pubkey(4), "url": "https://signer.example"}]}
    assert (await api.post("/eth/v1/remotekeys", remote)).statuses == ["imported"]
    assert (await api.post(route(4, "graffiti"), {"graffiti": "remote"})).status == 202
    assert (await api.get(route(4, "graffiti"))).json["data"]["graffiti"] == "remote"


async def test_deleting_a_key_deletes_its_settings(api: Api, key: int) -> None:
    await api.post(route(key, "graffiti"), {"graffiti": "mine"})
    await api.delete("/eth/v1/keystores", {"pubkeys": [hex_pubkey(key)]})
    assert (await api.get(route(key, "graffiti"))).status == 404
    await api.post("/eth/v1/keystores", import_body([key]))
    assert (await api.get(route(key, "graffiti"))).json["data"]["graffiti"] == "default graffiti"
