"""What the root conftest's Beacon API fixtures hand to a test, and the timeouts they use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, overload

from tests.support.fake_node import FakeBeaconNode
from validator.beacon import BeaconNodeClient, RequestTimeouts

NodeT = TypeVar("NodeT", bound=FakeBeaconNode)

# Failover tests time out attestation work (0.3 s per node); everything else gets
# room to spare so that a loaded CI machine does not turn answers into timeouts.
TEST_TIMEOUTS = RequestTimeouts(
    default=3.0,
    health=2.0,
    duties=3.0,
    attestation=0.3,
    proposal=3.0,
    sync_committee=2.0,
    subscriptions=3.0,
    events_connect=3.0,
)


class NodeStarter(Protocol):
    """``start_node`` serves a Beacon API test double on loopback and returns it with its
    base URL: ``await start_node(name="first")`` a :class:`FakeBeaconNode`,
    ``await start_node(DutyNode, validator_count=4)`` any subclass, with its options.
    ``strict=False`` leaves out the double's spec checks."""

    @overload
    async def __call__(
        self, *, strict: bool = True, name: str = "node"
    ) -> tuple[FakeBeaconNode, str]: ...

    @overload
    async def __call__(
        self, node_type: type[NodeT], /, *, strict: bool = True, **options: Any
    ) -> tuple[NodeT, str]: ...


ClientFactory = Callable[..., Awaitable[BeaconNodeClient]]
