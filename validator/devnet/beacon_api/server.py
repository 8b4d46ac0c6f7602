"""The devnet's Beacon API (ethereum/beacon-APIs v4.0.0): its routes and the handlers that act.

Only what a validator client uses is served (see docs/devnet.md for the
list); everything else answers 404 in the spec's ErrorMessage shape. JSON is
the default everywhere; SSZ (``application/octet-stream``) is offered where
validator clients use it: produced blocks and attestation data / aggregates on
request (``Accept``), published blocks in request bodies. The read-only routes
are :mod:`validator.devnet.beacon_api.queries`'; requests, replies and middlewares are
:mod:`validator.devnet.beacon_api.plumbing`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from validator.consensus.forks import ForkName
from validator.consensus.ssz.blocks import blinded_block
from validator.consensus.ssz.codec import SszInputError, from_json, from_ssz, to_json, to_ssz
from validator.devnet.beacon_api.epbs_routes import EpbsApi
from validator.devnet.beacon_api.errors import ApiError, indexed_error_body
from validator.devnet.beacon_api.plumbing import (
    CHAIN_KEY,
    SSZ,
    availability_middleware,
    error_middleware,
    hex_param,
    json_response,
    read_json,
    read_json_array,
    require_consensus_version,
    uint_param,
    wants_ssz,
)
from validator.devnet.chain.events import parse_topics, stream_events
from validator.devnet.chain.production import (
    assemble_block,
    block_contents,
    build_aggregate,
    build_contribution,
    plan_block,
)
from validator.devnet.chain.relay import BUILDER_BID_WEI, LOCAL_PAYLOAD_WEI, Registration
from validator.devnet.chain.simulated_chain import FORK, DevnetChain, OfferedBlock
from validator.devnet.judge.blocks import publish_block, verify_randao_for_production
from validator.devnet.judge.duty_messages import (
    submit_aggregates,
    submit_attestations,
    submit_contributions,
    submit_sync_messages,
)
from validator.devnet.judge.operations import (
    parse_registrations,
    submit_registrations,
    submit_voluntary_exit,
)

DEFAULT_GRAFFITI = b"unslashable devnet".ljust(32, b"\x00")


class BeaconApi(EpbsApi):
    """Every route: the queries, plus block production, submissions and events."""

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/eth/v1/node/syncing", self.node_syncing),
            web.get("/eth/v1/node/health", self.node_health),
            web.get("/eth/v1/node/version", self.node_version),
            web.get("/eth/v1/beacon/genesis", self.genesis),
            web.get("/eth/v1/config/spec", self.config_spec),
            web.get("/eth/v1/config/fork_schedule", self.fork_schedule),
            web.get("/eth/v1/beacon/states/{state_id}/fork", self.state_fork),
            web.get(
                "/eth/v1/beacon/states/{state_id}/finality_checkpoints", self.finality_checkpoints
            ),
            web.get("/eth/v1/beacon/states/{state_id}/validators", self.get_validators),
            web.post("/eth/v1/beacon/states/{state_id}/validators", self.post_validators),
            web.get(
                "/eth/v1/beacon/states/{state_id}/validators/{validator_id}", self.get_validator
            ),
            web.get("/eth/v1/beacon/blocks/{block_id}/root", self.block_root),
            web.post("/eth/v1/validator/duties/attester/{epoch}", self.attester_duties),
            web.get("/eth/v1/validator/duties/proposer/{epoch}", self.proposer_duties),
            web.post("/eth/v1/validator/duties/sync/{epoch}", self.sync_duties),
            web.post("/eth/v1/validator/liveness/{epoch}", self.liveness),
            web.get("/eth/v3/validator/blocks/{slot}", self.produce_block),
            web.post("/eth/v2/beacon/blocks", self.publish_block),
            web.post("/eth/v2/beacon/blinded_blocks", self.publish_blinded_block),
            web.get("/eth/v1/validator/attestation_data", self.attestation_data),
            web.post("/eth/v2/beacon/pool/attestations", self.pool_attestations),
            web.get("/eth/v2/validator/aggregate_attestation", self.aggregate_attestation),
            web.post("/eth/v2/validator/aggregate_and_proofs", self.aggregate_and_proofs),
            web.post(
                "/eth/v1/validator/beacon_committee_subscriptions",
                self.beacon_committee_subscriptions,
            ),
            web.post(
                "/eth/v1/validator/sync_committee_subscriptions", self.sync_committee_subscriptions
            ),
            web.post("/eth/v1/validator/prepare_beacon_proposer", self.prepare_beacon_proposer),
            web.post("/eth/v1/validator/register_validator", self.register_validator),
            web.post("/eth/v1/beacon/pool/sync_committees", self.pool_sync_committees),
            web.get(
                "/eth/v1/validator/sync_committee_contribution", self.sync_committee_contribution
            ),
            web.post("/eth/v1/validator/contribution_and_proofs", self.contribution_and_proofs),
            web.post("/eth/v1/beacon/pool/voluntary_exits", self.voluntary_exits),
            web.get("/eth/v1/events", self.events),
            *self.epbs_routes(),
        ]

    # --- blocks -------------------------------------------------------------------------

    async def produce_block(self, request: web.Request) -> web.Response:
        chain = self.chain
        slot = uint_param(request.match_info["slot"], "slot")
        query = request.query
        randao_reveal = hex_param(query.get("randao_reveal"), "randao_reveal", 96)
        graffiti = (
            hex_param(query["graffiti"], "graffiti", 32)
            if "graffiti" in query
            else DEFAULT_GRAFFITI
        )
        boost_factor = None
        if "builder_boost_factor" in query:
            boost_factor = uint_param(query["builder_boost_factor"], "builder_boost_factor")
        skip = "skip_randao_verification" in query
        if skip and query["skip_randao_verification"] != "":
            raise ApiError(400, "skip_randao_verification takes no value")
        ssz = wants_ssz(request)
        now = time.time()
        if slot in chain.requested_block_slots:
            chain.ledger.count("repeated_block_requests")
        chain.requested_block_slots.add(slot)
        if slot == 0:
            raise ApiError(400, "slot 0 holds the genesis block")
        if slot > chain.latest_allowed_slot(now):
            raise ApiError(
                400, f"slot {slot} has not started (the chain is at {chain.current_slot(now)})"
            )
        if slot < chain.current_slot(now) - 1:
            raise ApiError(400, f"slot {slot} is over")
        if slot <= chain.tree.head.slot:
            raise ApiError(400, f"the head is already at slot {chain.tree.head.slot}")
        if chain.is_gloas_slot(slot):
            raise ApiError(400, f"slot {slot} is a Gloas slot: blocks come from produceBlockV4")
        proposer = await verify_randao_for_production(chain, slot, randao_reveal, skip)
        block_slot = slot if chain.faults is None else chain.faults.block_slot(slot, proposer)
        bid = self._builder_bid(proposer, boost_factor)
        plan = await plan_block(chain, block_slot, proposer, randao_reveal, graffiti, bid)
        block, root = await asyncio.to_thread(assemble_block, plan)
        chain.remember_produced(OfferedBlock(block_slot, proposer, root, block, plan.included))
        if bid is not None:
            # The relay's block, blinded: the same root, the payload's header in its place.
            contents = await asyncio.to_thread(blinded_block, block)
            chain.ledger.count("builder_blocks_offered")
            payload_value = BUILDER_BID_WEI
        else:
            contents = block_contents(chain, block)
            payload_value = 0 if chain.relay is None else LOCAL_PAYLOAD_WEI
        blinded = "true" if bid is not None else "false"
        headers = {
            "Eth-Consensus-Version": FORK.value,
            "Eth-Execution-Payload-Blinded": blinded,
            "Eth-Execution-Payload-Value": str(payload_value),
            "Eth-Consensus-Block-Value": str(plan.attestation_count * 10**12),
        }
        if ssz:
            body = await asyncio.to_thread(to_ssz, contents)
            return web.Response(body=body, content_type=SSZ, headers=headers)
        data = await asyncio.to_thread(to_json, contents)
        return json_response(
            {
                "version": FORK.value,
                "execution_payload_blinded": bid is not None,
                "execution_payload_value": headers["Eth-Execution-Payload-Value"],
                "consensus_block_value": headers["Eth-Consensus-Block-Value"],
                "data": data,
            },
            headers=headers,
        )

    def _builder_bid(self, proposer: int, boost_factor: int | None) -> Registration | None:
        """The proposer's registration when the simulated builder's block wins; None: local."""
        chain = self.chain
        if chain.relay is None:
            return None
        if chain.faults is not None and not chain.faults.relay_online():
            return None  # the relay failed: the node builds the block itself
        return chain.relay.winning_bid(proposer, boost_factor)

    async def _read_signed_block(self, request: web.Request, ssz_type: Any) -> Any:
        require_consensus_version(request)
        validation = request.query.get("broadcast_validation")
        if validation is not None and validation not in (
            "gossip",
            "consensus",
            "consensus_and_equivocation",
        ):
            raise ApiError(400, f"invalid broadcast_validation {validation}")
        if request.content_type == SSZ:
            raw = await request.read()
            decode: Callable[[], Any] = lambda: from_ssz(ssz_type, raw)  # noqa: E731
        else:
            body = await read_json(request)
            decode = lambda: from_json(ssz_type, body)  # noqa: E731
        try:
            return await asyncio.to_thread(decode)
        except SszInputError as failure:
            raise ApiError(400, f"invalid block: {failure}") from None

    async def publish_block(self, request: web.Request) -> web.Response:
        if (request.headers.get("Eth-Consensus-Version") or "").lower() == ForkName.GLOAS.value:
            # Gloas: a SignedBeaconBlock; its payload comes in the envelope.
            signed = await self._read_signed_block(
                request, self.chain.gloas_blocks.SignedBeaconBlock
            )
        else:
            contents = await self._read_signed_block(
                request, self.chain.blocks.SignedBlockContents
            )
            signed = contents.signed_block
        status = await publish_block(
            self.chain, signed.message, bytes(signed.signature), False, time.time()
        )
        return web.Response(status=status)

    async def publish_blinded_block(self, request: web.Request) -> web.Response:
        signed = await self._read_signed_block(request, self.chain.blocks.SignedBlindedBeaconBlock)
        status = await publish_block(
            self.chain, signed.message, bytes(signed.signature), True, time.time()
        )
        self.chain.ledger.count("blinded_blocks_received")
        return web.Response(status=status)

    # --- attestations -------------------------------------------------------------------

    async def attestation_data(self, request: web.Request) -> web.Response:
        chain = self.chain
        slot = uint_param(request.query.get("slot"), "slot")
        uint_param(request.query.get("committee_index"), "committee_index")
        ssz = wants_ssz(request)
        now = time.time()
        if slot > chain.latest_allowed_slot(now):
            raise ApiError(
                400, f"slot {slot} has not started (the chain is at {chain.current_slot(now)})"
            )
        if slot < chain.current_slot(now) - chain.slots_per_epoch:
            raise ApiError(400, f"slot {slot} is too old")
        data = chain.attestation_data(slot)
        if ssz:
            return web.Response(body=to_ssz(data), content_type=SSZ)
        return json_response({"data": to_json(data)})

    async def pool_attestations(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        body = await read_json_array(request, "SingleAttestation objects")
        failures = await submit_attestations(self.chain, body, time.time())
        return self._pool_reply(failures, "attestations")

    async def aggregate_attestation(self, request: web.Request) -> web.Response:
        query = request.query
        data_root = hex_param(query.get("attestation_data_root"), "attestation_data_root", 32)
        slot = uint_param(query.get("slot"), "slot")
        committee_index = uint_param(query.get("committee_index"), "committee_index")
        ssz = wants_ssz(request)
        aggregate = await build_aggregate(self.chain, slot, committee_index, data_root)
        if aggregate is None:
            raise ApiError(404, "no attestation with that data root, slot and committee")
        version = self.chain.fork_of_slot(slot).value
        headers = {"Eth-Consensus-Version": version}
        if ssz:
            return web.Response(body=to_ssz(aggregate), content_type=SSZ, headers=headers)
        return json_response({"version": version, "data": to_json(aggregate)}, headers=headers)

    async def aggregate_and_proofs(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        body = await read_json_array(request, "SignedAggregateAndProof objects")
        gloas = (request.headers.get("Eth-Consensus-Version") or "").lower() == "gloas"
        containers = self.chain.gloas_blocks if gloas else self.chain.blocks
        failures = await submit_aggregates(self.chain, body, time.time(), containers)
        return self._pool_reply(failures, "aggregates")

    @staticmethod
    def _pool_reply(failures: list[tuple[int, str]], what: str) -> web.Response:
        if failures:
            return json_response(indexed_error_body(failures, what), status=400)
        return web.Response(status=200)

    # --- subscriptions and preparations ---------------------------------------------------

    async def beacon_committee_subscriptions(self, request: web.Request) -> web.Response:
        body = await read_json_array(request, "subscriptions")
        for position, item in enumerate(body):
            self._require_fields(
                item,
                position,
                ("validator_index", "committee_index", "committees_at_slot", "slot"),
                ("is_aggregator",),
            )
        self.chain.ledger.count("beacon_committee_subscriptions", len(body))
        return web.Response(status=200)

    async def sync_committee_subscriptions(self, request: web.Request) -> web.Response:
        body = await read_json_array(request, "subscriptions")
        for position, item in enumerate(body):
            self._require_fields(item, position, ("validator_index", "until_epoch"), ())
            indices = item.get("sync_committee_indices")
            if not isinstance(indices, list):
                raise ApiError(400, f"item {position}: sync_committee_indices must be an array")
            for value in indices:
                uint_param(value, f"item {position} sync_committee_indices")
        self.chain.ledger.count("sync_committee_subscriptions", len(body))
        return web.Response(status=200)

    async def prepare_beacon_proposer(self, request: web.Request) -> web.Response:
        body = await read_json_array(request, "proposer preparations")
        prepared = []
        for position, item in enumerate(body):
            self._require_fields(item, position, ("validator_index",), ())
            index = uint_param(item["validator_index"], f"item {position} validator_index")
            address = hex_param(item.get("fee_recipient"), f"item {position} fee_recipient", 20)
            prepared.append((index, address))
        for index, address in prepared:
            self.chain.fee_recipients[index] = address
        self.chain.ledger.count("proposer_preparations", len(prepared))
        return web.Response(status=200)

    async def register_validator(self, request: web.Request) -> web.Response:
        body = await read_json(request)
        await submit_registrations(self.chain, parse_registrations(body), time.time())
        return web.Response(status=200)

    @staticmethod
    def _require_fields(
        item: Any, position: int, integers: tuple[str, ...], booleans: tuple[str, ...]
    ) -> None:
        if not isinstance(item, dict):
            raise ApiError(400, f"item {position}: expected an object")
        for name in integers:
            uint_param(item.get(name), f"item {position} {name}")
        for name in booleans:
            if not isinstance(item.get(name), bool):
                raise ApiError(400, f"item {position}: {name} must be true or false")

    # --- sync committee ---------------------------------------------------------------

    async def pool_sync_committees(self, request: web.Request) -> web.Response:
        body = await read_json_array(request, "sync committee messages")
        failures = await submit_sync_messages(self.chain, body, time.time())
        return self._pool_reply(failures, "sync committee messages")

    async def sync_committee_contribution(self, request: web.Request) -> web.Response:
        query = request.query
        slot = uint_param(query.get("slot"), "slot")
        subcommittee = uint_param(query.get("subcommittee_index"), "subcommittee_index")
        block_root = hex_param(query.get("beacon_block_root"), "beacon_block_root", 32)
        if subcommittee >= self.chain.spec.sync_committee_subnet_count:
            raise ApiError(400, f"no sync subcommittee {subcommittee}")
        contribution = await build_contribution(self.chain, slot, subcommittee, block_root)
        if contribution is None:
            raise ApiError(404, "no sync committee messages for that slot, root and subcommittee")
        return json_response({"data": to_json(contribution)})

    async def contribution_and_proofs(self, request: web.Request) -> web.Response:
        body = await read_json_array(request, "SignedContributionAndProof objects")
        failures = await submit_contributions(self.chain, body, time.time())
        return self._pool_reply(failures, "contributions")

    async def voluntary_exits(self, request: web.Request) -> web.Response:
        body = await read_json(request)
        await submit_voluntary_exit(self.chain, body, time.time())
        return web.Response(status=200)

    # --- events -----------------------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        try:
            topics = parse_topics(request.query.getall("topics", []))
        except ValueError as failure:
            raise ApiError(400, str(failure)) from None
        keepalive = max(1.0, min(10.0, self.chain.seconds_per_slot * 2))
        return await stream_events(request, self.chain.events, topics, keepalive)


def build_app(chain: DevnetChain, extra_middlewares: Iterable[Any] = ()) -> web.Application:
    """The aiohttp application: strict-mode middlewares (if any) see every final reply."""
    app = web.Application(
        middlewares=[*extra_middlewares, error_middleware, availability_middleware(chain)],
        client_max_size=64 * 1024 * 1024,
    )
    app[CHAIN_KEY] = chain
    app.add_routes(BeaconApi(chain).routes())
    return app
