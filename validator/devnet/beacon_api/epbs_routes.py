"""The devnet's Gloas (ePBS) routes, from beacon-APIs master (mid-2026).

- ``POST /eth/v1/validator/duties/ptc/{epoch}``: seats of the PTC (``compute_ptc``);
- ``GET /eth/v1/validator/payload_attestation_data`` (``?slot=``, and the alpha tags'
  ``/{slot}`` form): 204 when the slot has no block;
- ``POST /eth/v1/beacon/pool/payload_attestations``;
- ``GET /eth/v4/validator/blocks/{slot}``: a self-built Gloas block (with its envelope,
  blobs and proofs when ``include_payload=true``);
- ``POST /eth/v1/beacon/execution_payload_envelopes`` (``Eth-Blob-Data-Included``);
- ``POST /eth/v1/validator/proposer_preferences``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp import web

from validator.consensus.forks import ForkName
from validator.consensus.ssz.codec import SszInputError, from_json, to_json, to_ssz
from validator.devnet.beacon_api.errors import ApiError, indexed_error_body
from validator.devnet.beacon_api.plumbing import (
    SSZ,
    hex_param,
    json_response,
    read_json,
    read_json_array,
    require_consensus_version,
    uint_param,
    wants_ssz,
)
from validator.devnet.beacon_api.queries import ChainQueries
from validator.devnet.chain.epbs_production import build_gloas_block
from validator.devnet.chain.simulated_chain import OfferedBlock
from validator.devnet.judge.blocks import verify_randao_for_production
from validator.devnet.judge.epbs_messages import (
    submit_envelope,
    submit_payload_attestations,
    submit_preferences,
)

GLOAS = ForkName.GLOAS.value
DEFAULT_GRAFFITI = b"unslashable devnet".ljust(32, b"\x00")


class EpbsApi(ChainQueries):
    def epbs_routes(self) -> list[web.RouteDef]:
        return [
            web.post("/eth/v1/validator/duties/ptc/{epoch}", self.ptc_duties),
            web.get("/eth/v1/validator/payload_attestation_data", self.payload_attestation_data),
            web.get(
                "/eth/v1/validator/payload_attestation_data/{slot}", self.payload_attestation_data
            ),
            web.post("/eth/v1/beacon/pool/payload_attestations", self.pool_payload_attestations),
            web.get("/eth/v4/validator/blocks/{slot}", self.produce_block_v4),
            web.post("/eth/v1/beacon/execution_payload_envelopes", self.publish_envelope),
            web.post("/eth/v1/validator/proposer_preferences", self.proposer_preferences),
        ]

    def _require_gloas_epoch(self, epoch: int) -> None:
        if not self.chain.spec.is_gloas_epoch(epoch):
            raise ApiError(400, f"epoch {epoch} is before the Gloas fork")

    async def ptc_duties(self, request: web.Request) -> web.Response:
        chain = self.chain
        epoch = self._duty_epoch(request)
        self._require_gloas_epoch(epoch)
        wanted = set(await self._indices_body(request))
        data = []
        first = epoch * chain.slots_per_epoch
        for slot in range(first, first + chain.slots_per_epoch):
            for validator in dict.fromkeys(chain.duties.ptc(slot)):
                if validator in wanted:
                    data.append(
                        {
                            "pubkey": "0x" + chain.registry.pubkey(validator).hex(),
                            "validator_index": str(validator),
                            "slot": str(slot),
                        }
                    )
        root = chain.tree.attester_dependent_root(epoch)
        return json_response(
            {"dependent_root": "0x" + root.hex(), "execution_optimistic": False, "data": data}
        )

    async def payload_attestation_data(self, request: web.Request) -> web.Response:
        chain = self.chain
        raw = request.match_info.get("slot", request.query.get("slot"))
        slot = uint_param(raw, "slot")
        self._require_gloas_epoch(chain.epoch_of(slot))
        now = time.time()
        if slot > chain.latest_allowed_slot(now):
            raise ApiError(400, f"slot {slot} has not started")
        block = chain.tree.canonical_at(slot)
        if block is None:
            return web.Response(status=204)
        timely = chain.payload_timely(block.root, slot)
        data = chain.gloas_blocks.PayloadAttestation.fields()["data"](
            beacon_block_root=block.root,
            slot=slot,
            payload_present=timely,
            blob_data_available=timely,  # no blobs on this chain: available with the payload
        )
        headers = {"Eth-Consensus-Version": GLOAS}
        if wants_ssz(request):
            return web.Response(body=to_ssz(data), content_type=SSZ, headers=headers)
        return json_response({"version": GLOAS, "data": to_json(data)}, headers=headers)

    async def pool_payload_attestations(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        body = await read_json_array(request, "PayloadAttestationMessage objects")
        failures = await submit_payload_attestations(self.chain, body, time.time())
        return self._pool_reply(failures, "payload attestations")

    async def produce_block_v4(self, request: web.Request) -> web.Response:
        chain = self.chain
        slot = uint_param(request.match_info["slot"], "slot")
        query = request.query
        randao_reveal = hex_param(query.get("randao_reveal"), "randao_reveal", 96)
        graffiti = (
            hex_param(query["graffiti"], "graffiti", 32)
            if "graffiti" in query
            else DEFAULT_GRAFFITI
        )
        include = query.get("include_payload")
        if include not in ("true", "false"):
            raise ApiError(400, "include_payload is required: true or false")
        if "builder_boost_factor" in query:
            uint_param(query["builder_boost_factor"], "builder_boost_factor")
        self._require_gloas_epoch(chain.epoch_of(slot))
        now = time.time()
        if slot > chain.latest_allowed_slot(now):
            raise ApiError(400, f"slot {slot} has not started")
        if slot < chain.current_slot(now) - 1:
            raise ApiError(400, f"slot {slot} is over")
        if slot <= chain.tree.head.slot:
            raise ApiError(400, f"the head is already at slot {chain.tree.head.slot}")
        proposer = await verify_randao_for_production(chain, slot, randao_reveal, False)
        block, envelope, root = await build_gloas_block(
            chain, slot, proposer, randao_reveal, graffiti
        )
        chain.remember_produced(OfferedBlock(slot, proposer, root, block))
        chain.envelopes_due[root] = (slot, proposer, envelope)
        included = include == "true"
        kinds = chain.gloas_blocks
        answer: Any = (
            kinds.BlockContents(
                block=block, execution_payload_envelope=envelope, kzg_proofs=[], blobs=[]
            )
            if included
            else block
        )
        headers = {
            "Eth-Consensus-Version": GLOAS,
            "Eth-Execution-Payload-Included": "true" if included else "false",
            "Eth-Consensus-Block-Value": "0",
        }
        if wants_ssz(request):
            body = await asyncio.to_thread(to_ssz, answer)
            return web.Response(body=body, content_type=SSZ, headers=headers)
        data = await asyncio.to_thread(to_json, answer)
        return json_response(
            {
                "version": GLOAS,
                "consensus_block_value": "0",
                "execution_payload_included": included,
                "data": data,
            },
            headers=headers,
        )

    async def publish_envelope(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        flag = request.headers.get("Eth-Blob-Data-Included")
        if flag not in ("true", "false"):
            raise ApiError(400, "Eth-Blob-Data-Included must be true or false")
        kinds = self.chain.gloas_blocks
        body = await read_json(request)
        kind = (
            kinds.SignedExecutionPayloadEnvelopeContents
            if flag == "true"
            else kinds.SignedExecutionPayloadEnvelope
        )
        try:
            decoded = await asyncio.to_thread(from_json, kind, body)
        except SszInputError as failure:
            self.chain.ledger.count("rejected_messages")
            raise ApiError(400, f"invalid envelope: {failure}") from None
        signed = decoded.signed_execution_payload_envelope if flag == "true" else decoded
        await submit_envelope(self.chain, signed, time.time())
        return web.Response(status=200)

    async def proposer_preferences(self, request: web.Request) -> web.Response:
        require_consensus_version(request)
        body = await read_json_array(request, "SignedProposerPreferences objects")
        failures = await submit_preferences(self.chain, body, time.time())
        return self._pool_reply(failures, "proposer preferences")

    @staticmethod
    def _pool_reply(failures: list[tuple[int, str]], what: str) -> web.Response:
        if failures:
            return json_response(indexed_error_body(failures, what), status=400)
        return web.Response(status=200)
