"""The bearer token: every operation of the spec refuses a missing (401) or wrong (403) one,
and the token file is created, kept private, reused, and never logged."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from keymanager.api import TOKEN_FILE_NAME, TokenFileError, load_or_create_token
from keymanager.api.token import token_matches
from keymanager.store import ValidatorStore
from tests.keymanager.api.support import TOKEN, Api, hex_pubkey, import_body, pubkey
from tests.support.official_vectors import official_vectors, vectors_root


def spec_operations(directory: Path) -> list[tuple[str, str]]:
    """(METHOD, path with a real pubkey) of every operation in the official spec."""
    document = yaml.safe_load((directory / "keymanager-oapi.yaml").read_text())
    operations = []
    for path, item in document["paths"].items():
        methods = yaml.safe_load((directory / item["$ref"]).read_text())
        for method in methods:
            operations.append((method.upper(), path.replace("{pubkey}", hex_pubkey(1))))
    return operations


def _operation_cases() -> list[Any]:
    directory = vectors_root() / "keymanager-api"
    if not directory.exists():
        # A missing spec becomes one case that skips (or fails under CI=true) when run.
        return [pytest.param(None, None, id="keymanager-api-missing")]
    return [pytest.param(method, path) for method, path in spec_operations(directory)]


def test_the_spec_has_the_operations_we_serve() -> None:
    assert len(spec_operations(official_vectors("keymanager-api"))) == 16


@pytest.mark.parametrize("method,path", _operation_cases())
async def test_every_operation_refuses_without_the_right_token(
    api: Api, store: ValidatorStore, method: str | None, path: str | None
) -> None:
    if method is None or path is None:
        official_vectors("keymanager-api")
        pytest.fail("the Keymanager API spec lists no operations")
    body = {"pubkeys": [hex_pubkey(1)]} if method == "DELETE" else None
    missing = await api.call(method, path, body, headers={"Authorization": ""})
    assert missing.status == 401, missing.body
    assert missing.message
    no_header = await api.client.request(method, path)
    assert no_header.status == 401
    assert no_header.headers["WWW-Authenticate"] == "Bearer"
    for wrong_scheme in (f"Basic {TOKEN}", TOKEN, "Bearer", f"Bearer {TOKEN} extra"):
        answer = await api.call(method, path, body, headers={"Authorization": wrong_scheme})
        assert answer.status == 401, wrong_scheme
    for wrong in (TOKEN[:-1] + "0", TOKEN[:-1], TOKEN + "0", "x" * 64):
        answer = await api.call(method, path, body, token=wrong)
        assert answer.status == 403, wrong
        assert answer.message == "invalid bearer token"
    # Nothing was changed by the refused calls.
    assert store.list_keystores() == [] and store.remote_keys() == []


async def test_unknown_routes_refuse_too_and_answer_in_the_error_shape(api: Api) -> None:
    assert (await api.client.get("/eth/v1/nothing")).status == 401
    answer = await api.get("/eth/v1/nothing")
    assert answer.status == 404 and "no such route" in answer.message
    answer = await api.call("PUT", "/eth/v1/keystores")
    assert answer.status == 405 and "PUT is not allowed" in answer.message
    assert {exchange.status for exchange in api.checker.outside_spec} == {401, 404, 405}


async def test_scheme_is_case_insensitive(api: Api) -> None:
    answer = await api.get("/eth/v1/keystores", headers={"Authorization": f"bearer {TOKEN}"})
    assert answer.status == 200


async def test_a_valid_token_changes_things(api: Api, store: ValidatorStore) -> None:
    assert (await api.post("/eth/v1/keystores", import_body([1]))).status == 200
    assert store.has_keystore(pubkey(1))


def test_token_comparison_is_exact() -> None:
    assert token_matches(TOKEN, TOKEN)
    assert not token_matches(TOKEN[:-1], TOKEN)
    assert not token_matches(TOKEN + " ", TOKEN)
    assert not token_matches("\udcff", TOKEN)  # not encodable as sent: never equal


# ---------------------------------------------------------------------- the token file


def test_token_file_is_created_private_random_and_reused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="keymanager.api")
    token = load_or_create_token(tmp_path)
    path = tmp_path / TOKEN_FILE_NAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(token) == 64 and int(token, 16) >= 0
    assert path.read_text() == token + "\n"
    assert load_or_create_token(tmp_path) == token
    other = tmp_path / "other"
    other.mkdir()
    assert load_or_create_token(other) != token
    logged = caplog.text
    assert str(path) in logged
    assert token not in logged


def test_a_named_token_file_is_used_and_must_be_usable(tmp_path: Path) -> None:
    named = tmp_path / "my-token"
    named.write_text("  " + "5e" * 32 + "\n")
    named.chmod(0o600)
    assert load_or_create_token(tmp_path, named) == "5e" * 32
    assert not (tmp_path / TOKEN_FILE_NAME).exists()
    with pytest.raises(TokenFileError, match="cannot read"):
        load_or_create_token(tmp_path, tmp_path / "missing")
    for bad in (b"", b"\n", b"short", b"has a space in the middle", b"\xff" * 20, b"ab" * 31):
        named.write_bytes(bad)
        with pytest.raises(TokenFileError, match=str(named)):
            load_or_create_token(tmp_path, named)


def test_an_existing_but_broken_default_token_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE_NAME).write_text("")
    with pytest.raises(TokenFileError, match="no usable token"):
        load_or_create_token(tmp_path)
    assert (tmp_path / TOKEN_FILE_NAME).read_text() == ""  # never replaced


def test_a_token_file_others_can_read_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    named = tmp_path / "token"
    named.write_text("a" * 64)
    named.chmod(0o644)
    load_or_create_token(tmp_path, named)
    assert "can be read by other users" in caplog.text
