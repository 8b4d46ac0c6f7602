"""A flood of idle connections on the Keymanager and metrics ports starves no duty.

`validator devnet` runs in a subprocess whose descriptor limit is 1,024. Without a
connection cap, the 3,000 idle sockets this test keeps open against each port would take
every descriptor of that process, its record writes would fail (fail closed: refused)
and duties would be missed; with the cap the servers hold at most 64 connections each.
"""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
FLOOD_PER_PORT = 3000

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


class Flood:
    """Keeps up to `count` idle connections open against a port, reopening closed ones."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.opened = 0
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sockets = [s for s in self._sockets if not _closed_by_peer(s)]
            while len(self._sockets) < self.count and not self._stop.is_set():
                connection = socket.socket()
                connection.settimeout(0.5)
                try:
                    connection.connect(("127.0.0.1", self.port))
                except OSError:
                    connection.close()
                    break
                connection.setblocking(False)
                self._sockets.append(connection)
                self.opened += 1
            self._stop.wait(1.0)  # the flood itself must not starve the client of CPU

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        for connection in self._sockets:
            connection.close()


def _closed_by_peer(connection: socket.socket) -> bool:
    try:
        data = connection.recv(4096)
    except BlockingIOError:
        return False
    except OSError:
        data = b""
    if data:
        return False
    connection.close()
    return True


def test_idle_connection_floods_cost_no_duty_and_no_record_write(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * FLOOD_PER_PORT + 500:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * FLOOD_PER_PORT), hard))
    keymanager_port, metrics_port = _free_port(), _free_port()
    summary = tmp_path / "summary.json"
    command = [
        sys.executable, "-m", "validator", "devnet",
        "--validators", "16", "--slots", "16", "--seconds-per-slot", "1",
        "--slots-per-epoch", "4", "--validators-dir", str(tmp_path / "validators"),
        "--summary", str(summary),
        "--keymanager", "--keymanager-port", str(keymanager_port),
        "--metrics", "--metrics-port", str(metrics_port),
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_descriptors,
    )
    floods = [Flood(keymanager_port, FLOOD_PER_PORT), Flood(metrics_port, FLOOD_PER_PORT)]
    try:
        _, stderr = process.communicate(timeout=240)
    finally:
        for flood in floods:
            flood.stop()
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    log = stderr.decode(errors="replace")
    assert process.returncode == 0, log[-2000:]
    assert all(flood.opened > 64 for flood in floods), [flood.opened for flood in floods]
    result = orjson.loads(summary.read_bytes())
    assert result["missed_duties"] == 0, result["missed_duties_detail"]
    assert result["client_refusals"] == 0
    assert result["slashable_messages"] == 0
    assert "out of system resource" not in log or log.count("out of system resource") <= 5
