"""A real Prometheus scraping ``validator run`` on the simulated chain: every dashboard
panel's expression answers a series after a few epochs, and the faults the alert rules
are for (the client down, a key halted, the beacon node killed) fire their alerts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import SLOTS_PER_EPOCH, VALIDATORS, ChainStarter, ClientStarter
from tests.monitoring.expressions import ALERTS, panels
from tests.support.prometheus_server import PrometheusServer, free_port
from tests.support.validators_dir import make_validators_dir
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_keypair
from validator.halts import HaltReason, HaltStore

pytestmark = pytest.mark.slow

EPOCHS = 3


#: Every ``for:`` of the shipped rules, shortened to this for a test of seconds: a fault
#: that lasts fires, a blip of a loaded host (a slow scrape, a late health check) does not.
PENDING = "3s"


def rules_without_waiting(directory: Path) -> Path:
    """The shipped rules, the same conditions, with every ``for:`` shortened to PENDING."""
    rules = yaml.safe_load(ALERTS.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = PENDING
    path = directory / "alerts-now.yml"
    path.write_text(yaml.safe_dump(rules))
    return path


async def wait_for_alert(
    prometheus: PrometheusServer, name: str, timeout: float, **labels: str
) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            for alert in await prometheus.firing():
                mine = alert["labels"]
                if mine["alertname"] == name and all(mine.get(k) == v for k, v in labels.items()):
                    return alert
            await asyncio.sleep(0.5)


async def test_prometheus_answers_every_panel_and_fires_the_alerts_of_each_fault(
    tmp_path: Path, start_chain: ChainStarter, start_client: ClientStarter
) -> None:
    directory = make_validators_dir(tmp_path / "validators", VALIDATORS)
    chain, ready = await start_chain(directory)
    metrics_port = free_port()
    prometheus = PrometheusServer(
        tmp_path, {"validator": f"127.0.0.1:{metrics_port}"}, [rules_without_waiting(tmp_path)]
    )
    await prometheus.start()
    try:
        metrics = ("--metrics", "--metrics-port", str(metrics_port))
        client = await start_client(
            str(ready["url"]), directory, "--init-slashing-protection", *metrics
        )
        await client.published("attestation")
        # A few epochs of scrapes, every duty kind among them.
        await prometheus.wait_for_series(
            f"validator_current_slot >= {EPOCHS * SLOTS_PER_EPOCH}", timeout=60
        )
        await prometheus.wait_for_series(
            'validator_duties_total{kind="sync_contribution", result="published"}', timeout=30
        )
        empty = []
        for panel in panels():
            for expression in panel.expressions:
                if not await prometheus.query(expression):
                    empty.append(f"{panel.title}: {expression}")
        assert empty == []
        # Healthy: none of the faults' alerts fires.
        fault_alerts = {"ValidatorKeyHalted", "ValidatorBeaconNodesAllUnhealthy", "ValidatorDown"}
        firing = {alert["labels"]["alertname"] for alert in await prometheus.firing()}
        assert not firing & fault_alerts, firing

        # The client stopped: Prometheus cannot scrape it.
        assert await client.stop() == 0
        await wait_for_alert(prometheus, "ValidatorDown", timeout=20, job="validator")

        # A key halted (its marker written while the client was down): it restarts
        # without it, and its alert names it.
        halted = interop_keypair(0)[1]
        HaltStore(directory).halt(halted, HaltReason.SLASHED, "the test halted it", None)
        client = await start_client(str(ready["url"]), directory, *metrics)
        await client.published("attestation")
        alert = await wait_for_alert(
            prometheus, "ValidatorKeyHalted", timeout=30, pubkey=to_hex(halted), state="halted"
        )
        assert f"--pubkey {to_hex(halted)}" in alert["annotations"]["description"]

        # The only beacon node killed: no node is healthy.
        chain.kill()
        await wait_for_alert(prometheus, "ValidatorBeaconNodesAllUnhealthy", timeout=30)
        assert await client.stop() == 0
    finally:
        prometheus.stop()
