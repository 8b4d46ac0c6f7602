"""A real Prometheus (Debian's ``prometheus``) on loopback, for the monitoring tests.

It scrapes the given targets every second, evaluates the given rule files every
second, keeps its data in a temporary directory, and answers PromQL through its HTTP
API (``query``, ``alerts``).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from tests.support.debian_tools import debian_tool


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PrometheusServer:
    def __init__(self, directory: Path, targets: dict[str, str], rule_files: Sequence[Path]):
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(path) for path in rule_files],
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": [target]}]}
                for job, target in targets.items()
            ],
        }
        self.config_file = directory / "prometheus.yml"
        self.config_file.write_text(yaml.safe_dump(config))
        self.log_file = directory / "prometheus.log"
        self._process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        binary = debian_tool("prometheus", "prometheus")
        with self.log_file.open("wb") as log:
            self._process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={self.config_file}",
                    f"--storage.tsdb.path={self.directory / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        async with asyncio.timeout(30), aiohttp.ClientSession() as http:
            while True:
                assert self._process.poll() is None, self.log_file.read_text()[-2000:]
                try:
                    async with http.get(f"{self.url}/-/ready") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.2)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    async def _get(self, path: str, **params: str) -> Any:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"{self.url}/api/v1/{path}", params=params) as response,
        ):
            answer = await response.json()
        assert answer["status"] == "success", answer
        return answer["data"]

    async def query(self, expression: str) -> list[dict[str, Any]]:
        """The instant vector (or a scalar as one sample) ``expression`` gives now."""
        data = await self._get("query", query=expression)
        if data["resultType"] == "vector":
            result: list[dict[str, Any]] = data["result"]
            return result
        return [{"metric": {}, "value": data["result"]}]

    async def firing(self) -> list[dict[str, Any]]:
        """The alerts firing now, each with its labels."""
        alerts: list[dict[str, Any]] = (await self._get("alerts"))["alerts"]
        return [alert for alert in alerts if alert["state"] == "firing"]

    async def wait_for_series(self, expression: str, timeout: float) -> list[dict[str, Any]]:
        async with asyncio.timeout(timeout):
            while not (found := await self.query(expression)):
                await asyncio.sleep(0.5)
        return found
