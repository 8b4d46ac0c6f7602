"""`slashing-protection db-init/import/export/show --slashing-protection-db URL`, run as
`python -m slashing_protection` in a subprocess, and the documented migration between the
two records: export from a file record, import into the database, export back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slashing_protection import SlashingProtection, Watermark
from slashing_protection.postgres import SCHEMA_VERSION, PostgresSlashingProtection
from tests.slashing_protection.postgres.support import snapshot
from tests.slashing_protection.test_cli import assert_one_line_error, run
from tests.support.records import OTHER_ROOT, ROOT, entry, interchange, pubkey, verdicts_allowed

A, B, C = pubkey(1), pubkey(2), pubkey(3)


def test_db_init_creates_the_schema_and_can_run_again(empty_db: str) -> None:
    first = run("db-init", "--slashing-protection-db", empty_db)
    assert first.returncode == 0, first.stderr
    assert f"version {SCHEMA_VERSION}" in first.stdout and "applied" in first.stdout
    again = run("db-init", "--slashing-protection-db", empty_db)
    assert again.returncode == 0, again.stderr
    assert "nothing to do" in again.stdout


def test_commands_need_a_schema_and_say_so_in_one_line(empty_db: str, tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_bytes(interchange([entry(A, slots=(1,))]))
    for args in (
        ("import", history),
        ("export", tmp_path / "out.json"),
        ("show",),
    ):
        assert_one_line_error(run(*args, "--slashing-protection-db", empty_db), "db-init")
    assert not (tmp_path / "out.json").exists()


def test_location_must_be_exactly_one_and_a_url(pg_url: str, tmp_path: Path) -> None:
    assert_one_line_error(run("show"), "exactly one of")
    assert_one_line_error(
        run("show", "--validators-dir", tmp_path, "--slashing-protection-db", pg_url),
        "exactly one of",
    )
    assert_one_line_error(run("show", "--slashing-protection-db", str(tmp_path)), "postgresql://")
    assert_one_line_error(run("db-init", "--slashing-protection-db", "mysql://x/y"), "postgresql://")


def test_unreachable_database_is_one_line_and_hides_the_password(tmp_path: Path) -> None:
    url = f"postgresql://postgres:hunter2@/postgres?host={tmp_path}&port=5432"
    result = run("show", "--slashing-protection-db", url)
    assert_one_line_error(result, "cannot connect")
    assert "hunter2" not in result.stderr


def test_import_names_the_chain_then_refuses_another_and_show_prints_it(
    pg_url: str, tmp_path: Path
) -> None:
    history = tmp_path / "history.json"
    history.write_bytes(
        interchange(
            [
                entry(A, slots=(4, 9), attestations=((1, 2), (3, 5))),
                entry(B, attestations=((0, 1),)),
            ]
        )
    )
    result = run("import", history, "--slashing-protection-db", pg_url)
    assert result.returncode == 0, result.stderr
    assert "2 key(s)" in result.stdout and "0x" + ROOT.hex() in result.stdout
    assert "postgresql://" in result.stdout
    before = snapshot(pg_url)
    other = tmp_path / "other.json"
    other.write_bytes(interchange([entry(C, slots=(1,))], root=OTHER_ROOT))
    assert_one_line_error(
        run("import", other, "--slashing-protection-db", pg_url), "nothing was imported"
    )
    bad = tmp_path / "bad.json"
    bad.write_bytes(interchange([entry(C, slots=(1,))]).replace(b'"1"', b'"x"'))
    assert_one_line_error(run("import", bad, "--slashing-protection-db", pg_url), "decimal string")
    assert snapshot(pg_url) == before
    shown = run("show", "--slashing-protection-db", pg_url)
    assert shown.returncode == 0, shown.stderr
    assert f"0x{A.hex()}           9         3         5" in shown.stdout
    assert f"0x{B.hex()}           -         0         1" in shown.stdout
    with PostgresSlashingProtection.open(pg_url, ROOT) as record:
        assert record.watermark(A) == Watermark(9, 3, 5)


def test_export_named_keys_and_never_overwrite(pg_url: str, tmp_path: Path) -> None:
    with PostgresSlashingProtection.open(pg_url, ROOT, register=[A, B]) as record:
        record.record_attestations([(B, 2, 3)])
    out = tmp_path / "out.json"
    result = run("export", out, "--slashing-protection-db", pg_url, "--pubkey", "0x" + B.hex(),
                 "--pubkey", "0x" + C.hex())
    assert result.returncode == 0, result.stderr
    assert "no record for 0x" + C.hex() in result.stderr
    assert [item["pubkey"] for item in json.loads(out.read_bytes())["data"]] == ["0x" + B.hex()]
    assert_one_line_error(run("export", out, "--slashing-protection-db", pg_url), "already exists")


@pytest.mark.parametrize("keys", [3, 300])
def test_migration_file_to_database_and_back(pg_url: str, tmp_path: Path, keys: int) -> None:
    """The documented move: export the file record, import it into the database (where
    validators keep signing), export the database, import that into a new directory."""
    pubkeys = [pubkey(n) for n in range(keys)]
    old = tmp_path / "old-validators"
    old.mkdir()
    with SlashingProtection.open(old, ROOT, register=pubkeys) as file:
        file.record_block(pubkeys[0], 100)
        file.record_attestations([(key, 3, 4 + n % 5) for n, key in enumerate(pubkeys)])
        exported_file = file.export_interchange()
    moved = tmp_path / "to-db.json"
    assert run("export", moved, "--validators-dir", old).returncode == 0
    assert moved.read_bytes() == exported_file
    result = run("import", moved, "--slashing-protection-db", pg_url)
    assert result.returncode == 0, result.stderr
    back = tmp_path / "from-db.json"
    assert run("export", back, "--slashing-protection-db", pg_url).returncode == 0
    assert back.read_bytes() == exported_file, "the round trip changed the record"
    with PostgresSlashingProtection.open(pg_url, ROOT) as shared:
        assert shared.record_block(pubkeys[0], 100).allowed is False
        assert verdicts_allowed(shared.record_attestations([(pubkeys[0], 3, 4)])) == [False]
        assert verdicts_allowed(shared.record_attestations([(pubkeys[0], 3, 9)])) == [True]
    back_again = tmp_path / "from-db-2.json"
    assert run("export", back_again, "--slashing-protection-db", pg_url).returncode == 0
    new = tmp_path / "new-validators"
    result = run("import", back_again, "--validators-dir", new)
    assert result.returncode == 0, result.stderr
    with SlashingProtection.open(new, ROOT) as file:
        assert file.pubkeys() == pubkeys
        assert file.watermark(pubkeys[0]) == Watermark(100, 3, 9)
        assert file.export_interchange() == back_again.read_bytes()
