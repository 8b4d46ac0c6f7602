"""The 38 EIP-3076 v5.3.0 interchange cases, with the minimal strategy's expectations.

Each case starts from an empty directory whose record has every key of the case
registered as never signed. A step whose import must fail has to leave the record
byte-identical. Attestations are run one call each, and again as one batch per step to
check that a batch judges a key against its earlier verdict in the same batch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import SlashingProtection, SlashingProtectionError
from tests.support.official_vectors import official_vectors
from tests.support.records import record_bytes, verdicts_allowed


def _cases() -> list[Path]:
    return sorted(official_vectors("interchange", "tests", "generated").glob("*.json"))


def _keys(case: dict[str, Any]) -> list[bytes]:
    keys: dict[bytes, None] = {}
    for step in case["steps"]:
        for item in step["interchange"]["data"]:
            keys[bytes.fromhex(item["pubkey"][2:])] = None
        for signing in step["blocks"] + step["attestations"]:
            keys[bytes.fromhex(signing["pubkey"][2:])] = None
    return list(keys)


def _run(case: dict[str, Any], directory: Path, *, batch: bool) -> tuple[int, int]:
    """Run a case; returns (signing attempts checked, attempts refused)."""
    root = bytes.fromhex(case["genesis_validators_root"][2:])
    attempts = refused = 0
    with SlashingProtection.open(directory, root, register=_keys(case), create=True) as record:
        for number, step in enumerate(case["steps"]):
            before = record_bytes(directory)
            document = json.dumps(step["interchange"]).encode()
            if step["should_succeed"]:
                record.import_interchange(document)
            else:
                with pytest.raises(SlashingProtectionError):
                    record.import_interchange(document)
                assert record_bytes(directory) == before, f"step {number} changed the record"
            for block in step["blocks"]:
                key = bytes.fromhex(block["pubkey"][2:])
                verdict = record.record_block(key, int(block["slot"])).allowed
                assert verdict == block["should_succeed"], (number, block)
                attempts += 1
                refused += not verdict
            items = [
                (bytes.fromhex(a["pubkey"][2:]), int(a["source_epoch"]), int(a["target_epoch"]))
                for a in step["attestations"]
            ]
            expected = [a["should_succeed"] for a in step["attestations"]]
            if batch:
                verdicts = verdicts_allowed(record.record_attestations(items))
            else:
                verdicts = [
                    verdicts_allowed(record.record_attestations([item]))[0] for item in items
                ]
            assert verdicts == expected, (number, step["attestations"])
            attempts += len(verdicts)
            refused += verdicts.count(False)
    with SlashingProtection.open(directory, root) as reopened:
        assert reopened.export_interchange() == record_bytes(directory)
    return attempts, refused


def test_all_38_cases_are_present() -> None:
    assert len(_cases()) == 38


@pytest.mark.parametrize("batch", [False, True], ids=["one-call-each", "one-batch-per-step"])
def test_official_interchange_cases(tmp_path: Path, batch: bool) -> None:
    attempts = refused = 0
    for number, path in enumerate(_cases()):
        case = json.loads(path.read_text())
        directory = tmp_path / f"{number}"
        directory.mkdir()
        checked, said_no = _run(case, directory, batch=batch)
        attempts += checked
        refused += said_no
    # The suite's own totals: if a case were silently skipped these would differ.
    assert (attempts, refused) == (150, 113)
