"""The devnet's read-only Beacon API routes: node, config, states and duties.

:class:`ChainQueries` answers from the chain without changing it;
:class:`validator.devnet.beacon_api.server.BeaconApi` adds production, submissions and events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiohttp import web

from validator.consensus.encoding import to_hex
from validator.consensus.forks import FORK_ORDER
from validator.devnet.beacon_api.errors import ApiError
from validator.devnet.beacon_api.plumbing import (
    hex_param,
    json_response,
    read_json,
    read_json_array,
    uint_param,
)
from validator.devnet.chain.registry import MAX_EFFECTIVE_BALANCE_GWEI
from validator.devnet.chain.simulated_chain import LIVENESS_EPOCHS_KEPT, DevnetChain

VERSION = "unslashable-devnet/0.1.0"
MAX_GET_VALIDATOR_IDS = 64

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


class ChainQueries:
    """Handlers that read the chain (the routes are listed by ``BeaconApi.routes``)."""

    def __init__(self, chain: DevnetChain) -> None:
        self.chain = chain

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

    def _duties_response(self, dependent_root: bytes, data: list[dict[str, str]]) -> web.Response:
        """An epoch's duties as the attester and proposer routes answer them (the root as
        the chain serves it, which a fault may change)."""
        return json_response(
            {
                "dependent_root": to_hex(self.chain.served_dependent_root(dependent_root)),
                "execution_optimistic": False,
                "data": data,
            }
        )

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
        return self._duties_response(dependent_root, data)

    async def liveness(self, request: web.Request) -> web.Response:
        """Which validators the chain saw attest (by target epoch) or propose in the epoch."""
        chain = self.chain
        epoch = uint_param(request.match_info["epoch"], "epoch")
        current = chain.current_epoch()
        if epoch > current:
            raise ApiError(400, f"Invalid epoch: {epoch} is after the current epoch {current}")
        if epoch < current - LIVENESS_EPOCHS_KEPT:
            raise ApiError(400, f"Invalid epoch: {epoch} is older than this node remembers")
        indices = await self._indices_body(request)
        seen = chain.liveness.get(epoch, set())
        return json_response(
            {
                "data": [
                    {"index": str(index), "is_live": index in seen}
                    for index in dict.fromkeys(indices)
                ]
            }
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
        return self._duties_response(dependent_root, data)

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
