"""A throwaway PostgreSQL cluster for the tests of the shared record (tooling, not product).

`initdb` in a temporary directory, then `postgres` listening only on a Unix socket in that
directory (no TCP port, so it can clash with nothing), stopped and deleted by `stop()`.
PostgreSQL refuses to run as root, so under root the server runs as the `postgres` user
that Debian's package creates (via `runuser`).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

INSTALL_HINT = (
    "PostgreSQL is not installed (no initdb found on PATH or under /usr/lib/postgresql/*/bin); "
    "install it with 'apt-get update && apt-get install -y postgresql' (.ci/run does this)"
)
PORT = 5432  # only names the socket file inside the private directory


class ClusterUnavailable(Exception):
    """PostgreSQL's server binaries are missing or the cluster would not start."""


def find_bin_dir() -> Path | None:
    """Where initdb, pg_ctl and postgres live, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name)
        if Path(path).parent.parent.name.isdigit()
        else 0,
    )
    return Path(candidates[-1]).parent if candidates else None


class Cluster:
    """One running throwaway cluster; `url(dbname)` addresses a database in it."""

    def __init__(self, *, fsync: bool = True) -> None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise ClusterUnavailable(INSTALL_HINT)
        self.bin_dir = bin_dir
        self.directory = Path(tempfile.mkdtemp(prefix="sp-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self._user: str | None = None
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.directory)
                raise ClusterUnavailable(
                    "running as root and there is no 'postgres' user to run the server as "
                    "(Debian's postgresql package creates it)"
                ) from None
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)
            self._user = "postgres"
        self.superuser = "postgres"
        settings = [
            "listen_addresses=''",
            f"unix_socket_directories='{self.directory}'",
            f"port={PORT}",
            "max_connections=100",
            f"fsync={'on' if fsync else 'off'}",
        ]
        self._options = " ".join(f"-c {setting}" for setting in settings)
        try:
            self._run(
                "initdb", "-D", str(self.data), "-U", self.superuser, "--auth=trust",
                "-E", "UTF8", "--locale=C", *(() if fsync else ("--no-sync",)),
            )
            self.start()
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise

    def _run(self, program: str, *args: str) -> None:
        command: Sequence[str] = [str(self.bin_dir / program), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()[-3:]
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise ClusterUnavailable(f"{program} failed: {' / '.join(detail)}\n{log}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self._options,
                  "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate` is the crash-like stop); the data stays."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, dbname: str = "postgres") -> str:
        """A postgresql:// URL for `dbname` over the cluster's Unix socket."""
        return (
            f"postgresql://{self.superuser}@/{quote(dbname)}"
            f"?host={quote(str(self.directory), safe='')}&port={PORT}"
        )

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except ClusterUnavailable:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)
