"""`validator run` on a missing validators directory, and what the docs say about it
(docs/keymanager.md once said the directory was created: it is not)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_validator_run_refuses_a_missing_directory_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "validators"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "validator",
            "run",
            "--beacon-node-url",
            "http://127.0.0.1:9",
            "--validators-dir",
            str(missing),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert f"the validators directory {missing} does not exist" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "missing").exists()


def test_the_keymanager_docs_say_what_validator_run_does() -> None:
    text = " ".join((REPO / "docs" / "keymanager.md").read_text().split())
    assert "0700 when the client creates it" not in text
    assert "never created by `validator run`: a missing one is refused at start" in text
