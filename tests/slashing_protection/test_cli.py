"""The `slashing-protection` command, run as `python -m slashing_protection` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.slashing_protection import write_complete_interchange
from slashing_protection import RECORD_FILE, SlashingProtection, Watermark
from slashing_protection.cli import app, main
from tests.support.official_vectors import REPO_ROOT
from tests.support.records import OTHER_ROOT, ROOT, entry, interchange, pubkey, record_bytes

REPO = REPO_ROOT
A, B, C = pubkey(1), pubkey(2), pubkey(3)


def run(
    *args: str | Path, stderr: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashing_protection", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        cwd=REPO,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    assert fragment in lines[0], lines[0]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "history.json"
    path.write_bytes(
        interchange(
            [
                entry(A, slots=(4, 9), attestations=((1, 2), (3, 5))),
                entry(B, attestations=((0, 1),)),
            ]
        )
    )
    return path


def test_import_creates_the_record_for_the_files_chain(tmp_path: Path, history: Path) -> None:
    validators = tmp_path / "validators"
    result = run("import", history, "--validators-dir", validators)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no progress bar when stderr is not a terminal
    assert "2 key(s)" in result.stdout and "0x" + ROOT.hex() in result.stdout
    with SlashingProtection.open(validators, ROOT) as record:
        assert record.watermark(A) == Watermark(9, 3, 5)
        assert record.watermark(B) == Watermark(None, 0, 1)


def test_import_merges_into_an_existing_record_by_maximum(tmp_path: Path, history: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A, C]) as record:
        record.record_block(A, 50)
    result = run("import", history, "--validators-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    with SlashingProtection.open(tmp_path, ROOT) as record:
        assert record.pubkeys() == [A, C, B]
        assert record.watermark(A) == Watermark(50, 3, 5)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (interchange([entry(A, slots=(1,))], root=OTHER_ROOT), "nothing was imported"),
        (b'{"metadata":{"interchange_format_version":"5"', "not valid JSON"),
        (interchange([entry(A, slots=(1,))], version="4"), 'only version "5"'),
        (interchange([entry(A, slots=(1,))]).replace(b'"1"', b'"x"'), "decimal string"),
    ],
)
def test_refused_import_leaves_the_record_byte_identical(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]) as record:
        record.record_block(A, 3)
    before = record_bytes(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    assert_one_line_error(run("import", bad, "--validators-dir", tmp_path), fragment)
    assert record_bytes(tmp_path) == before


def test_import_of_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = run("import", tmp_path / "absent.json", "--validators-dir", tmp_path)
    assert_one_line_error(result, "cannot read")
    assert not (tmp_path / RECORD_FILE).exists()


def test_export_writes_a_minimal_interchange_and_never_overwrites(
    tmp_path: Path, history: Path
) -> None:
    validators = tmp_path / "validators"
    assert run("import", history, "--validators-dir", validators).returncode == 0
    out = tmp_path / "out.json"
    result = run("export", out, "--validators-dir", validators)
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_bytes())
    assert document["metadata"]["genesis_validators_root"] == "0x" + ROOT.hex()
    assert [item["signed_blocks"] for item in document["data"]] == [[{"slot": "9"}], []]
    out.write_bytes(b"keep me")
    assert_one_line_error(run("export", out, "--validators-dir", validators), "already exists")
    assert out.read_bytes() == b"keep me"

    subset = tmp_path / "subset.json"
    result = run(
        "export",
        subset,
        "--validators-dir",
        validators,
        "--pubkey",
        "0x" + B.hex(),
        "--pubkey",
        "0x" + C.hex(),
    )
    assert result.returncode == 0, result.stderr
    assert [item["pubkey"] for item in json.loads(subset.read_bytes())["data"]] == ["0x" + B.hex()]
    assert "no record for 0x" + C.hex() in result.stderr
    assert_one_line_error(
        run("export", tmp_path / "x.json", "--validators-dir", validators, "--pubkey", "0x12"),
        "--pubkey",
    )


def test_show_prints_each_key(tmp_path: Path, history: Path) -> None:
    assert run("import", history, "--validators-dir", tmp_path).returncode == 0
    result = run("show", "--validators-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "0x" + ROOT.hex() in result.stdout
    assert any(line.split() == ["0x" + A.hex(), "9", "3", "5"] for line in lines)
    assert any(line.split() == ["0x" + B.hex(), "-", "0", "1"] for line in lines)


def test_export_and_show_without_a_record_fail_cleanly(tmp_path: Path) -> None:
    assert_one_line_error(
        run("show", "--validators-dir", tmp_path), "no slashing-protection record"
    )
    assert_one_line_error(
        run("export", tmp_path / "o.json", "--validators-dir", tmp_path), "nothing to export"
    )
    assert not (tmp_path / "o.json").exists()


def test_commands_refuse_while_the_record_is_in_use(tmp_path: Path, history: Path) -> None:
    with SlashingProtection.open(tmp_path, ROOT, register=[A]):
        before = record_bytes(tmp_path)
        for args in (
            ("import", history),
            ("export", tmp_path / "o.json"),
            ("show",),
        ):
            result = run(*args, "--validators-dir", tmp_path)
            assert_one_line_error(result, "in use by another process")
        assert record_bytes(tmp_path) == before
        assert not (tmp_path / "o.json").exists()


def test_progress_bar_appears_only_on_a_terminal(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    write_complete_interchange(big, validators=60)
    controller, terminal = os.openpty()
    try:
        result = run("import", big, "--validators-dir", tmp_path / "v", stderr=terminal)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    assert result.returncode == 0
    assert b"importing big.json" in shown


def test_app_and_main_are_exported_for_the_validator_cli() -> None:
    import typer

    assert isinstance(app, typer.Typer)
    assert callable(main)
    names = {command.name for command in app.registered_commands}
    assert names == {"import", "export", "show", "db-init"}
