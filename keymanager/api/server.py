"""The Keymanager API server (ethereum/keymanager-APIs v1.1.0) on aiohttp.

`create_app(context, token)` builds the application; `start_keymanager_server`
also reads or creates the token and listens (127.0.0.1 by default). Every
route, known or not, first checks the bearer token: no token is 401, a wrong
one 403, both in the spec's error shape. Every error the server gives is JSON
`{"code", "message"}`; a failure nobody expected is logged and answered 500
without details of the secrets involved.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import orjson
from aiohttp import web
from aiohttp.typedefs import Middleware
from pydantic import BaseModel, ConfigDict, StrictStr

from keymanager.api.context import KeymanagerContext
from keymanager.api.http import (
    JSON_CONTENT_TYPE,
    MAX_BODY_BYTES,
    ApiError,
    bad_request,
    error_response,
    json_response,
    no_content,
    pubkey_parameter,
    pubkey_value,
    read_model,
)
from keymanager.api.keys import KeyChanges, KeyStatus, Status
from keymanager.api.remote_checks import pubkey_problem, url_problem
from keymanager.api.server_limits import (
    DEFAULT_LIMITS,
    LIMITS_KEY,
    ServerLimits,
    start_limited_site,
)
from keymanager.api.token import load_or_create_token, token_matches
from keymanager.errors import ExitRefusedError, NoCurrentEpochError, UnknownKeyError
from keymanager.pubkeys import format_pubkey, parse_pubkey
from keymanager.settings import (
    SettingsValueError,
    format_fee_recipient,
    parse_fee_recipient,
    parse_uint64,
)
from keymanager.store import ValidatorStore

log = logging.getLogger("keymanager.api")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5062

CONTEXT_KEY = web.AppKey("keymanager_context", KeymanagerContext)
CHANGES_KEY = web.AppKey("keymanager_key_changes", KeyChanges)
TOKEN_KEY = web.AppKey("keymanager_token", str)

_BEARER = re.compile(r"Bearer[ \t]+(\S+)[ \t]*", re.IGNORECASE)
_UINT64 = re.compile(r"0|[1-9][0-9]{0,19}")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Result = TypeVar("Result")


# ---------------------------------------------------------------------- request bodies


class _Request(BaseModel):
    # Strict types: "1" is not a number and 1 is not a string. Unknown members are ignored.
    model_config = ConfigDict(strict=True, extra="ignore")


class ImportKeystoresRequest(_Request):
    keystores: list[StrictStr]
    passwords: list[StrictStr]
    slashing_protection: StrictStr | None = None


class PubkeysRequest(_Request):
    pubkeys: list[StrictStr]


class RemoteKeyDefinition(_Request):
    pubkey: StrictStr
    url: StrictStr


class ImportRemoteKeysRequest(_Request):
    remote_keys: list[RemoteKeyDefinition]


class SetFeeRecipientRequest(_Request):
    ethaddress: StrictStr


class SetGasLimitRequest(_Request):
    gas_limit: StrictStr


class SetGraffitiRequest(_Request):
    graffiti: StrictStr


def _pubkeys(values: list[str], field: str) -> list[bytes]:
    return [pubkey_value(value, f"{field}[{index}]") for index, value in enumerate(values)]


# ---------------------------------------------------------------------- middlewares


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every answer that is not a success in the spec's error shape."""
    try:
        return await handler(request)
    except ApiError as error:
        return error_response(error.status, error.message)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        # aiohttp's own answers (unknown route, wrong method, body too large).
        message = {
            404: f"no such route: {request.method} {request.path}",
            405: f"{request.method} is not allowed on {request.path}",
            413: f"the request body is over the {MAX_BODY_BYTES // (1024 * 1024)} MiB limit",
        }.get(error.status, error.reason)
        status = 400 if error.status == 413 else error.status
        return error_response(status, message, headers=_allow_header(error))
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("Keymanager API: %s %s failed", request.method, request.path)
        return error_response(500, "internal error; the validator's log has the details")


def _allow_header(error: web.HTTPException) -> dict[str, str] | None:
    allow = error.headers.get("Allow")
    return {"Allow": allow} if allow else None


