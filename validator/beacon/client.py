"""The typed Beacon API endpoints a validator client uses, over :mod:`validator.beacon.transport`.

:class:`BeaconNodeClient` adds one method per endpoint to the transport:
fetches (duties, attestation data, block production, ...) fail over between
nodes, publications (signed blocks, attestations, aggregates, sync messages,
subscriptions, proposer preparations, registrations, exits) go to every
reachable node; see the transport for how.

Why one module: one short method per endpoint the client
uses, the whole typed surface of the Beacon API in one place to read; the
transport, the answer readers and the wire types are their own modules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import orjson

from validator.beacon import routes
from validator.beacon.answers import CONSENSUS_VERSION, produced_block_from, versioned_data_from
from validator.beacon.epbs import EpbsRoutes
from validator.beacon.errors import BeaconApiError, BeaconNodeError, MalformedResponseError
from validator.beacon.events import EventStream
from validator.beacon.nodes import BeaconNode
from validator.beacon.transport import (
    ACCEPT_SSZ_FIRST,
    JSON,
    SSZ,
    Answer,
    RequestTimeouts,
    syncing_status_from,
)
from validator.beacon.types import (
    AttesterDuties,
    BeaconCommitteeSubscription,
    BlockRoot,
    FinalityCheckpoints,
    JsonObject,
    ProposalAnswer,
    ProposerDuties,
    ProposerPreparation,
    PublishResult,
    SyncCommitteeSubscription,
    SyncDuties,
    SyncingStatus,
    ValidatorInfo,
    VersionedData,
    data_of,
    field_of,
    hex0x,
    parse_list,
    parse_object,
    parse_uint,
)
from validator.consensus.spec import (
    ApiFork,
    ChainSpecError,
    Genesis,
    parse_fork_schedule_response,
    parse_genesis_response,
    parse_state_fork_response,
)

__all__ = ["BeaconNodeClient", "RequestTimeouts", "encode_graffiti"]

T = TypeVar("T")

#: The GET form of state validators takes at most this many ids per request.
MAX_IDS_PER_GET = 64


def _validator_id(value: int | str | bytes) -> str:
    if isinstance(value, bytes):
        if len(value) != 48:
            raise ValueError(f"a validator public key is 48 bytes, got {len(value)}")
        return hex0x(value)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"validator index must be >= 0, got {value}")
        return str(value)
    return value


def _indices_body(indices: Sequence[int]) -> list[str]:
    if not indices:
        raise ValueError("at least one validator index is needed")
    return [str(int(index)) for index in indices]


def _require_length(value: bytes, length: int, name: str) -> bytes:
    if len(value) != length:
        raise ValueError(f"{name} must be {length} bytes, got {len(value)}")
    return value


def _chain_model(parse: Callable[[Any], T]) -> Callable[[Answer], T]:
    """Read an answer with the chain spec's own parser (one model per wire object)."""

    def read(answer: Answer) -> T:
        try:
            return parse(answer.json())
        except ChainSpecError as error:
            raise MalformedResponseError(str(error)) from None

    return read


def encode_graffiti(text: str) -> bytes:
    """Graffiti text as the 32 bytes a block carries (UTF-8, zero-padded)."""
    raw = text.encode("utf-8")
    if len(raw) > 32:
        raise ValueError(f"graffiti is {len(raw)} bytes in UTF-8; at most 32 fit")
    return raw.ljust(32, b"\0")


