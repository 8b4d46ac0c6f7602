"""Run the devnet in a child process (``python -m validator.devnet``) and talk to it.

    chain = await DevnetProcess.start(devnet_state_dir(validators_dir), 64, 2.0)
    ... run the client against chain.url ...
    summary = await chain.stop()       # SIGTERM, then the child's summary

The child's log goes to ``<state_dir>/chain.log`` (appended). A child that
refuses to start (another validator count on the directory, another devnet
running on it) raises ``DevnetStateError`` with the child's one-line reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson

from validator.devnet.chain.faults import Fault
from validator.devnet.chain.state_directory import DevnetStateError

LOG_FILE = "chain.log"


class DevnetProcess:
    def __init__(
        self, process: asyncio.subprocess.Process, ready: dict[str, Any], log: Path
    ) -> None:
        self.process = process
        self.ready = ready
        self.log_path = log
        self.url: str = ready["url"]
        self.port: int = int(ready["port"])
        self.genesis_time: int = int(ready["genesis_time"])
        self.genesis_validators_root = bytes.fromhex(ready["genesis_validators_root"][2:])
        self._summary: dict[str, Any] | None = None
        self._stop_error: DevnetStateError | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def start(
        cls,
        state_dir: Path,
        validator_count: int,
        seconds_per_slot: float,
        slots_per_epoch: int = 8,
        fault: Fault | str | None = None,
        strict: bool = False,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        genesis_delay: float = 0.0,
        preset: str = "mainnet",
        gloas_fork_epoch: int | None = None,
        builder: bool = False,
        ready_timeout: float = 120.0,
        own_session: bool = False,
    ) -> DevnetProcess:
        """Start the child and wait until it listens.

        The child is sent SIGTERM when this process dies in any way, kill -9 included
        (Linux), so no chain is left running on its state directory. With `own_session`
        it does not share the terminal's process group: a Ctrl-C then reaches only the
        client, which stops the chain once it is done, so the summary covers its last slot.
        """
        state_dir = Path(state_dir)
        state_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "validator.devnet",
            "--state-dir",
            str(state_dir),
            "--validators",
            str(validator_count),
            "--seconds-per-slot",
            repr(float(seconds_per_slot)),
            "--slots-per-epoch",
            str(slots_per_epoch),
            "--host",
            host,
            "--port",
            str(port),
            "--genesis-delay",
            repr(float(genesis_delay)),
            "--preset",
            preset,
        ]
        if gloas_fork_epoch is not None:
            command += ["--gloas-fork-epoch", str(gloas_fork_epoch)]
        if fault is not None:
            command += ["--fault", Fault.parse(str(fault)).value]
        if strict:
            command.append("--strict")
        if builder:
            command.append("--builder")
        # The child imports this very package, installed or not.
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        environment = {
            **os.environ,
            "PYTHONPATH": package_root if not path else package_root + os.pathsep + path,
        }
        log_path = state_dir / LOG_FILE
        with open(log_path, "ab") as log:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                env=environment,
                start_new_session=own_session,
                preexec_fn=_stop_with_parent,
            )
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), ready_timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise DevnetStateError(
                f"the devnet did not start within {ready_timeout:.0f} s; see {log_path}"
            ) from None
        if not line:
            await process.wait()
            raise DevnetStateError(
                _last_line(log_path) or f"the devnet exited ({process.returncode})"
            )
        return cls(process, orjson.loads(line), log_path)

    async def stop(self, timeout: float = 60.0) -> dict[str, Any]:
        """SIGTERM the child, wait for it, return its summary (the same one on a second call)."""
        if self._summary is not None:
            return self._summary
        if self._stop_error is not None:
            raise self._stop_error
        assert self.process.stdout is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            output = await asyncio.wait_for(self.process.stdout.read(), timeout)
            await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.kill()
            await self.process.wait()
            self._stop_error = DevnetStateError(
                f"the devnet did not stop within {timeout:.0f} s; see {self.log_path}"
            )
            raise self._stop_error from None
        lines = output.strip().splitlines()
        if self.process.returncode != 0 or not lines:
            self._stop_error = DevnetStateError(
                _last_line(self.log_path) or f"the devnet exited ({self.process.returncode})"
            )
            raise self._stop_error
        summary: dict[str, Any] = orjson.loads(lines[-1])
        self._summary = summary
        return summary

    def kill(self) -> None:
        """SIGKILL the child (no summary, state as last written)."""
        if self.process.returncode is None:
            self.process.kill()


def _stop_with_parent() -> None:
    """In the child, before it runs: SIGTERM it when its parent dies, however it dies
    (kill -9 included). Linux only; elsewhere the child outlives a killed parent."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1].removeprefix("devnet: ") if lines else ""
