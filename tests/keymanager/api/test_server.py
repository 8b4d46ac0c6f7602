"""start_keymanager_server: a real HTTP server on 127.0.0.1 with the token from its file."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path

import aiohttp
import pytest

from keymanager.api import (
    DEFAULT_HOST,
    TOKEN_FILE_NAME,
    KeymanagerContext,
    TokenFileError,
    bound_port,
    start_keymanager_server,
)
from tests.keymanager.api.support import hex_pubkey, import_body


def test_listens_on_localhost_by_default() -> None:
    assert DEFAULT_HOST == "127.0.0.1"
    default = inspect.signature(start_keymanager_server).parameters["host"].default
    assert default == "127.0.0.1"


async def test_serves_over_http_with_the_created_token(
    context: KeymanagerContext, validators_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="keymanager.api")
    runner = await start_keymanager_server(context, port=0)
    try:
        port = bound_port(runner)
        assert port is not None
        assert runner.addresses[0][0] == "127.0.0.1"
        token = (validators_dir / TOKEN_FILE_NAME).read_text().strip()
        url = f"http://127.0.0.1:{port}/eth/v1/keystores"
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as response:
                assert response.status == 401
            headers = {"Authorization": f"Bearer {token}"}
            async with session.post(url, json=import_body([1]), headers=headers) as response:
                assert response.status == 200
                assert (await response.json())["data"] == [{"status": "imported"}]
            async with session.get(url, headers=headers) as response:
                listed = await response.json()
                assert [item["validating_pubkey"] for item in listed["data"]] == [hex_pubkey(1)]
    finally:
        await runner.cleanup()
    assert str(validators_dir / TOKEN_FILE_NAME) in caplog.text
    assert token not in caplog.text
    assert f"Keymanager API listening on http://127.0.0.1:{port}" in caplog.text


async def test_an_unusable_token_file_stops_the_start(
    context: KeymanagerContext, tmp_path: Path
) -> None:
    with pytest.raises(TokenFileError):
        await start_keymanager_server(context, port=0, token_file=tmp_path / "absent")
