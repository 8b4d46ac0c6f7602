"""JSON limits before any JSON library: over-long numbers and strings, deep nesting.

Inputs that crashed the interpreter run in a subprocess, so that on a build without the
guard the test fails (exit 139) instead of killing the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from slashing_protection import (
    RECORD_FILE,
    InterchangeFormatError,
    SlashingProtection,
    parse_interchange,
)
from slashing_protection.json_guard import (
    MAX_NUMBER_CHARS,
    MAX_STRING_BYTES,
    JsonGuard,
    JsonLimitError,
    check_document,
)
from tests.support.records import ROOT, entry, interchange, pubkey

REPO = Path(__file__).resolve().parents[2]
REGRESSIONS = sorted((REPO / "tests" / "support" / "regressions").glob("*.json"))


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "slashing_protection", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )


@pytest.mark.parametrize("path", REGRESSIONS, ids=[path.name for path in REGRESSIONS])
def test_import_of_a_regression_file_exits_1_with_one_line(path: Path, tmp_path: Path) -> None:
    result = run_cli("import", path, "--validators-dir", tmp_path / "validators")
    assert result.returncode == 1, (result.returncode, result.stderr[-500:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-500:]
    assert "Traceback" not in result.stderr


def test_the_five_thousand_digit_number_is_refused_as_too_long(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a":' + b"1" * 5000 + b',"b"}')
    result = run_cli("import", bad, "--validators-dir", tmp_path / "x")
    assert result.returncode == 1, result.stderr[-300:]
    assert f"more than {MAX_NUMBER_CHARS} characters" in result.stderr


def test_a_damaged_record_with_a_huge_number_is_one_corrupt_error(tmp_path: Path) -> None:
    """In a subprocess: before the guard this was a SystemError or a segfault."""
    directory = tmp_path / "validators"
    directory.mkdir()
    good = interchange([entry(pubkey(1), slots=(3,))]).decode()
    (directory / RECORD_FILE).write_text(good.replace('"3"', "3" * 5000))
    script = (
        "import sys\n"
        "from slashing_protection import SlashingProtection, RecordCorruptError\n"
        "try:\n"
        f"    SlashingProtection.open({str(directory)!r}, bytes(range(32)))\n"
        "except RecordCorruptError as e:\n"
        "    print('corrupt:', e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-300:])
    assert result.stdout.startswith("corrupt:") and "more than 20 characters" in result.stdout


def test_a_deep_array_as_pubkey_is_a_format_error_not_recursion() -> None:
    document = interchange([entry(pubkey(1))]).replace(
        b'"0x' + pubkey(1).hex().encode() + b'"', b"[" * 1000 + b"]" * 1000
    )
    with pytest.raises(InterchangeFormatError) as raised:
        parse_interchange(document)
    assert "\n" not in str(raised.value)


def test_numbers_up_to_the_limit_are_accepted_in_unknown_members() -> None:
    document = interchange([entry(pubkey(1), slots=(5,))]).replace(
        b'"data"', b'"extra":[18446744073709551615,-9223372036854775808,1.5e300],"data"'
    )
    parsed = parse_interchange(document)
    assert parsed.marks[pubkey(1)].slot == 5


@pytest.mark.parametrize(
    "member_of",
    [b'{"pubkey"', b'{"slot"', b'{"source_epoch"'],
    ids=["entry", "block", "attestation"],
)
def test_unknown_members_inside_entries_keep_to_the_number_limit(member_of: bytes) -> None:
    """The fast parser scans only pieces whose objects have members it does not know; a
    number there is held to the same limit as everywhere else."""

    def with_number(digits: int) -> bytes:
        document = interchange([entry(pubkey(1), slots=(5,), attestations=((1, 2),))])
        number = b"[" + b"1" * digits + b"]"
        return document.replace(member_of, b'{"extra":' + number + b"," + member_of[1:], 1)

    assert parse_interchange(with_number(MAX_NUMBER_CHARS)).marks[pubkey(1)].slot == 5
    with pytest.raises(JsonLimitError, match="number"):
        parse_interchange(with_number(MAX_NUMBER_CHARS + 1))


def test_a_string_over_the_limit_is_refused_and_one_just_under_is_not() -> None:
    def with_extra(size: int) -> bytes:
        return interchange([entry(pubkey(1), slots=(5,))]).replace(
            b'"data"', b'"extra":"' + b"a" * (size - 2) + b'","data"'
        )

    assert parse_interchange(with_extra(MAX_STRING_BYTES)).marks[pubkey(1)].slot == 5
    with pytest.raises(JsonLimitError, match="string of more than"):
        parse_interchange(with_extra(MAX_STRING_BYTES + 1))


def test_a_17_mib_string_is_refused_by_every_path(tmp_path: Path) -> None:
    """Past the fast parser's 16 MiB entry window the exact parser took quadratic time
    (2.3 s at 17 MiB, 32 s at 64 MiB); now the string is refused at its first MiB."""
    body = interchange([entry(pubkey(1))]).replace(
        b'"signed_blocks"', b'"x":"' + b"z" * (17 * 1024 * 1024) + b'","signed_blocks"'
    )
    with pytest.raises(JsonLimitError, match="string of more than"):
        parse_interchange(body)
    path = tmp_path / "huge.json"
    path.write_bytes(body)
    with pytest.raises(JsonLimitError):
        parse_interchange(path)
    result = run_cli("import", path, "--validators-dir", tmp_path / "v")
    assert result.returncode == 1 and "string of more than" in result.stderr


def test_an_escaped_string_over_the_limit_is_refused() -> None:
    escaped = b'\\"' * (MAX_STRING_BYTES // 2 + 1)
    document = interchange([entry(pubkey(1))]).replace(
        b'"data"', b'"extra":"' + escaped + b'","data"'
    )
    with pytest.raises(JsonLimitError):
        parse_interchange(document)


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 16, 1000])
def test_the_guard_gives_the_same_verdict_for_any_chunking(cut: int) -> None:
    cases = [
        (b'["' + b"\\\\" * 9 + b'", 12345678901234567890, "x\\"1"]', None),
        (b'["a", 123456789012345678901]', "number"),
        (b'{"k": "' + b"1" * 40 + b'"}', None),
        (b"[1e" + b"0" * 30 + b"]", "number"),
        (b"[" * 40 + b"]" * 40, "deep"),
    ]
    for document, expected in cases:
        guard = JsonGuard("doc", max_depth=32)
        try:
            for start in range(0, len(document), cut):
                guard.feed(document[start : start + cut])
        except JsonLimitError as error:
            assert expected is not None and expected in str(error), (document, error)
        else:
            assert expected is None, document
        if expected is None:
            check_document(document, "doc", max_depth=32)


def test_slashing_protection_open_of_an_oversized_record_stays_unchanged(tmp_path: Path) -> None:
    directory = tmp_path / "validators"
    directory.mkdir()
    with SlashingProtection.open(directory, ROOT, register=[pubkey(1)]) as record:
        before = (directory / RECORD_FILE).read_bytes()
        with pytest.raises(InterchangeFormatError):
            record.import_interchange(b'{"metadata":' + b"9" * 6000 + b"}")
        assert (directory / RECORD_FILE).read_bytes() == before
    assert not os.path.exists(directory / "slashing_protection.json.tmp")