class BeaconNodeClient(EpbsRoutes):
    """The validator client's connection to its beacon node(s).

    ``async with BeaconNodeClient(urls) as client:`` opens the HTTP session, checks
    every node once and starts the periodic health checks; leaving the block (or
    :meth:`close`) stops them, closes open event streams and the session.
    ``middlewares`` are aiohttp client middlewares (strict-mode spec checks).
    """

    # -- node --------------------------------------------------------------------

    async def get_syncing(self) -> SyncingStatus:
        return await self._fetch(
            "GET",
            routes.NODE_SYNCING,
            routes.NODE_SYNCING,
            syncing_status_from,
            timeout=self.timeouts.health,
        )

    async def get_node_health(self) -> dict[str, int | None]:
        """Each node's ``/eth/v1/node/health`` status (200 ready, 206 syncing, 503
        not ready); None for a node that could not be reached."""

        async def one(node: BeaconNode) -> int | None:
            try:
                answer = await self._send(
                    node,
                    "GET",
                    routes.NODE_HEALTH,
                    routes.NODE_HEALTH,
                    timeout=self.timeouts.health,
                )
            except BeaconApiError as error:
                return error.status
            except BeaconNodeError:
                return None
            return answer.status

        statuses = await asyncio.gather(*(one(node) for node in self._pool.nodes))
        return {node.name: status for node, status in zip(self._pool.nodes, statuses, strict=True)}

    async def get_node_version(self) -> str:
        def parse(answer: Answer) -> str:
            version = field_of(parse_object(data_of(answer.json()), "version"), "version", "data")
            if not isinstance(version, str):
                raise MalformedResponseError(f"version is not a string: {version!r:.80}")
            return version

        return await self._fetch(
            "GET", routes.NODE_VERSION, routes.NODE_VERSION, parse, timeout=self.timeouts.default
        )

    # -- chain and config --------------------------------------------------------

    async def get_genesis(self) -> Genesis:
        return await self._fetch(
            "GET",
            routes.GENESIS,
            routes.GENESIS,
            _chain_model(parse_genesis_response),
            timeout=self.timeouts.default,
        )

    async def get_genesis_of_every_node(self) -> list[tuple[BeaconNode, Genesis | BeaconNodeError]]:
        """``/eth/v1/beacon/genesis`` from each configured node (no failover): its answer,
        or the error it gave, so a caller can tell whether they all describe one chain."""
        parse = _chain_model(parse_genesis_response)

        async def one(node: BeaconNode) -> Genesis | BeaconNodeError:
            try:
                answer = await self._send(
                    node, "GET", routes.GENESIS, routes.GENESIS, timeout=self.timeouts.default
                )
                return self._parsed(answer, routes.GENESIS, parse)
            except BeaconNodeError as error:
                return error

        answers = await asyncio.gather(*(one(node) for node in self._pool.nodes))
        return list(zip(self._pool.nodes, answers, strict=True))

    async def get_spec(self) -> dict[str, Any]:
        """The node's config/preset values, as the API gives them (strings, lists)."""
        return await self._fetch(
            "GET",
            routes.CONFIG_SPEC,
            routes.CONFIG_SPEC,
            lambda answer: parse_object(data_of(answer.json()), "spec"),
            timeout=self.timeouts.default,
        )

    async def get_fork_schedule(self) -> list[ApiFork]:
        return await self._fetch(
            "GET",
            routes.FORK_SCHEDULE,
            routes.FORK_SCHEDULE,
            _chain_model(parse_fork_schedule_response),
            timeout=self.timeouts.default,
        )

    async def get_state_fork(self, state_id: str = "head") -> ApiFork:
        return await self._fetch(
            "GET",
            routes.STATE_FORK,
            routes.fill(routes.STATE_FORK, state_id=state_id),
            _chain_model(parse_state_fork_response),
            timeout=self.timeouts.default,
        )

    async def get_finality_checkpoints(self, state_id: str = "head") -> FinalityCheckpoints:
        return await self._fetch(
            "GET",
            routes.STATE_FINALITY_CHECKPOINTS,
            routes.fill(routes.STATE_FINALITY_CHECKPOINTS, state_id=state_id),
            lambda answer: FinalityCheckpoints.from_body(answer.json()),
            timeout=self.timeouts.default,
        )

    async def get_validators(
        self,
        ids: Sequence[int | str | bytes],
        *,
        state_id: str = "head",
        statuses: Sequence[str] = (),
        use_get: bool = False,
    ) -> list[ValidatorInfo]:
        """Validators by index or public key (unknown ones are simply absent).

        POSTs all ids at once; ``use_get`` uses the GET form instead, 64 ids per
        request, for nodes without the POST form. No ids means no validators (the
        API would answer *all* validators).
        """
        id_strings = [_validator_id(value) for value in ids]
        if not id_strings:
            return []
        path = routes.fill(routes.STATE_VALIDATORS, state_id=state_id)

        def parse(answer: Answer) -> list[ValidatorInfo]:
            return [
                ValidatorInfo.from_json(item)
                for item in parse_list(data_of(answer.json()), "validators")
            ]

        if not use_get:
            body: dict[str, Any] = {"ids": id_strings}
            if statuses:
                body["statuses"] = list(statuses)
            return await self._fetch(
                "POST",
                routes.STATE_VALIDATORS,
                path,
                parse,
                timeout=self.timeouts.default,
                json_body=body,
            )
        found: list[ValidatorInfo] = []
        for start in range(0, len(id_strings), MAX_IDS_PER_GET):
            query = [("id", value) for value in id_strings[start : start + MAX_IDS_PER_GET]]
            query += [("status", status) for status in statuses]
            found += await self._fetch(
                "GET",
                routes.STATE_VALIDATORS,
                path,
                parse,
                timeout=self.timeouts.default,
                query=query,
            )
        return found

    async def get_block_root(self, block_id: str = "head") -> BlockRoot:
        """Root of a block (``head`` for the sync committee message's root)."""
        return await self._fetch(
            "GET",
            routes.BLOCK_ROOT,
            routes.fill(routes.BLOCK_ROOT, block_id=block_id),
            lambda answer: BlockRoot.from_body(answer.json()),
            timeout=self.timeouts.sync_committee,
        )

    # -- duties ------------------------------------------------------------------

    async def get_attester_duties(self, epoch: int, indices: Sequence[int]) -> AttesterDuties:
        return await self._fetch(
            "POST",
            routes.ATTESTER_DUTIES,
            routes.fill(routes.ATTESTER_DUTIES, epoch=epoch),
            lambda answer: AttesterDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
            json_body=_indices_body(indices),
        )

    async def get_proposer_duties(self, epoch: int) -> ProposerDuties:
        return await self._fetch(
            "GET",
            routes.PROPOSER_DUTIES,
            routes.fill(routes.PROPOSER_DUTIES, epoch=epoch),
            lambda answer: ProposerDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
        )

    async def get_sync_duties(self, epoch: int, indices: Sequence[int]) -> SyncDuties:
        return await self._fetch(
            "POST",
            routes.SYNC_DUTIES,
            routes.fill(routes.SYNC_DUTIES, epoch=epoch),
            lambda answer: SyncDuties.from_body(answer.json()),
            timeout=self.timeouts.duties,
            json_body=_indices_body(indices),
        )

    async def get_liveness(self, epoch: int, indices: Sequence[int]) -> dict[int, bool]:
        """Which of ``indices`` the node saw live in ``epoch`` (doppelganger protection)."""

        def parse(answer: Answer) -> dict[int, bool]:
            found: dict[int, bool] = {}
            for item in parse_list(data_of(answer.json()), "liveness"):
                obj = parse_object(item, "liveness entry")
                live = field_of(obj, "is_live", "liveness entry")
                if not isinstance(live, bool):
                    raise MalformedResponseError(f"is_live is not a boolean: {live!r:.40}")
                found[parse_uint(field_of(obj, "index", "liveness entry"), "index")] = live
            return found

        return await self._fetch(
            "POST",
            routes.LIVENESS,
            routes.fill(routes.LIVENESS, epoch=epoch),
            parse,
            timeout=self.timeouts.duties,
            json_body=_indices_body(indices),
        )

    # -- blocks ------------------------------------------------------------------

    async def produce_block(
        self,
        slot: int,
        randao_reveal: bytes,
        *,
        graffiti: bytes | None = None,
        skip_randao_verification: bool = False,
        builder_boost_factor: int | None = None,
        ssz: bool = False,
    ) -> ProposalAnswer:
        """An unsigned block (full or blinded) for ``slot``.

        ``ssz`` asks for SSZ bytes first (JSON still accepted if that is what the
        node sends). ``skip_randao_verification`` requires the infinity signature
        as ``randao_reveal``, as the API says.
        """
        query = [("randao_reveal", hex0x(_require_length(randao_reveal, 96, "randao reveal")))]
        if graffiti is not None:
            query.append(("graffiti", hex0x(_require_length(graffiti, 32, "graffiti"))))
        if skip_randao_verification:
            query.append(("skip_randao_verification", ""))
        if builder_boost_factor is not None:
            if not 0 <= builder_boost_factor < 2**64:
                raise ValueError("builder_boost_factor must fit in a uint64")
            query.append(("builder_boost_factor", str(builder_boost_factor)))
        return await self._fetch(
            "GET",
            routes.PRODUCE_BLOCK_V3,
            routes.fill(routes.PRODUCE_BLOCK_V3, slot=slot),
            produced_block_from,
            timeout=self.timeouts.proposal,
            query=query,
            accept=ACCEPT_SSZ_FIRST if ssz else JSON,
        )

    async def publish_block(
        self,
        signed_block: JsonObject | bytes,
        *,
        consensus_version: str,
        blinded: bool = False,
        broadcast_validation: str | None = None,
    ) -> PublishResult:
        """Publish a signed block (JSON signed block contents, or SSZ bytes) to every
        reachable node. ``broadcast_validation``: gossip, consensus or
        consensus_and_equivocation."""
        route = routes.PUBLISH_BLINDED_BLOCK_V2 if blinded else routes.PUBLISH_BLOCK_V2
        if broadcast_validation not in (None, "gossip", "consensus", "consensus_and_equivocation"):
            raise ValueError(f"unknown broadcast_validation {broadcast_validation!r}")
        query = [("broadcast_validation", broadcast_validation)] if broadcast_validation else []
        is_ssz = isinstance(signed_block, bytes)
        payload = signed_block if isinstance(signed_block, bytes) else orjson.dumps(signed_block)
        return await self._publish(
            route,
            route,
            payload,
            timeout=self.timeouts.proposal,
            content_type=SSZ if is_ssz else JSON,
            query=query,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    # -- attestations ------------------------------------------------------------

    async def get_attestation_data(self, slot: int, committee_index: int = 0) -> JsonObject:
        """``AttestationData`` JSON for ``slot`` (committee index 0 from Electra on)."""
        return await self._fetch(
            "GET",
            routes.ATTESTATION_DATA,
            routes.ATTESTATION_DATA,
            lambda answer: parse_object(data_of(answer.json()), "attestation data"),
            timeout=self.timeouts.attestation,
            query=[("slot", str(slot)), ("committee_index", str(committee_index))],
        )

    async def publish_attestations(
        self, attestations: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        """Publish attestations (``SingleAttestation`` JSON from Electra on)."""
        return await self._publish_json(
            routes.POOL_ATTESTATIONS_V2,
            list(attestations),
            timeout=self.timeouts.attestation,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    async def get_aggregate_attestation(
        self, slot: int, attestation_data_root: bytes, committee_index: int
    ) -> VersionedData:
        return await self._fetch(
            "GET",
            routes.AGGREGATE_ATTESTATION_V2,
            routes.AGGREGATE_ATTESTATION_V2,
            versioned_data_from,
            timeout=self.timeouts.attestation,
            query=[
                (
                    "attestation_data_root",
                    hex0x(_require_length(attestation_data_root, 32, "attestation data root")),
                ),
                ("slot", str(slot)),
                ("committee_index", str(committee_index)),
            ],
        )

    async def publish_aggregate_and_proofs(
        self, signed_aggregates: Sequence[JsonObject], *, consensus_version: str
    ) -> PublishResult:
        return await self._publish_json(
            routes.AGGREGATE_AND_PROOFS_V2,
            list(signed_aggregates),
            timeout=self.timeouts.attestation,
            headers={CONSENSUS_VERSION: consensus_version},
        )

    # -- subscriptions and preparation (sent to every node: any may be asked next) -

    async def subscribe_to_beacon_committees(
        self, subscriptions: Sequence[BeaconCommitteeSubscription]
    ) -> PublishResult:
        return await self._publish_json(
            routes.BEACON_COMMITTEE_SUBSCRIPTIONS,
            [item.to_json() for item in subscriptions],
            timeout=self.timeouts.subscriptions,
        )

    async def subscribe_to_sync_committees(
        self, subscriptions: Sequence[SyncCommitteeSubscription]
    ) -> PublishResult:
        return await self._publish_json(
            routes.SYNC_COMMITTEE_SUBSCRIPTIONS,
            [item.to_json() for item in subscriptions],
            timeout=self.timeouts.subscriptions,
        )

    async def prepare_beacon_proposer(
        self, preparations: Sequence[ProposerPreparation]
    ) -> PublishResult:
        return await self._publish_json(
            routes.PREPARE_BEACON_PROPOSER,
            [item.to_json() for item in preparations],
            timeout=self.timeouts.subscriptions,
        )

    async def register_validators(self, registrations: Sequence[JsonObject]) -> PublishResult:
        """Builder registrations (``SignedValidatorRegistration`` JSON)."""
        return await self._publish_json(
            routes.REGISTER_VALIDATOR, list(registrations), timeout=self.timeouts.subscriptions
        )

    # -- sync committee ----------------------------------------------------------

    async def publish_sync_committee_messages(
        self, messages: Sequence[JsonObject]
    ) -> PublishResult:
        return await self._publish_json(
            routes.POOL_SYNC_COMMITTEES, list(messages), timeout=self.timeouts.sync_committee
        )

    async def get_sync_committee_contribution(
        self, slot: int, subcommittee_index: int, beacon_block_root: bytes
    ) -> JsonObject:
        return await self._fetch(
            "GET",
            routes.SYNC_COMMITTEE_CONTRIBUTION,
            routes.SYNC_COMMITTEE_CONTRIBUTION,
            lambda answer: parse_object(data_of(answer.json()), "contribution"),
            timeout=self.timeouts.sync_committee,
            query=[
                ("slot", str(slot)),
                ("subcommittee_index", str(subcommittee_index)),
                (
                    "beacon_block_root",
                    hex0x(_require_length(beacon_block_root, 32, "beacon block root")),
                ),
            ],
        )

    async def publish_contribution_and_proofs(
        self, signed_contributions: Sequence[JsonObject]
    ) -> PublishResult:
        return await self._publish_json(
            routes.CONTRIBUTION_AND_PROOFS,
            list(signed_contributions),
            timeout=self.timeouts.sync_committee,
        )

    # -- exits -------------------------------------------------------------------

    async def publish_voluntary_exit(self, signed_exit: JsonObject) -> PublishResult:
        return await self._publish_json(
            routes.POOL_VOLUNTARY_EXITS, signed_exit, timeout=self.timeouts.default
        )

    # -- events ------------------------------------------------------------------

    def events(
        self,
        topics: Sequence[str] = ("head",),
        *,
        reconnect_delay: float = 0.5,
        max_reconnect_delay: float = 16.0,
        idle_timeout: float | None = None,
    ) -> EventStream:
        """A reconnecting stream of typed events; see :class:`EventStream`."""
        stream = EventStream(
            self,
            topics,
            reconnect_delay=reconnect_delay,
            max_reconnect_delay=max_reconnect_delay,
            idle_timeout=idle_timeout,
        )
        self.track_stream(stream)
        return stream
