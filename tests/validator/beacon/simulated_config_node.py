"""Serve a simulated chain's configuration (genesis, spec, fork schedule) from a fake node,
with the test's changes, so that the client's start-up reads it over real HTTP."""

from __future__ import annotations

from typing import Any

from tests.support.fake_node import FakeBeaconNode
from validator.beacon import routes
from validator.consensus.chain_preset import SimulatedChainConfig


def serve_config(
    node: FakeBeaconNode,
    config: SimulatedChainConfig,
    *,
    spec: dict[str, Any] | None = None,
    fork_schedule: dict[str, Any] | None = None,
    genesis: dict[str, Any] | None = None,
) -> None:
    node.misbehave(routes.GENESIS, body=genesis or config.genesis_response())
    node.misbehave(routes.CONFIG_SPEC, body=spec or config.spec_response())
    node.misbehave(routes.FORK_SCHEDULE, body=fork_schedule or config.fork_schedule_response())
