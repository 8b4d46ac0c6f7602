"""POST /eth/v1/validator/{pubkey}/voluntary_exit: signed through the signer, EIP-7044 domain."""

from __future__ import annotations

from dataclasses import replace

import pytest

import crypto_backend
from keymanager.api.context import beacon_index_resolver
from tests.keymanager.api.support import GVR, Api, ApiFactory, hex_pubkey, import_body, pubkey
from validator.consensus.chain_preset import simulated_fork_version
from validator.consensus.domains import compute_domain, compute_signing_root
from validator.consensus.forks import ForkName
from validator.consensus.spec import ChainSpec
from validator.consensus.ssz import VoluntaryExit

DOMAIN_VOLUNTARY_EXIT = bytes.fromhex("04000000")


def exit_route(n: int) -> str:
    return f"/eth/v1/validator/{hex_pubkey(n)}/voluntary_exit"


def capella_signing_root(epoch: int, index: int) -> bytes:
    # EIP-7044: from Deneb on, exits are verified with CAPELLA_FORK_VERSION.
    domain = compute_domain(DOMAIN_VOLUNTARY_EXIT, simulated_fork_version(ForkName.CAPELLA), GVR)
    return compute_signing_root(VoluntaryExit(epoch=epoch, validator_index=index), domain)


@pytest.fixture
async def active_key(api: Api, chain_indices: dict[bytes, int]) -> int:
    assert (await api.post("/eth/v1/keystores", import_body([1]))).statuses == ["imported"]
    chain_indices[pubkey(1)] = 42
    return 1


async def test_exit_at_a_given_epoch(api: Api, active_key: int) -> None:
    answer = await api.post(exit_route(active_key), params={"epoch": "1234"})
    assert answer.status == 200
    data = answer.json["data"]
    assert data["message"] == {"epoch": "1234", "validator_index": "42"}
    signature = bytes.fromhex(data["signature"][2:])
    assert crypto_backend.verify(pubkey(active_key), capella_signing_root(1234, 42), signature)


async def test_exit_defaults_to_the_current_epoch(
    api: Api, active_key: int, chain: ChainSpec
) -> None:
    before = chain.current_epoch()
    data = (await api.post(exit_route(active_key))).json["data"]
    epoch = int(data["message"]["epoch"])
    assert before <= epoch <= chain.current_epoch()
    signature = bytes.fromhex(data["signature"][2:])
    assert crypto_backend.verify(pubkey(active_key), capella_signing_root(epoch, 42), signature)


async def test_exit_refusals(api: Api, active_key: int, chain_indices: dict[bytes, int]) -> None:
    # Not a key of this validator.
    assert (await api.post(exit_route(2))).status == 404
    # A remote key's exit is asked of its signer; one that cannot be reached signs nothing.
    remote = {"remote_keys": [{"pubkey": hex_pubkey(3), "url": "http://127.0.0.1:9"}]}
    await api.post("/eth/v1/remotekeys", remote)
    chain_indices[pubkey(3)] = 7
    answer = await api.post(exit_route(3))
    assert answer.status == 400 and "remote_signer_unavailable" in answer.message
    # A key the chain does not know (deposit not processed).
    await api.post("/eth/v1/keystores", import_body([4]))
    answer = await api.post(exit_route(4))
    assert answer.status == 404 and "beacon node knows no validator" in answer.message
    for epoch in ("-1", "x", "18446744073709551616", "01", ""):
        answer = await api.post(exit_route(active_key), params={"epoch": epoch})
        assert answer.status == 400, epoch
    assert (await api.post("/eth/v1/validator/0x1234/voluntary_exit")).status == 400
    # A deleted key signs no exit.
    await api.delete("/eth/v1/keystores", {"pubkeys": [hex_pubkey(active_key)]})
    assert (await api.post(exit_route(active_key))).status == 404


async def test_a_failing_beacon_node_is_a_500_in_the_error_shape(
    api_for: ApiFactory, api: Api, active_key: int
) -> None:
    async def unreachable(pubkey: bytes) -> int | None:
        raise ConnectionError("beacon node unreachable")

    failing = await api_for(replace(api.context, resolve_validator_index=unreachable))
    failing.checker.expected_5xx = 1
    answer = await failing.post(exit_route(active_key))
    assert answer.status == 500
    assert "beacon node could not be asked" in answer.message


async def test_beacon_index_resolver_asks_the_validators_route() -> None:
    asked: list[list[bytes]] = []

    class Validator:
        def __init__(self, index: int, key: bytes) -> None:
            self.index, self.pubkey = index, key

    class Beacon:
        async def get_validators(self, ids: list[bytes]) -> list[Validator]:
            asked.append(list(ids))
            return [Validator(17, pubkey(1))] if pubkey(1) in ids else []

    resolve = beacon_index_resolver(Beacon())
    assert await resolve(pubkey(1)) == 17
    assert await resolve(pubkey(2)) is None
    assert asked == [[pubkey(1)], [pubkey(2)]]
