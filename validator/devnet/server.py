"""The devnet's Beacon API (ethereum/beacon-APIs v4.0.0): routes, parameters, replies, errors.

Only what a validator client uses is served (see docs/devnet.md for the
list); everything else answers 404 in the spec's ErrorMessage shape. JSON is
the default everywhere; SSZ (``application/octet-stream``) is offered where
validator clients use it: produced blocks and attestation data / aggregates on
request (``Accept``), published blocks in request bodies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson
from aiohttp import web

from validator.consensus.encoding import parse_hex, parse_uint, to_hex
from validator.consensus.forks import FORK_ORDER
from validator.consensus.ssz import fulu
from validator.consensus.ssz.codec import SszInputError, from_json, from_ssz, to_json, to_ssz
from validator.devnet.apierrors import ApiError, error_body, indexed_error_body
from validator.devnet.chain import FORK, DevnetChain, ProducedBlock
from validator.devnet.events import parse_topics, stream_events
from validator.devnet.fault_modes import Availability
from validator.devnet.intake import (
    parse_registrations,
    publish_block,
    submit_aggregates,
    submit_attestations,
    submit_contributions,
    submit_registrations,
    submit_sync_messages,
    submit_voluntary_exit,
    verify_randao_for_production,
)
from validator.devnet.production import (
    assemble_block,
    block_contents,
    build_aggregate,
    build_contribution,
    plan_block,
)
from validator.devnet.registry import MAX_EFFECTIVE_BALANCE_GWEI

log = logging.getLogger("validator.devnet")

JSON = "application/json"
SSZ = "application/octet-stream"
VERSION = "unslashable-devnet/0.1.0"
MAX_GET_VALIDATOR_IDS = 64
DEFAULT_GRAFFITI = b"unslashable devnet".ljust(32, b"\x00")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Routes whose responses in the spec include 503; the others answer 500 when unavailable.
DECLARES_503 = frozenset(
    {
        ("GET", "/eth/v1/node/health"),
        ("POST", "/eth/v1/validator/duties/attester/{epoch}"),
        ("GET", "/eth/v1/validator/duties/proposer/{epoch}"),
        ("POST", "/eth/v1/validator/duties/sync/{epoch}"),
        ("GET", "/eth/v3/validator/blocks/{slot}"),
        ("POST", "/eth/v2/beacon/blocks"),
        ("POST", "/eth/v2/beacon/blinded_blocks"),
        ("GET", "/eth/v1/validator/attestation_data"),
        ("POST", "/eth/v1/validator/beacon_committee_subscriptions"),
        ("GET", "/eth/v1/validator/sync_committee_contribution"),
    }
)

STATUS_GROUPS = ("active", "pending", "exited", "withdrawal")
VALIDATOR_STATUSES = (
    "pending_initialized",
    "pending_queued",
    "active_ongoing",
    "active_exiting",
    "active_slashed",
    "exited_unslashed",
    "exited_slashed",
    "withdrawal_possible",
    "withdrawal_done",
)


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type=JSON, headers=headers)


def _route_key(request: web.Request) -> tuple[str, str]:
    route = request.match_info.route
    resource = route.resource
    path = resource.canonical if resource is not None else request.path
    return request.method, path


# --- parameters ---------------------------------------------------------------------


def uint_param(value: str | None, name: str) -> int:
    if value is None:
        raise ApiError(400, f"missing required parameter {name}")
    try:
        return parse_uint(value, 64)
    except ValueError as failure:
        raise ApiError(400, f"invalid {name}: {failure}") from None


def hex_param(value: str | None, name: str, length: int) -> bytes:
    if value is None:
        raise ApiError(400, f"missing required parameter {name}")
    try:
        return parse_hex(value, length)
    except ValueError as failure:
        raise ApiError(400, f"invalid {name}: {failure}") from None


async def read_json(request: web.Request) -> Any:
    if request.content_type not in (JSON, "application/octet-stream", "text/plain", ""):
        raise ApiError(415, f"unsupported Content-Type {request.content_type}")
    if request.content_type == SSZ:
        raise ApiError(415, "this endpoint takes JSON bodies only on this node")
    raw = await request.read()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as failure:
        raise ApiError(400, f"invalid JSON body: {failure}") from None


async def read_json_array(request: web.Request, what: str) -> list[Any]:
    body = await read_json(request)
    if not isinstance(body, list):
        raise ApiError(400, f"expected a JSON array of {what}")
    return body


def wants_ssz(request: web.Request) -> bool:
    """True when the Accept header prefers SSZ; 406 when it accepts neither SSZ nor JSON."""
    accept = request.headers.get("Accept", "")
    if not accept.strip():
        return False
    best: dict[str, float] = {}
    for part in accept.split(","):
        fields = [field.strip() for field in part.split(";")]
        media = fields[0].lower()
        quality = 1.0
        for parameter in fields[1:]:
            if parameter.startswith("q="):
                try:
                    quality = float(parameter[2:])
                except ValueError:
                    quality = 0.0
        best[media] = max(best.get(media, 0.0), quality)
    ssz_q = best.get(SSZ, 0.0)
    json_q = max(best.get(JSON, 0.0), best.get("application/*", 0.0), best.get("*/*", 0.0))
    if ssz_q == 0.0 and json_q == 0.0:
        raise ApiError(406, f"cannot answer with any type in Accept: {accept}")
    return ssz_q > json_q


def require_consensus_version(request: web.Request) -> None:
    version = request.headers.get("Eth-Consensus-Version")
    if version is None:
        raise ApiError(400, "missing Eth-Consensus-Version header")
    if version.lower() != FORK.value:
        raise ApiError(
            400, f"Eth-Consensus-Version {version} does not match the chain's fork {FORK.value}"
        )


# --- the API ------------------------------------------------------------------------


class BeaconApi:
    def __init__(self, chain: DevnetChain) -> None:
        self.chain = chain

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
        ]

    # --- node and config ------------------------------------------------------------

    async def node_syncing(self, request: web.Request) -> web.Response:
        chain = self.chain
        head_slot = chain.tree.head.slot
        return json_response(
            {
                "data": {
                    "head_slot": str(head_slot),
                    "sync_distance": str(max(0, chain.current_slot() - head_slot)),
                    "is_syncing": False,
                    "is_optimistic": False,
                    "el_offline": False,
                }
            }
        )

    async def node_health(self, request: web.Request) -> web.Response:
        if "syncing_status" in request.query:
            status = uint_param(request.query["syncing_status"], "syncing_status")
            if not 100 <= status <= 599:
                raise ApiError(400, f"invalid syncing_status {status}")
        return web.Response(status=200)

    async def node_version(self, request: web.Request) -> web.Response:
        return json_response({"data": {"version": VERSION}})

    async def genesis(self, request: web.Request) -> web.Response:
        return json_response(self.chain.config.genesis_response())

    async def config_spec(self, request: web.Request) -> web.Response:
        return json_response(self.chain.config.spec_response())

    async def fork_schedule(self, request: web.Request) -> web.Response:
        return json_response(self.chain.config.fork_schedule_response())

    # --- states -------------------------------------------------------------------------

    def _state_slot(self, state_id: str) -> int:
        chain = self.chain
        if state_id == "head":
            return chain.tree.head.slot
        if state_id == "genesis":
            return 0
        if state_id == "finalized":
            return chain.finality.finalized.epoch * chain.slots_per_epoch
        if state_id == "justified":
            return chain.finality.current_justified.epoch * chain.slots_per_epoch
        if state_id.startswith("0x"):
            root = hex_param(state_id, "state ID", 32)
            block = chain.tree.by_state_root(root)
            if block is None:
                raise ApiError(404, "State not found")
            return block.slot
        slot = uint_param(state_id, "state ID")
        if slot > chain.current_slot():
            raise ApiError(404, "State not found")
        return slot

    def _state_meta(self, slot: int) -> dict[str, Any]:
        finalized_slot = self.chain.finality.finalized.epoch * self.chain.slots_per_epoch
        return {"execution_optimistic": False, "finalized": slot <= finalized_slot}

    async def state_fork(self, request: web.Request) -> web.Response:
        slot = self._state_slot(request.match_info["state_id"])
        fork = self.chain.spec.fork_at(self.chain.epoch_of(slot))
        previous = FORK_ORDER[max(0, fork.name.order - 1)]
        data = {
            "previous_version": to_hex(self.chain.spec.fork_version(previous)),
            "current_version": to_hex(fork.version),
            "epoch": str(fork.epoch),
        }
        return json_response({**self._state_meta(slot), "data": data})

    async def finality_checkpoints(self, request: web.Request) -> web.Response:
        slot = self._state_slot(request.match_info["state_id"])
        finality = self.chain.finality
        data = {
            "previous_justified": finality.previous_justified.to_json(),
            "current_justified": finality.current_justified.to_json(),
            "finalized": finality.finalized.to_json(),
        }
        return json_response({**self._state_meta(slot), "data": data})

    def _validator_index(self, validator_id: str) -> int | None:
        """The index an id names (None for an unknown one); 400 for a malformed one."""
        if validator_id.startswith("0x"):
            return self.chain.registry.index_of(hex_param(validator_id, "validator ID", 48))
        index = uint_param(validator_id, "validator ID")
        return index if index < len(self.chain.registry) else None

    def _validator_json(self, index: int, epoch: int) -> dict[str, Any]:
        chain = self.chain
        lifecycle = chain.lifecycle
        return {
            "index": str(index),
            "balance": str(MAX_EFFECTIVE_BALANCE_GWEI),
            "status": lifecycle.status(index, epoch),
            "validator": lifecycle.validator_json(index, chain.registry.pubkey(index)),
        }

    def _validators(
        self, state_id: str, ids: Iterable[str] | None, statuses: Iterable[str] | None
    ) -> web.Response:
        slot = self._state_slot(state_id)
        epoch = self.chain.epoch_of(slot)
        wanted_statuses = set(statuses or ())
        for status in wanted_statuses:
            if status not in VALIDATOR_STATUSES and status not in STATUS_GROUPS:
                raise ApiError(400, f"invalid validator status {status}")
        if ids:
            indices: list[int] = []
            for validator_id in ids:
                index = self._validator_index(validator_id)
                if index is not None and index not in indices:
                    indices.append(index)
        else:
            indices = list(range(len(self.chain.registry)))
        data = []
        for index in indices:
            entry = self._validator_json(index, epoch)
            status = entry["status"]
            if wanted_statuses and not (
                status in wanted_statuses or status.split("_")[0] in wanted_statuses
            ):
                continue
            data.append(entry)
        return json_response({**self._state_meta(slot), "data": data})

    async def get_validators(self, request: web.Request) -> web.Response:
        ids = [
            part for value in request.query.getall("id", []) for part in value.split(",") if part
        ]
        if len(ids) > MAX_GET_VALIDATOR_IDS:
            raise ApiError(414, "Too many validator IDs in request")
        statuses = [
            part
            for value in request.query.getall("status", [])
            for part in value.split(",")
            if part
        ]
        return self._validators(request.match_info["state_id"], ids, statuses)

    async def post_validators(self, request: web.Request) -> web.Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise ApiError(400, "expected a JSON object with ids and/or statuses")
        ids = body.get("ids")
        statuses = body.get("statuses")
        for name, value in (("ids", ids), ("statuses", statuses)):
            if value is not None and (
                not isinstance(value, list) or not all(isinstance(v, str) for v in value)
            ):
                raise ApiError(400, f"{name} must be an array of strings")
        return self._validators(request.match_info["state_id"], ids, statuses)

    async def get_validator(self, request: web.Request) -> web.Response:
        slot = self._state_slot(request.match_info["state_id"])
        index = self._validator_index(request.match_info["validator_id"])
        if index is None:
            raise ApiError(404, "Validator not found")
        entry = self._validator_json(index, self.chain.epoch_of(slot))
        return json_response({**self._state_meta(slot), "data": entry})

    async def block_root(self, request: web.Request) -> web.Response:
        chain = self.chain
        block_id = request.match_info["block_id"]
        if block_id == "head":
            block = chain.tree.head
        elif block_id == "genesis":
            block = chain.tree.genesis
        elif block_id == "finalized":
            finalized = chain.finality.finalized
            block = chain.tree.get(finalized.root) or chain.tree.genesis
        elif block_id.startswith("0x"):
            found = chain.tree.get(hex_param(block_id, "block ID", 32))
            if found is None:
                raise ApiError(404, "Block not found")
            block = found
        else:
            slot = uint_param(block_id, "block ID")
            found = chain.tree.canonical_at(slot)
            if found is None:
                raise ApiError(404, "Block not found")
            block = found
        return json_response({**self._state_meta(block.slot), "data": {"root": to_hex(block.root)}})

    # --- duties -----------------------------------------------------------------------

    def _duty_epoch(self, request: web.Request, lookahead: int = 1) -> int:
        epoch = uint_param(request.match_info["epoch"], "epoch")
        current = self.chain.current_epoch()
        if epoch > current + lookahead:
            raise ApiError(
                400, f"epoch {epoch} is more than {lookahead} epoch ahead of the current {current}"
            )
        return epoch

    async def _indices_body(self, request: web.Request) -> list[int]:
        body = await read_json_array(request, "validator indices")
        if not body:
            raise ApiError(400, "expected at least one validator index")
        indices = [uint_param(value, "validator index") for value in body]
        for index in indices:
            if index >= len(self.chain.registry):
                raise ApiError(400, f"unknown validator index {index}")
        return indices

    async def attester_duties(self, request: web.Request) -> web.Response:
        epoch = self._duty_epoch(request)
        indices = await self._indices_body(request)
        try:
            dependent_root, committees = self.chain.duties.attester_committees(epoch)
        except LookupError as failure:
            raise ApiError(400, f"epoch {epoch} is too old: {failure}") from None
        data = []
        for index in dict.fromkeys(indices):
            assignment = committees.assignment(index)
            if assignment is None:
                continue
            data.append(
                {
                    "pubkey": to_hex(self.chain.registry.pubkey(index)),
                    "validator_index": str(index),
                    "committee_index": str(assignment.committee_index),
                    "committee_length": str(assignment.committee_length),
                    "committees_at_slot": str(assignment.committees_at_slot),
                    "validator_committee_index": str(assignment.validator_committee_index),
                    "slot": str(assignment.slot),
                }
            )
        return json_response(
            {"dependent_root": to_hex(dependent_root), "execution_optimistic": False, "data": data}
        )

    async def proposer_duties(self, request: web.Request) -> web.Response:
        chain = self.chain
        epoch = self._duty_epoch(request)
        try:
            dependent_root, proposers = chain.duties.proposers(epoch)
        except LookupError as failure:
            raise ApiError(400, f"epoch {epoch} is too old: {failure}") from None
        data = []
        first = epoch * chain.slots_per_epoch
        for offset, proposer in enumerate(proposers):
            if proposer is None:
                continue
            chain.served_proposers.setdefault(first + offset, set()).add(proposer)
            data.append(
                {
                    "pubkey": to_hex(chain.registry.pubkey(proposer)),
                    "validator_index": str(proposer),
                    "slot": str(first + offset),
                }
            )
        return json_response(
            {"dependent_root": to_hex(dependent_root), "execution_optimistic": False, "data": data}
        )

    async def sync_duties(self, request: web.Request) -> web.Response:
        chain = self.chain
        epoch = uint_param(request.match_info["epoch"], "epoch")
        period = chain.duties.sync_period(epoch)
        current_period = chain.duties.sync_period(chain.current_epoch())
        if period > current_period + 1:
            raise ApiError(
                400, f"epoch {epoch} is in sync committee period {period}, more than one ahead"
            )
        indices = await self._indices_body(request)
        data = []
        for index in dict.fromkeys(indices):
            positions = chain.duties.sync_positions(period, index)
            if positions:
                data.append(
                    {
                        "pubkey": to_hex(chain.registry.pubkey(index)),
                        "validator_index": str(index),
                        "validator_sync_committee_indices": [str(p) for p in positions],
                    }
                )
        return json_response({"execution_optimistic": False, "data": data})

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
        if "builder_boost_factor" in query:
            uint_param(query["builder_boost_factor"], "builder_boost_factor")
        skip = "skip_randao_verification" in query
        if skip and query["skip_randao_verification"] != "":
            raise ApiError(400, "skip_randao_verification takes no value")
        ssz = wants_ssz(request)
        now = time.time()
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
        proposer = await verify_randao_for_production(chain, slot, randao_reveal, skip)
        block_slot = slot if chain.faults is None else chain.faults.block_slot(slot, proposer)
        plan = await plan_block(chain, block_slot, proposer, randao_reveal, graffiti)
        block, root = await asyncio.to_thread(assemble_block, plan)
        chain.remember_produced(ProducedBlock(block_slot, proposer, root, block, plan.included))
        contents = block_contents(block)
        headers = {
            "Eth-Consensus-Version": FORK.value,
            "Eth-Execution-Payload-Blinded": "false",
            "Eth-Execution-Payload-Value": "0",
            "Eth-Consensus-Block-Value": str(plan.attestation_count * 10**12),
        }
        if ssz:
            body = await asyncio.to_thread(to_ssz, contents)
            return web.Response(body=body, content_type=SSZ, headers=headers)
        data = await asyncio.to_thread(to_json, contents)
        return json_response(
            {
                "version": FORK.value,
                "execution_payload_blinded": False,
                "execution_payload_value": headers["Eth-Execution-Payload-Value"],
                "consensus_block_value": headers["Eth-Consensus-Block-Value"],
                "data": data,
            },
            headers=headers,
        )

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
        contents = await self._read_signed_block(request, fulu.SignedBlockContents)
        signed = contents.signed_block
        status = await publish_block(
            self.chain, signed.message, bytes(signed.signature), False, time.time()
        )
        return web.Response(status=status)

    async def publish_blinded_block(self, request: web.Request) -> web.Response:
        signed = await self._read_signed_block(request, fulu.SignedBlindedBeaconBlock)
        status = await publish_block(
            self.chain, signed.message, bytes(signed.signature), True, time.time()
        )
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
        headers = {"Eth-Consensus-Version": FORK.value}
        if ssz:
            return web.Response(body=to_ssz(aggregate), content_type=SSZ, headers=headers)
        return json_response({"version": FORK.value, "data": to_json(aggregate)}, headers=headers)

    async def aggregate_and_proofs(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        body = await read_json_array(request, "SignedAggregateAndProof objects")
        failures = await submit_aggregates(self.chain, body, time.time())
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
        await submit_registrations(self.chain, parse_registrations(body))
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


# --- middlewares --------------------------------------------------------------------------


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as failure:
        return json_response(error_body(failure.status, failure.message), status=failure.status)
    except web.HTTPException as failure:
        if failure.status < 400:
            raise
        return json_response(error_body(failure.status, failure.reason), status=failure.status)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("internal error on %s %s", request.method, request.path)
        return json_response(error_body(500, "Internal server error"), status=500)


def availability_middleware(chain: DevnetChain) -> Callable[..., Any]:
    """The ``unavailable`` fault: refuse, or hold then refuse, every request for a while."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        faults = chain.faults
        if faults is None:
            return await handler(request)
        availability = faults.availability(time.time())
        if availability is Availability.UP:
            return await handler(request)
        if availability is Availability.HANG:
            chain.ledger.fault_events["delayed_responses"] += 1
            await asyncio.sleep(2 * chain.seconds_per_slot)
        chain.ledger.fault_events["unavailable_responses"] += 1
        status = 503 if _route_key(request) in DECLARES_503 else 500
        if status == 503 and request.path == "/eth/v1/node/health":
            return web.Response(status=503)
        message = "Beacon node is currently syncing and not serving requests (devnet fault)"
        return json_response(error_body(status, message), status=status)

    return middleware


def build_app(chain: DevnetChain, extra_middlewares: Iterable[Any] = ()) -> web.Application:
    """The aiohttp application: strict-mode middlewares (if any) see every final reply."""
    app = web.Application(
        middlewares=[*extra_middlewares, error_middleware, availability_middleware(chain)],
        client_max_size=64 * 1024 * 1024,
    )
    app.add_routes(BeaconApi(chain).routes())
    return app
