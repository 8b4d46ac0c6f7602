"""Fixtures: a validators directory with its record, store and signer, served in process.

Every test talks to the API through `api`, whose client checks each answer
against the official spec; a test ends with no violation and no unexpected 5xx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from keymanager.api import KeymanagerContext, create_app
from keymanager.store import ValidatorStore
from slashing_protection import SlashingProtection
from tests.keymanager.api.conformance import ConformanceChecker
from tests.keymanager.api.support import GENESIS_TIME, GVR, TOKEN, Api, ApiFactory
from tests.support.api_specs import keymanager_api_spec
from validator.consensus.chain_preset import SimulatedChainConfig
from validator.consensus.spec import ChainSpec
from validator.devnet.strict_mode.openapi_spec import BeaconApiSpec
from validator.keymanager_server import KeymanagerSigning
from validator.signing.remote_keys import RemoteKeySources
from validator.signing.signer import Signer


@pytest.fixture(scope="session")
def keymanager_spec() -> BeaconApiSpec:
    return keymanager_api_spec()


@pytest.fixture(scope="session")
def chain() -> ChainSpec:
    # Every fork from genesis: exits are signed under Capella's version (EIP-7044).
    return SimulatedChainConfig(genesis_time=GENESIS_TIME, genesis_validators_root=GVR).chain_spec()


@pytest.fixture
def validators_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "validators"
    directory.mkdir()
    return directory


@pytest.fixture
def record(validators_dir: Path) -> Iterator[SlashingProtection]:
    with SlashingProtection.open(validators_dir, GVR, create=True) as opened:
        yield opened


@pytest.fixture
def store(validators_dir: Path) -> ValidatorStore:
    return ValidatorStore(validators_dir)


@pytest.fixture
def signer(chain: ChainSpec, record: SlashingProtection) -> Signer:
    return Signer(chain, record)


@pytest.fixture
def chain_indices() -> dict[bytes, int]:
    """The validator indices the 'beacon node' knows (tests add to it)."""
    return {}


@pytest.fixture
async def remote_sources(
    store: ValidatorStore, chain: ChainSpec
) -> AsyncIterator[RemoteKeySources]:
    """The remote signers of the API's remote keys (none is asked in these tests)."""
    sources = RemoteKeySources(store, chain)
    yield sources
    await sources.close()


@pytest.fixture
def context(
    store: ValidatorStore,
    record: SlashingProtection,
    signer: Signer,
    chain: ChainSpec,
    chain_indices: dict[bytes, int],
    remote_sources: RemoteKeySources,
) -> KeymanagerContext:
    async def resolve(pubkey: bytes) -> int | None:
        return chain_indices.get(pubkey)

    return KeymanagerContext(
        store=store,
        record=record,
        signer=KeymanagerSigning(signer, remote_sources),
        genesis_validators_root=chain.genesis_validators_root,
        resolve_validator_index=resolve,
        default_fee_recipient=bytes.fromhex("ab" * 20),
        default_graffiti="default graffiti",
    )


@pytest.fixture
async def api_for(aiohttp_client: Any, keymanager_spec: BeaconApiSpec) -> AsyncIterator[ApiFactory]:
    """Serve a context in process; at the end, every answer must have conformed."""
    made: list[Api] = []

    async def serve(context: KeymanagerContext) -> Api:
        checker = ConformanceChecker(keymanager_spec)
        client = await aiohttp_client(create_app(context, TOKEN), middlewares=(checker,))
        made.append(Api(client, checker, context))
        return made[-1]

    yield serve
    for api in made:
        api.checker.assert_clean()


@pytest.fixture
async def api(api_for: ApiFactory, context: KeymanagerContext) -> Api:
    return await api_for(context)
