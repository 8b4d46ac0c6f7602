"""A Beacon API test double that runs a tiny chain on the wall clock, for the duty loop.

It extends ``tests.support.fake_node.FakeBeaconNode`` (every request and answer
still passes its strict OpenAPI middleware, and every request is recorded) with
answers that depend on the clock and on the validators: a genesis a few
slots ago, the simulated chain's configuration (short slots), interop keys as
the validator set, duties from a fixed schedule, attestation data for the
asked slot, blocks for the asked proposer, aggregates and contributions that
match what was asked, and head events at a chosen point of each slot.

Tests change the schedule or the roots while the loop runs and read back
``published(route)`` with the time each request arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from tests.support import canned
from tests.support.fake_node import FakeBeaconNode
from validator.beacon import routes
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.encoding import to_hex
from validator.consensus.interop import interop_keypair
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import AttestationData, hash_tree_root
from validator.consensus.ssz.codec import from_json
from validator.consensus.ssz.preset import MAINNET, Preset
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec

GENESIS_VALIDATORS_ROOT = bytes.fromhex("d1" * 32)


def root_for(tag: str, number: int) -> str:
    """A distinct 32-byte root per (tag, number)."""
    import hashlib

    return to_hex(hashlib.sha256(f"{tag}:{number}".encode()).digest())


@dataclass
class Schedule:
    """Which validator does what. Defaults give every validator one attestation per epoch."""

    #: slot -> proposer index; a slot not listed has the proposer ``slot % validator_count``.
    proposers: dict[int, int] = field(default_factory=dict)
    #: Validators in the sync committee, with their positions in it.
    sync_positions: dict[int, list[int]] = field(default_factory=dict)
    #: Members of each beacon committee (small, so that every member aggregates).
    committee_length: int = 4
    committees_at_slot: int = 2


@dataclass
class Arrival:
    """A request the double received, with its wall-clock time of arrival."""

    at: float
    route: str
    body: Any
    headers: dict[str, str]
    query: dict[str, str]


class DutyNode(FakeBeaconNode):
    def __init__(
        self,
        spec: BeaconApiSpec | None,
        *,
        validator_count: int,
        slot_duration_ms: int = 600,
        slots_per_epoch: int = 4,
        genesis_slots_ago: float = 0.5,
        known_validators: int | None = None,
        head_delay: float | None = 0.1,
        schedule: Schedule | None = None,
        preset: Preset = MAINNET,
    ) -> None:
        super().__init__(spec, name="duty-node")
        self.preset = preset
        now = time.time()
        # Genesis is a whole second (the API's genesis_time): the next whole second after
        # ``genesis_slots_ago`` slots ago, so the clock is up to one second short of that.
        genesis = int(now - genesis_slots_ago * slot_duration_ms / 1000) + 1
        self.config = SimulatedChainConfig(
            genesis_time=genesis,
            genesis_validators_root=GENESIS_VALIDATORS_ROOT,
            slot_duration_ms=slot_duration_ms,
            slots_per_epoch=slots_per_epoch,
            preset=preset,
        )
        self.chain: ChainSpec = self.config.chain_spec()
        self.validator_count = validator_count
        self.known_validators = validator_count if known_validators is None else known_validators
        self.keys = [interop_keypair(index) for index in range(validator_count)]
        self.index_of = {pubkey: index for index, (_, pubkey) in enumerate(self.keys)}
        self.head_delay = head_delay
        self.schedule = schedule or Schedule()
        #: epoch -> the dependent_root the double answers (and puts in head events).
        self.dependent_roots: dict[int, str] = {}
        #: epoch -> shift of every validator's attestation slot in that epoch (a re-org's effect).
        self.attester_offsets: dict[int, int] = {}
        #: Produce blinded blocks (a builder's payload) instead of full ones.
        self.blinded_blocks = False
        #: route -> seconds to wait before answering (a slow beacon node).
        self.delays: dict[str, float] = {}
        #: route -> awaited before answering it (a test acting while a duty waits on the node).
        self.before_answer: dict[str, Callable[[web.Request], Awaitable[None]]] = {}
        self.arrivals: list[Arrival] = []
        self.attester_duty_requests: list[int] = []
        self._head_task: asyncio.Task[None] | None = None

    # -- the chain's shape ----------------------------------------------------------

    def slot_start(self, slot: int) -> float:
        return self.chain.slot_start_time(slot)

    def dependent_root(self, epoch: int) -> str:
        """Root of the block at the end of ``epoch`` (what duties of later epochs depend on)."""
        return self.dependent_roots.get(epoch, root_for("dependent", epoch))

    def attester_slot(self, epoch: int, index: int) -> int:
        shifted = index + self.attester_offsets.get(epoch, 0)
        return self.chain.start_slot_of_epoch(epoch) + shifted % self.chain.slots_per_epoch

    def committee_index(self, index: int) -> int:
        return (index // self.chain.slots_per_epoch) % self.schedule.committees_at_slot

    def proposer(self, slot: int) -> int:
        return self.schedule.proposers.get(slot, slot % self.validator_count)

    def version(self, slot: int) -> str:
        """The fork (Eth-Consensus-Version) in force at ``slot``."""
        return self.chain.fork_name_at(self.chain.epoch_at_slot(slot)).value

    def head_root(self, slot: int) -> str:
        return root_for("block", slot)

    def attestation_data(self, slot: int) -> dict[str, Any]:
        epoch = self.chain.epoch_at_slot(slot)
        return {
            "slot": str(slot),
            "index": "0",
            "beacon_block_root": self.head_root(slot),
            "source": {"epoch": str(max(epoch - 1, 0)), "root": root_for("checkpoint", epoch - 1)},
            "target": {"epoch": str(epoch), "root": root_for("checkpoint", epoch)},
        }

    # -- recording ------------------------------------------------------------------

    def published(self, route: str) -> list[Arrival]:
        return [arrival for arrival in self.arrivals if arrival.route == route]

    def _arrive(self, route: str, request: web.Request) -> None:
        recorded = self.requests[-1]
        body = orjson.loads(recorded.body) if recorded.body else None
        self.arrivals.append(
            Arrival(
                at=time.time(),
                route=route,
                body=body,
                headers=dict(recorded.headers),
                query=dict(recorded.query),
            )
        )

    # -- answers --------------------------------------------------------------------

    def _validator_entries(self, ids: list[str]) -> list[Any]:
        entries = []
        for value in ids:
            if value.startswith("0x"):
                index = self.index_of.get(bytes.fromhex(value[2:]))
            elif value.isdigit():
                index = int(value)
            else:
                index = None
            if index is None or index >= self.known_validators:
                continue
            entry = canned.validator_entry(index)
            entry["validator"]["pubkey"] = to_hex(self.keys[index][1])
            entries.append(entry)
        return entries

    def _validators(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        ids = orjson.loads(self.requests[-1].body)["ids"]
        body = {"execution_optimistic": False, "finalized": False}
        return 200, {**body, "data": self._validator_entries(ids)}, {}

    def _attester_duties(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        epoch = int(request.match_info["epoch"])
        self.attester_duty_requests.append(epoch)
        indices = [int(value) for value in orjson.loads(self.requests[-1].body)]
        duties = []
        for index in indices:
            if index >= self.known_validators:
                continue
            duties.append(
                {
                    "pubkey": to_hex(self.keys[index][1]),
                    "validator_index": str(index),
                    "committee_index": str(self.committee_index(index)),
                    "committee_length": str(self.schedule.committee_length),
                    "committees_at_slot": str(self.schedule.committees_at_slot),
                    "validator_committee_index": str(index % self.schedule.committee_length),
                    "slot": str(self.attester_slot(epoch, index)),
                }
            )
        body = {
            "dependent_root": self.dependent_root(epoch - 2),
            "execution_optimistic": False,
            "data": duties,
        }
        return 200, body, {}

    def _proposer_duties(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        epoch = int(request.match_info["epoch"])
        start = self.chain.start_slot_of_epoch(epoch)
        duties = []
        for slot in range(start, start + self.chain.slots_per_epoch):
            index = self.proposer(slot)
            duties.append(
                {
                    "pubkey": to_hex(self.keys[index][1]),
                    "validator_index": str(index),
                    "slot": str(slot),
                }
            )
        body = {
            "dependent_root": self.dependent_root(epoch - 1),
            "execution_optimistic": False,
            "data": duties,
        }
        return 200, body, {}

    def _sync_duties(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        indices = [int(value) for value in orjson.loads(self.requests[-1].body)]
        duties = [
            {
                "pubkey": to_hex(self.keys[index][1]),
                "validator_index": str(index),
                "validator_sync_committee_indices": [
                    str(position) for position in self.schedule.sync_positions[index]
                ],
            }
            for index in indices
            if index in self.schedule.sync_positions
        ]
        return 200, {"execution_optimistic": False, "data": duties}, {}

    def _produce_block(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        slot = int(request.match_info["slot"])
        version = self.version(slot)
        make = canned.electra_blinded_block if self.blinded_blocks else canned.electra_block
        block = make(slot, self.proposer(slot))
        # The canned block is mainnet's; the preset shapes its sync aggregate.
        block["body"]["sync_aggregate"]["sync_committee_bits"] = to_hex(
            bytes(self.preset.SYNC_COMMITTEE_SIZE // 8)
        )
        block["body"]["randao_reveal"] = request.query["randao_reveal"]
        if "graffiti" in request.query:
            block["body"]["graffiti"] = request.query["graffiti"]
        body = {
            "version": version,
            "execution_payload_blinded": self.blinded_blocks,
            "execution_payload_value": canned.PAYLOAD_VALUE,
            "consensus_block_value": canned.BLOCK_VALUE,
            "data": block
            if self.blinded_blocks
            else {"block": block, "kzg_proofs": [], "blobs": []},
        }
        headers = {
            "Eth-Consensus-Version": version,
            "Eth-Execution-Payload-Blinded": "true" if self.blinded_blocks else "false",
            "Eth-Execution-Payload-Value": canned.PAYLOAD_VALUE,
            "Eth-Consensus-Block-Value": canned.BLOCK_VALUE,
        }
        return 200, body, headers

    def _attestation_data(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        return 200, {"data": self.attestation_data(int(request.query["slot"]))}, {}

    def _aggregate(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        slot = int(request.query["slot"])
        committee = int(request.query["committee_index"])
        data = self.attestation_data(slot)
        asked = request.query["attestation_data_root"]
        if to_hex(hash_tree_root(from_json(AttestationData, data))) != asked:
            return 404, canned.error(404, "no aggregate for that data"), {}
        committee_bits = bytearray((self.preset.MAX_COMMITTEES_PER_SLOT + 7) // 8)
        committee_bits[committee // 8] |= 1 << (committee % 8)
        aggregate = {
            "aggregation_bits": "0x1f",  # four members and the length bit
            "data": data,
            "signature": canned.signature(0x62),
            "committee_bits": to_hex(bytes(committee_bits)),
        }
        version = self.version(slot)
        return 200, {"version": version, "data": aggregate}, {"Eth-Consensus-Version": version}

    def _contribution(self, request: web.Request) -> tuple[int, Any, dict[str, str]]:
        slot = int(request.query["slot"])
        subcommittee = int(request.query["subcommittee_index"])
        answer = canned.contribution(slot, subcommittee, request.query["beacon_block_root"])
        members = self.preset.SYNC_COMMITTEE_SIZE // self.preset.SYNC_COMMITTEE_SUBNET_COUNT
        answer["data"]["aggregation_bits"] = "0x" + "ff" * (members // 8)
        return 200, answer, {}

    def _publication(self, route: str) -> Callable[[web.Request], tuple[int, Any, dict[str, str]]]:
        def answer(request: web.Request) -> tuple[int, Any, dict[str, str]]:
            self._arrive(route, request)
            return 200, None, {}

        return answer

    def app(self) -> web.Application:
        middlewares = [self.checker.middleware] if self.checker is not None else []
        app = web.Application(middlewares=middlewares)
        config = self.config
        handlers: dict[tuple[str, str], Callable[[web.Request], tuple[int, Any, dict[str, str]]]]
        handlers = {
            ("GET", routes.NODE_SYNCING): lambda r: (200, self.syncing_answer, {}),
            ("GET", routes.NODE_HEALTH): lambda r: (200, None, {}),
            ("GET", routes.NODE_VERSION): lambda r: (200, canned.version(), {}),
            ("GET", routes.GENESIS): lambda r: (200, config.genesis_response(), {}),
            ("GET", routes.CONFIG_SPEC): lambda r: (200, config.spec_response(), {}),
            ("GET", routes.FORK_SCHEDULE): lambda r: (200, config.fork_schedule_response(), {}),
            ("POST", routes.STATE_VALIDATORS): self._validators,
            ("GET", routes.BLOCK_ROOT): lambda r: (
                200,
                {
                    "execution_optimistic": False,
                    "finalized": False,
                    "data": {"root": self.head_root(self.clock_slot())},
                },
                {},
            ),
            ("POST", routes.ATTESTER_DUTIES): self._attester_duties,
            ("GET", routes.PROPOSER_DUTIES): self._proposer_duties,
            ("POST", routes.SYNC_DUTIES): self._sync_duties,
            ("POST", routes.LIVENESS): self._liveness,
            ("GET", routes.PRODUCE_BLOCK_V3): self._produce_block,
            ("GET", routes.ATTESTATION_DATA): self._attestation_data,
            ("GET", routes.AGGREGATE_ATTESTATION_V2): self._aggregate,
            ("GET", routes.SYNC_COMMITTEE_CONTRIBUTION): self._contribution,
        }
        for route in (
            routes.PUBLISH_BLOCK_V2,
            routes.PUBLISH_BLINDED_BLOCK_V2,
            routes.POOL_ATTESTATIONS_V2,
            routes.AGGREGATE_AND_PROOFS_V2,
            routes.BEACON_COMMITTEE_SUBSCRIPTIONS,
            routes.SYNC_COMMITTEE_SUBSCRIPTIONS,
            routes.PREPARE_BEACON_PROPOSER,
            routes.REGISTER_VALIDATOR,
            routes.POOL_SYNC_COMMITTEES,
            routes.CONTRIBUTION_AND_PROOFS,
        ):
            handlers[("POST", route)] = self._publication(route)
        for (method, route), answer in handlers.items():
            app.router.add_route(method, route, self._slowed(route, self._wrap(route, answer)))
        app.router.add_get(routes.EVENTS, self._events)
        app.on_startup.append(self._start_heads)
        app.on_cleanup.append(self._stop_heads)
        return app

    def _slowed(
        self, route: str, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            delay = self.delays.get(route)
            if delay:
                await asyncio.sleep(delay)
            hook = self.before_answer.get(route)
            if hook is not None:
                await hook(request)
            return await handler(request)

        return handle

    def clock_slot(self) -> int:
        """The wall clock's slot; -1 before genesis."""
        elapsed = time.time() - self.chain.genesis_time
        return int(elapsed // self.chain.seconds_per_slot) if elapsed >= 0 else -1

    # -- head events ----------------------------------------------------------------

    def head_event(self, slot: int) -> dict[str, Any]:
        epoch = self.chain.epoch_at_slot(slot)
        return {
            "slot": str(slot),
            "block": self.head_root(slot),
            "state": root_for("state", slot),
            "epoch_transition": slot % self.chain.slots_per_epoch == 0,
            "previous_duty_dependent_root": self.dependent_root(epoch - 2),
            "current_duty_dependent_root": self.dependent_root(epoch - 1),
            "execution_optimistic": False,
        }

    async def _start_heads(self, app: web.Application) -> None:
        if self.head_delay is not None:
            self._head_task = asyncio.create_task(self._emit_heads())

    async def _stop_heads(self, app: web.Application) -> None:
        if self._head_task is not None:
            self._head_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._head_task

    async def _emit_heads(self) -> None:
        assert self.head_delay is not None
        slot = self.clock_slot() + 1
        while True:
            when = self.slot_start(slot) + self.head_delay * self.chain.seconds_per_slot
            await asyncio.sleep(max(0.0, when - time.time()))
            self.send_event("head", self.head_event(slot))
            slot += 1


Starter = Callable[..., Awaitable[tuple[DutyNode, str]]]