def _auth(token: str) -> Middleware:
    @web.middleware
    async def bearer_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        header = request.headers.get("Authorization")
        if header is None:
            return error_response(
                401,
                "missing bearer token: send 'Authorization: Bearer <token>' with the token "
                "from the validator's api-token.txt",
                headers={"WWW-Authenticate": "Bearer"},
            )
        match = _BEARER.fullmatch(header)
        if match is None:
            return error_response(
                401,
                "the Authorization header must be 'Bearer <token>'",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not token_matches(match.group(1), token):
            return error_response(403, "invalid bearer token")
        return await handler(request)

    return bearer_token


# ---------------------------------------------------------------------- local keystores


class _ListingCache:
    """The last GET /eth/v1/keystores answer, reused while the store's listing is unchanged
    (10,000 keys make a 1.8 MB answer; rendering it each time is most of the request)."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.body = b""

    def render(self, store: ValidatorStore) -> bytes:
        if store.listing_version() == self.version:
            return self.body
        version, infos = store.list_keystores_versioned()
        body = orjson.dumps(
            {
                "data": [
                    {
                        "validating_pubkey": format_pubkey(info.pubkey),
                        "derivation_path": info.derivation_path,
                        "readonly": info.readonly,
                    }
                    for info in infos
                ]
            }
        )
        self.version, self.body = version, body
        return body


LISTING_KEY = web.AppKey("keymanager_listing_cache", _ListingCache)


async def list_keystores(request: web.Request) -> web.Response:
    store = request.app[CONTEXT_KEY].store
    body = await asyncio.to_thread(request.app[LISTING_KEY].render, store)
    return web.Response(body=body, content_type=JSON_CONTENT_TYPE)


async def import_keystores(request: web.Request) -> web.Response:
    body = await read_model(request, ImportKeystoresRequest)
    statuses = await request.app[CHANGES_KEY].import_keystores(
        body.keystores, body.passwords, body.slashing_protection
    )
    return json_response({"data": [status.to_json() for status in statuses]})


async def delete_keystores(request: web.Request) -> web.Response:
    body = await read_model(request, PubkeysRequest)
    pubkeys = _pubkeys(body.pubkeys, "pubkeys")
    result = await request.app[CHANGES_KEY].delete_keystores(pubkeys)
    return json_response(
        {
            "data": [status.to_json() for status in result.statuses],
            "slashing_protection": result.slashing_protection.decode("utf-8"),
        }
    )


# ---------------------------------------------------------------------- remote keys


async def list_remote_keys(request: web.Request) -> web.Response:
    store = request.app[CONTEXT_KEY].store
    keys = await asyncio.to_thread(store.remote_keys)
    return json_response(
        {
            "data": [
                {"pubkey": format_pubkey(key.pubkey), "url": key.url, "readonly": key.readonly}
                for key in keys
            ]
        }
    )


async def import_remote_keys(request: web.Request) -> web.Response:
    body = await read_model(request, ImportRemoteKeysRequest)
    # remote_checks.py: a bad definition is that key's `error` (the spec lists no 400).
    judged: list[tuple[bytes, str] | KeyStatus] = []
    for index, definition in enumerate(body.remote_keys):
        pubkey, problem = pubkey_problem(definition.pubkey)
        problem = problem or url_problem(definition.url)
        if problem is not None or pubkey is None:
            judged.append(KeyStatus(Status.ERROR, f"remote_keys[{index}].{problem}"))
        else:
            judged.append((pubkey, definition.url))
    keys = [item for item in judged if not isinstance(item, KeyStatus)]
    done = iter(await request.app[CHANGES_KEY].import_remote_keys(keys))
    statuses = [item if isinstance(item, KeyStatus) else next(done) for item in judged]
    return json_response({"data": [status.to_json() for status in statuses]})


async def delete_remote_keys(request: web.Request) -> web.Response:
    body = await read_model(request, PubkeysRequest)
    judged: list[bytes | KeyStatus] = []
    for index, text in enumerate(body.pubkeys):
        try:
            judged.append(parse_pubkey(text))
        except ValueError as error:  # that key's `error`, not a 400 (see import above)
            judged.append(KeyStatus(Status.ERROR, f"pubkeys[{index}]: {error}"))
    pubkeys = [item for item in judged if isinstance(item, bytes)]
    done = iter(await request.app[CHANGES_KEY].delete_remote_keys(pubkeys))
    statuses = [item if isinstance(item, KeyStatus) else next(done) for item in judged]
    return json_response({"data": [status.to_json() for status in statuses]})


# ---------------------------------------------------------------------- per-key settings


async def _settings_call(call: Callable[[], Result]) -> Result:
    """A store settings call in a thread; an unknown key is 404, a refused value 400."""
    try:
        return await asyncio.to_thread(call)
    except UnknownKeyError:
        raise ApiError(404, "the key is neither a local keystore nor a remote key") from None
    except SettingsValueError as error:
        raise ApiError(400, str(error)) from None


async def get_fee_recipient(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    context = request.app[CONTEXT_KEY]
    settings = await _settings_call(lambda: context.store.settings(pubkey))
    address = settings.fee_recipient or context.fee_recipient_default(pubkey)
    if address is None:
        raise ApiError(
            404,
            "no fee recipient is set for this key and the validator has no default "
            "(--suggested-fee-recipient)",
        )
    return json_response(
        {"data": {"pubkey": format_pubkey(pubkey), "ethaddress": format_fee_recipient(address)}}
    )


async def set_fee_recipient(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    body = await read_model(request, SetFeeRecipientRequest)
    store = request.app[CONTEXT_KEY].store
    try:
        address = parse_fee_recipient(body.ethaddress)
    except SettingsValueError as error:
        bad_request(f"ethaddress: {error}")
    await _settings_call(lambda: store.set_fee_recipient(pubkey, address))
    return no_content(202)


async def delete_fee_recipient(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    store = request.app[CONTEXT_KEY].store
    await _settings_call(lambda: store.delete_fee_recipient(pubkey))
    return no_content(204)


async def get_gas_limit(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    context = request.app[CONTEXT_KEY]
    settings = await _settings_call(lambda: context.store.settings(pubkey))
    gas_limit = settings.gas_limit
    if gas_limit is None:
        gas_limit = context.gas_limit_default(pubkey)
    return json_response({"data": {"pubkey": format_pubkey(pubkey), "gas_limit": str(gas_limit)}})


async def set_gas_limit(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    body = await read_model(request, SetGasLimitRequest)
    store = request.app[CONTEXT_KEY].store
    try:
        gas_limit = parse_uint64(body.gas_limit)
    except SettingsValueError as error:
        bad_request(f"gas_limit: {error}")
    await _settings_call(lambda: store.set_gas_limit(pubkey, gas_limit))
    return no_content(202)


async def delete_gas_limit(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    store = request.app[CONTEXT_KEY].store
    await _settings_call(lambda: store.delete_gas_limit(pubkey))
    return no_content(204)


async def get_graffiti(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    context = request.app[CONTEXT_KEY]
    settings = await _settings_call(lambda: context.store.settings(pubkey))
    graffiti = settings.graffiti
    if graffiti is None:
        graffiti = context.default_graffiti
    return json_response({"data": {"pubkey": format_pubkey(pubkey), "graffiti": graffiti}})


async def set_graffiti(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    body = await read_model(request, SetGraffitiRequest)
    store = request.app[CONTEXT_KEY].store
    await _settings_call(lambda: store.set_graffiti(pubkey, body.graffiti))
    return no_content(202)


async def delete_graffiti(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    store = request.app[CONTEXT_KEY].store
    await _settings_call(lambda: store.delete_graffiti(pubkey))
    return no_content(204)


# ---------------------------------------------------------------------- voluntary exit


async def sign_voluntary_exit(request: web.Request) -> web.Response:
    pubkey = pubkey_parameter(request)
    context = request.app[CONTEXT_KEY]
    epoch_text = request.query.get("epoch")
    if epoch_text is not None:
        if not _UINT64.fullmatch(epoch_text) or int(epoch_text) >= 2**64:
            bad_request(f"epoch must be a decimal uint64, got {epoch_text[:40]!r}")
        epoch = int(epoch_text)
    else:
        try:
            epoch = context.signer.current_epoch()
        except NoCurrentEpochError as error:
            bad_request(f"no epoch given and there is no current epoch: {error}")
    if not context.signer.has_key(pubkey):
        raise ApiError(404, "the key is not an active local key of this validator")
    try:
        index = await context.resolve_validator_index(pubkey)
    except Exception:
        log.exception("could not look up the index of %s", format_pubkey(pubkey))
        raise ApiError(
            500, "the beacon node could not be asked for the validator's index (see the log)"
        ) from None
    if index is None:
        raise ApiError(
            404,
            "the beacon node knows no validator with this key (is its deposit processed?)",
        )
    try:
        signature = await context.signer.sign_voluntary_exit(pubkey, epoch, index)
    except ExitRefusedError as refused:
        if refused.key_unknown:
            raise ApiError(404, "the key is not an active local key of this validator") from None
        raise ApiError(400, f"the exit was not signed: {refused}") from None
    return json_response(
        {
            "data": {
                "message": {"epoch": str(epoch), "validator_index": str(index)},
                "signature": "0x" + signature.hex(),
            }
        }
    )


# ---------------------------------------------------------------------- the application


def create_app(context: KeymanagerContext, token: str) -> web.Application:
    """The Keymanager API application, answering only requests bearing `token`."""
    app = web.Application(
        middlewares=[_errors, _auth(token)],
        client_max_size=MAX_BODY_BYTES,
    )
    app[CONTEXT_KEY] = context
    app[CHANGES_KEY] = KeyChanges(context)
    app[TOKEN_KEY] = token
    app[LISTING_KEY] = _ListingCache()
    routes = app.router
    routes.add_get("/eth/v1/keystores", list_keystores, allow_head=False)
    routes.add_post("/eth/v1/keystores", import_keystores)
    routes.add_delete("/eth/v1/keystores", delete_keystores)
    routes.add_get("/eth/v1/remotekeys", list_remote_keys, allow_head=False)
    routes.add_post("/eth/v1/remotekeys", import_remote_keys)
    routes.add_delete("/eth/v1/remotekeys", delete_remote_keys)
    for setting, get, post, delete in (
        ("feerecipient", get_fee_recipient, set_fee_recipient, delete_fee_recipient),
        ("gas_limit", get_gas_limit, set_gas_limit, delete_gas_limit),
        ("graffiti", get_graffiti, set_graffiti, delete_graffiti),
    ):
        path = f"/eth/v1/validator/{{pubkey}}/{setting}"
        routes.add_get(path, get, allow_head=False)
        routes.add_post(path, post)
        routes.add_delete(path, delete)
    routes.add_post("/eth/v1/validator/{pubkey}/voluntary_exit", sign_voluntary_exit)
    return app


async def start_keymanager_server(
    context: KeymanagerContext,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token_file: Path | str | None = None,
    limits: ServerLimits = DEFAULT_LIMITS,
) -> web.AppRunner:
    """Read (or create) the token, then serve the API on `host:port` until
    `await runner.cleanup()`. Raises `TokenFileError` for an unusable token file
    and `OSError` when the address cannot be bound."""
    token = load_or_create_token(context.store.validators_dir, token_file)
    app = create_app(context, token)
    app[LIMITS_KEY] = limits  # server_limits.py: connection cap, head and body timeouts
    runner = web.AppRunner(app, access_log=None, **limits.runner_options())
    await runner.setup()
    try:
        await start_limited_site(runner, host, port, limits)
    except BaseException:
        await runner.cleanup()
        raise
    log.info("Keymanager API listening on http://%s:%d", host, bound_port(runner) or port)
    return runner


def bound_port(runner: web.AppRunner) -> int | None:
    """The TCP port the runner listens on (useful with port 0)."""
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return None


__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "bound_port",
    "create_app",
    "start_keymanager_server",
]
