"""The 38 EIP-3076 v5.3.0 interchange cases (minimal strategy) against the shared record.

As tests/slashing_protection/test_vectors.py does for the file record: each case starts from a fresh
database with every key of the case registered as never signed; a step whose import must
fail leaves the database exactly as it was. Each case also runs on a file record side by
side, and the two must end with byte-identical exports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from slashing_protection import SlashingProtection, SlashingProtectionError
from slashing_protection.postgres import PostgresSlashingProtection, db_init
from tests.slashing_protection.postgres.support import snapshot
from tests.slashing_protection.test_vectors import _cases, _keys
from tests.support.official_vectors import official_vectors
from tests.support.pg_cluster import Cluster
from tests.support.postgres import fresh_database
from tests.support.records import verdicts_allowed


def _run(case: dict[str, Any], url: str, directory: Path, *, batch: bool) -> tuple[int, int]:
    root = bytes.fromhex(case["genesis_validators_root"][2:])
    attempts = refused = 0
    keys = _keys(case)
    with PostgresSlashingProtection.open(
        url, root, register=keys, create=True
    ) as record, SlashingProtection.open(directory, root, register=keys, create=True) as file:
        for number, step in enumerate(case["steps"]):
            document = json.dumps(step["interchange"]).encode()
            if step["should_succeed"]:
                record.import_interchange(document)
                file.import_interchange(document)
            else:
                before = snapshot(url)
                with pytest.raises(SlashingProtectionError):
                    record.import_interchange(document)
                assert snapshot(url) == before, f"step {number} changed the database"
            for block in step["blocks"]:
                key = bytes.fromhex(block["pubkey"][2:])
                verdict = record.record_block(key, int(block["slot"])).allowed
                assert verdict == block["should_succeed"], (number, block)
                assert file.record_block(key, int(block["slot"])).allowed == verdict
                attempts += 1
                refused += not verdict
            items = [
                (bytes.fromhex(a["pubkey"][2:]), int(a["source_epoch"]), int(a["target_epoch"]))
                for a in step["attestations"]
            ]
            expected = [a["should_succeed"] for a in step["attestations"]]
            if batch:
                verdicts = verdicts_allowed(record.record_attestations(items))
                file.record_attestations(items)
            else:
                verdicts = [record.record_attestations([item])[0].allowed for item in items]
                for item in items:
                    file.record_attestations([item])
            assert verdicts == expected, (number, step["attestations"])
            attempts += len(verdicts)
            refused += verdicts.count(False)
        assert record.export_interchange() == file.export_interchange()
    return attempts, refused


def test_all_38_cases_are_present() -> None:
    official_vectors("interchange", "tests", "generated")
    assert len(_cases()) == 38


@pytest.mark.parametrize("batch", [False, True], ids=["one-call-each", "one-batch-per-step"])
def test_official_interchange_cases(pg_cluster: Cluster, tmp_path: Path, batch: bool) -> None:
    attempts = refused = 0
    for number, path in enumerate(_cases()):
        case = json.loads(path.read_text())
        url = fresh_database(pg_cluster)
        db_init(url)
        directory = tmp_path / f"{number}"
        directory.mkdir()
        checked, said_no = _run(case, url, directory, batch=batch)
        attempts += checked
        refused += said_no
    assert (attempts, refused) == (150, 113)
