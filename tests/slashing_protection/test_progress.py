"""Progress of long work: shown on a terminal (counts and rate), silent in a pipe; the
commands run under a real pseudo-terminal here."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from slashing_protection.progress import terminal_progress
from tests.support.official_vectors import REPO_ROOT
from tests.support.records import entry, interchange, pubkey


def run_on_a_terminal(*command: str) -> tuple[int, str]:
    """Run ``command`` with stderr on a pseudo-terminal; its exit status and what it drew."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "160", "TERM": "xterm"},
    )
    os.close(follower)
    drawn = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process ended
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    return process.wait(timeout=60), drawn.decode(errors="replace")


def test_the_bar_shows_the_count_and_the_rate() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with terminal_progress(3, "decrypting keystores", unit="keys", show=True,
                           console=console) as update:  # fmt: skip
        assert update is not None
        for done in (1, 2, 3):
            update(done)
    assert "decrypting keystores" in out.getvalue()
    assert "3/3" in out.getvalue() and "keys/s" in out.getvalue()


def test_nothing_is_shown_off_a_terminal() -> None:
    # Under pytest stderr is captured, not a terminal.
    with terminal_progress(10, "importing") as update:
        assert update is None


def test_import_and_export_draw_their_progress_on_a_terminal(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_bytes(interchange([entry(pubkey(i), slots=(i + 1,)) for i in range(30_000)]))
    validators = tmp_path / "validators"
    status, drawn = run_on_a_terminal(
        sys.executable, "-m", "slashing_protection", "import", str(history),
        "--validators-dir", str(validators),
    )  # fmt: skip
    assert status == 0, drawn
    assert f"importing {history.name}" in drawn
    assert re.search(r"\d+\.\d/\d+\.\d MB", drawn) and re.search(r"\d+\.\d [kM]B/s", drawn), drawn
    status, drawn = run_on_a_terminal(
        sys.executable, "-m", "slashing_protection", "export", str(tmp_path / "out.json"),
        "--validators-dir", str(validators),
    )  # fmt: skip
    assert status == 0, drawn
    assert "exporting to out.json" in drawn and re.search(r"\d+\.\d/\d+\.\d MB", drawn), drawn
    # In a pipe the same commands print their one result line only.
    piped = subprocess.run(
        [sys.executable, "-m", "slashing_protection", "export", str(tmp_path / "again.json"),
         "--validators-dir", str(validators)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    assert piped.returncode == 0 and piped.stderr == ""


def test_keystore_decryption_draws_keys_per_second_on_a_terminal(tmp_path: Path) -> None:
    code = (
        "from keymanager.decrypt_pool import DecryptJob, decrypt_many\n"
        "from keymanager.keystore import DEVNET_INSECURE_KDF, encrypt_keystore\n"
        "from validator.consensus.interop import interop_secret_key\n"
        "jobs = [DecryptJob(f'key {i}', encrypt_keystore(interop_secret_key(i), 'p', "
        "kdf=DEVNET_INSECURE_KDF).to_json(), 'p') for i in range(40)]\n"
        "assert len(decrypt_many(jobs, processes=1)) == 40\n"
    )
    status, drawn = run_on_a_terminal(sys.executable, "-c", code)
    assert status == 0, drawn
    assert "decrypting keystores" in drawn and "40/40" in drawn
    assert re.search(r"\d+ keys/s", drawn), drawn
