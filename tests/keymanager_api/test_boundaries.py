"""What keymanager depends on: nothing of the validator, and one parse of a history."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import slashing_protection.interchange.parsing
from slashing_protection import SlashingProtection, Watermark
from tests.keymanager_api.support import Api, history, import_body, pubkey

KEYMANAGER = Path(__file__).resolve().parents[2] / "keymanager"


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_keymanager_imports_nothing_of_the_validator() -> None:
    sources = sorted(KEYMANAGER.rglob("*.py"))
    assert len(sources) >= 10  # the walk found the package
    offending = {
        str(path.relative_to(KEYMANAGER)): sorted(
            name for name in _imported_modules(path) if name.split(".")[0] == "validator"
        )
        for path in sources
    }
    assert {path: names for path, names in offending.items() if names} == {}


async def test_a_keystore_imports_history_is_parsed_once(
    api: Api, record: SlashingProtection, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[str] = []
    real = slashing_protection.interchange.parsing._parse_stream

    def counting(stream: Any, where: str, progress: Any) -> Any:
        parses.append(where)
        return real(stream, where, progress)

    monkeypatch.setattr(slashing_protection.interchange.parsing, "_parse_stream", counting)
    body = import_body([1], history({1: (7, (2, 3))}))
    assert (await api.post("/eth/v1/keystores", body)).statuses == ["imported"]
    assert parses == ["slashing_protection"]
    assert record.watermark(pubkey(1)) == Watermark(7, 2, 3)
