"""The Beacon API conformance checker: loading, readable errors, both middlewares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from tests.support import canned
from tests.support.beacon_fixtures import ClientFactory, NodeStarter
from tests.support.official_vectors import REPO_ROOT, official_vectors
from validator.beacon import routes
from validator.devnet.strict_mode.checkers import StrictClientChecker, StrictServerChecker
from validator.devnet.strict_mode.openapi_spec import (
    BeaconApiSpec,
    HttpRequestParts,
    HttpResponseParts,
    SpecLoadError,
    SpecViolation,
    default_spec_dir,
    load_beacon_api_spec,
)

JSON = {"Content-Type": "application/json"}
DUTIES_REQUEST = HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON, b'["1"]')


def test_spec_is_loaded_once_per_process(beacon_api_spec: BeaconApiSpec) -> None:
    again = load_beacon_api_spec(official_vectors("beacon-api"))
    assert again is beacon_api_spec
    assert beacon_api_spec.load_seconds > 0
    assert beacon_api_spec.spec_dir == official_vectors("beacon-api").resolve()


def test_default_spec_dir_follows_the_vectors_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VALIDATOR_BEACON_API_SPEC", raising=False)
    monkeypatch.delenv("VALIDATOR_VECTORS_DIR", raising=False)
    assert default_spec_dir() == REPO_ROOT.parent / "shared" / "vectors" / "beacon-api"
    monkeypatch.setenv("VALIDATOR_VECTORS_DIR", "/elsewhere/vectors")
    assert default_spec_dir() == Path("/elsewhere/vectors/beacon-api")
    monkeypatch.setenv("VALIDATOR_BEACON_API_SPEC", "/exactly/here")
    assert default_spec_dir() == Path("/exactly/here")


def test_missing_spec_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SpecLoadError, match="beacon-node-oapi.yaml"):
        load_beacon_api_spec(tmp_path)


def test_missing_openapi_core_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "beacon-node-oapi.yaml").write_text("openapi: 3.0.3\n")
    # A None entry in sys.modules makes the import fail as an uninstalled package would.
    monkeypatch.setitem(sys.modules, "openapi_core", None)
    with pytest.raises(SpecLoadError, match=r"need openapi-core.*unslashable-validator\[strict\]"):
        load_beacon_api_spec(tmp_path)


def test_refs_across_files_are_followed(beacon_api_spec: BeaconApiSpec) -> None:
    # attester.yaml -> beacon-node-oapi.yaml#/components -> types/duty.yaml ->
    # types/primitive.yaml#/Pubkey: the pattern only exists at the end of the chain.
    duties = canned.attester_duties(3, [1])
    duties["data"][0]["pubkey"] = "0x12"
    errors = beacon_api_spec.check_response(
        DUTIES_REQUEST, HttpResponseParts(200, JSON, orjson.dumps(duties))
    )
    assert errors == ["response body $.data[0].pubkey: '0x12' fails pattern '^0x[a-fA-F0-9]{96}$'"]


def test_block_errors_name_the_closest_block_type(beacon_api_spec: BeaconApiSpec) -> None:
    body, headers = canned.produced_block(9)
    del body["data"]["block"]["body"]["execution_payload"]["block_hash"]
    request = HttpRequestParts(
        "GET", "/eth/v3/validator/blocks/9", [("randao_reveal", canned.signature(1))]
    )
    errors = beacon_api_spec.check_response(
        request, HttpResponseParts(200, {**JSON, **headers}, orjson.dumps(body))
    )
    assert errors == [
        "response body $.data: no anyOf alternative matches; closest: response body "
        "$.data.block.body.execution_payload: 'block_hash' is a required property"
    ]


def test_response_headers_are_checked(beacon_api_spec: BeaconApiSpec) -> None:
    body, headers = canned.produced_block(9)
    del headers["Eth-Consensus-Version"]
    headers["Eth-Execution-Payload-Blinded"] = "maybe"
    request = HttpRequestParts(
        "GET", "/eth/v3/validator/blocks/9", [("randao_reveal", canned.signature(1))]
    )
    errors = beacon_api_spec.check_response(
        request, HttpResponseParts(200, {**JSON, **headers}, orjson.dumps(body))
    )
    assert errors == [
        "response header 'Eth-Consensus-Version': Missing required header: Eth-Consensus-Version",
        "response header 'Eth-Execution-Payload-Blinded': "
        "Failed to cast value to boolean type: maybe",
    ]


@pytest.mark.parametrize(
    ("request_parts", "expected"),
    [
        (
            HttpRequestParts("GET", routes.ATTESTATION_DATA, [("slot", "1")]),
            ["query parameter 'committee_index': Missing required query parameter: "
             "committee_index"],
        ),
        (
            HttpRequestParts("GET", "/eth/v3/validator/blocks/1", [("randao_reveal", "0x12")]),
            ["query parameter 'randao_reveal' $: '0x12' fails pattern '^0x[a-fA-F0-9]{192}$'"],
        ),
        (
            HttpRequestParts(
                "POST", routes.POOL_ATTESTATIONS_V2, (), JSON,
                orjson.dumps([canned.single_attestation(1, 1)]),
            ),
            ["header parameter 'Eth-Consensus-Version': Missing required header parameter: "
             "Eth-Consensus-Version"],
        ),
        (
            HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON, b"[]"),
            ["request body $: [] should be non-empty"],
        ),
        (
            HttpRequestParts("POST", "/eth/v1/validator/duties/attester/3", (), JSON, b"[1]"),
            ["request body $[0]: 1 fails type 'string'"],
        ),
        (
            HttpRequestParts("GET", "/eth/v1/events", [("topics", "head,block")]),
            ["query parameter 'topics' $[0]: 'head,block' fails enum ['head', 'block', "
             "'block_gossip', 'attestation', 'single_attestation', 'voluntary_exit', "
             "'bls_to_execution_change', 'proposer_slashing', 'attester_slashing',..."],
        ),
        (
            HttpRequestParts("GET", "/eth/v9/nothing"),
            ["request: Path not found for http://localhost/eth/v9/nothing "
             "(not an operation of the Beacon API)"],
        ),
    ],
    ids=["missing query", "pattern", "missing header", "min items", "type", "comma topics",
         "unknown path"],
)  # fmt: skip
def test_request_errors_are_readable(
    beacon_api_spec: BeaconApiSpec, request_parts: HttpRequestParts, expected: list[str]
) -> None:
    assert beacon_api_spec.check_request(request_parts) == expected


def test_empty_pool_submission_matches_both_forms(beacon_api_spec: BeaconApiSpec) -> None:
    # The spec's oneOf (SingleAttestation[] | Attestation[]) cannot tell an empty
    # list apart, so an empty submission never conforms; the client refuses it.
    errors = beacon_api_spec.check_request(
        HttpRequestParts(
            "POST",
            routes.POOL_ATTESTATIONS_V2,
            (),
            {**JSON, "Eth-Consensus-Version": "electra"},
            b"[]",
        )  # fmt: skip
    )
    assert len(errors) == 1 and "is valid under each of" in errors[0]


def test_undocumented_status_is_reported(beacon_api_spec: BeaconApiSpec) -> None:
    errors = beacon_api_spec.check_response(
        HttpRequestParts("GET", routes.EVENTS, [("topics", "head")]),
        HttpResponseParts(503, JSON, orjson.dumps(canned.error(503, "x"))),
    )
    assert errors == ["response status 503 is not documented for this operation"]


def test_require_raises_a_violation_listing_every_error(beacon_api_spec: BeaconApiSpec) -> None:
    with pytest.raises(SpecViolation) as raised:
        beacon_api_spec.require_response(
            HttpRequestParts("GET", routes.NODE_SYNCING),
            HttpResponseParts(200, JSON, b'{"data": {"head_slot": 1}}'),
        )
    message = str(raised.value)
    assert message.startswith("response 200 to GET /eth/v1/node/syncing does not conform")
    assert "'is_syncing' is a required property" in message
    assert "$.data.head_slot: 1 fails type 'string'" in message


async def test_server_middleware_refuses_bad_requests_and_replaces_bad_answers(
    beacon_api_spec: BeaconApiSpec, aiohttp_client: Any
) -> None:
    checker = StrictServerChecker(beacon_api_spec)
    reached: list[str] = []

    async def syncing(request: web.Request) -> web.Response:
        reached.append(request.path)
        return web.json_response({"data": {"head_slot": "1"}})  # fields missing

    async def attestation_data(request: web.Request) -> web.Response:
        reached.append(request.path)
        return web.json_response({"data": canned.attestation_data(1)})

    app = web.Application(middlewares=[checker.middleware])
    app.router.add_get(routes.NODE_SYNCING, syncing)
    app.router.add_get(routes.ATTESTATION_DATA, attestation_data)
    http = await aiohttp_client(app)

    refused = await http.get(routes.ATTESTATION_DATA, params={"slot": "1"})
    assert refused.status == 400
    body = await refused.json()
    assert body["code"] == 400 and "committee_index" in body["message"]
    assert reached == []

    replaced = await http.get(routes.NODE_SYNCING)
    assert replaced.status == 500
    assert "'sync_distance' is a required property" in (await replaced.json())["message"]

    fine = await http.get(routes.ATTESTATION_DATA, params={"slot": "1", "committee_index": "0"})
    assert fine.status == 200

    assert [violation.where for violation in checker.violations] == [
        "request GET /eth/v1/validator/attestation_data",
        "response 200 to GET /eth/v1/node/syncing",
    ]
    assert (checker.checked_requests, checker.checked_responses) == (3, 2)


async def test_client_middleware_stops_a_bad_request_before_it_is_sent(
    start_node: NodeStarter, make_client: ClientFactory
) -> None:
    node, url = await start_node()
    client = await make_client([url])
    with pytest.raises(SpecViolation, match="'heze' fails enum"):
        await client.publish_block(canned.signed_block_contents(9), consensus_version="heze")
    assert node.requests_to(routes.PUBLISH_BLOCK_V2) == []
    # The make_client fixture asserts that strict clients saw no violation; this
    # one was provoked on purpose.
    client_checker = client._middlewares[0]
    assert isinstance(client_checker, StrictClientChecker)
    client_checker.violations.clear()


async def test_client_middleware_rejects_a_bad_answer(
    beacon_api_spec: BeaconApiSpec, start_node: NodeStarter
) -> None:
    node, url = await start_node(strict=False)
    node.misbehave(routes.GENESIS, body={"data": {"genesis_time": 5}})
    checker = StrictClientChecker(beacon_api_spec)
    async with aiohttp.ClientSession(middlewares=[checker]) as session:
        with pytest.raises(SpecViolation, match=r"\$.data.genesis_time: 5 fails type"):
            await session.get(url + routes.GENESIS)
    assert checker.checked_responses == 1 and len(checker.violations) == 1


def test_runtime_client_does_not_import_openapi_core() -> None:
    code = (
        "import sys, validator.beacon, validator.devnet.strict_mode.openapi_spec; "
        "print(sorted(m for m in ('openapi_core', 'jsonschema', 'yaml') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_gloas_exchanges_are_counted_not_checked(beacon_api_spec: BeaconApiSpec) -> None:
    """beacon-APIs v4.0.0 predates Gloas: its routes and the ``gloas`` version are left
    unchecked (and counted), an unknown later fork still fails."""
    from validator.devnet.strict_mode.openapi_spec import HttpRequestParts

    before = beacon_api_spec.unchecked_gloas_exchanges
    ptc = HttpRequestParts(
        method="post",
        path="/eth/v1/validator/duties/ptc/3",
        headers={"Content-Type": "application/json"},
        body=b'["1"]',
    )
    assert beacon_api_spec.check_request(ptc) == []
    gloas_block = HttpRequestParts(
        method="post",
        path="/eth/v2/beacon/blocks",
        headers={"Content-Type": "application/json", "Eth-Consensus-Version": "gloas"},
        body=b"{}",
    )
    assert beacon_api_spec.check_request(gloas_block) == []
    assert beacon_api_spec.unchecked_gloas_exchanges == before + 2
    later = HttpRequestParts(
        method="post",
        path="/eth/v2/beacon/blocks",
        headers={"Content-Type": "application/json", "Eth-Consensus-Version": "heze"},
        body=b"{}",
    )
    assert beacon_api_spec.check_request(later) != []
